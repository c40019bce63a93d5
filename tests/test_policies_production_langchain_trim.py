"""langchain-trim: LangChain's own trim_messages, run as written on logs."""

import sys

import pytest
from message_builders import assistant, groups, tool, tool_call

from minilib.messages import InvalidMessagesError, validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.policies.production.langchain_trim import PACKAGE, LangChainTrimPolicy
from minilib.scale import generate_history
from minilib.tokens import estimate_message_tokens, estimate_tokens

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def last_fitting(history, max_tokens):
    """The system message and the longest run of last messages within max_tokens,
    computed without LangChain."""
    budget = max_tokens - estimate_message_tokens(history[0])
    start = len(history)
    while start > 1 and budget - estimate_message_tokens(history[start - 1]) >= 0:
        budget -= estimate_message_tokens(history[start - 1])
        start -= 1
    return history[:1] + history[start:]


def broken(window) -> bool:
    try:
        validate_messages(window)
    except InvalidMessagesError:
        return True
    return False


def rounds(messages):
    return [
        list(messages[:i]) for i, m in enumerate(messages) if m["role"] == "assistant"
    ]


def test_building_it_without_langchain_core_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    with pytest.raises(ImportError, match=PACKAGE):
        LangChainTrimPolicy(200_000)


def test_a_bad_max_tokens_raises_a_value_error_naming_it():
    with pytest.raises(ValueError, match="max_tokens"):
        LangChainTrimPolicy(200_000, max_tokens=0)


# Everything below runs LangChain's own function.


@pytest.fixture
def langchain():
    return pytest.importorskip("langchain_core")


def test_it_keeps_the_system_message_and_the_last_messages_that_fit(langchain):
    history = HEAD + groups("a", "b", "c")
    max_tokens = estimate_tokens(history[:1] + history[-3:])
    window = LangChainTrimPolicy(10_000, max_tokens=max_tokens).send(history, 0).messages
    assert window == history[:1] + history[-3:]
    assert window == last_fitting(history, max_tokens)
    one_less = LangChainTrimPolicy(10_000, max_tokens=max_tokens - 1).send(history, 0)
    assert one_less.messages == history[:1] + history[-2:]


def test_the_window_is_the_logs_own_messages(langchain):
    history = HEAD + groups("a") + [{"role": "user", "content": "x", "observation": True}]
    history[-1]["output_id"] = "env-3"
    window = LangChainTrimPolicy(10_000).send(history, 0).messages
    assert window == history and all(a is b for a, b in zip(window, history))


def test_a_cut_between_a_call_and_its_result_is_sent_as_it_is(langchain):
    history = HEAD + [
        assistant("two at once", "a", "b"),
        tool("a", "A" * 400),
        tool("b", "B" * 40),
    ]
    max_tokens = estimate_tokens(history[:1] + history[-1:])
    window = LangChainTrimPolicy(10_000, max_tokens=max_tokens).send(history, 0).messages
    assert window == [history[0], history[-1]]  # a result whose call was dropped
    assert broken(window)
    run = replay_policy(history + [assistant("done")], LangChainTrimPolicy(max_tokens))
    assert run.invalid_rounds == [1] and run.overflow is None  # counted, not repaired


def test_start_on_human_drops_what_precedes_the_first_human_message(langchain):
    from minilib.policies.production.langchain_trim import LangChainTrimHumanPolicy

    history = HEAD + [
        assistant("two at once", "a", "b"),
        tool("a", "A" * 400),
        tool("b", "B" * 40),
        {"role": "user", "content": "now this"},
        assistant("ok"),
        tool_free := {"role": "user", "content": "and that"},
    ]
    # the last five fit: they open on tool "b", so the kept ones start at "now this"
    max_tokens = estimate_tokens(history[:1] + history[-5:])
    policy = LangChainTrimHumanPolicy(10_000, max_tokens=max_tokens)
    window = policy.send(history, 0).messages
    assert window == [history[0]] + history[-3:] and window[-1] is tool_free
    assert not broken(window)
    # with the task alone as human message, once it is cut the system message is all
    task_only = HEAD + groups("a", "b", "c")
    small = estimate_tokens(task_only[:1] + task_only[-3:])
    alone = LangChainTrimHumanPolicy(10_000, max_tokens=small).send(task_only, 0)
    assert alone.messages == task_only[:1]
    assert policy.parameters()["start_on"] == "human"


def test_the_budget_is_the_window_less_the_overhead(langchain):
    assert LangChainTrimPolicy(10_000).max_tokens == 10_000  # a library: no overhead
    assert LangChainTrimPolicy(10_000, overhead_tokens=1_500).max_tokens == 8_500


def test_arguments_that_are_not_json_still_convert(langchain):
    call = tool_call("a", arguments="not json")
    history = HEAD + [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        tool("a", "out", error_code="E1"),
    ]
    window = LangChainTrimPolicy(10_000).send(history, 0).messages
    assert window == history


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(
    langchain, window_tokens
):
    messages = generate_history(200, 0).messages
    run = replay_policy(messages, build_policy("langchain-trim", window_tokens))
    windows = [last_fitting(history, window_tokens) for history in rounds(messages)]
    assert run.overflow is None and run.rounds == run.rounds_total
    assert run.tokens == [estimate_tokens(window) for window in windows]
    assert run.invalid_rounds == [i for i, w in enumerate(windows) if broken(w)]
    assert run.invalid_rounds  # it does orphan tool results on a long session
    assert max(run.tokens) <= window_tokens
