"""Which calls are a way back: only those that read (files, searches, folders)."""

import json

import pytest

from minilib.measure.way_back import declares_recall, log_declares_recall, read_only


def call(name, arguments):
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": text}}


@pytest.mark.parametrize(
    "name, arguments, needs",
    [
        # an absolute path, from its last folder on: a summary names the project's
        # files relative to it, and the agent knows the folder it works in
        ("Read", {"file_path": "/home/dev/app.py"}, ("dev/app.py",)),
        (
            "Read",
            {"file_path": "/Users/me/cli/cmd/strategy/auto_commit.go"},
            ("strategy/auto_commit.go",),
        ),
        ("Read", {"file_path": "/etc/hosts"}, ("/etc/hosts",)),  # too short to cut
        (
            "Grep",
            {"pattern": "delay_for", "path": "src", "description": "find"},
            ("delay_for",),
        ),  # "src" is too short to point at anything
        (
            "Bash",
            {"command": "cat src/app.py", "description": "Read it"},
            ("src/app.py",),
        ),
        (
            "exec_command",
            {"cmd": ["bash", "-lc", "rg -n FOOTNOTE src/inkwell"]},
            ("FOOTNOTE", "src/inkwell"),
        ),
        ("shell", {"command": "git show HEAD~1"}, ("HEAD~1",)),
        (
            "str_replace_editor",
            {"command": "view", "path": "/testbed/a.py"},
            ("/testbed/a.py",),
        ),
        ("list_files", {"path": "tests", "recursive": True}, ("tests",)),
    ],
)
def test_a_read_only_call_needs_its_path_or_pattern(name, arguments, needs):
    assert read_only(call(name, arguments)) == needs


@pytest.mark.parametrize(
    "name, arguments",
    [
        ("Edit", {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}),
        ("Bash", {"command": "pytest -q tests/test_app.py"}),
        ("Bash", {"command": "sed -i 's/a/b/' src/app.py"}),
        ("Bash", {"command": "cat a.txt > b.txt"}),
        ("Bash", {"command": "cd src && cat app.py"}),
        ("str_replace_editor", {"command": "str_replace", "path": "/testbed/a.py"}),
        ("write_to_file", {"path": "notes.md", "content": "x"}),
    ],
)
def test_a_write_or_a_run_is_no_way_back(name, arguments):
    assert read_only(call(name, arguments)) is None


def test_recall_is_a_way_back_only_where_the_harness_has_it():
    assert declares_recall(["read_file", "recall"])
    assert not declares_recall(["read_file", "Bash"])
    log = [{"role": "assistant", "content": "", "tool_calls": [call("recall", {})]}]
    assert log_declares_recall(log)
