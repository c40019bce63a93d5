import json

import pytest

from minilib import ScriptedModel, Tracer, Workspace, run_loop
from minilib.loop import MaxStepsExceeded
from minilib.model import ScriptEndedError


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta timeout\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.md").write_text("timeout again\n", encoding="utf-8")
    return Workspace(tmp_path)


def call(tool, **arguments):
    return {
        "id": f"id_{tool}",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
    }


def test_tools_read_list_and_search(workspace):
    assert (
        workspace.call("read_file", '{"path": "notes.txt"}').content
        == "alpha\nbeta timeout\n"
    )
    assert workspace.call("list_dir", {"path": "."}).content.splitlines() == [
        "notes.txt  19 bytes",
        "sub/",
    ]
    found = workspace.call("search_text", {"pattern": "timeout"}).content.splitlines()
    assert found == [
        "2 matches for 'timeout' in .",
        "notes.txt:2: beta timeout",
        "sub/a.md:1: timeout again",
    ]


@pytest.mark.parametrize(
    "name,arguments,code",
    [
        ("read_file", {"path": "missing.txt"}, "NOT_FOUND"),
        ("read_file", {"path": "../etc/passwd"}, "OUTSIDE_WORKSPACE"),
        ("read_file", {"path": "sub"}, "IS_A_DIRECTORY"),
        ("read_file", {}, "BAD_ARGUMENTS"),
        ("read_file", "{not json", "BAD_ARGUMENTS"),
        ("search_text", {"pattern": "("}, "BAD_ARGUMENTS"),
        ("list_dir", {"path": "nope"}, "NOT_FOUND"),
        ("rm_rf", {}, "UNKNOWN_TOOL"),
    ],
)
def test_tool_errors_are_structured(workspace, name, arguments, code):
    result = workspace.call(name, arguments)
    assert result.error["code"] == code
    assert result.content.startswith(f"error {code}: ")
    assert result.error["message"] in result.content


def test_loop_without_a_window_just_grows_and_traces_everything(workspace):
    replies = [
        {
            "role": "assistant",
            "content": "look",
            "tool_calls": [call("read_file", path="notes.txt")],
        },
        {
            "role": "assistant",
            "content": "bad",
            "tool_calls": [call("read_file", path="nope.txt")],
        },
        {"role": "assistant", "content": "done"},
    ]
    opening = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    tracer = Tracer()
    messages = run_loop(ScriptedModel(replies), list(opening), workspace, tracer=tracer)
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert messages[3]["content"] == "alpha\nbeta timeout\n"
    assert messages[5]["error"]["code"] == "NOT_FOUND"
    assert [c["purpose"] for c in tracer.events("model_call")] == ["decision"] * 3
    assert [t["output"] for t in tracer.events("tool_call")] == [
        messages[3]["content"],
        messages[5]["content"],
    ]
    assert [r["seq"] for r in tracer.records] == list(range(1, len(tracer.records) + 1))


def test_loop_limits(workspace):
    looping = [
        {"role": "assistant", "content": "again", "tool_calls": [call("list_dir")]}
    ] * 3
    with pytest.raises(MaxStepsExceeded):
        run_loop(
            ScriptedModel(looping),
            [{"role": "user", "content": "u"}],
            workspace,
            max_steps=3,
        )
    with pytest.raises(ScriptEndedError):
        run_loop(
            ScriptedModel(looping),
            [{"role": "user", "content": "u"}],
            workspace,
            max_steps=10,
        )
