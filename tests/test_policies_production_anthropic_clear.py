"""anthropic-clear-tool-uses: the API's clear_tool_uses_20250919, replayed on logs."""

import pytest
from message_builders import assistant, tool

from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.policies.production.anthropic_clear import (
    CLEARED_ARGUMENTS,
    PLACEHOLDER,
    AnthropicClearToolUsesPolicy,
    default_trigger,
)
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def session(*names, size=400):
    """HEAD, then one answered call per tool name (ids c0, c1, ...)."""
    messages = list(HEAD)
    for index, name in enumerate(names):
        call_id = f"c{index}"
        messages += [
            assistant(f"step {index}", call_id, name=name),
            tool(call_id, f"result {index}\n" + "z" * size),
        ]
    return messages


def padded_to(messages, total):
    """`messages` with the task padded so the history is exactly `total` tokens."""
    missing = total - estimate_tokens(messages)
    assert missing >= 0
    task = dict(messages[1], content=messages[1]["content"] + "p" * (4 * missing))
    padded = [messages[0], task] + messages[2:]
    assert estimate_tokens(padded) == total
    return padded


def reference(history, trigger, keep=3, clear_at_least=0, exclude=(), inputs=False):
    """The server's view, computed from the whole history as the docs describe it."""
    if estimate_tokens(history) <= trigger:
        return list(history)
    names, uses = {}, []
    for index, message in enumerate(history):
        for call in message.get("tool_calls") or ():
            names[call["id"]] = (index, call["function"]["name"])
        if message["role"] == "tool":
            uses.append(index)
    old = uses[: max(0, len(uses) - keep)]
    clear = [i for i in old if names[history[i]["tool_call_id"]][1] not in exclude]
    window = list(history)
    for i in clear:
        window[i] = dict(window[i], content=PLACEHOLDER)
        if inputs:
            caller = names[history[i]["tool_call_id"]][0]
            window[caller] = dict(
                window[caller],
                tool_calls=[
                    dict(c, function=dict(c["function"], arguments=CLEARED_ARGUMENTS))
                    if c["id"] == history[i]["tool_call_id"]
                    else c
                    for c in window[caller]["tool_calls"]
                ],
            )
    if estimate_tokens(history) - estimate_tokens(window) < clear_at_least:
        return list(history)
    return window


def rounds(messages):
    """The history before each assistant message, as the runner gives it."""
    return [
        list(messages[:i]) for i, m in enumerate(messages) if m["role"] == "assistant"
    ]


def test_the_trigger_is_the_documented_100k_at_200k_and_the_same_half_below():
    assert default_trigger(200_000) == 100_000
    assert default_trigger(1_000_000) == 100_000  # the documented number, not scaled up
    assert default_trigger(32_000) == 16_000
    assert AnthropicClearToolUsesPolicy(16_000).trigger == 8_000
    assert AnthropicClearToolUsesPolicy(16_000, trigger=5_000).trigger == 5_000


def test_nothing_is_cleared_at_the_trigger_and_everything_old_one_token_over():
    base = session("read_file", "bash", "grep", "read_file", "bash")
    trigger = default_trigger(4_000)
    at = padded_to(base, trigger)
    assert AnthropicClearToolUsesPolicy(4_000).send(at, 0).messages == at
    over = padded_to(base, trigger + 1)
    window = AnthropicClearToolUsesPolicy(4_000).send(over, 0).messages
    results = [m["content"] for m in window if m["role"] == "tool"]
    assert results[:2] == [PLACEHOLDER, PLACEHOLDER]  # all but the last 3 tool uses
    assert results[2:] == [m["content"] for m in over if m["role"] == "tool"][2:]
    assert [m["tool_call_id"] for m in window if m["role"] == "tool"] == [
        f"c{i}" for i in range(5)
    ]
    validate_messages(window)  # each cleared result still answers its call
    assert window == reference(over, trigger)


def test_keep_counts_each_parallel_call_as_one_tool_use():
    history = list(HEAD) + [
        {
            "role": "assistant",
            "content": "three at once",
            "tool_calls": [assistant("", c)["tool_calls"][0] for c in ("a", "b", "c")],
        },
        tool("a", "A" * 400),
        tool("b", "B" * 400),
        tool("c", "C" * 400),
    ]
    window = AnthropicClearToolUsesPolicy(10_000, trigger=1, keep=2).send(history, 0)
    assert [m["content"] for m in window.messages[3:]] == [
        PLACEHOLDER,
        "B" * 400,
        "C" * 400,
    ]
    validate_messages(window.messages)


def test_excluded_tools_are_never_cleared_but_count_among_the_kept():
    history = session("web_search", "bash", "web_search", "bash", "bash")
    policy = AnthropicClearToolUsesPolicy(10_000, trigger=1, exclude_tools=["web_search"])
    window = policy.send(history, 0).messages
    contents = [m["content"] for m in window if m["role"] == "tool"]
    originals = [m["content"] for m in history if m["role"] == "tool"]
    assert contents == [originals[0], PLACEHOLDER] + originals[2:]
    assert window == reference(history, 1, exclude={"web_search"})


def test_clear_at_least_applies_nothing_until_clearing_frees_that_much():
    history = session("bash", "bash", "bash", "bash", "bash", size=400)
    frees_one = estimate_tokens([history[3]]) - estimate_tokens(
        [dict(history[3], content=PLACEHOLDER)]
    )
    # two old uses free 2 * frees_one: one token more than that is not worth it
    policy = AnthropicClearToolUsesPolicy(
        10_000, trigger=1, clear_at_least=2 * frees_one + 1
    )
    assert policy.send(history, 0).messages == history
    # a sixth use makes three old ones: now it clears, and goes on clearing after
    more = session("bash", "bash", "bash", "bash", "bash", "bash", size=400)
    assert more[: len(history)] == history
    window = policy.send(more, 1).messages
    assert [m["content"] for m in window if m["role"] == "tool"][:3] == [PLACEHOLDER] * 3
    assert window == reference(more, 1, clear_at_least=2 * frees_one + 1)


