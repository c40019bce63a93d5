"""Property tests: the window's invariants hold for the four new paths and pipelines.

Histories come from tests/test_properties.py (parallel calls answered in any order,
tool errors, CJK and ASCII, huge contents, later user turns, an earlier summary), so
the new paths face exactly the cases the article's two face. Invariants:
- the window ends within its threshold, or overflows and leaves the list as it was;
- the protected head is untouched (budgeting may only swap its own full prompt for
  its own budgeted one), and the protected tail is untouched by the group-level paths;
- no unanswered tool call and no tool result without its call;
- a strategy never adds tokens, and a window already within budget is left alone;
- the same input gives the same output, trace and store;
- what the store paths cut is in the store, whole.
"""

import copy

from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import PROFILE, assert_pairs_intact, histories

from minilib import (
    ContextOverflowError,
    ContextWindow,
    ToolResultAging,
    Tracer,
    estimate_tokens,
    protected_head_length,
)
from minilib.policies import (
    ExternalStore,
    HierarchicalSummary,
    InputBudgeting,
    OffloadGroups,
    OffloadToolResults,
    PromptSection,
    SlidingWindowTruncation,
)
from minilib.trace import trace_header

section_texts = st.text(
    st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("工具声明。"),
    min_size=1,
    max_size=300,
)


@st.composite
def prompt_specs(draw):
    """Prompt sections (at least one required) and a budget anywhere from nothing to all
    of it."""
    count = draw(st.integers(1, 6))
    sections = [
        PromptSection(
            f"s{n}",
            draw(section_texts),
            required=(n == 0) or draw(st.booleans()),
            priority=draw(st.integers(-3, 3)),
        )
        for n in range(count)
    ]
    return sections, draw(st.integers(0, 400))


@st.composite
def cases(draw):
    """A history, one new path at random parameters, and a threshold often near what it
    can reach."""
    history = draw(histories())
    kind = draw(st.sampled_from(("truncation", "hierarchical", "store", "budgeting")))
    protect_tail = draw(st.integers(0, 6))
    store = ExternalStore()
    if kind == "truncation":
        strategies = [ToolResultAging(), SlidingWindowTruncation(protect_tail)]
    elif kind == "hierarchical":
        strategies = [
            ToolResultAging(),
            HierarchicalSummary(draw(st.integers(0, 6)), protect_tail),
        ]
    elif kind == "store":
        strategies = [
            OffloadToolResults(
                store,
                draw(st.integers(0, 600)),
                draw(st.integers(0, 300)),
                draw(st.integers(0, 300)),
            ),
            OffloadGroups(store, protect_tail),
        ]
    else:
        sections, budget = draw(prompt_specs())
        budgeting = InputBudgeting(sections, budget)
        history = [{"role": "system", "content": budgeting.full_prompt}] + [
            m for m in history if m["role"] != "system"
        ]
        strategies = [budgeting, ToolResultAging()]
    tokens = estimate_tokens(history)
    threshold = draw(
        st.one_of(
            st.integers(1, 3000), st.integers(max(1, tokens // 4), max(1, tokens + 10))
        )
    )
    return history, kind, strategies, store, threshold, protect_tail


def govern(history, strategies, threshold):
    messages = copy.deepcopy(history)
    tracer = Tracer()
    try:
        outcome = ContextWindow(threshold, strategies).before_model_call(
            messages, tracer, 0
        )
    except ContextOverflowError as error:
        outcome = error
    return messages, outcome, tracer


@settings(PROFILE)
@given(cases())
def test_within_threshold_or_overflow_leaves_the_list_unchanged(case):
    history, kind, strategies, store, threshold, _ = case
    messages, outcome, tracer = govern(history, strategies, threshold)
    if isinstance(outcome, ContextOverflowError):
        assert messages == history and outcome.tokens > threshold
    else:
        assert estimate_tokens(messages) <= threshold


@settings(PROFILE)
@given(cases())
def test_head_untouched_and_tail_untouched_by_group_cuts(case):
    history, kind, strategies, store, threshold, protect_tail = case
    head = protected_head_length(history)
    for strategy in strategies:
        after = strategy.compress(history).messages
        if isinstance(strategy, InputBudgeting):
            assert after[0]["content"] in (strategy.full_prompt, strategy.budgeted_prompt)
            assert after[1:head] == history[1:head]
        else:
            assert after[:head] == history[:head]
        if isinstance(
            strategy, (SlidingWindowTruncation, HierarchicalSummary, OffloadGroups)
        ):
            tail = min(protect_tail, len(history) - head)
            assert after[len(after) - tail :] == history[len(history) - tail :]


@settings(PROFILE)
@given(cases())
def test_no_unanswered_call_and_no_orphan_result(case):
    history, kind, strategies, store, threshold, _ = case
    for strategy in strategies:
        assert_pairs_intact(strategy.compress(history).messages)
    assert_pairs_intact(govern(history, strategies, threshold)[0])


@settings(PROFILE)
@given(cases())
def test_never_adds_tokens_and_leaves_a_fitting_window_alone(case):
    history, kind, strategies, store, threshold, _ = case
    tokens = estimate_tokens(history)
    for strategy in strategies:
        assert estimate_tokens(strategy.compress(history).messages) <= tokens
    messages, outcome, tracer = govern(history, strategies, threshold)
    assert estimate_tokens(messages) <= tokens
    if tokens <= threshold:
        assert (
            messages == history and outcome == [] and tracer.records == [trace_header()]
        )


@settings(PROFILE)
@given(cases())
def test_compress_does_not_change_its_input_and_is_deterministic(case):
    history, kind, strategies, store, threshold, _ = case
    frozen = copy.deepcopy(history)
    for strategy in strategies:
        first, second = strategy.compress(history), strategy.compress(history)
        assert history == frozen
        assert (
            first.messages == second.messages
            and first.affected_indexes == second.affected_indexes
        )
        assert [c["reply"] for c in first.model_calls] == [
            c["reply"] for c in second.model_calls
        ]
    assert (
        govern(history, strategies, threshold)[2].to_jsonl()
        == govern(history, strategies, threshold)[2].to_jsonl()
    )


@settings(PROFILE)
@given(cases())
def test_what_the_store_paths_cut_is_stored_whole(case):
    history, kind, strategies, store, threshold, _ = case
    if kind != "store":
        return
    after = {id(m) for m in strategies[0].compress(history).messages}
    for (
        message
    ) in history:  # every tool result that was rewritten is in the store, unabridged
        if message["role"] == "tool" and id(message) not in after:
            assert message["content"] in stored_texts(store, message["tool_call_id"])
    folded = strategies[1].compress(history)
    for index in folded.affected_indexes:
        message = history[index]
        if message["role"] == "tool":
            assert message["content"] in stored_texts(store, message["tool_call_id"])


def stored_texts(store, call_id):
    """What the store holds for a call id; a reused id of a later turn is `id~N`."""
    return [text for key, text in store.items() if key.split("~")[0] == call_id]


@settings(PROFILE)
@given(cases())
def test_offloading_results_is_idempotent(case):
    history, kind, strategies, store, threshold, _ = case
    if kind != "store":
        return
    once = strategies[0].compress(history)
    twice = strategies[0].compress(once.messages)
    assert twice.messages == once.messages and not twice.changed
