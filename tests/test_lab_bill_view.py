"""Chapter 11's line under the threshold slider, driven without a browser."""

from types import SimpleNamespace

from minilib.lab.bill_view import threshold_words


def _sweep(bill_usd: float, recorded_usd):
    point = SimpleNamespace(
        threshold=160_000, bill_usd=bill_usd, compactions=1, facts_lost=7, facts_used=192
    )
    return SimpleNamespace(at=lambda threshold: point, recorded_usd=recorded_usd)


def test_the_difference_is_of_the_two_figures_as_printed():
    """$11.0249 prints as $11.02 and $10.8751 as $10.88: the difference says $0.14,
    what a student gets from the two figures on screen (not $0.15 from the exact
    ones)."""
    words = threshold_words(_sweep(11.0249, 10.8751), 160_000)
    assert "would have cost $11.02, compacted 1 time and lost 7 of the 192" in words
    assert words.endswith("the provider billed $10.88 (+$0.14)")
    cheaper = threshold_words(_sweep(9.5, 10.8751), 160_000)
    assert cheaper.endswith("the provider billed $10.88 (−$1.38)")
    assert "provider billed" not in threshold_words(_sweep(9.5, None), 160_000)
