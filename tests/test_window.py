import pytest
from message_builders import assistant, tool

from minilib import (
    ContextOverflowError,
    ContextWindow,
    Tracer,
    article_window,
    estimate_tokens,
    scripted_summary,
)

HEAD = [{"role": "system", "content": "你是 agent"}, {"role": "user", "content": "任务"}]


def test_within_budget_is_untouched_and_nothing_is_traced():
    messages = HEAD + [assistant("go", "c1"), tool("c1", "x" * 1000)]
    before = [dict(m) for m in messages]
    tracer = Tracer()
    assert (
        article_window(scripted_summary, threshold=10_000).before_model_call(
            messages, tracer, 0
        )
        == []
    )
    assert messages == before and tracer.records == []


def test_ages_first_and_summarizes_only_if_still_over():
    messages = HEAD + [
        m
        for n in range(6)
        for m in (assistant(f"step {n}", f"c{n}"), tool(f"c{n}", "x" * 2000))
    ]
    window = article_window(scripted_summary, threshold=600)
    states = [s.state for s in window.walk(messages)]
    assert states == [
        "measure",
        "tool_result_aging",
        "measure",
        "rolling_summary",
        "measure",
        "send",
    ]
    tracer = Tracer()
    compressions = window.before_model_call(messages, tracer, step=7)
    assert [c.strategy for c in compressions] == ["tool_result_aging", "rolling_summary"]
    assert estimate_tokens(messages) <= 600
    events = tracer.events("context_compression")
    assert [e["step"] for e in events] == [7, 7]
    assert events[0]["after_tokens"] == events[1]["before_tokens"]
    assert [c["purpose"] for c in tracer.events("model_call")] == ["summary"]


def test_overflow_names_tokens_threshold_and_largest_message_and_changes_nothing():
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "长" * 4000},
    ]
    before = [dict(m) for m in messages]
    with pytest.raises(ContextOverflowError) as raised:
        article_window(scripted_summary, threshold=1200).before_model_call(
            messages, Tracer(), 0
        )
    error = raised.value
    assert (error.tokens, error.threshold) == (estimate_tokens(messages), 1200)
    assert (error.largest_index, error.largest_role, error.largest_tokens) == (
        1,
        "user",
        4004,
    )
    assert (
        f"{estimate_tokens(messages):,} tokens" in str(error)
        and "1,200" in str(error)
        and "#1 (user, 4,004 tokens)" in str(error)
    )
    assert messages == before


def test_overflow_after_partial_compression_leaves_the_list_as_it_was():
    messages = HEAD + [
        assistant("go", "c1"),
        tool("c1", "x" * 5000),
        {"role": "user", "content": "长" * 2000},
    ]
    before = [dict(m) for m in messages]
    with pytest.raises(ContextOverflowError):
        article_window(scripted_summary, threshold=500).before_model_call(messages)
    assert messages == before


def test_threshold_must_be_a_positive_integer():
    with pytest.raises(ValueError, match="threshold"):
        ContextWindow(threshold=0)
