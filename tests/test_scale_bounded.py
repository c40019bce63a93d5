"""minilib.scale.bounded: the bounded summary keeps its budget and never invents.

It is the base text when that fits, and with it 1,000-call sessions complete.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scale_helpers import SCALE_PROFILE, quick_replay

from minilib import (
    ContextOverflowError,
    ScriptedModel,
    Settings,
    Tracer,
    article_window,
    is_summary,
    load_session,
    replay,
    run_session,
    scripted_summary,
)
from minilib.logs.replay import RecordedConversation
from minilib.scale import generate_history
from minilib.scale.bounded import (
    ARTICLE_SUMMARY_TOKENS,
    MIN_BUDGET,
    BoundedSummarizer,
    ProtectedContentOverflowError,
    bounded_window,
    default_summary_budget,
    named_facts,
    parse_line,
    split_summary,
)
from minilib.scale.fast import FastWindow
from minilib.summary import summary_header
from minilib.tokens import estimate_message_tokens, estimate_text_tokens


def as_summary(text: str, folded: int) -> dict:
    """The message RollingSummary writes around a summarizer's text."""
    return {"role": "user", "content": summary_header(folded) + text}


def group_starts(messages):
    return [index for index, m in enumerate(messages) if m["role"] == "assistant"]


def listed(text: str):
    """The condensed line's state and the verbatim blocks after it."""
    condensed, blocks = split_summary(text)
    return condensed, blocks


@st.composite
def two_folds(draw):
    """A generated history cut into two folds at group boundaries, and a budget."""
    calls = draw(st.integers(2, 60))
    seed = draw(st.integers(0, 10_000))
    messages = list(generate_history(calls, seed).messages)[:-1]  # no final answer
    starts = group_starts(messages)
    middle = draw(st.sampled_from(starts))
    budget = draw(st.integers(MIN_BUDGET, 1500))
    return messages[2:middle], messages[middle:], budget


@SCALE_PROFILE
@given(two_folds())
def test_the_summary_stays_within_budget_and_names_only_facts_of_its_input(case):
    first, second, budget = case
    summarize = BoundedSummarizer(budget)
    folded = second
    if first:
        folded = [as_summary(summarize(first), len(first)), *second]
    text = summarize(folded)
    assert estimate_text_tokens(text) <= budget
    source = scripted_summary(folded)  # the text it condensed, earlier summary included
    condensed, blocks = listed(text)
    if condensed is None:  # nothing condensed: the base text itself
        assert text == source
        return
    for fact in condensed.facts:
        assert fact in source, f"{fact!r} is not in what was condensed"
    for name in condensed.tools:
        assert name in source  # called in a quoted action, or in an earlier tally
    for block in blocks:  # the newest actions are quoted as the base wrote them
        assert block.text in source
    actions = len(group_starts(first)) + len(group_starts(second))
    assert condensed.actions + len(blocks) == actions  # no action lost or made up


@SCALE_PROFILE
@given(st.integers(1, 40), st.integers(0, 10_000))
def test_a_budget_above_the_base_text_changes_nothing(calls, seed):
    folded = list(generate_history(calls, seed).messages)[2:-1]
    base = scripted_summary(folded)
    assert BoundedSummarizer(max(MIN_BUDGET, estimate_text_tokens(base)))(folded) == base
    assert BoundedSummarizer(10**9)(folded) == base


def test_the_article_session_is_byte_identical_at_the_article_settings():
    session = load_session()
    article = run_session(session)
    tracer = Tracer()
    run = replay(
        session.conversation(ScriptedModel(session.replies)),
        bounded_window(),
        tracer=tracer,
    )
    assert tracer.to_jsonl() == article.tracer.to_jsonl()
    assert run.messages == article.final_messages
    summaries = [c for c in tracer.events("model_call") if c["purpose"] == "summary"]
    assert [estimate_text_tokens(c["reply"]) for c in summaries] == [
        ARTICLE_SUMMARY_TOKENS
    ]


