"""The chapters' prose numbers are checked by a cell (`check_prose`): when a default
changes a number the prose states, the cell raises, and strict nbval fails on it."""

import dataclasses
import json
from pathlib import Path

import pytest

from minilib.agents.claude_code.policy import ClaudeCodePolicy
from minilib.lab import six_paths
from minilib.lab.policy_rows import policy_catalogue
from minilib.lab.prose import ProseOutOfDate, check_prose, plural
from minilib.policies.registry import PATHS

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def test_numbers_that_agree_print_one_line(capsys):
    check_prose(
        "8.4", {"truncation lost": 9, "facts": 19}, {"truncation lost": 9, "facts": 19}
    )
    assert (
        capsys.readouterr().out == "8.4: the 2 numbers the prose states are the run's\n"
    )
    check_prose("10", {"overhead": 1}, {"overhead": 1})
    assert capsys.readouterr().out == "10: the number the prose states is the run's\n"


def test_a_number_that_differs_or_was_not_computed_is_named():
    with pytest.raises(
        ProseOutOfDate, match=r"truncation lost: the prose says 9, .* computes 7"
    ):
        check_prose("8.4", {"truncation lost": 9}, {"truncation lost": 7})
    with pytest.raises(ProseOutOfDate, match="nothing computed for facts"):
        check_prose("8.4", {"facts": 19}, {})


def truncation_lost() -> int:
    """What 8.4's check cell computes for the prose's "truncation ... loses 9"."""
    table = six_paths.comparison_table(six_paths.default_runs())
    return table.loc["1 sliding-window truncation", "lost"]


def test_changing_a_paths_default_makes_chapter_8s_check_fail(monkeypatch):
    stated = {"truncation lost": 9}  # as 8.4's list and its check cell state it
    check_prose("8.4", stated, {"truncation lost": truncation_lost()})
    wider = dataclasses.replace(PATHS["truncation"], default=10)
    monkeypatch.setitem(PATHS, "truncation", wider)
    with pytest.raises(ProseOutOfDate, match="truncation lost: the prose says 9"):
        check_prose("8.4", stated, {"truncation lost": truncation_lost()})


def test_changing_claude_codes_overhead_makes_chapter_10s_check_fail(monkeypatch):
    stated = {"claude-code's overhead": 20_000}
    computed = policy_catalogue().loc["claude-code", "overhead"]
    check_prose("10", stated, {"claude-code's overhead": computed})
    monkeypatch.setattr(ClaudeCodePolicy, "DEFAULT_OVERHEAD_TOKENS", 25_000)
    computed = policy_catalogue().loc["claude-code", "overhead"]
    with pytest.raises(
        ProseOutOfDate, match="prose says 20000, the chapter computes 25000"
    ):
        check_prose("10", stated, {"claude-code's overhead": computed})


@pytest.mark.parametrize(
    "name",
    [
        "08_six_paths_compared",
        "09_production_scale",
        "10_production_policies",
        "11_what_it_cost",
    ],
)
def test_each_chapter_checks_its_prose_and_stored_the_check_passing(name):
    """Every check cell ran (strict nbval compares the line it printed): a chapter
    whose stored output is the agreement line cannot pass nbval with a mismatch."""
    cells = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
    checks = [cell for cell in cells if "check_prose(" in "".join(cell["source"])]
    assert checks
    for cell in checks:
        printed = "".join("".join(output.get("text", "")) for output in cell["outputs"])
        assert "the prose states" in printed, cell["id"]


def test_plural_agrees_with_its_count():
    assert plural(1, "number") == "1 number"
    assert plural(2, "number") == "2 numbers"
    assert plural(1_500, "message") == "1,500 messages"


def test_every_check_cell_is_folded_under_its_output():
    # a check is the chapter's own bookkeeping: its one line of output shows, its
    # code (up to 60 lines) folded, so it stands between no table and its text
    unfolded = [
        f"{path.name} cell {number}"
        for path in sorted(NOTEBOOKS.glob("*.ipynb"))
        for number, cell in enumerate(json.loads(path.read_text())["cells"])
        if cell["cell_type"] == "code"
        and "check_prose(" in "".join(cell["source"])
        and not cell["metadata"].get("jupyter", {}).get("source_hidden")
    ]
    assert unfolded == []
