"""Harbor ATIF trajectories: results inside the calling step, sidechain steps skipped."""

import json
from pathlib import Path

import pytest
from message_builders import refused_unless_repairable

from minilib.logs import LogFileError, load_log, parse_log

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "data" / "logs" / "harbor_trajectory.json"


def trajectory(*steps):
    numbered = [dict(step, step_id=n) for n, step in enumerate(steps, 1)]
    return json.dumps(
        {
            "schema_version": "ATIF-v1.4",
            "session_id": "s",
            "agent": {"name": "a", "version": "1"},
            "steps": numbered,
        }
    )


def agent(message="", calls=(), results=None, **fields):
    step = {"source": "agent", "message": message, **fields}
    if calls:
        step["tool_calls"] = [
            {"tool_call_id": c, "function_name": "bash", "arguments": {"cmd": c}}
            for c in calls
        ]
    if results is not None:
        step["observation"] = {"results": results}
    return step


TASK = {"source": "user", "message": "go"}


def test_results_inside_the_step_are_placed_after_its_message_in_call_order():
    log = load_log(FIXTURE)
    assert log.messages[0]["content"].startswith("You are an agent")
    first = log.messages[2]
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_h01", "toolu_h02"]
    assert json.loads(first["tool_calls"][0]["function"]["arguments"]) == {
        "file_path": "/app/tinyqueue/tinyqueue/worker.py"
    }
    assert [m["tool_call_id"] for m in log.messages[3:5]] == ["toolu_h01", "toolu_h02"]
    assert len(log.messages[3]["content"]) > 2000
    failed = next(m for m in log.messages if m.get("error"))
    assert failed["error"] == {"code": "TOOL_ERROR", "message": "Exit code 1"}
    assert [m["content"] for m in log.messages if m["role"] == "user"][1] == (
        "Also mention the new backoff in CHANGELOG.md."
    )


def test_sidechain_steps_are_skipped():
    log = load_log(FIXTURE)
    assert [w for w, why in log.skipped if why.startswith("sidechain")] == [
        "steps[4]",
        "steps[5]",
    ]
    assert "toolu_x01" not in json.dumps(log.messages)


def test_results_in_any_order_and_output_without_a_call():
    log = parse_log(
        trajectory(
            TASK,
            agent(
                calls=["c1", "c2"],
                results=[
                    {
                        "source_call_id": "c2",
                        "content": "two",
                        "extra": {"is_error": True},
                    },
                    {"content": "the terminal printed a banner"},
                    {"source_call_id": "c1", "content": "one"},
                ],
            ),
            agent("done"),
        )
    )
    assert [(m["role"], m["content"]) for m in log.messages[1:5]] == [
        ("assistant", None),
        ("tool", "one"),
        ("tool", "two"),
        ("user", "the terminal printed a banner"),
    ]
    assert log.messages[3]["error"]["code"] == "TOOL_ERROR"
    assert log.messages[4]["observation"] is True


def test_a_message_given_as_content_parts():
    log = parse_log(
        trajectory(
            {
                "source": "user",
                "message": [
                    {"type": "text", "text": "see"},
                    {"type": "image", "source": {}},
                ],
            },
            agent("ok"),
        )
    )
    assert log.messages[0] == {"role": "user", "content": "see"}
    assert log.skipped == [
        ("steps[0].message[1]", "image part: cannot be measured as text")
    ]


def test_only_atif_is_claimed():
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["schema_version"] = "v2"
    with pytest.raises(LogFileError) as error:
        parse_log(json.dumps(data), "x")
    assert "harbor-atif (no 'schema_version: ATIF-v1.*')" in str(error.value)


@pytest.mark.parametrize(
    "steps, expected",
    [
        (
            [TASK, {"source": "robot", "message": ""}],
            "x: steps[1].source is 'robot'; expected system, user or agent",
        ),
        (
            [
                TASK,
                agent(calls=["c1"], results=[{"source_call_id": "c9", "content": "x"}]),
            ],
            "x: steps[1].observation.results[0]: tool result for call 'c9' answers no "
            "open call of the assistant message before it",
        ),
        (
            [
                TASK,
                {
                    "source": "agent",
                    "message": "",
                    "tool_calls": [{"tool_call_id": "c1"}],
                },
            ],
            "x: steps[1].tool_calls[0].function_name is missing",
        ),
        (
            [TASK, agent(calls=["c1"], results="none")],
            "x: steps[1].observation.results must be a list",
        ),
    ],
)
def test_a_damaged_field_is_named(steps, expected):
    text = trajectory(*steps)
    refused_unless_repairable(lambda strict: parse_log(text, "x", strict), expected)