def test_the_default_budget_is_a_quarter_of_the_threshold_but_never_below_the_article():
    assert default_summary_budget(1_200) >= ARTICLE_SUMMARY_TOKENS
    assert default_summary_budget(32_000) == 8_000
    assert default_summary_budget(200_000) == 50_000
    with pytest.raises(ValueError, match="budget_tokens"):
        BoundedSummarizer(MIN_BUDGET - 1)


def test_condensing_keeps_the_newest_actions_and_counts_the_rest():
    folded = list(generate_history(80, seed=4).messages)[2:-1]
    text = BoundedSummarizer(600)(folded)
    condensed, blocks = listed(text)
    assert text.startswith("- ⋯ earlier (") and blocks
    assert blocks[-1].text == scripted_summary(folded[group_starts(folded)[-1] :])
    assert sum(condensed.tools.values()) + sum(len(b.tools) for b in blocks) == sum(
        len(m.get("tool_calls") or ()) for m in folded
    )
    assert parse_line(text.splitlines()[0]) == condensed
    # Folded again with newer actions, the counts add up and the line is parsed back.
    later = list(generate_history(120, seed=4).messages)[len(folded) + 2 : -1]
    again = BoundedSummarizer(600)([as_summary(text, len(folded)), *later])
    condensed_again, blocks_again = listed(again)
    assert condensed_again.actions + len(blocks_again) == len(group_starts(folded)) + len(
        group_starts(later)
    )


def test_the_oldest_facts_go_first_and_the_line_says_how_many():
    folded = list(generate_history(150, seed=5).messages)[2:-1]
    roomy, tight = BoundedSummarizer(1500)(folded), BoundedSummarizer(200)(folded)
    roomy_facts, tight_facts = listed(roomy)[0], listed(tight)[0]
    assert estimate_text_tokens(tight) <= 200
    assert tight_facts.dropped > roomy_facts.dropped
    assert f"{tight_facts.dropped} older facts dropped" in tight
    for fact, kind in tight_facts.facts.items():
        # what is kept of a kind is the newest of that kind
        kept = [f for f, k in tight_facts.facts.items() if k == kind]
        newest = [f for f, k in reversed(roomy_facts.facts.items()) if k == kind]
        assert fact in kept and (fact in newest or fact not in roomy_facts.facts)


def test_named_facts_are_paths_codes_and_numbers_with_their_units():
    text = (
        "  read_file 回报: error NOT_FOUND: no such file: docs/release_checklist.md\n"
        "- 日志报 E2BIG，看 #412。 → search_text\n"
        "  pytest tests: 3 failed, 433 passed in 52.0s; commit 3a9f04c2e1d77b; ERROR 7"
    )
    facts = dict(named_facts(text))
    assert facts["docs/release_checklist.md"] == "paths"
    assert facts["NOT_FOUND"] == facts["E2BIG"] == facts["#412"] == "ids/codes"
    assert facts["3a9f04c2e1"] == "ids/codes"  # a commit by its first 10 characters
    assert facts["433 passed"] == facts["52.0s"] == facts["3 failed"] == "numbers"
    assert "ERROR" not in facts and "7" not in facts  # a log level, a bare digit


def test_named_facts_are_whole_facts_not_words_with_a_slash_or_shouting():
    text = (
        "owner/repo and/or file/line src/app .../cli/strategy/auto_commit.go step 1/4 "
        "2026/12/06 FIRST REST MEMBER TIMEOUT EACCES SIGKILL alex/ent-221-fix"
    )
    facts = dict(named_facts(text))
    assert facts == {
        "src/app": "paths",  # a source folder
        "alex/ent-221-fix": "paths",  # a branch: not two plain words
        "EACCES": "ids/codes",  # an errno name
        "SIGKILL": "ids/codes",  # a signal name
    }