def test_clear_tool_inputs_empties_the_cleared_calls_arguments_only():
    history = list(HEAD)
    for i in range(4):
        call = assistant(f"step {i}", f"c{i}")
        call["tool_calls"][0]["function"]["arguments"] = '{"path": "a.py"}'
        history += [call, tool(f"c{i}", "x" * 100)]
    window = AnthropicClearToolUsesPolicy(10_000, trigger=1, clear_tool_inputs=True).send(
        history, 0
    )
    arguments = [
        m["tool_calls"][0]["function"]["arguments"]
        for m in window.messages
        if m["role"] == "assistant"
    ]
    assert arguments == [
        CLEARED_ARGUMENTS,
        '{"path": "a.py"}',
        '{"path": "a.py"}',
        '{"path": "a.py"}',
    ]
    assert history[2]["tool_calls"][0]["function"]["arguments"] == '{"path": "a.py"}'
    assert window.messages == reference(history, 1, inputs=True)


def test_the_window_is_the_servers_view_of_the_full_history_every_round():
    messages = generate_history(60, 3).messages
    policy = AnthropicClearToolUsesPolicy(20_000, keep=2, clear_at_least=3_000)
    for step, history in enumerate(rounds(messages)):
        sent = policy.send(history, step).messages
        assert sent == reference(history, 10_000, keep=2, clear_at_least=3_000)
        assert policy.send(history, step).messages == sent  # the same call, the same view


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    messages = generate_history(200, 0).messages
    run = replay_policy(
        messages, build_policy("anthropic-clear-tool-uses", window_tokens)
    )
    trigger = default_trigger(window_tokens)
    expected = []
    for history in rounds(messages):
        tokens = estimate_tokens(reference(history, trigger))
        if tokens > window_tokens:
            break
        expected.append(tokens)
    assert run.tokens == expected
    overflowed = len(expected) < run.rounds_total
    assert run.overflow_round == (len(expected) if overflowed else None)
    assert run.invalid_rounds == [] and run.summary_calls == 0


def test_the_originals_are_never_changed_in_place():
    history = session("bash", "bash", "bash", "bash")
    before = [dict(m) for m in history]
    AnthropicClearToolUsesPolicy(1_000, trigger=1, clear_tool_inputs=True).send(
        history, 0
    )
    assert history == before


@pytest.mark.parametrize(
    "parameters, name",
    [
        ({"keep": -1}, "keep"),
        ({"trigger": 0}, "trigger"),
        ({"clear_at_least": "5000"}, "clear_at_least"),
        ({"exclude_tools": "bash"}, "exclude_tools"),
        ({"exclude_tools": [3]}, "exclude_tools"),
        ({"clear_tool_inputs": "yes"}, "clear_tool_inputs"),
    ],
)
def test_bad_parameters_raise_a_value_error_naming_them(parameters, name):
    with pytest.raises(ValueError, match=name):
        AnthropicClearToolUsesPolicy(200_000, **parameters)


def test_a_tool_uses_trigger_counts_tool_uses_not_tokens():
    history = session("read_file", "bash", "grep", "read_file", "bash")
    policy = AnthropicClearToolUsesPolicy(
        200_000, trigger={"type": "tool_uses", "value": 5}
    )
    assert policy.send(history, 0).messages == history  # 5 uses: not over 5
    history += [assistant("step 5", "c5", name="grep"), tool("c5", "result 5")]
    window = policy.send(history, 1).messages
    results = [m["content"] for m in window if m["role"] == "tool"]
    assert results[:3] == [PLACEHOLDER] * 3 and PLACEHOLDER not in results[3:]
    assert policy.parameters()["trigger_type"] == "tool_uses"
    with pytest.raises(ValueError, match="^trigger type"):
        AnthropicClearToolUsesPolicy(200_000, trigger={"type": "turns", "value": 3})


def test_clear_tool_inputs_as_a_list_clears_only_those_tools_arguments():
    history = list(HEAD)
    for i, name in enumerate(["read_file", "bash", "read_file", "bash", "grep"]):
        call = assistant(f"step {i}", f"c{i}", name=name)
        call["tool_calls"][0]["function"]["arguments"] = '{"x": 1}'
        history += [call, tool(f"c{i}", "x" * 100)]
    policy = AnthropicClearToolUsesPolicy(10_000, trigger=1, clear_tool_inputs=["bash"])
    window = policy.send(history, 0).messages
    arguments = [
        m["tool_calls"][0]["function"]["arguments"]
        for m in window
        if m["role"] == "assistant"
    ]
    # the two oldest uses are cleared; only the bash one loses its arguments
    assert arguments == ['{"x": 1}', CLEARED_ARGUMENTS] + ['{"x": 1}'] * 3
    with pytest.raises(ValueError, match="^clear_tool_inputs"):
        AnthropicClearToolUsesPolicy(10_000, clear_tool_inputs="bash")


def test_the_input_tokens_trigger_counts_the_callers_overhead():
    base = session("read_file", "bash", "grep", "read_file", "bash")
    at = padded_to(base, default_trigger(4_000) - 50)
    policy = AnthropicClearToolUsesPolicy(4_000, overhead_tokens=51)
    assert PLACEHOLDER in [m["content"] for m in policy.send(at, 0).messages]
    assert (
        AnthropicClearToolUsesPolicy(4_000, overhead_tokens=50).send(at, 0).messages == at
    )
