"""Responses API items: an Agents SDK session or a request body, read like Codex items."""

import json
from pathlib import Path

import pytest
from message_builders import refused_unless_repairable

from minilib.logs import LogFileError, load_log, parse_log

FIXTURE = (
    Path(__file__).resolve().parent.parent
    / "data"
    / "logs"
    / "openai_agents_session.json"
)


def fc(call_id, name="lookup", **arguments):
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
    }


def out(call_id, output):
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def said(text, role="assistant"):
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def test_a_message_and_the_calls_after_it_are_one_response():
    log = load_log(FIXTURE)
    assert log.messages[0] == {
        "role": "user",
        "content": "Which month of sales.csv had the highest return rate?",
    }  # the SDK stores the user's input as {role, content}, no type
    first = log.messages[1]
    assert (
        first["content"] == "I'll load the file and check the columns at the same time."
    )
    assert [c["id"] for c in first["tool_calls"]] == ["call_r1", "call_r2"]
    # outputs written r2 then r1: placed in call order
    assert [m["tool_call_id"] for m in log.messages[2:4]] == ["call_r1", "call_r2"]
    assert len(log.messages[2]["content"]) > 2000


def test_the_sdk_failure_text_is_a_tool_error():
    log = load_log(FIXTURE)
    assert log.messages[5]["error"] == {
        "code": "TOOL_ERROR",
        "message": "AttributeError: Can only use .dt accessor with datetimelike values",
    }
    assert "error" not in log.messages[7]


def test_a_request_body_gives_instructions_and_declared_tools():
    body = {
        "model": "gpt-4.1",
        "instructions": "You answer questions about sales data.",
        "tools": [
            {"type": "function", "name": "lookup", "parameters": {}},
            {"type": "web_search"},
        ],
        "input": [{"role": "user", "content": "q"}, fc("c1", q="x"), out("c1", "42")],
    }
    log = parse_log(json.dumps(body), "x")
    assert log.shape == "responses-items"
    assert log.system_source == "field 'instructions'"
    assert log.declared_tools == ("lookup",)
    assert [m["role"] for m in log.messages] == ["system", "user", "assistant", "tool"]
    body["input"].append(fc("c2", name="delete_everything"))
    with pytest.raises(LogFileError, match=r"calls unknown tool 'delete_everything'"):
        parse_log(json.dumps(body), "x")


def test_hosted_calls_and_computer_use_are_skipped():
    items = [
        {"role": "user", "content": "q"},
        {
            "type": "file_search_call",
            "id": "fs1",
            "queries": ["x"],
            "status": "completed",
        },
        {"type": "computer_call", "call_id": "cc1", "action": {"type": "screenshot"}},
        {
            "type": "computer_call_output",
            "call_id": "cc1",
            "output": {"type": "input_image"},
        },
        said("done"),
    ]
    log = parse_log(json.dumps(items), "x")
    assert [m["role"] for m in log.messages] == ["user", "assistant"]
    assert [why for _, why in log.skipped] == [
        "file_search_call: run by the provider, not by the agent",
        "computer_call: computer use, screenshots are not text",
        "computer_call_output: computer use, screenshots are not text",
    ]


def test_a_plain_chat_list_is_not_taken_for_responses_items():
    plain = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert parse_log(json.dumps(plain)).shape == "openai-chat"


@pytest.mark.parametrize(
    "items, expected",
    [
        (
            [said("q", "user"), {"type": "function_call", "name": "lookup"}],
            "x: items[1].call_id is missing",
        ),
        (
            [said("q", "user"), fc("c1"), out("c9", "x")],
            "x: items[2]: tool result for call 'c9' answers no open call of the "
            "assistant message before it",
        ),
        (
            [said("q", "user"), {"type": "message", "role": "user", "content": 7}],
            "x: items[1].content must be a string or a list of parts, got int",
        ),
    ],
)
def test_a_damaged_field_is_one_line_naming_the_item_and_field(items, expected):
    text = json.dumps(items)
    refused_unless_repairable(lambda strict: parse_log(text, "x", strict), expected)


def test_an_unknown_item_type_is_named_when_no_shape_fits():
    items = [said("q", "user"), {"type": "teleport"}]
    with pytest.raises(LogFileError) as error:
        parse_log(json.dumps(items), "x")
    assert "responses-items (items[1] has type 'teleport', not a Responses item)" in (
        str(error.value)
    )
    assert "\n" not in str(error.value)
