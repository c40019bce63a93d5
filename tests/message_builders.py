"""Small builders for chat-completions messages used across the tests."""

import copy
import json
import re

# The bundled files under data/logs/ that are no readable log: a damaged one, one of no
# known shape, and Cline's ui_messages.json (its usage record, read beside the history)
NOT_LOGS = ("damaged.jsonl", "unknown_shape.json", "ui_messages.json")


def tool_call(call_id, name="read_file", arguments="{}"):
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def assistant(content, *call_ids, name="read_file"):
    message = {"role": "assistant", "content": content}
    if call_ids:
        message["tool_calls"] = [tool_call(call_id, name) for call_id in call_ids]
    return message


def tool(call_id, content, error_code=None):
    message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if error_code:
        message["error"] = {"code": error_code, "message": "failed"}
    return message


def groups(*ids, size=400):
    """One answered read_file call per id; each result's first line names its id."""
    messages = []
    for call_id in ids:
        messages += [
            assistant(f"step {call_id}", call_id),
            tool(call_id, f"first line of {call_id}\n" + "z" * size),
        ]
    return messages


# A valid conversation and the ways to break it. Every entry point that takes a message
# list checks it the same way, so each module's tests run the same cases.

OPENING = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
PAIR = [
    {"role": "assistant", "content": "go", "tool_calls": [tool_call("c1")]},
    {"role": "tool", "tool_call_id": "c1", "content": "out"},
]


def with_message(index, message):
    """OPENING + PAIR with one message replaced (or appended at the end)."""
    messages = copy.deepcopy(OPENING + PAIR)
    if index == len(messages):
        messages.append(message)
    else:
        messages[index] = message
    return messages


BAD_CONVERSATIONS = {
    "unknown role": (
        with_message(1, {"role": "bot", "content": "hi"}),
        "messages[1].role is 'bot'; expected one of system, user, assistant, tool",
    ),
    "non-string content": (
        with_message(1, {"role": "user", "content": 42}),
        "messages[1].content must be a string, got int",
    ),
    "missing content": (
        with_message(1, {"role": "user"}),
        "messages[1].content is missing",
    ),
    "not a dict": (with_message(1, "hello"), "messages[1] must be a dict, got str"),
    "orphan tool result": (
        with_message(4, {"role": "tool", "tool_call_id": "zz", "content": "x"}),
        "messages[4].tool_call_id 'zz' answers no open tool call of the most recent "
        "assistant message (messages[2])",
    ),
    "answered twice": (
        with_message(4, {"role": "tool", "tool_call_id": "c1", "content": "x"}),
        "messages[4].tool_call_id 'c1' was already answered",
    ),
    "tool result without id": (
        with_message(4, {"role": "tool", "content": "x"}),
        "messages[4].tool_call_id is missing",
    ),
    "duplicate call id in one message": (
        with_message(
            4,
            {
                "role": "assistant",
                "content": "again",
                "tool_calls": [tool_call("c1"), tool_call("c1")],
            },
        ),
        "messages[4].tool_calls[1].id 'c1' is used twice in this message",
    ),
    "result of an earlier turn's call": (
        with_message(
            4, {"role": "assistant", "content": "next", "tool_calls": [tool_call("c2")]}
        )
        + [{"role": "tool", "tool_call_id": "c1", "content": "late"}],
        "messages[5].tool_call_id 'c1' answers no open tool call of the most recent "
        "assistant message "
        "(messages[4])",
    ),
    "call without id": (
        with_message(
            2,
            {
                "role": "assistant",
                "content": "go",
                "tool_calls": [{"type": "function", "function": {"name": "read_file"}}],
            },
        ),
        "messages[2].tool_calls[0].id is missing",
    ),
    "call without name": (
        with_message(
            2,
            {
                "role": "assistant",
                "content": "go",
                "tool_calls": [{"id": "c1", "type": "function", "function": {}}],
            },
        ),
        "messages[2].tool_calls[0].function.name is missing",
    ),
    "arguments not a string": (
        with_message(
            2,
            {
                "role": "assistant",
                "content": "go",
                "tool_calls": [tool_call("c1", arguments={"path": "a"})],
            },
        ),
        "messages[2].tool_calls[0].function.arguments must be a JSON string, got dict",
    ),
    "tool_calls on a user": (
        with_message(
            1, {"role": "user", "content": "u", "tool_calls": [tool_call("c0")]}
        ),
        "messages[1].tool_calls is only allowed on assistant messages, not user",
    ),
    "tool_calls not a list": (
        with_message(2, {"role": "assistant", "content": "go", "tool_calls": "c1"}),
        "messages[2].tool_calls must be a list",
    ),
    "unanswered call then a user turn": (
        OPENING + [PAIR[0], {"role": "user", "content": "and?"}, PAIR[1]],
        "tool call 'c1' of messages[2] is never answered: messages[3] (user) comes "
        "where its tool result should be",
    ),
    "bad error field": (
        with_message(
            3, {"role": "tool", "tool_call_id": "c1", "content": "x", "error": "boom"}
        ),
        "messages[3].error must be a dict with a 'code'",
    ),
}


def flat_tool_calls():
    """A list whose calls are flat ({id, name, arguments}) and JSON-encoded, as some
    exporters write them; the readers nest them."""
    calls = [{"id": "c1", "name": "bash", "arguments": {"command": "ls"}}]
    return [
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "", "tool_calls": json.dumps(calls)},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
    ]


# what a reader repairs unless strict (minilib.logs.base.REPAIRS), by its strict refusal
REPAIRABLE = re.compile(
    r"answers no open call|: line \d+ is not valid JSON|not a text part|names no entry"
    r"|has type (?!'(tool_use|tool_result|toolRequest|toolResponse)')"
)


def refused_unless_repairable(parse, expected):
    """`parse(strict=...)` of a damaged log: strict, the one-line refusal `expected`;
    otherwise the same refusal, or, for a gap a harness repairs, a log that names
    the repair."""
    import pytest

    from minilib.logs import LogFileError

    with pytest.raises(LogFileError) as error:
        parse(strict=True)
    assert str(error.value) == expected
    if REPAIRABLE.search(expected):
        assert parse(strict=False).repairs, "a repairable gap, repaired and named"
    else:
        with pytest.raises(LogFileError) as error:
            parse(strict=False)
        assert str(error.value) == expected