# --- the window ------------------------------------------------------------------------

THRESHOLDS = (8_000, 32_000, 128_000, 200_000)


def largest_summary_sent(history, window):
    """Replay `history` to its end; the overflow (or None) and the largest summary
    message, header included, in any window sent."""
    largest = [0]

    def observe(step, messages, compressions):
        for message in messages:
            if is_summary(message):
                largest[0] = max(largest[0], estimate_message_tokens(message))

    run = replay(
        history.conversation(),
        FastWindow(window),
        tracer=Tracer(),
        count_tokens=len,
        max_steps=None,
        on_round=observe,
    )
    return run, largest[0]


def test_1000_call_sessions_complete_with_the_bounded_summary():
    history = generate_history(1000, seed=0)
    for threshold in THRESHOLDS:
        window = bounded_window(Settings(threshold=threshold))
        run, largest = largest_summary_sent(history, window)
        assert run.overflow is None, f"threshold {threshold}: {run.overflow}"
        assert run.decisions[-1] == history.messages[-1]  # reached the final answer
        assert largest <= default_summary_budget(threshold)  # 0 at 200k: aging suffices


@pytest.mark.parametrize("budget", [MIN_BUDGET + 40, 100, 300, 550, 2_000])
def test_the_summary_message_header_included_stays_within_a_small_budget(budget):
    """What the window sends is the whole summary message: its header counts too (it
    used to be ~18 tokens over the budget, which showed at small budgets)."""
    run, largest = largest_summary_sent(
        generate_history(300, seed=2),
        bounded_window(Settings(threshold=8_000), summary_budget=budget),
    )
    assert run.overflow is None
    assert budget - 40 <= largest <= budget  # used, and never over


def test_with_the_unbounded_summary_the_summary_is_what_overflows():
    history = generate_history(1000, seed=0)
    for threshold in (8_000, 32_000):
        window = FastWindow(article_window(scripted_summary, threshold=threshold))
        run = quick_replay(history.conversation(), window)
        error = run.overflow
        assert isinstance(error, ContextOverflowError), f"threshold {threshold}"
        assert is_summary(error.window[error.largest_index])
        assert error.largest_tokens > threshold // 2


def test_an_overflow_means_the_protected_content_does_not_fit_and_says_so():
    messages = [dict(m) for m in generate_history(40, seed=1).messages]
    messages[1]["content"] += " and here is the whole spec:" + " lorem" * 2_000
    run = quick_replay(
        RecordedConversation(messages), bounded_window(threshold_of(2_000))
    )
    error = run.overflow
    assert isinstance(error, ProtectedContentOverflowError)
    assert error.largest_index == 1 and error.written_by is None  # the task itself
    assert error.head_tokens > 2_000
    assert "Protected content: head (system + task, 2 messages)" in str(error)
    assert "over the threshold on their own" in str(error)
    # without a system prompt the head is the task alone, and one message is one
    alone = quick_replay(
        RecordedConversation(messages[1:]), bounded_window(threshold_of(2_000))
    ).overflow
    assert "Protected content: head (the task, 1 message)" in str(alone)
    # A task that leaves room for a summary: the session completes.
    messages[1]["content"] = messages[1]["content"][:1_000]
    run = quick_replay(
        RecordedConversation(messages), bounded_window(threshold_of(2_000))
    )
    assert run.overflow is None


def threshold_of(threshold: int) -> Settings:
    return Settings(threshold=threshold)


@settings(SCALE_PROFILE, max_examples=300)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from(list("aZ0_/.-#:5 sv") + ["\n"]), max_size=20),
        max_size=5,
    )
)
def test_lines_joined_name_the_facts_each_names(texts):
    """No fact runs across a line break: the condensed line takes what the verbatim
    blocks name block by block."""
    joined = named_facts("\n".join(texts))
    assert joined == [fact for text in texts for fact in named_facts(text)]
