"""openhands-masking: OpenHands' ObservationMaskingCondenser, sent as OpenHands sends
the masked view (a masked observation is a user message, its call is not sent)."""

import pytest
from message_builders import assistant, groups, tool, tool_call

from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.policies.production.openhands_masking import (
    ATTENTION_WINDOW,
    MASK,
    OpenHandsMaskingPolicy,
)
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def reference(history, attention_window):
    """OpenHands' pipeline written out event by event: one action event a tool call,
    the condenser's mask by event index, then ConversationMemory.process_events
    (a call is sent once every call of its response has a tool message) and the blank
    line between consecutive user messages."""
    events = []  # (kind, payload)
    for message in history:
        calls = message.get("tool_calls") or ()
        if message["role"] == "assistant" and calls:
            events += [("action", (id(message), message, call["id"])) for call in calls]
        elif message["role"] == "tool" or message.get("observation"):
            events.append(("observation", message))
        else:
            events.append(("message", message))
    cut = len(events) - attention_window
    events = [
        ("masked", None) if i < cut and kind == "observation" else (kind, payload)
        for i, (kind, payload) in enumerate(events)
    ]
    sent, pending, results = [], {}, {}
    for kind, payload in events:
        add = []
        if kind == "action":
            pending[payload[0]] = payload[1]
        elif kind == "masked":
            add.append({"role": "user", "content": MASK})
        elif kind == "observation" and payload["role"] == "tool":
            results[payload["tool_call_id"]] = payload
        else:
            add.append(payload)
        for key, message in list(pending.items()):
            ids = [call["id"] for call in message["tool_calls"]]
            if all(i in results for i in ids):
                add += [message] + [results.pop(i) for i in ids]
                del pending[key]
        sent += add
    formatted = []
    for message in sent:
        if message["role"] == "user" and formatted and formatted[-1]["role"] == "user":
            message = dict(message, content="\n\n" + message["content"])
        formatted.append(message)
    return formatted


def rounds(messages):
    return [
        list(messages[:i]) for i, m in enumerate(messages) if m["role"] == "assistant"
    ]


def test_a_masked_result_is_a_user_message_and_its_call_is_not_sent():
    history = HEAD + groups("a", "b", "c", "d")  # 10 messages and events
    window = OpenHandsMaskingPolicy(10_000, attention_window=4).send(history, 0).messages
    # events 0-5 are outside the last 4: the results of "a" (3) and "b" (5) are masked
    assert window[:2] == HEAD
    assert window[2] == {"role": "user", "content": "\n\n" + MASK}  # after the task
    assert window[3] == {"role": "user", "content": "\n\n" + MASK}
    assert window[4:] == history[6:]  # "c" and "d" whole, calls and results
    assert not any("step a" in (m.get("content") or "") for m in window)  # thought gone
    validate_messages(window)  # what is left keeps pairing


def test_the_window_boundary_is_exact():
    history = HEAD + groups("a", "b")  # the result of "a" is event 3 of 6
    at = OpenHandsMaskingPolicy(1_000, attention_window=3).send(history, 0).messages
    assert at == history  # event 3 is the 3rd-last: inside the window
    one_less = OpenHandsMaskingPolicy(1_000, attention_window=2).send(history, 0)
    assert (
        one_less.messages
        == HEAD + [{"role": "user", "content": "\n\n" + MASK}] + history[4:]
    )


def test_parallel_calls_count_one_event_each_and_a_partly_masked_response_is_dropped():
    calls = {"role": "assistant", "content": "both", "tool_calls": []}
    calls["tool_calls"] = [tool_call("x"), tool_call("y")]
    history = HEAD + [calls, tool("x", "X out"), tool("y", "Y out")] + groups("z")
    # events: sys, task, action x, action y, obs x (4), obs y (5), action z, obs z: 8
    window = OpenHandsMaskingPolicy(1_000, attention_window=3).send(history, 0).messages
    # obs x (event 4) is outside the last 3, obs y (event 5) inside: the response
    # cannot be sent whole, so neither its call nor y's unmasked result is sent
    assert window == HEAD + [{"role": "user", "content": "\n\n" + MASK}] + history[5:]
    assert window == reference(history, 3)
    validate_messages(window)


def test_environment_output_recorded_as_a_user_message_is_masked_in_place():
    history = HEAD + [
        assistant("ls"),
        {"role": "user", "content": "a.py\nb.py", "observation": True},
        assistant("cat a.py"),
        {"role": "user", "content": "print(1)", "observation": True},
    ]
    window = OpenHandsMaskingPolicy(1_000, attention_window=2).send(history, 0).messages
    assert window[3] == {"role": "user", "content": MASK}  # no call to drop
    assert window[2] == history[2] and window[1] == history[1]
    assert window[5] == history[5]
    assert window == reference(history, 2)


def test_masking_does_not_depend_on_the_window_and_is_idempotent():
    history = HEAD + groups(*"abcdefgh")
    small = OpenHandsMaskingPolicy(1_000, attention_window=5)
    large = OpenHandsMaskingPolicy(1_000_000, attention_window=5)
    sent = small.send(history, 0).messages
    assert sent == large.send(history, 0).messages == reference(history, 5)
    assert small.send(history, 0).messages == sent
    assert all(m["content"] != MASK for m in history)  # the originals are unchanged


def test_the_documented_default_is_100_events():
    policy = build_policy("openhands-masking", 200_000)
    assert policy.attention_window == ATTENTION_WINDOW == 100
    assert policy.parameters()["attention_window"] == 100


def test_each_round_matches_openhands_pipeline_on_the_whole_history():
    messages = generate_history(80, 1).messages
    policy = OpenHandsMaskingPolicy(10**9, attention_window=30)
    for step, history in enumerate(rounds(messages)):
        assert policy.send(history, step).messages == reference(history, 30)


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    messages = generate_history(200, 0).messages
    policy = build_policy("openhands-masking", window_tokens)
    run = replay_policy(messages, policy)
    expected = []
    for history in rounds(messages):
        tokens = estimate_tokens(reference(history, ATTENTION_WINDOW))
        if tokens + policy.overhead_tokens > window_tokens:
            break
        expected.append(tokens)
    assert run.tokens == expected
    overflowed = len(expected) < run.rounds_total
    assert run.overflow_round == (len(expected) if overflowed else None)
    assert run.invalid_rounds == [] and run.summary_calls == 0


@pytest.mark.parametrize("value", [0, -3, "100", 2.5, True])
def test_a_bad_attention_window_raises_a_value_error_naming_it(value):
    with pytest.raises(ValueError, match="attention_window"):
        OpenHandsMaskingPolicy(200_000, attention_window=value)
