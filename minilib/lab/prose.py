"""The numbers a chapter's prose states, checked against the values the chapter computed.

A notebook's prose is markdown: it does not follow when a default, a policy or the
session changes the numbers it quotes. So the cell under a paragraph that quotes a
number passes `check_prose` the numbers as the prose states them beside the values the
chapter just computed. When they agree it prints one line (the same every run, so strict
nbval compares it); when a change parts them it raises `ProseOutOfDate`, naming each
number, so the notebook fails under `pytest --nbval` until the prose is rewritten.
"""

from typing import Mapping


class ProseOutOfDate(AssertionError):
    """A number the prose states is not the value the chapter computed."""


def plural(count: int, singular: str, plural_form: str = "") -> str:
    """`1 number`, `2 numbers`: the noun agrees with its count."""
    return f"{count:,} {singular if count == 1 else (plural_form or singular + 's')}"


def plain(value: object) -> object:
    """A numpy or pandas scalar as the Python value it holds (`np.int64(9)` is `9`)."""
    return (
        value.item() if hasattr(value, "item") and not isinstance(value, str) else value
    )


def check_prose(
    section: str, stated: Mapping[str, object], computed: Mapping[str, object]
) -> None:
    """Each number `stated` (as the prose above writes it) against `computed` (the
    chapter's value of the same name). Prints one line when all agree;
    raises `ProseOutOfDate` naming every one that does not (or that was not computed)."""
    missing = [name for name in stated if name not in computed]
    if missing:
        raise ProseOutOfDate(
            f"{section}: nothing computed for {', '.join(missing)}; "
            "check_prose needs a computed value for every stated one"
        )
    wrong = [
        f"{name}: the prose says {plain(stated[name])!r}, the chapter computes "
        f"{plain(computed[name])!r}"
        for name in stated
        if stated[name] != computed[name]
    ]
    if wrong:
        raise ProseOutOfDate(f"{section}: the prose is out of date; " + "; ".join(wrong))
    if len(stated) == 1:
        print(f"{section}: the number the prose states is the run's")
    else:
        numbers = plural(len(stated), "number")
        print(f"{section}: the {numbers} the prose states are the run's")
