"""OpenHands' own unit tests of `LLMSummarizingCondenser`, ported to the lab's policy
(`openhands-summarizing`).

Source: OpenHands/software-agent-sdk at commit 611629e6999ad398dc49c761721eefe18d5e6bd9,
`tests/sdk/context/condenser/test_llm_summarizing_condenser.py`. Each test names the
test it ports. An event is a message in the lab (every event of these tests is a user
`MessageEvent`); the summary is the lab's stand-in, so a test checks that a summary was
made, not its words. The agent LLM's input limit is the lab's window, and a mocked
`get_token_count` is a counter passed to the policy (the overhead set to 0). What the
lab leaves out of this file is listed in docs/references.md ("Behaviours the lab
leaves out").
"""

import pytest

from minilib.policies.production.openhands_summarizing import (
    CLASS_KEEP_FIRST,
    CLASS_MAX_SIZE,
    MINIMUM_PROGRESS,
    OpenHandsSummarizingPolicy,
)
from minilib.summary import summary_header

COMMIT = "611629e6999ad398dc49c761721eefe18d5e6bd9"


def events(count, text=None):
    return [
        {"role": "user", "content": text if text else f"Event {i}"} for i in range(count)
    ]


def condenser(window_tokens=1_000_000, count_tokens=None, **parameters):
    parameters.setdefault("keep_first", CLASS_KEEP_FIRST)
    if count_tokens is not None:
        parameters["count_tokens"] = count_tokens
    return OpenHandsSummarizingPolicy(window_tokens, overhead_tokens=0, **parameters)


def test_default_values():
    # test_default_values: the class's own defaults, 240 and 2 (the lab's defaults are
    # default_condenser()'s, 80 and 4)
    assert (CLASS_MAX_SIZE, CLASS_KEEP_FIRST) == (240, 2)
    policy = condenser(max_size=CLASS_MAX_SIZE)
    assert (policy.max_size, policy.keep_first) == (240, 2)


def test_should_condense():
    # test_should_condense and test_condense_returns_view_when_no_condensation_needed:
    # 100 events at max_size 100 stay as they are, with no LLM call; 101 condense
    assert condenser(max_size=100).send(events(100), 0).summary_calls == 0
    assert condenser(max_size=100).send(events(100), 0).messages == events(100)
    assert condenser(max_size=100).send(events(101), 0).summary_calls == 1


def test_condense_returns_condensation_when_needed():
    # test_condense_returns_condensation_when_needed: max_size 10, keep_first 3, 11
    # events: one summary call, the summary at offset 3, events forgotten
    sent = condenser(max_size=10, keep_first=3).send(events(11), 0)
    assert sent.summary_calls == 1
    assert sent.messages[:3] == events(3)
    assert sent.messages[3]["content"].startswith(summary_header(0)[:10])
    assert len(sent.messages) < 11


def test_get_condensation_with_previous_summary():
    # test_get_condensation_with_previous_summary: events 3 and 4 were condensed into
    # "Previous summary content" at offset 3; the next summary reads it
    policy = condenser(max_size=10, keep_first=3)
    previous = {"role": "user", "content": summary_header(2) + "Previous summary content"}
    for message in events(3) + [previous] + events(14)[5:]:
        policy._append(message)
    assert policy._condense(by_events=True, by_tokens=False)
    summary = policy.view[3]["content"]
    assert "Previous summary content" in summary


def test_invalid_config():
    # test_invalid_config
    with pytest.raises(ValueError):
        condenser(max_size=0)
    with pytest.raises(ValueError):
        condenser(keep_first=-1)
    with pytest.raises(ValueError):
        condenser(max_size=10, keep_first=8)


def chars_over_4(messages):
    return sum(len(m["content"]) // 4 for m in messages)


def test_condense_with_token_limit_exceeded():
    # test_condense_with_token_limit_exceeded: max_tokens 100, 15 events of 40
    # characters (10 tokens each, the test's count) condense on tokens, not events
    policy = condenser(max_size=1000, max_tokens=100, count_tokens=chars_over_4)
    sent = policy.send(events(15, "A" * 40), 0)
    assert sent.summary_calls >= 1 and len(sent.messages) < 15


@pytest.mark.parametrize(
    "configured_limit, agent_limit, token_count, expected_trigger",
    [(500, 100, 200, True), (100, 500, 200, True), (100, 500, 50, False)],
)
def test_token_limit_uses_stricter_configured_or_agent_limit(
    configured_limit, agent_limit, token_count, expected_trigger
):
    # test_token_limit_uses_stricter_configured_or_agent_limit: 10 events counting
    # token_count in all; the agent's input limit is the lab's window
    policy = condenser(
        agent_limit,
        lambda ms: token_count // 10 * len(ms),
        max_size=1000,
        max_tokens=configured_limit,
    )
    assert (policy.send(events(10, "event"), 0).summary_calls > 0) is expected_trigger


def test_token_limit_inherits_agent_effective_input_limit():
    # test_token_limit_inherits_agent_effective_input_limit
    policy = condenser(100, lambda ms: 20 * len(ms), max_size=1000)
    assert policy.send(events(10, "event"), 0).summary_calls > 0


def test_token_reduction_uses_agent_effective_input_limit():
    # test_token_reduction_uses_agent_effective_input_limit: events are forgotten
    policy = condenser(100, lambda ms: 20 * len(ms), max_size=1000, max_tokens=500)
    assert len(policy.send(events(10, "event"), 0).messages) < 10


def test_minimum_progress_default_and_custom_value():
    # test_minimum_progress_default_value, test_minimum_progress_custom_value
    assert MINIMUM_PROGRESS == 0.1 and condenser().minimum_progress == 0.1
    assert condenser(minimum_progress=0.2).minimum_progress == 0.2


@pytest.mark.parametrize("invalid_value", [0.0, -0.1, 1.0, 1.5])
def test_minimum_progress_validation(invalid_value):
    # test_minimum_progress_validation
    with pytest.raises(ValueError):
        condenser(minimum_progress=invalid_value)


def test_minimum_progress_threshold_met():
    # test_minimum_progress_threshold_met: max_size 20, keep_first 2, 30 events: the
    # suffix kept is 20 // 2 - 2 - 1 = 7, so 21 of 30 are forgotten, above 10%
    sent = condenser(max_size=20, minimum_progress=0.1).send(events(30), 0)
    assert sent.summary_calls == 1
    assert len(sent.messages) == 2 + 1 + 7  # kept first, the summary, kept last
