"""Check a compression strategy of your own against the window's invariants.

`check_strategy(strategy, windows)` runs the strategy on each window and returns the
problems it finds, each in plain words, so a student who writes a strategy learns
which rule it broke and where. The rules are the ones every strategy of the library
keeps (and the property tests check): the input list is left as it was, the result
is a valid conversation (no tool call without its answer, by position), the
protected head is untouched, the window never grows, `affected_indexes` name real
positions, and running it again on its own output is safe.
"""

import copy
from dataclasses import dataclass
from typing import List, Mapping, Sequence

from ..messages import InvalidMessagesError, protected_head_length, validate_messages
from ..strategy import CompressionResult
from ..tokens import TokenCounter, estimate_tokens


@dataclass(frozen=True)
class StrategyProblem:
    """One broken rule: which window, which rule, and what happened."""

    window: int
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"window {self.window}: {self.rule} — {self.detail}"

    __repr__ = __str__  # a printed list of problems reads as sentences


def _problems_on(
    strategy, number: int, messages: Sequence[Mapping], count_tokens: TokenCounter
) -> List[StrategyProblem]:
    def problem(rule, detail):
        return StrategyProblem(number, rule, detail)

    before = copy.deepcopy(list(messages))
    # The strategy gets a copy: one that changes its input in place is reported, and
    # the caller's own messages (a chapter's session) stay as they were.
    given = copy.deepcopy(before)
    try:
        result = strategy.compress(given)
    except Exception as error:
        # a student's code may fail in any way: say so, don't crash
        return [
            problem(
                "compress must not fail", f"it raised {type(error).__name__}: {error}"
            )
        ]
    found = []
    if given != before:
        found.append(
            problem(
                "the input list is left as it was",
                "compress changed the list it was given; return a new list instead",
            )
        )
    if not isinstance(result, CompressionResult):
        return found + [
            problem(
                "compress returns a CompressionResult",
                f"it returned {type(result).__name__}",
            )
        ]
    try:
        validate_messages(result.messages, where="result")
    except InvalidMessagesError as error:
        found.append(problem("the result is a valid conversation", str(error)))
        return found
    head = protected_head_length(before)
    if list(result.messages[:head]) != before[:head]:
        found.append(
            problem(
                "the protected head is untouched",
                f"the system prompt or the first user message (#0-#{head - 1}) changed",
            )
        )
    if count_tokens(result.messages) > count_tokens(before):
        found.append(
            problem(
                "compression never grows the window",
                f"{count_tokens(before):,} -> {count_tokens(result.messages):,} tokens",
            )
        )
    bad = [i for i in result.affected_indexes if not 0 <= i < len(before)]
    if bad:
        found.append(
            problem(
                "affected_indexes name positions of the input",
                f"{bad} are outside 0-{len(before) - 1}",
            )
        )
    if not result.affected_indexes and list(result.messages) != before:
        found.append(
            problem(
                "a change is reported",
                "the messages changed but affected_indexes is empty, so the trace "
                "misses it",
            )
        )
    return found


def check_strategy(
    strategy,
    windows: Sequence[Sequence[Mapping]],
    count_tokens: TokenCounter = estimate_tokens,
) -> List[StrategyProblem]:
    """Every rule `strategy` breaks on `windows` (an empty list: it keeps them all)."""
    if not callable(getattr(strategy, "compress", None)):
        return [
            StrategyProblem(
                -1,
                "a strategy has compress(messages)",
                f"{type(strategy).__name__} has no compress method",
            )
        ]
    found = []
    for number, messages in enumerate(windows):
        validate_messages(messages, where=f"windows[{number}]")
        found += _problems_on(strategy, number, messages, count_tokens)
        if not found:  # idempotence: its own output must be a window it can take again
            again = strategy.compress(copy.deepcopy(list(messages))).messages
            found += _problems_on(strategy, number, again, count_tokens)
    return found
