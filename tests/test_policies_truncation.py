"""minilib.policies.truncation: drop the closed range, whole call groups only."""

import pytest
from message_builders import tool, tool_call

from minilib import closed_range
from minilib.policies import SlidingWindowTruncation

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def parallel(call_ids, text="x"):
    """One assistant message with parallel calls, and their answers in reverse order."""
    message = {
        "role": "assistant",
        "content": "look",
        "tool_calls": [tool_call(c) for c in call_ids],
    }
    return [message] + [tool(c, f"{text} {c}") for c in reversed(call_ids)]


def test_truncation_drops_the_closed_range_and_keeps_head_and_tail():
    history = HEAD + parallel(["a", "b"]) + parallel(["c"]) + parallel(["d"])
    result = SlidingWindowTruncation(protect_tail=2).compress(history)
    assert result.messages == HEAD + history[-2:]
    assert result.affected_indexes == list(range(2, 7))


def test_truncation_never_splits_parallel_calls_from_their_answers():
    history = (
        HEAD + parallel(["a"]) + parallel(["b", "c", "d"])
    )  # tail of 2 cuts into the second group
    result = SlidingWindowTruncation(protect_tail=2).compress(history)
    assert result.messages == HEAD + history[4:]  # the whole parallel group stays
    assert closed_range(history, 2) == range(2, 4)


def test_truncation_with_nothing_closed_changes_nothing():
    history = HEAD + parallel(["a"])
    result = SlidingWindowTruncation(protect_tail=2).compress(history)
    assert not result.changed and result.messages == history


def test_truncation_parameter_is_checked():
    with pytest.raises(ValueError, match="protect_tail must be >= 0"):
        SlidingWindowTruncation(protect_tail=-1)
