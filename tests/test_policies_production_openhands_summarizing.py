"""openhands-summarizing: OpenHands' LLMSummarizingCondenser, replayed on logs."""

import pytest
from message_builders import groups, tool, tool_call

from minilib.markers import is_summary
from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.policies.production.openhands_summarizing import (
    KEEP_FIRST,
    MAX_SIZE,
    OpenHandsSummarizingPolicy,
)
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def parallel(ids, size=40):
    message = {
        "role": "assistant",
        "content": "at once",
        "tool_calls": [tool_call(i) for i in ids],
    }
    return [message] + [tool(i, f"out {i}\n" + "y" * size) for i in ids]


def rounds(messages):
    return [
        list(messages[:i]) for i, m in enumerate(messages) if m["role"] == "assistant"
    ]


def test_past_max_size_events_the_older_half_becomes_one_summary_event():
    history = HEAD + groups("a", "b", "c", "d")  # 10 messages: not over max_size 10
    policy = OpenHandsSummarizingPolicy(100_000, max_size=10, keep_first=2)
    assert policy.send(history, 0).messages == history
    history += groups("e")  # 12 > 10: keep 2 first, a tail of 10 // 2 - 2 - 1 = 2
    sent = policy.send(history, 1)
    assert sent.summary_calls == 1
    assert sent.messages[:2] == HEAD and sent.messages[3:] == history[-2:]
    summary = sent.messages[2]
    assert is_summary(summary)  # a user message carrying the lab's summary mark
    assert "first line of a" in summary["content"]  # the stand-in quotes, never invents
    assert "first line of e" not in summary["content"]
    assert len(sent.messages) == 10 // 2
    validate_messages(sent.messages)


def test_the_cut_never_separates_a_call_from_its_results():
    # the naive cut (12 - 2 = 10) falls inside the parallel group at 8..11
    history = HEAD + groups("a", "b", "c") + parallel(["p", "q", "r"])
    sent = OpenHandsSummarizingPolicy(100_000, max_size=10, keep_first=2).send(history, 0)
    assert sent.messages == HEAD + [sent.messages[2]]  # the group went whole
    assert sent.summary_calls == 1


def test_the_token_trigger_fires_one_token_over_the_models_limit():
    history = HEAD + groups("a", "b", "c", "d")
    total = estimate_tokens(history)
    at = OpenHandsSummarizingPolicy(total, keep_first=2, overhead_tokens=0).send(
        history, 0
    )
    assert at.messages == history and at.summary_calls == 0
    over = OpenHandsSummarizingPolicy(total - 1, keep_first=2, overhead_tokens=0)
    over = over.send(history, 0)
    assert over.summary_calls == 1
    assert estimate_tokens(over.messages) <= total - 1
    # the tail is the longest one (of whole groups) under half the limit
    kept = over.messages[3:]
    assert kept and kept == history[len(history) - len(kept) :]
    assert estimate_tokens(HEAD + kept) < (total - 1) // 2
    assert estimate_tokens(HEAD + history[-len(kept) - 2 :]) >= (total - 1) // 2


def test_summaries_roll_the_earlier_summary_into_the_next():
    policy = OpenHandsSummarizingPolicy(100_000, max_size=10, keep_first=2)
    history = HEAD + groups(*"abcde")
    first = policy.send(history, 0).messages[2]["content"]
    history += groups(*"fgh")
    sent = policy.send(history, 1).messages
    assert sum(is_summary(m) for m in sent) == 1
    assert "first line of a" in sent[2]["content"] and sent[2]["content"] != first


def test_too_little_to_forget_waits_on_a_count_and_resets_on_tokens():
    # keep_first 3 leaves no place to cut before the end: nothing can be forgotten
    history = HEAD + parallel([f"c{i}" for i in range(10)])  # 13 messages
    soft = OpenHandsSummarizingPolicy(100_000, max_size=10, keep_first=3)
    assert soft.send(history, 0).messages == history  # wait for the next call
    limit = estimate_tokens(history) - 1
    hard = OpenHandsSummarizingPolicy(limit, max_size=10, keep_first=3).send(history, 0)
    assert len(hard.messages) == 1 and is_summary(hard.messages[0])  # a hard reset
    assert hard.summary_calls == 1


def test_the_documented_defaults_and_the_stand_in():
    policy = build_policy("openhands-summarizing", 200_000)
    # default_condenser(): what the default agent and its sub-agents run
    assert (policy.max_size, policy.keep_first) == (MAX_SIZE, KEEP_FIRST) == (80, 4)
    assert policy.overhead_tokens == 10_000
    assert policy.stand_in and "USER_CONTEXT" in policy.PROMPT
    assert policy.token_limit == 200_000
    assert OpenHandsSummarizingPolicy(200_000, max_tokens=50_000).token_limit == 50_000


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_keeps_head_summary_and_a_whole_tail(window_tokens):
    messages = generate_history(200, 0).messages
    histories = rounds(messages)
    summaries = []

    def observe(step, window, *_):
        history = histories[step]
        assert window[:4] == history[:4]  # keep_first: the first four events
        if len(window) == len(history):
            assert window == history  # nothing condensed yet
            return
        assert is_summary(window[4]) and not any(is_summary(m) for m in window[5:])
        tail = window[5:]
        assert (
            tail == history[len(history) - len(tail) :]
        )  # the recent events as they were
        if not summaries or summaries[-1] != window[4]["content"]:
            summaries.append(window[4]["content"])

    policy = build_policy("openhands-summarizing", window_tokens)
    run = replay_policy(messages, policy, observe)
    assert run.overflow is None and run.rounds == run.rounds_total
    assert run.invalid_rounds == []
    assert max(run.tokens) + policy.overhead_tokens <= window_tokens
    assert run.summary_calls == len(summaries) == len(policy.compactions) >= 1


@pytest.mark.parametrize(
    "parameters, name",
    [
        ({"max_size": 0}, "max_size"),
        ({"keep_first": -1}, "keep_first"),
        ({"max_size": 10, "keep_first": 4}, "keep_first"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"minimum_progress": 1.0}, "minimum_progress"),
        ({"minimum_progress": "0.1"}, "minimum_progress"),
    ],
)
def test_bad_parameters_raise_a_value_error_naming_them(parameters, name):
    with pytest.raises(ValueError, match=name):
        OpenHandsSummarizingPolicy(200_000, **parameters)


def test_the_originals_are_never_changed():
    history = HEAD + groups(*"abcdef")
    before = [dict(m) for m in history]
    OpenHandsSummarizingPolicy(100_000, max_size=10, keep_first=2).send(history, 0)
    assert history == before
