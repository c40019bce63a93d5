"""Exercises that check themselves: right answers pass, wrong ones get a hint naming a
section and never the answer, and what they are checked against is computed."""

import re
from pathlib import Path

import nbformat
import pytest

from minilib.lab.exercises import EXERCISES, Exercise, chapter_11, check, exact

pytest.importorskip("genai_prices", reason="chapter 11's answers are priced")


def _wrong(expected):
    """An answer that is not `expected`, of its shape (a function that counts
    nothing, where the answer is a function)."""
    if isinstance(expected, list):
        return lambda messages: 0
    if isinstance(expected, frozenset):
        return frozenset({"nothing of it"})
    if isinstance(expected, tuple):
        return (_wrong(expected[0]), *expected[1:])
    if isinstance(expected, str):
        return expected + "?"
    return expected + 1


def _told(expected) -> list:
    """The texts that would give `expected` away (a number of two digits or more)."""
    if isinstance(expected, list):  # the windows a function is checked on
        return []
    parts = expected if isinstance(expected, tuple) else (expected,)
    told = [repr(expected)]
    for part in parts:
        if isinstance(part, str) or (isinstance(part, (int, float)) and abs(part) >= 10):
            told += [str(part), f"{part:,}" if not isinstance(part, str) else part]
    return told


def test_a_wrong_answer_gets_a_hint_and_a_section_never_the_answer(capsys):
    for name, exercise in EXERCISES.items():
        expected = exercise.expected()
        assert not check(name, _wrong(expected)), name
        said = " ".join(capsys.readouterr().out.split())  # as read, unwrapped
        assert said.startswith("not yet: ") and f"(read {exercise.section} again)" in said
        assert not any(text in said for text in _told(expected)), (name, said)
        assert check(name, exercise.a_right_answer()), name
        assert capsys.readouterr().out.startswith("right: ")


def test_the_placeholder_and_an_unknown_exercise_are_said_so(capsys):
    assert not check("11.2", ...)
    assert "put your answer in place of the ..." in capsys.readouterr().out
    assert not check("99.9", 1)
    assert "no exercise '99.9'" in capsys.readouterr().out


def test_the_answer_is_computed_when_checked(monkeypatch, capsys):
    moving = {"value": 1}
    monkeypatch.setitem(
        EXERCISES, "t", Exercise("x", lambda: moving["value"], exact, "h", "0")
    )
    assert check("t", 1)
    moving["value"] = 2  # a default changed: the same answer is now wrong
    assert not check("t", 1)


def test_chapter_11s_answers_come_from_the_sweep():
    sweep = chapter_11.chapter_11_sweep()
    assert (
        EXERCISES["11.2"].expected()
        == min(sweep.points, key=lambda p: p.bill_usd).threshold
    )
    assert [p.threshold for p in sweep.points] == list(chapter_11.BILL_THRESHOLDS)


NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def _numbered_exercises(notebook) -> list:
    """The numbers of the exercises the chapter's Exercises section lists."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown" and re.search(
            r"^## Exercises", cell.source, re.M
        ):
            listed = cell.source.split("## Exercises", 1)[1]
            return re.findall(r"^(\d+)\. ", listed, re.M)
    return []


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_every_exercise_checks_itself_and_its_solution_passes_the_check(chapter):
    notebook = nbformat.read(chapter, as_version=4)
    numbers = _numbered_exercises(notebook)
    if not numbers:
        pytest.skip("no exercises")
    prefix = str(int(chapter.stem[:2]))
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    asked = re.findall(r'check\("([\d.]+)", \.\.\.\)', code)
    # every exercise listed has its check, numbered as the chapter numbers them (a
    # chapter may list its exercises in more than one cell)
    assert len(asked) >= len(numbers), chapter.name
    assert asked == [f"{prefix}.{k}" for k in range(1, len(asked) + 1)], chapter.name
    assert all(name in EXERCISES for name in asked), chapter.name
    solutions = NOTEBOOKS / "solutions" / f"{chapter.stem}_solutions.ipynb"
    solved = nbformat.read(solutions, as_version=4)
    asserted = re.findall(
        r'assert check\(\s*"([\d.]+)"',
        "\n".join(c.source for c in solved.cells if c.cell_type == "code"),
    )
    assert sorted(asserted) == sorted(asked), solutions.name
