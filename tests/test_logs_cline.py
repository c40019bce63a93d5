"""Cline / Roo Code task histories: results paired by position, detection by signature."""

import json
from pathlib import Path

import pytest
from message_builders import refused_unless_repairable

from minilib.agents.claude_code import reader as claude_code_reader
from minilib.logs import anthropic, load_log, openai, parse_log
from minilib.logs.detect import parse_text

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "data" / "logs" / "cline_task.json"


def text(value):
    return {"type": "text", "text": value}


def use(call_id, name, **arguments):
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def cline(*messages):
    """A Cline history: each message gets the `ts` Cline writes."""
    return json.dumps(
        [dict(message, ts=1_772_600_000_000 + n) for n, message in enumerate(messages)]
    )


TASK = {"role": "user", "content": [text("<task>\nlist the files\n</task>")]}


def test_results_pair_with_the_calls_by_position():
    log = load_log(FIXTURE)
    first = log.messages[1]
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_c01", "toolu_c02"]
    assert json.loads(first["tool_calls"][0]["function"]["arguments"]) == {
        "path": "tinyqueue/worker.py"
    }
    results = log.messages[2:4]
    assert [m["tool_call_id"] for m in results] == ["toolu_c01", "toolu_c02"]
    assert results[0]["content"].startswith(
        "[read_file for 'tinyqueue/worker.py'] Result:\n"
    )
    assert results[1]["content"].startswith(
        "[read_file for 'tests/test_worker.py'] Result:"
    )
    assert len(results[0]["content"]) > 2000
    # the rest of the user message comes after the results, as one user turn
    assert log.messages[4]["role"] == "user"
    assert log.messages[4]["content"].startswith("<environment_details>")


def test_failed_interrupted_and_two_block_results():
    log = load_log(FIXTURE)
    tools = {m["tool_call_id"]: m for m in log.messages if m["role"] == "tool"}
    assert tools["toolu_c03"]["error"] == {
        "code": "TOOL_ERROR",
        "message": "The SEARCH block:",
    }
    assert tools["toolu_c06"]["error"]["code"] == "INTERRUPTED"
    # the older form: a header block alone, the output in the next text block
    assert tools["toolu_c05"]["content"].startswith(
        "[execute_command for 'python -m pytest -q'] Result:\nCommand executed."
    )
    assert "error" not in tools["toolu_c05"]
    users = [m["content"] for m in log.messages if m["role"] == "user"]
    assert any(u.startswith("[ERROR] You did not use a tool") for u in users)
    assert any(u.startswith("[TASK RESUMPTION]") for u in users)
    assert not any(m.get("observation") for m in log.messages)


def test_a_tool_result_block_pairs_by_id_or_else_by_position():
    log = parse_log(
        cline(
            TASK,
            {
                "role": "assistant",
                "content": [use("t1", "list_files"), use("t2", "read_file")],
            },
            {
                "role": "user",
                "content": [
                    # named: answers t2 although it comes first
                    {"type": "tool_result", "tool_use_id": "t2", "content": "b"},
                    # Cline's fallback id names no call: the next open one
                    {
                        "type": "tool_result",
                        "tool_use_id": "cline",
                        "content": "a",
                        "is_error": True,
                    },
                ],
            },
        )
    )
    assert [(m["tool_call_id"], m["content"]) for m in log.messages[2:]] == [
        ("t1", "a"),
        ("t2", "b"),
    ]
    assert log.messages[2]["error"] == {"code": "TOOL_ERROR", "message": "a"}


def test_a_refused_second_call_and_a_header_naming_another_tool():
    log = parse_log(
        cline(
            TASK,
            {
                "role": "assistant",
                "content": [use("t1", "list_files"), use("t2", "read_file")],
            },
            {
                "role": "user",
                "content": [
                    text("[execute_command for 'ls'] Result:\na.py"),
                    text(
                        "Tool [read_file] was not executed because a tool has already "
                        "been used in this message."
                    ),
                ],
            },
        ),
        "x",
    )
    assert log.messages[3]["error"]["code"] == "NOT_EXECUTED"
    assert log.notes == [
        ("messages[2].content[0]", "result header names another tool: paired by position")
    ]


