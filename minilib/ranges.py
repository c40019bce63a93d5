"""The closed-range rule: which old messages may be replaced as one block.

Every group-level path (the rolling summary, the hierarchical summary, truncation,
the external store) cuts only a *closed* range, because a cut that splits a tool
call from its answer makes the next API call fail:
- it starts right after the protected head (system messages and the first user
  message), taking along an earlier fold there (a summary, a store index);
- it ends before the protected tail (the last `protect_tail` messages);
- it holds assistant and tool messages only (plus environment output recorded as
  user messages, and, when a path allows it, later user turns and the system or
  developer messages a harness writes between them), and every tool call in it is
  answered in it, by position, parallel calls included.
While the range is not closed its end moves one message earlier: the article's
narrowing loop.

Example: a task, three calls with their results; the last 3 messages are protected.
The first candidate [2, 5) ends on a call whose answer is protected, so it narrows.

    >>> def call(i):
    ...     return {"id": i, "type": "function",
    ...             "function": {"name": "read_file", "arguments": "{}"}}
    >>> messages = [{"role": "system", "content": "s"},
    ...             {"role": "user", "content": "task"}]
    >>> for i in ("c1", "c2", "c3"):
    ...     messages += [{"role": "assistant", "content": "", "tool_calls": [call(i)]},
    ...                  {"role": "tool", "tool_call_id": i, "content": "ok"}]
    >>> for candidate in range_candidates(messages, protect_tail=3):
    ...     print(candidate.start, candidate.end, candidate.reason)
    2 5 unanswered tool call c2
    2 4 closed
    >>> closed_range(messages, protect_tail=3)
    range(2, 4)
"""

from typing import Callable, Iterator, Mapping, NamedTuple, Optional, Sequence

from .markers import is_summary
from .messages import (
    call_ids,
    check_int,
    is_observation,
    named_if_malformed,
    protected_head_length,
)

CarriedTest = Callable[[Mapping], bool]


class RangeCandidate(NamedTuple):
    """One step of the narrowing loop: the range [start, end) and why it
    is (not) closed."""

    start: int
    end: int
    closed: bool
    reason: str


def why_not_closed(
    messages: Sequence[Mapping],
    start: int,
    end: int,
    carried: CarriedTest = is_summary,
    fold_user_turns: bool = False,
) -> Optional[str]:
    """Why messages[start:end] may not be replaced as one block, or None when it may."""
    open_calls = []  # calls of the latest assistant message in the range not yet answered
    for index in range(start, end):
        message = messages[index]
        # 1. An earlier fold right after the head is folded again: that is the rolling.
        if index == start and carried(message):
            continue
        # 2. Only the agent's own work may be folded: assistant and tool messages, and
        #    user messages that are environment output (or later turns, if allowed,
        #    with the system messages a harness writes between turns: the head's own
        #    system messages are never in a range, it starts after them).
        role = message.get("role")
        foldable_user = role == "user" and (fold_user_turns or is_observation(message))
        foldable_system = role == "system" and fold_user_turns
        if role not in ("assistant", "tool") and not (foldable_user or foldable_system):
            return f"message {index} is a {role} message"
        # 3. A tool result must answer a call made inside the range, by position.
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                return f"tool result without its call {message.get('tool_call_id')}"
            open_calls.remove(message.get("tool_call_id"))
        elif open_calls:
            break  # a valid list never gets here; a call left open is reported below
        else:
            open_calls = call_ids(message)
    # 4. A call whose answer lies past the end would be left dangling.
    if open_calls:
        return "unanswered tool call " + ", ".join(sorted(open_calls))
    return None


def range_candidates(
    messages: Sequence[Mapping],
    protect_tail: int,
    carried: CarriedTest = is_summary,
    fold_user_turns: bool = False,
) -> Iterator[RangeCandidate]:
    """The narrowing loop, one candidate at a time, ending at the first closed range.

    An empty range (nothing may be cut) is the last candidate when no closed one exists.
    It trusts `messages` (the window checked them); a malformed list is still named.
    """
    check_int("protect_tail", protect_tail)
    with named_if_malformed(messages):
        # 1. The range starts right after the protected head (system and the task).
        start = protected_head_length(messages)
        # 2. An earlier fold there is carried along; the range must hold something new.
        first_new = (
            start + 1 if start < len(messages) and carried(messages[start]) else start
        )
        # 3. It ends before the protected tail, then narrows one message at a time
        #    until it is closed (the article's narrowing loop).
        end = len(messages) - protect_tail
        while end > first_new:
            reason = why_not_closed(messages, start, end, carried, fold_user_turns)
            yield RangeCandidate(start, end, reason is None, reason or "closed")
            if reason is None:
                return
            end -= 1
    yield RangeCandidate(start, start, False, "nothing left to summarize")


def closed_range(
    messages: Sequence[Mapping],
    protect_tail: int,
    carried: CarriedTest = is_summary,
    fold_user_turns: bool = False,
) -> range:
    """The closed range a group-level path would cut (empty when there is none)."""
    *_, last = range_candidates(messages, protect_tail, carried, fold_user_turns)
    return range(last.start, last.end) if last.closed else range(last.start, last.start)
