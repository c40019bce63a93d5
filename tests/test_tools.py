"""minilib.tools: the workspace tools read, list and search, and fail with a code."""

import pytest


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
