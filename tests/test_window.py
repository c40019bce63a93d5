"""minilib.window: ContextWindow fits the threshold, or overflows and changes nothing."""

import copy

import pytest
from message_builders import BAD_CONVERSATIONS, OPENING, PAIR, assistant, tool

from minilib import (
    AGING_MARK,
    SUMMARY_MARK,
    ContextOverflowError,
    ContextWindow,
    InvalidMessagesError,
    Settings,
    ToolResultAging,
    Tracer,
    article_window,
    estimate_tokens,
    load_session,
    run_session,
    scripted_summary,
)
from minilib.logs import replay_transcript
from minilib.trace import trace_header

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
    assert messages == before and tracer.records == [trace_header()]


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


def test_overflow_after_a_summary_names_the_summary_that_wrote_the_largest_message():
    # Found by the property tests: a summary written by compression was reported as the
    # caller's message at the summary's window index, with the wrong role.
    messages = [
        {"role": "assistant", "content": ""},
        PAIR[0],
        {**PAIR[1], "content": "error NOT_FOUND: "},
    ]
    before = copy.deepcopy(messages)
    with pytest.raises(ContextOverflowError) as raised:
        article_window(scripted_summary, threshold=1, protect_tail=0).before_model_call(
            messages
        )
    error = raised.value
    assert (error.written_by, error.largest_index, error.largest_role) == (
        "rolling_summary",
        0,
        "user",
    )
    assert error.window[0]["content"].startswith(SUMMARY_MARK) and len(error.window) == 1
    assert str(error).endswith(
        f"#0 (user, {error.largest_tokens:,} tokens, written by rolling_summary), "
        "which no strategy may cut further."
    )
    assert messages == before


def test_overflow_names_the_message_in_the_window_it_would_have_sent():
    # The caller's #3 was aged; the error names the aged copy, which is what did not fit.
    messages = OPENING + [PAIR[0], {**PAIR[1], "content": "x" * 3000}]
    with pytest.raises(ContextOverflowError) as raised:
        article_window(scripted_summary, threshold=50).before_model_call(messages)
    error = raised.value
    assert error.written_by == "tool_result_aging" and error.window[error.largest_index][
        "content"
    ].startswith(AGING_MARK)
    assert error.largest_tokens == estimate_tokens([error.window[error.largest_index]])


def test_overflow_blames_the_callers_message_by_its_own_index():
    messages = OPENING + [{"role": "assistant", "content": "x" * 4000}]
    with pytest.raises(ContextOverflowError) as raised:
        article_window(scripted_summary, threshold=100).before_model_call(messages)
    assert (
        raised.value.largest_index,
        raised.value.largest_role,
        raised.value.written_by,
    ) == (2, "assistant", None)
    assert (
        "Largest message left: #2 (assistant, 1,004 tokens), which no strategy may cut "
        "further." in str(raised.value)
    )


# --- errors
# --------------------------------------------------------------------------------


def _before_model_call(messages):
    return article_window(scripted_summary, threshold=10).before_model_call(
        messages, Tracer(), 0
    )


def _walk(messages):
    return article_window(scripted_summary).walk(messages)


ENTRY_POINTS = {
    "ContextWindow.before_model_call": _before_model_call,
    "ContextWindow.walk": _walk,
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("case", BAD_CONVERSATIONS)
def test_a_bad_conversation_is_named_and_left_as_it_was(entry, case):
    messages, expected = BAD_CONVERSATIONS[case]
    before = copy.deepcopy(messages)
    with pytest.raises(InvalidMessagesError) as raised:
        ENTRY_POINTS[entry](messages)
    assert str(raised.value).startswith(expected)
    assert messages == before


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: Settings(threshold=0), "threshold must be >= 1, got 0"),
        (lambda: Settings(head_chars=-1), "head_chars must be >= 0, got -1"),
        (lambda: Settings(tail_chars="120"), "tail_chars must be an integer, got '120'"),
        (lambda: Settings(min_chars=2.5), "min_chars must be an integer, got 2.5"),
        (
            lambda: Settings(protect_tail=True),
            "protect_tail must be an integer, got True",
        ),
        (lambda: ContextWindow(threshold=-5), "threshold must be >= 1, got -5"),
        (
            lambda: article_window(scripted_summary, threshold=None),
            "threshold must be an integer, got None",
        ),
        (
            lambda: article_window(scripted_summary).before_model_call(
                OPENING + PAIR, None, -1
            ),
            "step must be >= 0, got -1",
        ),
    ],
)
def test_bad_parameters_are_named(make, expected):
    with pytest.raises(ValueError) as raised:
        make()
    assert str(raised.value) == expected


def test_a_strategy_without_compress_is_named():
    with pytest.raises(
        TypeError, match=r"^strategies\[1\] \(str\) has no compress\(messages\) method$"
    ):
        ContextWindow(threshold=100, strategies=[ToolResultAging(), "summary"])


def test_replay_and_run_want_settings():
    with pytest.raises(
        TypeError, match=r"^settings must be a minilib Settings, got dict$"
    ):
        replay_transcript(OPENING + PAIR, {"threshold": 100})
    with pytest.raises(
        TypeError, match=r"^settings must be a minilib Settings, got int$"
    ):
        run_session(load_session(), 900)
