"""Exercises that check themselves: `check(name, answer)` says whether an answer is
right, and if it is not, gives a hint that names the section to read again. It never
prints the answer. What an answer is checked against is computed by the library when
`check` is called, never stored, so it stays right when a default changes. A chapter's
exercise cell ends `check("11.2", ...)`: the student puts an answer in place of the
`...` and runs it.
"""

import textwrap
from dataclasses import dataclass
from typing import Callable, Dict, Optional

from ..style import PRINTED_COLUMNS


@dataclass(frozen=True)
class Exercise:
    asks: str  # what the answer is, in a few words
    expected: Callable[[], object]  # computed when checked
    agrees: Callable[[object, object], bool]  # (answer, expected)
    hint: str  # where the reasoning goes wrong most often
    section: str  # the section to read again
    # a right answer, where the answer is open (two texts, a function) and so is not
    # the value checked against; None: the expected value is the answer
    example: Optional[Callable[[], object]] = None

    def a_right_answer(self):
        return self.example() if self.example is not None else self.expected()


def exact(answer, expected) -> bool:
    return answer == expected


def within(tolerance: float) -> Callable[[object, object], bool]:
    """An answer in dollars or tokens within `tolerance` of the computed one."""

    def agrees(answer, expected) -> bool:
        try:
            return abs(float(answer) - float(expected)) <= tolerance
        except (TypeError, ValueError):
            return False

    return agrees


def plain(value):
    """`value` with its lists as tuples and its sets as frozensets, all the way down:
    an answer in any of them reads as the same answer."""
    if isinstance(value, (list, tuple)):
        return tuple(plain(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(plain(item) for item in value)
    return value


def alike(answer, expected) -> bool:
    """Equal once lists, tuples and sets are read alike (`plain`)."""
    try:
        return plain(answer) == plain(expected)
    except TypeError:
        return False


EXERCISES: Dict[str, Exercise] = {}


class Verdict:
    """Whether an answer was right: true or false as a condition (a solution asserts
    it), and nothing shown as a cell's value (its line was printed already)."""

    def __init__(self, right: bool):
        self.right = right

    def __bool__(self) -> bool:
        return self.right

    def __repr__(self) -> str:
        return f"Verdict({self.right})"

    def _ipython_display_(self) -> None:
        pass


def check(name: str, answer) -> Verdict:
    """Print whether `answer` to exercise `name` is right (a hint if not)."""
    exercise = EXERCISES.get(name)
    if exercise is None:
        print(f"no exercise {name!r}; the chapter's are {', '.join(sorted(EXERCISES))}")
        return Verdict(False)
    if answer is None or answer is Ellipsis:
        return _said(f"not yet: put your answer in place of the ...: {exercise.asks}")
    if exercise.agrees(answer, exercise.expected()):
        return _said(f"right: {exercise.asks}", True)
    return _said(f"not yet: {exercise.hint} (read {exercise.section} again)")


def _said(words: str, right: bool = False) -> Verdict:
    print(
        textwrap.fill(
            words, PRINTED_COLUMNS, subsequent_indent="  ", break_on_hyphens=False
        )
    )
    return Verdict(right)


def share_within(tolerance: float) -> Callable[[object, object], bool]:
    """(a thing named exactly, a share within `tolerance`)."""

    def agrees(answer, expected) -> bool:
        try:
            name, share = answer
            return name == expected[0] and abs(float(share) - expected[1]) <= tolerance
        except (TypeError, ValueError):
            return False

    return agrees


def article_runs():
    """(the article's session, its run without compression, run_session, Settings)."""
    from ...session import Settings, load_session, run_baseline, run_session

    session = load_session()
    return session, run_baseline(session), run_session, Settings


# Each chapter's exercises, registered as their modules are imported.
from . import (  # noqa: E402, F401
    chapter_00_01,
    chapter_02,
    chapter_03,
    chapter_04,
    chapter_05,
    chapter_06,
    chapter_07,
    chapter_08,
    chapter_09,
    chapter_10,
    chapter_11,
)
