"""pi sessions: the window is one path of the entry tree, read as pi rebuilds it."""

import json
from pathlib import Path

import pytest
from message_builders import refused_unless_repairable

from minilib.logs import LogFileError, load_log, parse_log

FIXTURE = Path(__file__).resolve().parent.parent / "data" / "logs" / "pi_session.jsonl"
HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/w"}


def session(*entries, header=HEADER) -> str:
    """A pi session's text; entries without an id get one, chained to the one before."""
    lines, parent = [header], None
    for number, entry in enumerate(entries):
        entry = {"id": f"e{number}", "parentId": parent, **entry}
        parent = entry["id"]
        lines.append(entry)
    return "".join(json.dumps(line) + "\n" for line in lines)


def message(role, content, **fields):
    return {"type": "message", "message": {"role": role, "content": content, **fields}}


def call(call_id, name="bash", **arguments):
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


def result(call_id, text, **fields):
    return message(
        "toolResult", [{"type": "text", "text": text}], toolCallId=call_id, **fields
    )


def test_the_window_is_the_path_to_the_last_entry():
    log = load_log(FIXTURE)
    ids = [c["id"] for m in log.messages for c in m.get("tool_calls") or ()]
    assert ids == ["toolu_p1", "toolu_p2", "toolu_p3", "toolu_p5", "toolu_p7"]
    # the branch the person left (an edit and its result) is not in the window
    abandoned = [w for w, why in log.skipped if why.startswith("on an abandoned")]
    assert abandoned == ["line 10", "line 11"]
    summary = log.messages[6]
    assert summary["role"] == "user" and summary["content"].startswith(
        "The following is a summary of a branch"
    )
    assert summary["content"].endswith("wrong layout.</summary>")


def test_parallel_calls_long_output_and_a_failed_call():
    log = load_log(FIXTURE)
    first = log.messages[1]
    assert first["content"] == (
        "I'll read the renderer and list the tests at the same time."
    )  # the thinking block is not part of it
    assert json.loads(first["tool_calls"][0]["function"]["arguments"]) == {
        "path": "inkwell/render.py"
    }
    assert [m["tool_call_id"] for m in log.messages[2:4]] == ["toolu_p1", "toolu_p2"]
    assert len(log.messages[2]["content"]) > 2000
    assert log.messages[5]["error"] == {
        "code": "TOOL_ERROR",
        "message": "FAILED tests/test_render.py::test_footer_year - "
        "AssertionError: '2024' != '2025'",
    }


def test_aborted_turn_and_its_result_are_left_out_as_pi_leaves_them_out():
    log = load_log(FIXTURE)
    assert "toolu_p6" not in json.dumps(log.messages)
    assert ("line 18", "assistant stopped by aborted: not sent back") in log.skipped
    assert (
        "line 19",
        "result of a call of a stopped assistant: not sent back",
    ) in log.skipped
    # the compaction is pi's own summary: skipped, and what it summarized stays
    assert "toolu_p5" in json.dumps(log.messages)
    reminder = log.messages[10]
    assert reminder == {
        "role": "user",
        "content": "Reminder from the lint extension: run `ruff check inkwell` "
        "before you finish.",
        "timestamp": "2025-11-04T09:10:00.000Z",  # when pi wrote it: idle gaps show
    }


def test_bash_executions_are_user_text_unless_kept_out_of_the_context():
    text = session(
        message("user", "hi"),
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": "make test",
                "output": "2 failed",
                "exitCode": 2,
                "cancelled": False,
                "truncated": False,
            },
        },
        {
            "type": "message",
            "message": {
                "role": "bashExecution",
                "command": "cat secrets.env",
                "output": "TOKEN=x",
                "exitCode": 0,
                "excludeFromContext": True,
            },
        },
        message("assistant", [{"type": "text", "text": "ok"}]),
    )
    log = parse_log(text, "x")
    assert log.messages[1]["content"] == (
        "Ran `make test`\n```\n2 failed\n```\n\nCommand exited with code 2"
    )
    assert "TOKEN" not in json.dumps(log.messages)
    assert ("line 4", "bashExecution with !!: kept out of the context by pi") in (
        log.skipped
    )


def test_a_version_1_file_without_ids_is_one_path():
    header = {"type": "session", "id": "s1", "timestamp": "t", "cwd": "/w"}
    lines = [
        header,
        message("user", "list files"),
        message("assistant", [call("c1", command="ls")]),
        result("c1", "a.py"),
        message("assistant", [{"type": "text", "text": "one file"}]),
    ]
    log = parse_log("".join(json.dumps(line) + "\n" for line in lines), "x")
    assert [m["role"] for m in log.messages] == ["user", "assistant", "tool", "assistant"]


def test_a_claude_code_or_plain_jsonl_file_is_not_taken_for_pi():
    plain = '{"role": "user", "content": "a"}\n{"role": "assistant", "content": "b"}\n'
    assert parse_log(plain).shape == "openai-chat"
    header_only = json.dumps(HEADER) + "\n" + json.dumps({"type": "model_change"}) + "\n"
    with pytest.raises(LogFileError, match=r"pi-session \(no line with type message\)"):
        parse_log(header_only, "x")


@pytest.mark.parametrize(
    "entries, expected",
    [
        (
            [
                message("user", "a"),
                {
                    "type": "message",
                    "parentId": "zz",
                    "message": {"role": "user", "content": "b"},
                },
            ],
            "x: line 3: parentId 'zz' names no entry",
        ),
        (
            [message("user", "a"), message("assistant", [{"type": "toolCall"}])],
            "x: line 3: message.content[0]: toolCall needs 'id' and 'name'",
        ),
        (
            [message("user", "a"), message("toolResult", [])],
            "x: line 3: message.toolCallId is missing",
        ),
        (
            [message("user", "a"), message("robot", "beep")],
            "x: line 3: message.role is 'robot'; expected user, assistant, "
            "toolResult, bashExecution or custom",
        ),
        (
            [message("user", "a"), {"type": "teleport"}],
            "x: line 3: entry type 'teleport' is not a pi session entry",
        ),
        (
            [message("user", 7)],
            "x: line 2: message.content must be a string or a list of blocks",
        ),
        (
            [
                message("user", "a"),
                message("assistant", [call("c1")]),
                result("c9", "out"),
            ],
            "x: line 4: tool result for call 'c9' answers no open call of the "
            "assistant message before it",
        ),
    ],
)
def test_a_damaged_field_is_one_line_naming_line_and_field(entries, expected):
    text = session(*entries)
    refused_unless_repairable(lambda strict: parse_log(text, "x", strict), expected)


def test_a_damaged_line_is_named_by_its_number():
    text = session(message("user", "a"), message("assistant", "b"))
    broken = text.replace('"role": "assistant"', '"role": "assistant",,', 1)
    with pytest.raises(LogFileError, match=r"^x: line 3 is not valid JSON"):
        parse_log(broken, "x", strict=True)
    # one damaged line of three is within the limit (1%, at least one): skipped
    [repair] = parse_log(broken, "x").repairs
    assert (repair.kind, repair.where) == ("bad-line", "line 3")
