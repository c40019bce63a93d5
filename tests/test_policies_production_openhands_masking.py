"""openhands-masking: OpenHands' ObservationMaskingCondenser, replayed on logs."""

import pytest
from message_builders import assistant, groups, tool

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
    """OpenHands' rule: an observation at index i < len - attention_window is masked."""
    cut = len(history) - attention_window
    return [
        dict(m, content=MASK)
        if i < cut and (m["role"] == "tool" or m.get("observation"))
        else m
        for i, m in enumerate(history)
    ]


def rounds(messages):
    return [
        list(messages[:i]) for i, m in enumerate(messages) if m["role"] == "assistant"
    ]


def test_observations_outside_the_attention_window_are_masked_and_nothing_else():
    history = HEAD + groups("a", "b", "c", "d")  # 10 messages, results at 3, 5, 7, 9
    window = OpenHandsMaskingPolicy(10_000, attention_window=4).send(history, 0).messages
    # indexes 0-5 are outside the last 4: the results at 3 and 5 are masked
    assert [m["content"] for m in window if m["role"] == "tool"][:2] == [MASK, MASK]
    assert window[7:] == history[7:]
    assert [m for i, m in enumerate(window) if i not in (3, 5)] == [
        m for i, m in enumerate(history) if i not in (3, 5)
    ]
    assert [window[3]["tool_call_id"], window[5]["tool_call_id"]] == ["a", "b"]
    validate_messages(window)  # a masked result still answers its call


def test_the_window_boundary_is_exact():
    history = HEAD + groups("a", "b")  # the result of "a" is at index 3, of 6 messages
    at = OpenHandsMaskingPolicy(1_000, attention_window=3).send(history, 0).messages
    assert at == history  # index 3 is the 3rd-last message: inside the window
    one_less = OpenHandsMaskingPolicy(1_000, attention_window=2).send(history, 0)
    assert one_less.messages[3]["content"] == MASK
    assert one_less.messages[4:] == history[4:]


def test_environment_output_recorded_as_a_user_message_is_an_observation():
    history = HEAD + [
        assistant("ls"),
        {"role": "user", "content": "a.py\nb.py", "observation": True},
        assistant("cat a.py"),
        {"role": "user", "content": "print(1)", "observation": True},
    ]
    window = OpenHandsMaskingPolicy(1_000, attention_window=2).send(history, 0).messages
    assert window[3] == dict(history[3], content=MASK)
    assert window[1] == history[1]  # the task is a message, not an observation
    assert window[5] == history[5]


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
    assert policy.parameters() == {"attention_window": 100}


def test_each_round_matches_the_rule_applied_to_the_whole_history():
    messages = generate_history(80, 1).messages
    policy = OpenHandsMaskingPolicy(10**9, attention_window=30)
    for step, history in enumerate(rounds(messages)):
        assert policy.send(history, step).messages == reference(history, 30)


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    messages = generate_history(200, 0).messages
    run = replay_policy(messages, build_policy("openhands-masking", window_tokens))
    expected = []
    for history in rounds(messages):
        tokens = estimate_tokens(reference(history, ATTENTION_WINDOW))
        if tokens > window_tokens:
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


def test_a_tool_message_alone_is_masked_in_place():
    history = HEAD + [assistant("go", "x"), tool("x", "long\noutput"), assistant("done")]
    window = OpenHandsMaskingPolicy(1_000, attention_window=1).send(history, 0).messages
    assert window[3] == {"role": "tool", "tool_call_id": "x", "content": MASK}
