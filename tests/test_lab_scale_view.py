"""Chapter 09's scale view: a status a notebook can print without breaking a number."""

import html

from minilib.lab.scale_view import ScaleExplorer, scale_run
from minilib.lab.style import STATUS_LINE_HEIGHT, UNBOUNDED_NOTE
from minilib.markers import is_summary


def test_an_overflow_status_is_short_lines_with_the_error_s_numbers():
    run = scale_run(300, threshold=8_000, bounded=False)
    error = run.overflow
    assert error is not None, "the unbounded summary must overflow here"
    lines = run.status().splitlines()
    assert len(lines) == 3 and max(len(line) for line in lines) <= 90, lines
    assert lines[0].endswith(f"stopped before round {len(run.sent)} of {run.rounds}")
    assert f"{error.tokens:,} tokens after compression" in lines[1]
    # the largest message here is the summary the run carried: named as what it is
    assert is_summary(error.window[error.largest_index])
    assert (
        f"#{error.largest_index} (the rolling summary, {error.largest_tokens:,}"
        in (lines[2])
    )


def test_the_budget_slider_reaches_small_budgets_and_keeps_them():
    explorer = ScaleExplorer(threshold=8_000, calls=200)
    explorer.budget.value = explorer.budget.min
    assert explorer.budget.min <= 500
    assert max(explorer.run.summary) <= explorer.budget.value
    assert explorer.status.value == (
        f'<div style="line-height:{STATUS_LINE_HEIGHT}">'
        f"<b>threshold 8,000, summary budget {explorer.budget.value}: all "
        f"{explorer.run.rounds} rounds governed; largest summary "
        f"{max(explorer.run.summary):,} tokens<br>  the last summary: "
        f"{explorer.run.dropped:,} older facts dropped to fit its budget</b></div>"
    )


def test_a_tight_budget_says_how_many_facts_it_dropped():
    """9.5 says a budget too small for the condensed line's facts drops the oldest
    and says how many: the status gives the count the last summary sent states."""
    import re

    from minilib.loop import replay
    from minilib.markers import is_summary
    from minilib.scale.bounded import bounded_window
    from minilib.scale.fast import FastWindow
    from minilib.scale.histories import GeneratedConversation, generate_history
    from minilib.window import Settings

    last = {}

    def observe(step, messages, compressions):
        for message in messages:
            if is_summary(message):
                last["text"] = message["content"]

    window = bounded_window(Settings(threshold=8_000), summary_budget=500)
    replay(
        GeneratedConversation(generate_history(200)),
        FastWindow(window),
        max_steps=None,
        on_round=observe,
    )
    said = int(re.search(r"(\d+) older facts dropped", last["text"]).group(1))
    run = scale_run(200, threshold=8_000, budget=500)
    assert said > 0 and run.dropped == said
    assert f"{said:,} older facts dropped" in run.status().splitlines()[1]
    roomy = scale_run(200, threshold=8_000, budget=2_000)  # nothing dropped: no line
    assert roomy.dropped == 0 and "dropped" not in roomy.status()


def test_the_budget_slider_is_off_while_the_unbounded_summary_is_ticked():
    explorer = ScaleExplorer(threshold=8_000, calls=200)
    explorer.unbounded.value = True
    assert explorer.budget.disabled and explorer.run.budget is None
    explorer.unbounded.value = False
    assert not explorer.budget.disabled and explorer.run.budget == explorer.budget.value


def test_a_budget_as_large_as_the_threshold_bounds_nothing():
    """9.5 warns of the slider's other end: at the threshold itself the summary may fill
    the window alone and the run stops on it, while 28,000 still leaves room."""
    explorer = ScaleExplorer(threshold=32_000, calls=1_000)
    assert explorer.budget.max == 32_000
    at_end = scale_run(1_000, threshold=32_000, budget=32_000)
    assert at_end.overflow is not None
    assert at_end.overflow.largest_tokens == max(at_end.summary)  # the summary itself
    assert scale_run(1_000, threshold=32_000, budget=28_000).overflow is None


def test_ticking_the_unbounded_summary_says_beside_the_budget_why_it_cannot_move():
    explorer = ScaleExplorer(threshold=8_000, calls=200)
    box = explorer.budget_box
    explorer.unbounded.value = True
    assert explorer.budget.disabled and box.text.disabled
    assert html.escape(UNBOUNDED_NOTE) in box.note.value
    explorer.unbounded.value = False
    assert not explorer.budget.disabled and not box.text.disabled
    assert box.note.value == ""
    # a typed value's own note is not cleared by the redraw it causes
    box.accept("1,234")
    assert "not offered" in box.note.value
