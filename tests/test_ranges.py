"""minilib.ranges: the closed range a summary may fold keeps each call with its answer."""

import pytest
from message_builders import OPENING, PAIR, assistant, groups, tool

from minilib import (
    closed_range,
    range_candidates,
    validate_messages,
)

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def test_narrows_until_no_tool_call_is_left_unanswered():
    # protect_tail=3 would cut between the call "c" and its answer: the range must shrink.
    messages = HEAD + groups("a", "b", "c", "d")
    candidates = list(range_candidates(messages, protect_tail=3))
    assert [c.end for c in candidates] == [7, 6]
    assert "unanswered tool call c" in candidates[0].reason and candidates[-1].closed
    assert closed_range(messages, 3) == range(2, 6)


def test_parallel_calls_stay_with_all_their_answers():
    parallel = [
        assistant("two at once", "p1", "p2"),
        tool("p1", "one\n" + "z" * 300),
        tool("p2", "two\n" + "z" * 300),
    ]
    messages = HEAD + groups("a") + parallel + groups("b", "c")
    for tail in range(0, 8):
        span = closed_range(messages, tail)
        folded = messages[span.start : span.stop]
        ids = {c["id"] for m in folded for c in m.get("tool_calls") or []}
        answers = {m["tool_call_id"] for m in folded if m["role"] == "tool"}
        assert ids == answers, f"protect_tail={tail} split a group"
        kept = messages[: span.start] + messages[span.stop :]
        validate_messages(kept)


def test_protected_head_and_a_user_message_in_the_range():
    messages = (
        HEAD + groups("a") + [{"role": "user", "content": "and also"}] + groups("b", "c")
    )
    span = closed_range(messages, protect_tail=4)
    assert span == range(2, 4)  # stops before the later user message
    assert closed_range(HEAD + groups("a"), protect_tail=4) == range(
        2, 2
    )  # nothing outside the tail


# --- errors
# --------------------------------------------------------------------------------


def test_a_negative_protect_tail_is_named():
    with pytest.raises(ValueError) as raised:
        closed_range(OPENING + PAIR, -1)
    assert str(raised.value) == "protect_tail must be >= 0, got -1"