def test_headers_without_calls_are_environment_output_in_a_user_turn():
    # early versions wrote tool calls as XML in the text: no tool_use block to answer
    log = parse_log(
        json.dumps(
            [
                TASK,
                {
                    "role": "assistant",
                    "content": [text("<list_files>\n<path>.</path>\n</list_files>")],
                },
                {
                    "role": "user",
                    "content": [
                        text("[list_files for '.'] Result:"),
                        text("a.py\nb.py"),
                        text("<environment_details>\n</environment_details>"),
                    ],
                },
            ]
        )
    )
    assert log.shape == "cline"  # the headers are the signature here, with no `ts`
    assert log.messages[-1]["observation"] is True
    assert log.messages[-1]["content"].startswith("[list_files for '.'] Result:\na.py")


def test_detection_is_by_signature():
    doc = parse_text(FIXTURE.read_text(encoding="utf-8"), "cline")
    for shape in openai.SHAPES + anthropic.SHAPES + claude_code_reader.SHAPES:
        assert shape.detect(doc) is not None, shape.name
    # a plain Anthropic Messages list (tool_result blocks with ids, no ts) is not Cline's
    plain = [
        TASK,
        {"role": "assistant", "content": [use("t1", "list_files")]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}],
        },
        {"role": "assistant", "content": [text("One file.")]},
    ]
    log = parse_log(json.dumps(plain))
    assert log.shape == "anthropic-messages"
    assert [m["role"] for m in log.messages] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.parametrize(
    "messages, expected",
    [
        (
            [
                TASK,
                {"role": "assistant", "content": [{"type": "tool_use", "name": "ls"}]},
            ],
            "x: messages[1].content[0]: tool_use needs 'id' and 'name'",
        ),
        (
            [
                TASK,
                {"role": "assistant", "content": [use("t1", "ls")]},
                {"role": "user", "content": 7},
            ],
            "x: messages[2].content must be a string or a list of blocks",
        ),
        (
            [
                TASK,
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t9"}],
                },
            ],
            "x: messages[1].content[0]: tool_result answers no open tool call",
        ),
        (
            [TASK, {"role": "assistant", "content": [{"type": "audio"}]}],
            "x: messages[1].content[0] has type 'audio', not an assistant content block",
        ),
    ],
)
def test_a_damaged_field_is_named(messages, expected):
    text = cline(*messages)
    refused_unless_repairable(lambda strict: parse_log(text, "x", strict), expected)


def _with_metrics(tmp_path, keep_ui: bool):
    """The bundled task with each reply's own metrics, as newer Cline writes them:
    `cached` is what the cache read and wrote together (the ui file splits it)."""
    import json
    import shutil

    source = ROOT / "data" / "logs" / "as_kept" / "cline_task"
    folder = tmp_path / "task"
    shutil.copytree(source, folder)
    from minilib.agents.cline.reader import ui_requests

    requests = [
        c
        for _, c in ui_requests(
            json.loads((source / "ui_messages.json").read_text()), "ui"
        )
        if c
    ]
    history = json.loads((source / "api_conversation_history.json").read_text())
    replies = [m for m in history if m["role"] == "assistant"]
    for reply, counts in zip(replies, requests):
        reply["metrics"] = {
            "tokens": {
                "prompt": counts["tokensIn"],
                "completion": counts["tokensOut"],
                "cached": counts["cacheReads"] + counts["cacheWrites"],
            }
        }
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    if not keep_ui:
        (folder / "ui_messages.json").unlink()
    return folder / "api_conversation_history.json", requests


def test_the_replies_own_metrics_are_its_usage_when_the_ui_file_is_not_there(tmp_path):
    from minilib.logs.replay import load_transcript

    path, requests = _with_metrics(tmp_path, keep_ui=False)
    log = load_transcript(path)
    prompts = [c["tokensIn"] + c["cacheReads"] + c["cacheWrites"] for c in requests]
    assert [u.input_tokens for u in log.usage] == prompts[: len(log.usage)]
    assert log.usage and log.agent == "cline"
    assert any("lower bound" in what for _, what in log.notes)


def test_the_ui_file_beside_it_replaces_the_metrics_and_splits_the_cache(tmp_path):
    from minilib.logs.replay import load_transcript

    path, requests = _with_metrics(tmp_path, keep_ui=True)
    log = load_transcript(path)
    assert [u.cache_written for u in log.usage] == [
        c["cacheWrites"] for c in requests[: len(log.usage)]
    ]
    assert [c.cost_usd for c in log.billed] == [
        c["cost"] for c in requests[: len(log.billed)]
    ]
    assert not any("lower bound" in what for _, what in log.notes)
