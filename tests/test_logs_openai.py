"""openai-chat: one response's calls that a conversion split over several assistant
messages are merged back where the split is evident, and kept as rounds elsewhere."""

import json
from pathlib import Path

import pytest

from minilib.logs import LogFileError, load_log, parse_log

FIXTURES = Path(__file__).resolve().parent.parent / "data" / "logs"
MERGED = "one response's calls split over consecutive assistant messages: merged"


def call(call_id, name="shell"):
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": "{}"},
    }


def result(call_id):
    return {"role": "tool", "tool_call_id": call_id, "content": f"output of {call_id}"}


OPENING = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]


def test_back_to_back_parts_are_merged_with_their_results_after_them():
    log = load_log(FIXTURES / "openai_chat_split_calls.json")
    first = log.messages[2]
    assert first["content"] == "I'll read the sync module and the log at the same time."
    assert [c["id"] for c in first["tool_calls"]] == ["call_k1", "call_k2"]
    assert [m["tool_call_id"] for m in log.messages[3:5]] == ["call_k1", "call_k2"]
    assert ("messages[2]", MERGED) in log.notes


def test_parts_sharing_a_response_id_are_merged_and_textless_rounds_without_one_kept():
    log = load_log(FIXTURES / "openai_chat_split_calls.json")
    shared = log.messages[5]
    assert [c["id"] for c in shared["tool_calls"]] == ["call_k3", "call_k4"]
    assert [m["tool_call_id"] for m in log.messages[6:8]] == ["call_k3", "call_k4"]
    # no id: one call a round is also how agents work, so these stay two rounds
    assert [[c["id"] for c in m["tool_calls"]] for m in log.messages[8:12:2]] == [
        ["call_k5"],
        ["call_k6"],
    ]
    assert ("messages[6]", MERGED) in log.notes and len(log.notes) == 2


def test_results_after_all_parts_may_come_in_any_order():
    messages = OPENING + [
        {"role": "assistant", "content": "Three at once.", "tool_calls": [call("a")]},
        {"role": "assistant", "content": None, "tool_calls": [call("b")]},
        {"role": "assistant", "content": "", "tool_calls": [call("c")]},
        result("c"),
        result("a"),
        result("b"),
        {"role": "assistant", "content": None, "tool_calls": [call("d")]},
        result("d"),
    ]
    log = parse_log(json.dumps(messages), "split.json")
    assert [m["role"] for m in log.messages] == ["system", "user"] + ["assistant"] + [
        "tool"
    ] * 3 + ["assistant", "tool"]
    assert [m["tool_call_id"] for m in log.messages[3:6]] == ["a", "b", "c"]
    assert log.notes == [("messages[2]", MERGED)]  # the later round is not swallowed


def test_a_split_that_is_not_safe_to_merge_still_fails_on_pairing():
    # a result for a call no part made: merging would hide it, so it is reported
    messages = OPENING + [
        {"role": "assistant", "content": "x", "tool_calls": [call("a")]},
        {"role": "assistant", "content": None, "tool_calls": [call("b")]},
        result("a"),
        result("z"),
    ]
    with pytest.raises(
        LogFileError, match=r"^bad: messages\[4\]: tool result for call 'a'"
    ):
        parse_log(json.dumps(messages), "bad", strict=True)
    # the same id in two parts: one message may not hold it twice
    messages[3]["tool_calls"] = [call("a")]
    messages[5] = result("a")
    with pytest.raises(LogFileError, match=r"answers no open call"):
        parse_log(json.dumps(messages), "bad", strict=True)


def test_a_later_part_with_text_is_a_new_response():
    messages = OPENING + [
        {"role": "assistant", "id": "r1", "content": "x", "tool_calls": [call("a")]},
        result("a"),
        {"role": "assistant", "id": "r1", "content": "more", "tool_calls": [call("b")]},
        result("b"),
    ]
    log = parse_log(json.dumps(messages), "text.json")
    assert sum(m["role"] == "assistant" for m in log.messages) == 2 and not log.notes
