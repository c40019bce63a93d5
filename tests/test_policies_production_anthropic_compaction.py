"""anthropic-compaction: past the trigger, a compaction block replaces all before it."""

import pytest
from message_builders import assistant, tool

from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.policies.production.anthropic_compaction import (
    PROMPT,
    AnthropicCompactionPolicy,
)
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens
from minilib.window import ContextOverflowError

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "the task"}]


def padded(tokens):
    """HEAD and one assistant message: exactly `tokens` tokens in all."""
    room = tokens - estimate_tokens(HEAD) - 4
    return HEAD + [{"role": "assistant", "content": "x" * (4 * room)}]


def test_the_trigger_defaults_to_150k_and_is_at_least_50k_at_200k():
    policy = AnthropicCompactionPolicy(200_000)
    assert (policy.trigger, policy.minimum_trigger) == (150_000, 50_000)
    assert AnthropicCompactionPolicy(200_000, trigger=50_000).trigger == 50_000
    with pytest.raises(ValueError, match="^trigger "):
        AnthropicCompactionPolicy(200_000, trigger=49_999)
    assert AnthropicCompactionPolicy(1_000_000).trigger == 150_000  # not scaled up


def test_below_200k_the_trigger_and_its_minimum_scale_with_the_window():
    policy = AnthropicCompactionPolicy(16_000)
    assert (policy.trigger, policy.minimum_trigger) == (
        150_000 * 16 // 200,
        50_000 * 16 // 200,
    )
    with pytest.raises(ValueError, match="^trigger "):
        AnthropicCompactionPolicy(16_000, trigger=3_999)


def test_compaction_fires_when_the_input_exceeds_the_trigger_not_at_it():
    at = AnthropicCompactionPolicy(200_000).send(padded(150_000), 0)
    assert at.summary_calls == 0 and at.messages == padded(150_000)
    over = AnthropicCompactionPolicy(200_000).send(padded(150_001), 0)
    assert over.summary_calls == 1
    system, block = over.messages
    assert system == HEAD[0]  # the system prompt is not a message block: it stays
    assert block["role"] == "user" and block["content"]


def test_later_requests_drop_everything_before_the_block():
    policy = AnthropicCompactionPolicy(4_000, trigger=2_000)
    history, windows, sizes = list(HEAD), [], []
    for i in range(40):
        windows.append(policy.send(history, i))
        sizes.append(len(history))
        history += [assistant(f"s{i}", f"c{i}"), tool(f"c{i}", "y" * 1_000)]
    compacted = [i for i, sent in enumerate(windows) if sent.summary_calls]
    assert len(compacted) >= 2
    first = compacted[0]
    block = windows[first].messages[1]
    # the next request: the block, then the reply it opened and what followed
    nxt = windows[first + 1].messages
    assert nxt[:2] == [HEAD[0], block]
    assert nxt[2:] == history[sizes[first] : sizes[first + 1]]
    for sent in windows:
        validate_messages(sent.messages)
        assert estimate_tokens(sent.messages) <= 2_000 + 300 + 4 + 16  # one round more


def test_an_input_over_the_window_cannot_be_compacted_it_overflows():
    policy = AnthropicCompactionPolicy(16_000)
    with pytest.raises(ContextOverflowError, match="16,000"):
        policy.send(padded(16_001), 0)
    messages = HEAD + [{"role": "user", "content": "x" * 80_000}, assistant("done")]
    run = replay_policy(messages, AnthropicCompactionPolicy(16_000))
    assert run.overflow_round == 0 and run.rounds == 0


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    messages = list(generate_history(200, 0).messages)
    policy = build_policy("anthropic-compaction", window_tokens)
    seen = []
    run = replay_policy(
        messages, policy, on_window=lambda step, window, *_: seen.append(window)
    )
    expected, calls, start, opening, overflow = [], 0, 1, messages[:1], None
    for history in (
        messages[:i] for i, m in enumerate(messages) if m["role"] == "assistant"
    ):
        window = opening + list(history[start:])
        tokens = estimate_tokens(window)
        if tokens > policy.trigger:
            if tokens > window_tokens:
                overflow = len(expected)  # the request itself is over the window
                break
            window = seen[len(expected)]  # the system prompt and the block
            assert window[0] == messages[0] and len(window) == 2
            calls, start, opening = calls + 1, len(history), window
        assert seen[len(expected)] == window
        expected.append(estimate_tokens(window))
    assert run.tokens == expected and run.overflow_round == overflow
    assert run.summary_calls == calls and run.invalid_rounds == []
    # 200k: compacted and completed; 16k: one round brings the input past the window
    assert (overflow is None) == (calls > 0) == (window_tokens == 200_000)


@pytest.mark.parametrize(
    "parameters, name",
    [({"trigger": "150k"}, "trigger"), ({"summary_tokens": 10}, "summary_tokens")],
)
def test_bad_parameters_raise_a_value_error_naming_them(parameters, name):
    with pytest.raises(ValueError, match=f"^{name} "):
        AnthropicCompactionPolicy(200_000, **parameters)


def test_the_documented_defaults_and_the_prompt():
    policy = build_policy("anthropic-compaction", 200_000)
    assert policy.parameters() == {
        "trigger": 150_000,
        "summary_tokens": 5_000,
        "overhead_tokens": 0,  # an API: the caller's prompt and tools, when given
    }
    assert policy.stand_in and policy.PROMPT == PROMPT
    assert PROMPT.endswith("You must wrap your summary in a <summary></summary> block.")


def test_the_trigger_counts_the_callers_overhead_and_the_compaction_is_recorded():
    history = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "x" * 4000},
    ]
    tokens = estimate_tokens(history)
    quiet = AnthropicCompactionPolicy(200_000, trigger=50_000, overhead_tokens=0)
    assert quiet.send(history, 0).summary_calls == 0
    loud = AnthropicCompactionPolicy(
        200_000, trigger=50_000, overhead_tokens=50_000 - tokens + 1
    )
    assert loud.send(history, 2).summary_calls == 1
    assert [(c.round, c.tokens_before) for c in loud.compactions] == [(2, 50_001)]
