"""Goose JSON Lines sessions: tool requests and responses, and what Goose keeps out."""

import json
from pathlib import Path

import pytest
from message_builders import refused_unless_repairable

from minilib.logs import load_log, parse_log

FIXTURE = Path(__file__).resolve().parent.parent / "data" / "logs" / "goose_session.jsonl"
META = {"working_dir": "/w", "description": "d", "message_count": 2, "total_tokens": 9}


def session(*messages, meta=META) -> str:
    lines = ([meta] if meta else []) + [
        {"role": role, "created": 1762300000 + n, "content": content, **extra}
        for n, (role, content, extra) in enumerate(messages)
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def text(value, **fields):
    return {"type": "text", "text": value, **fields}


def request(call_id, name="developer__shell", **arguments):
    value = {"name": name, "arguments": arguments}
    return {
        "type": "toolRequest",
        "id": call_id,
        "toolCall": {"status": "success", "value": value},
    }


def response(call_id, value, status="success"):
    result = (
        {"status": status, "value": value}
        if status == "success"
        else {
            "status": "error",
            "error": value,
        }
    )
    return {"type": "toolResponse", "id": call_id, "toolResult": result}


def test_parallel_requests_answered_in_call_order_with_the_long_output():
    log = load_log(FIXTURE)
    first = log.messages[1]
    assert (
        first["content"]
        == "I'll read the test and find the retry helper at the same time."
    )
    assert [c["function"]["name"] for c in first["tool_calls"]] == [
        "developer__text_editor",
        "developer__shell",
    ]
    assert [m["tool_call_id"] for m in log.messages[2:4]] == ["toolu_g1", "toolu_g2"]
    # the person-only line of the response is not what the model got
    assert len(log.messages[2]["content"]) > 2000
    assert "(64 lines shown)" not in log.messages[2]["content"]


def test_errors_from_is_error_and_from_an_error_status():
    log = load_log(FIXTURE)
    tools = {m["tool_call_id"]: m for m in log.messages if m["role"] == "tool"}
    assert tools["toolu_g3"]["error"] == {
        "code": "TOOL_ERROR",
        "message": "FAILED tests/test_retry.py::test_backoff_step_3 - "
        "assert 1.0012 <= 1.0",
    }
    assert tools["toolu_g5"]["error"]["message"].startswith("-32603: No match found")
    assert "error" not in tools["toolu_g6"]


def test_unparsed_requests_and_agent_invisible_messages_are_skipped():
    log = load_log(FIXTURE)
    assert "toolu_g4" not in json.dumps(log.messages)
    assert "running low on context" not in json.dumps(log.messages)
    assert ("line 13", "agentVisible false: kept out of the model's context") in (
        log.skipped
    )
    assert log.messages[-1]["content"].startswith("Fixed: delay() rounded the step")


def test_without_a_metadata_line_and_with_text_after_the_responses():
    text_ = session(
        ("user", [text("run it")], {}),
        ("assistant", [request("c1", command="ls")], {}),
        ("user", [response("c1", [text("a.py")]), text("now the tests")], {}),
        ("assistant", [text("done")], {}),
        meta=None,
    )
    log = parse_log(text_, "x")
    assert log.shape == "goose-session"
    assert [m["role"] for m in log.messages] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert log.messages[3]["content"] == "now the tests"


def test_a_plain_chat_jsonl_file_is_not_taken_for_goose():
    plain = '{"role": "user", "content": "a"}\n{"role": "assistant", "content": "b"}\n'
    assert parse_log(plain).shape == "openai-chat"


@pytest.mark.parametrize(
    "messages, expected",
    [
        (
            [("user", [text("a")], {}), ("assistant", [{"type": "toolRequest"}], {})],
            "x: line 3: content[0]: toolRequest needs 'id' and 'toolCall'",
        ),
        (
            [
                ("user", [text("a")], {}),
                ("assistant", [request("c1")], {}),
                ("user", [{"type": "toolResponse", "id": "c1", "toolResult": {}}], {}),
            ],
            "x: line 4: content[0].toolResult.status must be success or error",
        ),
        (
            [
                ("user", [text("a")], {}),
                ("assistant", [request("c1")], {}),
                ("user", [response("c7", [text("out")])], {}),
            ],
            "x: line 4: content[0]: tool result for call 'c7' answers no open call "
            "of the assistant message before it",
        ),
        (
            [("user", [text("a")], {}), ("robot", [text("b")], {})],
            "x: line 3: role is 'robot'; expected user or assistant",
        ),
        (
            [("user", [{"type": "hologram"}], {})],
            "x: line 2: content[0] has type 'hologram', not a user content item",
        ),
        (
            [
                ("user", [text("a")], {}),
                ("assistant", [request("c1")], {}),
                ("user", [response("c1", [{"type": "video"}])], {}),
            ],
            "x: line 4: content[0].toolResult.value[0] has type 'video', not an MCP "
            "content item",
        ),
    ],
)
def test_a_damaged_field_is_one_line_naming_line_and_field(messages, expected):
    text = session(*messages)
    refused_unless_repairable(lambda strict: parse_log(text, "x", strict), expected)
