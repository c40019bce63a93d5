"""OpenHands V1 (software-agent-sdk) records: parallel calls by llm_response_id."""

import json
from pathlib import Path

import pytest
from message_builders import refused_unless_repairable

from minilib.logs import LogFileError, load_log, openhands, parse_log
from minilib.logs.detect import parse_text

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "data" / "logs"
FIXTURE = LOGS / "openhands_v1_output.jsonl"


def action(call_id, response, thought="", name="terminal", arguments='{"command": "ls"}'):
    return {
        "kind": "ActionEvent",
        "source": "agent",
        "thought": [{"type": "text", "text": thought}] if thought else [],
        "tool_name": name,
        "tool_call_id": call_id,
        "tool_call": {"id": call_id, "name": name, "arguments": arguments},
        "llm_response_id": response,
    }


def observation(call_id, text, **fields):
    return {
        "kind": "ObservationEvent",
        "source": "environment",
        "tool_call_id": call_id,
        "observation": {"kind": "TerminalObservation", "content": text, **fields},
    }


def record(*history, **fields):
    return json.dumps({"instance_id": "t-1", **fields, "history": list(history)})


def test_parallel_calls_are_one_message_and_results_follow_in_call_order():
    log = load_log(FIXTURE)
    assert log.messages[0]["content"].startswith("<uploaded_files>")  # the instruction
    first = log.messages[1]
    assert (
        first["content"]
        == "I'll list the Python files and open the worker at the same time."
    )
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_v01", "toolu_v02"]
    assert (
        json.loads(first["tool_calls"][1]["function"]["arguments"])["command"] == "view"
    )
    # the file records the second result first; the reader follows call order
    assert [m["tool_call_id"] for m in log.messages[2:4]] == ["toolu_v01", "toolu_v02"]
    assert len(log.messages[3]["content"]) > 2000
    assert log.messages[5]["error"]["code"] == "EXIT_1"
    assert log.messages[6]["content"] == "Doubling per attempt, capped at max_delay."


def test_only_the_first_record_is_read_and_the_others_are_counted():
    log = load_log(FIXTURE)
    others = [w for w, why in log.skipped if why.startswith("another task's record")]
    assert others == ["line 2", "line 3"]
    assert "run_all should stop" not in json.dumps(log.messages)


def test_a_state_file_with_a_user_message_and_a_system_prompt():
    text = record(
        {
            "kind": "SystemPromptEvent",
            "source": "agent",
            "system_prompt": {"type": "text", "text": "You are OpenHands."},
            "tools": [],
        },
        {
            "kind": "MessageEvent",
            "source": "user",
            "llm_message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "fix it"},
                    {"type": "image", "image_urls": ["x"]},
                ],
            },
        },
        action("c1", "r1", "two at once"),
        action(
            "c2", "r1", name="file_editor", arguments='{"command": "view", "path": "/a"}'
        ),
        observation("c1", "out", exit_code=0),
        {
            "kind": "AgentErrorEvent",
            "source": "agent",
            "tool_name": "file_editor",
            "tool_call_id": "c2",
            "error": "path /a does not exist",
        },
        action("c3", "r2"),
        {
            "kind": "UserRejectObservation",
            "tool_name": "terminal",
            "tool_call_id": "c3",
            "rejection_reason": "not now",
        },
        action("c4", "r3"),
        observation("c4", [{"type": "text", "text": "boom"}], is_error=True),
        instruction="fix it",
    )
    log = parse_log(text, "state.json")
    assert log.system_source == "history[0].system_prompt"
    assert [m["role"] for m in log.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    assert [
        m.get("error", {}).get("code") for m in log.messages if m["role"] == "tool"
    ] == [None, "AGENT_ERROR", "REJECTED", "TOOL_ERROR"]
    assert ("instruction", "instruction: the user's message repeats it") in log.skipped
    assert (
        "history[1].llm_message.content[1]",
        "image part: cannot be measured as text",
    ) in log.skipped


def test_detection_keeps_v0_and_v1_apart():
    v1 = parse_text(FIXTURE.read_text(encoding="utf-8"), "v1")
    for shape in openhands.SHAPES:
        assert shape.detect(v1) is not None, shape.name
    assert load_log(LOGS / "openhands_eval.json").shape == "openhands-eval"


@pytest.mark.parametrize(
    "history, expected",
    [
        (
            [{"kind": "ActionEvent", "tool_call_id": "c1"}],
            "x: history[0].tool_call is missing",
        ),
        (
            [action("c1", "r1", arguments='{"command": ')],
            "x: history[0].tool_call.arguments is not valid JSON "
            "(Expecting value, column 13)",
        ),
        (
            [
                action("c1", "r1"),
                {"kind": "ObservationEvent", "observation": {"content": "x"}},
            ],
            "x: history[1].tool_call_id is missing",
        ),
        (
            [action("c1", "r1"), observation("c9", "x")],
            "x: history[1]: tool result for call 'c9' answers no open call of the "
            "assistant message before it",
        ),
        (
            [action("c1", "r1"), {"kind": "ObservationEvent", "tool_call_id": "c1"}],
            "x: history[1].observation is missing",
        ),
    ],
)
def test_a_damaged_field_is_named(history, expected):
    text = record(*history, instruction="go")
    refused_unless_repairable(lambda strict: parse_log(text, "x", strict), expected)


def test_in_a_jsonl_file_the_line_is_named():
    text = record(action("c1", "r1"), observation("c9", "x"), instruction="go") + "\n"
    with pytest.raises(LogFileError) as error:
        parse_log(text + text, "out.jsonl", strict=True)
    assert str(error.value).startswith(
        "out.jsonl: line 1: history[1]: tool result for call 'c9'"
    )
    # unless strict, the result whose call the file lacks is kept as context text
    repair = parse_log(text + text, "out.jsonl").repairs[0]
    assert (repair.kind, repair.where) == ("orphan-result", "line 1: history[1]")
