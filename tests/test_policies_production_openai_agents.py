"""openai-agents-trimming: the Agents SDK cookbook's TrimmingSession, on logs."""

import pytest
from message_builders import assistant, groups

from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.policies.production.openai_agents import (
    MAX_TURNS,
    OpenAITrimmingSessionPolicy,
)
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

SYSTEM = {"role": "system", "content": "instructions"}


def user(text):
    return {"role": "user", "content": text}


def three_turns():
    return (
        [SYSTEM, user("first")]
        + groups("a")
        + [assistant("done a"), user("second")]
        + groups("b", "c")
        + [assistant("done b c"), user("third")]
        + groups("d")
    )


def rounds(messages):
    return [
        list(messages[:i]) for i, m in enumerate(messages) if m["role"] == "assistant"
    ]


def test_the_last_max_turns_user_turns_are_kept_whole_with_the_instructions():
    history = three_turns()
    second = history.index(user("second"))
    window = OpenAITrimmingSessionPolicy(10_000, max_turns=2).send(history, 0).messages
    assert window == [SYSTEM] + history[second:]
    validate_messages(window)  # whole turns: no result loses its call
    one = OpenAITrimmingSessionPolicy(10_000, max_turns=1).send(history, 0).messages
    assert one == [SYSTEM] + history[history.index(user("third")) :]


def test_with_fewer_turns_than_max_turns_everything_is_kept():
    history = three_turns()
    for max_turns in (3, 8):
        policy = OpenAITrimmingSessionPolicy(10_000, max_turns=max_turns)
        assert policy.send(history, 0).messages == history


def test_environment_output_recorded_as_a_user_message_starts_no_turn():
    history = [SYSTEM, user("task")] + [
        assistant("ls"),
        {"role": "user", "content": "a.py", "observation": True},
        assistant("cat"),
        {"role": "user", "content": "print(1)", "observation": True},
    ]
    window = OpenAITrimmingSessionPolicy(1_000, max_turns=1).send(history, 0).messages
    assert window == history  # one turn: the task and all that follows it


def test_one_turn_larger_than_the_window_is_sent_whole_and_overflows():
    # a coding session is one user turn: the session never trims, so the replay
    # overflows at the first round the whole history does not fit
    messages = generate_history(200, 0).messages
    window_tokens = 16_000
    run = replay_policy(messages, build_policy("openai-agents-trimming", window_tokens))
    expected = []
    for history in rounds(messages):
        if estimate_tokens(history) > window_tokens:
            break
        expected.append(estimate_tokens(history))
    assert run.tokens == expected and run.overflow_round == len(expected)
    assert "over the model's 16,000" in run.overflow


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    # the generated session with a later user turn every 10 rounds: trimming keeps
    # the last 8 of them
    messages, replies = [], 0
    for message in generate_history(200, 0).messages:
        if message["role"] == "assistant":
            replies += 1
            if replies % 10 == 0:
                messages.append(user(f"now turn {replies // 10}"))
        messages.append(message)
    validate_messages(messages)
    run = replay_policy(messages, build_policy("openai-agents-trimming", window_tokens))
    expected = []
    for history in rounds(messages):
        starts = [i for i, m in enumerate(history) if m["role"] == "user"]
        start = starts[-MAX_TURNS] if len(starts) >= MAX_TURNS else 1
        tokens = estimate_tokens(history[:1] + history[start:])
        if tokens > window_tokens:
            break
        expected.append(tokens)
    assert run.tokens == expected
    overflowed = len(expected) < run.rounds_total
    assert run.overflow_round == (len(expected) if overflowed else None)
    assert run.invalid_rounds == [] and run.summary_calls == 0


def test_the_documented_default_is_eight_turns_and_the_window_changes_nothing():
    history = three_turns()
    policy = build_policy("openai-agents-trimming", 200_000)
    assert policy.max_turns == MAX_TURNS == 8
    assert policy.parameters() == {"max_turns": 8}
    small = OpenAITrimmingSessionPolicy(10, max_turns=2).send(history, 0).messages
    assert (
        small == OpenAITrimmingSessionPolicy(10**9, max_turns=2).send(history, 0).messages
    )


@pytest.mark.parametrize("value", [0, -1, "8", None])
def test_a_bad_max_turns_raises_a_value_error_naming_it(value):
    with pytest.raises(ValueError, match="max_turns"):
        OpenAITrimmingSessionPolicy(200_000, max_turns=value)
