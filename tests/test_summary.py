from message_builders import assistant, tool

from minilib import (
    SUMMARY_MARK,
    RollingSummary,
    closed_range,
    is_summary,
    range_candidates,
    scripted_summary,
    validate_messages,
)

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def groups(*ids, size=400):
    messages = []
    for call_id in ids:
        messages += [
            assistant(f"step {call_id}", call_id),
            tool(call_id, f"first line of {call_id}\n" + "z" * size),
        ]
    return messages


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
