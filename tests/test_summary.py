"""minilib.summary: RollingSummary folds the closed range into one quoting summary."""

import pytest
from message_builders import groups

from minilib import (
    SUMMARY_MARK,
    RollingSummary,
    is_summary,
    scripted_summary,
    validate_messages,
)

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def summarizer():
    return RollingSummary(scripted_summary, protect_tail=4)


def test_replaces_the_closed_range_between_head_and_tail():
    messages = HEAD + groups("a", "b", "c", "d")  # 10 messages; tail = last 4
    result = summarizer().compress(messages)
    assert result.affected_indexes == [2, 3, 4, 5]
    assert result.messages[:2] == HEAD
    assert result.messages[3:] == messages[6:]
    assert is_summary(result.messages[2]) and result.messages[2]["role"] == "user"
    validate_messages(result.messages)


def test_summary_quotes_actions_and_first_lines_verbatim():
    messages = HEAD + groups("a", "b", "c", "d")
    text = summarizer().compress(messages).messages[2]["content"]
    assert text.startswith(f"{SUMMARY_MARK} 折叠了 4 条早期消息")
    for call_id in ("a", "b"):
        assert f"- step {call_id} → read_file" in text
        assert f"read_file 回报: first line of {call_id}" in text
    assert "zzzz" not in text  # the rest of each result is what the summary loses


def test_a_second_summary_folds_in_the_first():
    messages = HEAD + groups("a", "b", "c", "d")
    first = summarizer().compress(messages).messages
    rolled = summarizer().compress(first + groups("e", "f"))
    assert rolled.affected_indexes[0] == 2  # the earlier summary is part of the new range
    summaries = [m for m in rolled.messages if is_summary(m)]
    assert len(summaries) == 1
    for call_id in ("a", "b", "c", "d"):
        assert f"step {call_id}" in summaries[0]["content"]


def test_never_inflates():
    messages = HEAD + groups("a", "b", size=0)
    verbose = RollingSummary(
        lambda folded: "一段很长的摘要" * 50, protect_tail=0
    )  # a wordy real model
    result = verbose.compress(messages)
    assert result.affected_indexes == [] and result.messages == messages


# --- errors
# --------------------------------------------------------------------------------


def test_a_protect_tail_that_is_not_an_integer_is_named():
    with pytest.raises(ValueError) as raised:
        RollingSummary(scripted_summary, protect_tail="4")
    assert str(raised.value) == "protect_tail must be an integer, got '4'"
