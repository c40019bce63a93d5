"""`claude -p --output-format stream-json`: subagent lines skipped, responses merged."""

import json
from pathlib import Path

import pytest
from message_builders import refused_unless_repairable

from minilib.agents.claude_code import reader as claude_code_reader
from minilib.logs import load_log, parse_log
from minilib.logs.detect import parse_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "data" / "logs" / "claude_stream.jsonl"
INIT = {"type": "system", "subtype": "init", "session_id": "s", "tools": ["Bash", "Task"]}


def line(kind, content, message_id=None, parent=None):
    message = {"role": kind, "content": content}
    if message_id:
        message["id"] = message_id
    return {
        "type": kind,
        "message": message,
        "parent_tool_use_id": parent,
        "session_id": "s",
    }


def stream(*records):
    return "".join(json.dumps(record) + "\n" for record in records)


def use(call_id, name="Bash"):
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"command": "ls"}}


def result(call_id, text, error=False):
    return {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": text,
        "is_error": error,
    }


def test_one_response_is_one_message_and_its_results_follow_in_call_order():
    log = load_log(FIXTURE)
    assert log.declared_tools[:3] == ("Task", "Bash", "Glob")
    first = log.messages[1]
    assert first["content"].startswith("I'll read the worker")
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_s01", "toolu_s02"]
    assert [m["tool_call_id"] for m in log.messages[2:4]] == ["toolu_s01", "toolu_s02"]
    assert len(log.messages[2]["content"]) > 2000
    errors = [m["error"] for m in log.messages if m.get("error")]
    assert errors[1] == {"code": "TOOL_ERROR", "message": "Exit code 1"}


def test_subagent_lines_are_skipped_and_its_answer_kept():
    log = load_log(FIXTURE)
    skipped = [where for where, why in log.skipped if why.startswith("subagent line")]
    assert skipped == ["line 9", "line 10", "line 11"]
    task = next(
        m
        for m in log.messages
        if m.get("tool_calls") and m["tool_calls"][0]["function"]["name"] == "Task"
    )
    answer = log.messages[log.messages.index(task) + 1]
    assert answer["tool_call_id"] == "toolu_s03"
    assert answer["content"].startswith("One test pins the delays")
    assert "toolu_x01" not in json.dumps(log.messages)


def test_without_the_skip_a_subagent_result_would_break_the_pairing():
    # the subagent's result line answers a call the main window never made
    text = stream(
        INIT,
        line("user", "go"),
        line("assistant", [use("t1", "Task")], "m1"),
        line("assistant", [use("x1")], "m2", parent="t1"),
        line("user", [result("x1", "sub output")], parent="t1"),
        line("user", [result("t1", "done")]),
        {"type": "result", "subtype": "success", "num_turns": 1, "result": "done"},
    )
    log = parse_log(text)
    assert [m["role"] for m in log.messages] == ["user", "assistant", "tool"]
    assert log.messages[2] == {"role": "tool", "tool_call_id": "t1", "content": "done"}


def test_a_stream_without_a_prompt_line_says_so():
    log = parse_log(
        stream(INIT, line("assistant", [{"type": "text", "text": "hi"}], "m1"))
    )
    assert log.notes == [
        ("line 2", "no prompt before the first reply: given on the command line")
    ]


def test_detection_is_by_signature():
    doc = parse_text(FIXTURE.read_text(encoding="utf-8"), "stream")
    [claude_code] = claude_code_reader.SHAPES
    assert claude_code.name == "claude-code"
    assert claude_code.detect(doc).startswith("stream-json output")
    # a stream whose init line was cut off is still known by its snake_case fields
    cut = stream(
        line("user", "go"), line("assistant", [{"type": "text", "text": "ok"}], "m")
    )
    assert parse_log(cut).shape == "claude-stream-json"
    # and a session file (camelCase fields, no init line) stays claude-code's
    session = ROOT / "data" / "logs" / "claude_code_session.jsonl"
    assert load_log(session).shape == "claude-code"


@pytest.mark.parametrize(
    "records, expected",
    [
        (
            [
                INIT,
                {"type": "user", "message": {"role": "user"}, "parent_tool_use_id": None},
            ],
            "x: line 2: message.content is missing",
        ),
        (
            [dict(INIT, tools="Bash"), line("user", "go")],
            "x: line 1: tools must be a list of tool names",
        ),
        (
            [INIT, line("user", [result("t7", "out")])],
            "x: line 2: message.content[0]: tool result for call 't7' answers no open "
            "call of the assistant message before it",
        ),
        (
            [
                INIT,
                line("user", "go"),
                line("assistant", [use("t1", "Edit")], "m1"),
                line("user", [result("t1", "ok")]),
            ],
            "x: messages[1].tool_calls[0].function.name calls unknown tool 'Edit'; "
            "the file declares Bash, Task",
        ),
    ],
)
def test_a_damaged_field_is_named(records, expected):
    text = stream(*records)
    refused_unless_repairable(lambda strict: parse_log(text, "x", strict), expected)
