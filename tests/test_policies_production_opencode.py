"""opencode-prune: after a turn, tool outputs beyond the newest 40k tokens are cleared."""

import pytest
from message_builders import assistant, tool

from minilib.agents.opencode.policy import PLACEHOLDER, OpencodePrunePolicy
from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

SYSTEM = {"role": "system", "content": "sys"}


def output(call_id, tokens, name="bash"):
    """A call and its output of exactly `tokens` tokens (as a message)."""
    return [
        assistant(f"run {call_id}", call_id, name=name),
        tool(call_id, "o" * 4 * (tokens - 4)),
    ]


def turn(text, *outputs):
    messages = [{"role": "user", "content": text}]
    for call_id, tokens in outputs:
        messages += output(call_id, tokens)
    return messages


def cleared(window):
    return [m.get("tool_call_id") for m in window if m["content"] == PLACEHOLDER]


def big_first_turn():
    # ten outputs of 10,000 tokens in the first turn, small ones after it
    return (
        [SYSTEM]
        + turn("one", *((f"a{i}", 10_000) for i in range(10)))
        + turn("two", ("b0", 100))
        + turn("three", ("c0", 100))
    )


def test_outputs_older_than_the_newest_40k_are_cleared_when_the_next_turn_starts():
    history = big_first_turn()
    policy = OpencodePrunePolicy(200_000)
    assert cleared(policy.send(history, 0).messages) == []  # no turn has ended yet
    history += turn("four")
    window = policy.send(history, 1).messages
    # turns two and three are protected; of turn one, a9..a6 are the newest 40,000
    # tokens; a5..a0 (60,000 > 20,000) are cleared
    assert cleared(window) == [f"a{i}" for i in range(6)]
    validate_messages(window)  # a cleared output still answers its call
    assert [m.get("tool_call_id") for m in window] == [
        m.get("tool_call_id") for m in history
    ]


def test_the_last_two_user_turns_are_protected_whatever_their_size():
    history = (
        [SYSTEM]
        + turn("one", ("a0", 30_000))
        + turn("two", *((f"b{i}", 30_000) for i in range(3)))
        + turn("three", *((f"c{i}", 30_000) for i in range(3)))
        + turn("four")
    )
    policy = OpencodePrunePolicy(10**9)
    # turns two and three (180,000 tokens) are not even counted: a0 is within 40,000
    assert cleared(policy.send(history, 0).messages) == []
    history += turn("five")  # now turn two is the older side of the protection
    assert cleared(policy.send(history, 1).messages) == ["a0", "b0", "b1"]


def test_nothing_is_cleared_unless_more_than_20k_would_be():
    def history(extra):
        return (
            [SYSTEM]
            + turn("one", ("a0", 10_000), ("a1", 10_000 + extra), ("a2", 40_000))
            + turn("two")
            + turn("three")
            + turn("four")
        )

    # a2 is the protected 40,000; a1 and a0 would free exactly 20,000: not enough
    assert cleared(OpencodePrunePolicy(200_000).send(history(0), 0).messages) == []
    # one token more and both go
    window = OpencodePrunePolicy(200_000).send(history(1), 0).messages
    assert cleared(window) == ["a0", "a1"]


def test_a_prune_stops_at_what_it_pruned_before_and_is_idempotent():
    history = big_first_turn() + turn("four")
    policy = OpencodePrunePolicy(200_000)
    first = policy.send(history, 0).messages
    assert policy.prune(len(history) - 1) == []  # the same prune again: no change
    history += turn("five", *((f"d{i}", 10_000) for i in range(3))) + turn("six")
    window = policy.send(history, 1).messages
    assert window[: len(first)] == first  # the window only grew
    assert cleared(window) == cleared(first)  # protected: turns four and five


def test_failed_calls_and_protected_tools_are_neither_counted_nor_cleared():
    history = [SYSTEM, {"role": "user", "content": "one"}]
    history += output("s0", 30_000, name="skill")
    history += [assistant("x", "e0"), tool("e0", "o" * 4 * 30_000, error_code="EXIT_1")]
    history += output("a0", 30_000) + output("a1", 30_000) + output("a2", 30_000)
    history += turn("two") + turn("three") + turn("four")
    window = OpencodePrunePolicy(200_000).send(history, 0).messages
    # a2 is the protected 40,000; a1 and a0 are cleared (60,000); the skill output and
    # the failed call, older still, are not counted, and not cleared
    assert cleared(window) == ["a0", "a1"]


def test_environment_output_is_a_tool_output():
    history = [SYSTEM, {"role": "user", "content": "one"}]
    for i in range(7):
        history += [
            assistant(f"step {i}"),
            {"role": "user", "content": "e" * 4 * 9_996, "observation": True},
        ]
    history += turn("two") + turn("three") + turn("four")
    window = OpencodePrunePolicy(200_000).send(history, 0).messages
    gone = [i for i, m in enumerate(window) if m["content"] == PLACEHOLDER]
    assert gone == [3, 5, 7]  # the four newest (40,000 tokens) stay
    assert all(window[i]["observation"] for i in gone)


def test_below_200k_the_numbers_scale_with_the_window():
    policy = build_policy("opencode-prune", 16_000)
    assert (policy.prune_protect, policy.prune_minimum) == (3_200, 1_600)
    assert build_policy("opencode-prune", 200_000).parameters() == {
        "prune_protect": 40_000,
        "prune_minimum": 20_000,
        "protected_tools": ("skill",),
    }


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    # one user turn: both protected turns cover all of it, so nothing is ever pruned
    messages = generate_history(200, 0).messages
    run = replay_policy(messages, build_policy("opencode-prune", window_tokens))
    expected = []
    for index in (i for i, m in enumerate(messages) if m["role"] == "assistant"):
        tokens = estimate_tokens(messages[:index])
        if tokens > window_tokens:
            break
        expected.append(tokens)
    assert run.tokens == expected and run.summary_calls == 0
    assert run.overflow_round == len(expected) < run.rounds_total


def test_with_user_turns_the_generated_session_is_pruned_after_each():
    messages, replies = [], 0
    for message in generate_history(200, 0).messages:
        if message["role"] == "assistant":
            replies += 1
            if replies % 20 == 0:
                messages.append({"role": "user", "content": f"Round {replies}: go on."})
        messages.append(message)
    policy = build_policy("opencode-prune", 200_000)
    run = replay_policy(messages, policy)
    assert policy.prunes > 0 and run.invalid_rounds == []
    assert run.overflow_round is None or run.overflow_round > 117  # raw: 117


@pytest.mark.parametrize(
    "parameters, name",
    [
        ({"prune_protect": -1}, "prune_protect"),
        ({"prune_minimum": "20k"}, "prune_minimum"),
        ({"protected_tools": "skill"}, "protected_tools"),
    ],
)
def test_bad_parameters_raise_a_value_error_naming_them(parameters, name):
    with pytest.raises(ValueError, match=f"^{name} "):
        OpencodePrunePolicy(200_000, **parameters)
