"""minilib.loop: run_loop asks the model, runs its tool calls and traces every step."""

import copy
import json

import pytest
from message_builders import BAD_CONVERSATIONS, OPENING

from minilib import InvalidMessagesError, ScriptedModel, Tracer, run_loop
from minilib.loop import MaxStepsExceeded
from minilib.model import ScriptEndedError
from minilib.trace import event_records


def call(tool, **arguments):
    return {
        "id": f"id_{tool}",
        "type": "function",
        "function": {"name": tool, "arguments": json.dumps(arguments)},
    }


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
    events = list(event_records(tracer.records))
    assert [r["seq"] for r in events] == list(range(1, len(events) + 1))


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


# --- errors
# --------------------------------------------------------------------------------


@pytest.mark.parametrize("case", BAD_CONVERSATIONS)
def test_a_bad_conversation_is_named_and_left_as_it_was(case):
    messages, expected = BAD_CONVERSATIONS[case]
    before = copy.deepcopy(messages)
    with pytest.raises(InvalidMessagesError) as raised:
        run_loop(
            ScriptedModel([{"role": "assistant", "content": "done"}]),
            messages,
            tools=None,
        )
    assert str(raised.value).startswith(expected)
    assert messages == before


def test_max_steps_below_one_is_named():
    with pytest.raises(ValueError) as raised:
        run_loop(ScriptedModel([]), list(OPENING), tools=None, max_steps=0)
    assert str(raised.value) == "max_steps must be >= 1, got 0"


def test_a_model_reply_that_is_not_an_assistant_message_is_named():
    with pytest.raises(
        InvalidMessagesError,
        match=r"^model reply at step 0 must be an assistant message$",
    ):
        run_loop(
            ScriptedModel([{"role": "user", "content": "?"}]), list(OPENING), tools=None
        )
