"""Exercises that check themselves: right answers pass, wrong ones get a hint naming a
section and never the answer, and what they are checked against is computed."""

import pytest

from minilib.lab import exercises
from minilib.lab.exercises import EXERCISES, Exercise, check, exact

pytest.importorskip("genai_prices", reason="chapter 11's answers are priced")


def test_a_wrong_answer_gets_a_hint_and_a_section_never_the_answer(capsys):
    for name, exercise in EXERCISES.items():
        expected = exercise.expected()
        wrong = expected + 1 if isinstance(expected, int) else expected + 1.0
        assert not check(name, wrong)
        said = capsys.readouterr().out
        assert said.startswith("not yet: ") and f"(read {exercise.section} again)" in said
        assert f"{expected:,}" not in said and str(expected) not in said
        assert check(name, expected)
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
    sweep = exercises.chapter_11_sweep()
    assert (
        EXERCISES["11.2"].expected()
        == min(sweep.points, key=lambda p: p.bill_usd).threshold
    )
    assert [p.threshold for p in sweep.points] == list(exercises.BILL_THRESHOLDS)
