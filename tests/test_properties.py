"""Property tests: the window's invariants hold on any conversation, at any settings.

Histories are generated with parallel tool calls (answered in any order), tool errors,
CJK and ASCII text, empty and huge contents, later user turns and an earlier rolling
summary; the settings are generated too, from a threshold of 1 token up. The profile
is deterministic (derandomized, no example database), so CI sees the same cases
every run; HYPOTHESIS_PROFILE=thorough runs ten times as many.
"""

import copy
import json
import os
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from minilib import (
    SUMMARY_MARK,
    ContextOverflowError,
    InvalidMessagesError,
    RollingSummary,
    Settings,
    ToolResultAging,
    Tracer,
    article_window,
    estimate_tokens,
    protected_head_length,
    recover_tool_output,
    scripted_summary,
    validate_messages,
)
from minilib.aging import first_unseen
from minilib.logs import replay_transcript
from minilib.logs.replay import parse_transcript
from minilib.messages import call_ids
from minilib.trace import event_records, trace_header

# Hypothesis still caches Unicode tables and source constants on disk: keep them in
# build/, not in the checkout.
set_hypothesis_home_dir(Path(__file__).resolve().parent.parent / "build" / "hypothesis")
settings.register_profile(
    "properties",
    max_examples=150,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", parent=settings.get_profile("properties"), max_examples=1500
)
PROFILE = settings.get_profile(
    "thorough" if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else "properties"
)

# --- generators ------------------------------------------------------------------------

ascii_text = st.text(
    st.characters(min_codepoint=32, max_codepoint=126) | st.just("\n"), max_size=80
)
cjk_text = st.text(
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
    | st.sampled_from("，。\n "),
    max_size=60,
)
mixed_text = st.builds(lambda a, b: a + b, ascii_text, cjk_text)
# Long command output: a short unit repeated, so huge contents stay cheap to generate.
huge_text = st.builds(
    lambda unit, times: (unit + "\n") * times,
    st.one_of(ascii_text, cjk_text).filter(bool),
    st.integers(100, 1500),
)
contents = st.one_of(st.just(""), ascii_text, cjk_text, mixed_text, huge_text)
ERROR_CODES = ("NOT_FOUND", "TIMEOUT", "EXIT_1", "BAD_ARGUMENTS")
TOOL_NAMES = ("read_file", "run_shell", "search_text", "list_dir")


@st.composite
def histories(draw):
    """A valid conversation as the window sees it before a model call."""
    messages = []
    if draw(st.booleans()):
        messages.append({"role": "system", "content": draw(contents)})
    if draw(st.integers(0, 9)) > 0:
        messages.append({"role": "user", "content": draw(contents)})
    if (
        messages and draw(st.integers(0, 4)) == 0
    ):  # a summary left by an earlier compression
        messages.append(
            {
                "role": "user",
                "content": f"{SUMMARY_MARK} 折叠了 3 条早期消息\n{draw(mixed_text)}",
            }
        )
    next_id = 0
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(("calls",) * 5 + ("text", "user", "observation")))
        if kind == "user":
            messages.append({"role": "user", "content": draw(contents)})
            continue
        if kind == "observation":  # environment output an agent logged as a user turn
            messages.append(
                {"role": "user", "content": draw(contents), "observation": True}
            )
            continue
        if draw(st.integers(0, 3)) == 0:
            next_id = 0  # agents reuse call ids in later turns; pairing is positional
        if kind == "text":
            messages.append({"role": "assistant", "content": draw(contents)})
            continue
        ids = [
            f"call_{next_id + n}" for n in range(draw(st.integers(1, 3)))
        ]  # parallel calls
        next_id += len(ids)
        calls = [
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": draw(st.sampled_from(TOOL_NAMES)),
                    "arguments": json.dumps({"n": number}),
                },
            }
            for number, call_id in enumerate(ids)
        ]
        messages.append(
            {
                "role": "assistant",
                "content": draw(st.one_of(st.none(), contents)),
                "tool_calls": calls,
            }
        )
        for call_id in draw(st.permutations(ids)):  # answers may come in any order
            answer = {"role": "tool", "tool_call_id": call_id, "content": draw(contents)}
            if draw(st.integers(0, 4)) == 0:
                code = draw(st.sampled_from(ERROR_CODES))
                answer["error"] = {"code": code, "message": "failed"}
                answer["content"] = f"error {code}: " + answer["content"]
            messages.append(answer)
    return messages


@st.composite
def cases(draw):
    """A history and settings; the threshold is often near what aging alone leaves, where
    summaries happen."""
    history = draw(histories())
    knob = draw(
        st.builds(
            Settings,
            head_chars=st.integers(0, 300),
            tail_chars=st.integers(0, 300),
            min_chars=st.integers(0, 600),
            protect_tail=st.integers(0, 6),
        )
    )
    aged = aging_for(knob).compress(history).messages
    summarized = estimate_tokens(
        RollingSummary(scripted_summary, knob.protect_tail).compress(aged).messages
    )
    aged_tokens = estimate_tokens(aged)
    threshold = draw(
        st.one_of(
            st.integers(1, 3000),
            st.integers(
                max(1, summarized), max(1, aged_tokens)
            ),  # aging and a summary needed
            st.integers(max(1, summarized), max(1, aged_tokens)),
            st.integers(
                max(1, summarized - summarized // 5), max(1, summarized)
            ),  # at the edge of overflow
        )
    )
    return history, Settings(
        threshold, knob.head_chars, knob.tail_chars, knob.min_chars, knob.protect_tail
    )


def window_for(knob: Settings):
    return article_window(
        scripted_summary,
        threshold=knob.threshold,
        head_chars=knob.head_chars,
        tail_chars=knob.tail_chars,
        min_chars=knob.min_chars,
        protect_tail=knob.protect_tail,
    )


def aging_for(knob: Settings) -> ToolResultAging:
    return ToolResultAging(knob.head_chars, knob.tail_chars, knob.min_chars)


def govern(history, knob):
    """Run before_model_call on a copy: (messages after, compressions or the error,
    tracer)."""
    messages = copy.deepcopy(history)
    tracer = Tracer()
    try:
        outcome = window_for(knob).before_model_call(messages, tracer, 0)
    except ContextOverflowError as error:
        outcome = error
    return messages, outcome, tracer


def assert_pairs_intact(messages):
    """Valid for the API: every call answered right after it, no result without its
    call."""
    validate_messages(messages)
    made = {call_id for message in messages for call_id in call_ids(message)}
    answered = {
        message["tool_call_id"] for message in messages if message["role"] == "tool"
    }
    assert made == answered


# --- the invariants
# ----------------------------------------------------------------------


@settings(PROFILE)
@given(cases())
def test_window_is_within_threshold_or_overflow_leaves_the_list_unchanged(case):
    history, knob = case
    messages = copy.deepcopy(history)
    identities = [id(message) for message in messages]
    tracer = Tracer()
    try:
        compressions = window_for(knob).before_model_call(messages, tracer, 0)
        event(
            "outcome: " + (" + ".join(c.strategy for c in compressions) or "untouched")
        )  # coverage, shown
    except ContextOverflowError as error:  # by --hypothesis-show-statistics
        event("outcome: overflow")
        assert messages == history and [id(message) for message in messages] == identities
        assert error.tokens > knob.threshold and error.threshold == knob.threshold
        # The message it blames is named by its place in the window it would have sent;
        # when no strategy wrote it, it is one of the caller's own messages, unchanged.
        blamed = error.window[error.largest_index]
        assert blamed["role"] == error.largest_role
        assert error.largest_tokens == max(estimate_tokens([m]) for m in error.window)
        assert f"#{error.largest_index} ({error.largest_role}, " in str(error)
        if error.written_by is None:
            assert any(blamed is message for message in messages)
        else:
            assert f"written by {error.written_by}" in str(error)
        assert [r["event"] for r in event_records(tracer.records)] == ["context_overflow"]
    else:
        assert estimate_tokens(messages) <= knob.threshold


@settings(PROFILE)
@given(cases())
def test_head_is_untouched_and_tail_only_aged(case):
    history, knob = case
    after, outcome, _ = govern(history, knob)
    head = protected_head_length(history)
    assert after[:head] == history[:head]
    tail = min(knob.protect_tail, len(history) - head)
    if tail:
        aging = aging_for(knob)
        for before, kept in zip(history[-tail:], after[-tail:]):
            # tool output (and environment output logged as a user turn) may be aged
            assert kept == before or kept == aging.age_message(before)


@settings(PROFILE)
@given(cases())
def test_no_unanswered_call_and_no_orphan_result(case):
    history, knob = case
    after, _, _ = govern(history, knob)
    assert_pairs_intact(after)
    for strategy in (
        aging_for(knob),
        RollingSummary(scripted_summary, knob.protect_tail),
    ):
        assert_pairs_intact(strategy.compress(history).messages)


@settings(PROFILE)
@given(cases())
def test_aging_is_idempotent(case):
    history, knob = case
    aging = aging_for(knob)
    once = aging.compress(history)
    twice = aging.compress(once.messages)
    assert twice.messages == once.messages and not twice.changed


@settings(PROFILE)
@given(
    histories(),
    st.integers(0, 300),
    st.integers(0, 300),
    st.integers(0, 600),
)
def test_keep_unseen_never_ages_a_result_the_model_has_not_been_sent(
    history, head, tail, minimum
):
    kept = ToolResultAging(head, tail, minimum, keep_unseen=True).compress(
        copy.deepcopy(history)
    )
    article = ToolResultAging(head, tail, minimum).compress(copy.deepcopy(history))
    start = first_unseen(history)
    assert all(a != "assistant" for a in (m["role"] for m in history[start:]))
    # what arrived after the model's latest reply is as it came
    assert kept.messages[start:] == history[start:]
    assert all(index < start for index in kept.affected_indexes)
    # what the model has seen is aged exactly as the article's rule ages it
    assert kept.messages[:start] == article.messages[:start]


@settings(PROFILE)
@given(cases())
def test_compression_never_adds_tokens_and_leaves_a_fitting_window_alone(case):
    history, knob = case
    tokens = estimate_tokens(history)
    for strategy in (
        aging_for(knob),
        RollingSummary(scripted_summary, knob.protect_tail),
    ):
        assert estimate_tokens(strategy.compress(history).messages) <= tokens
    after, outcome, tracer = govern(history, knob)
    assert estimate_tokens(after) <= tokens
    if tokens <= knob.threshold:
        assert after == history and outcome == [] and tracer.records == [trace_header()]


@settings(PROFILE)
@given(cases())
def test_same_input_gives_a_byte_identical_trace(case):
    history, knob = case
    first = replay_transcript(copy.deepcopy(history), knob).tracer.to_jsonl()
    second = replay_transcript(copy.deepcopy(history), knob).tracer.to_jsonl()
    assert first == second
    assert govern(history, knob)[2].to_jsonl() == govern(history, knob)[2].to_jsonl()


@settings(PROFILE)
@given(cases())
def test_every_tool_output_is_recoverable_from_a_replay_trace(case):
    history, knob = case
    transcript = history + [{"role": "assistant", "content": "done"}]
    run = replay_transcript(transcript, knob)
    # The replay stops at an overflow: what arrived before that round is in the trace.
    assistants = [
        index
        for index, message in enumerate(transcript)
        if message["role"] == "assistant"
    ]
    arrived = len(transcript) if run.overflow is None else assistants[len(run.rounds)]
    step = -1  # the round of the latest assistant message: the call's round
    for message in transcript[:arrived]:
        step += message["role"] == "assistant"
        if message["role"] == "tool":
            records, call_id = run.tracer.records, message["tool_call_id"]
            # an id may answer calls of several rounds: the round, or the text, says which
            assert recover_tool_output(records, call_id, step=step) == message["content"]
            assert (
                recover_tool_output(records, call_id, like=message["content"])
                == (message["content"])
            )
    for decision in run.tracer.events(
        "model_call"
    ):  # every window the model saw was valid
        if decision["purpose"] == "decision":
            assert_pairs_intact(decision["input"])
            assert estimate_tokens(decision["input"]) <= knob.threshold
    assert transcript == history + [
        {"role": "assistant", "content": "done"}
    ]  # the replay changed nothing


@settings(PROFILE)
@given(histories(), st.sampled_from(("list", "object", "jsonl", "strings")))
def test_transcript_files_round_trip(history, shape):
    if not history:
        return  # an empty transcript is an error, tested in test_errors
    if (
        shape == "strings"
    ):  # the trajectory shape: tool_calls stored as a string, arguments as objects
        stored = []
        for message in history:
            message = copy.deepcopy(message)
            if "tool_calls" in message:
                for call in message["tool_calls"]:
                    call["function"]["arguments"] = json.loads(
                        call["function"]["arguments"]
                    )
                message["tool_calls"] = json.dumps(
                    message["tool_calls"], ensure_ascii=False
                )
            stored.append(message)
        text = json.dumps(stored, ensure_ascii=False)
    elif shape == "jsonl":
        text = "".join(
            json.dumps(message, ensure_ascii=False) + "\n" for message in history
        )
    else:
        text = json.dumps(
            history if shape == "list" else {"messages": history}, ensure_ascii=False
        )
    # the reader gives an assistant with calls and no text content None, as the API does
    # and puts the results of one assistant message in the order of its calls
    expected = [
        dict(m, content=None) if m.get("tool_calls") and not m.get("content") else m
        for m in history
    ]
    index = 0
    while index < len(expected):
        calls = [c["id"] for c in expected[index].get("tool_calls") or ()]
        end = index + 1
        while end < len(expected) and expected[end]["role"] == "tool":
            end += 1
        # positional: these results answer the calls of expected[index]
        expected[index + 1 : end] = sorted(
            expected[index + 1 : end], key=lambda m: calls.index(m["tool_call_id"])
        )
        index = end
    assert parse_transcript(text, "t").messages == expected


@settings(PROFILE)
@given(
    st.one_of(
        st.integers(-(10**6), -1),
        st.floats(allow_nan=True),
        st.text(max_size=3),
        st.booleans(),
        st.none(),
    )
)
def test_bad_parameters_name_themselves(value):
    for name in ("threshold", "head_chars", "tail_chars", "min_chars", "protect_tail"):
        try:
            Settings(**{name: value})
        except ValueError as error:
            assert str(error).startswith(f"{name} must be ")
        else:
            raise AssertionError(f"Settings accepted {name}={value!r}")


@settings(PROFILE)
@given(histories(), st.data())
def test_a_dropped_answer_is_named_with_its_call_and_where_it_was_due(history, data):
    tool_indexes = [
        index for index, message in enumerate(history) if message["role"] == "tool"
    ]
    if not tool_indexes:
        return
    index = data.draw(st.sampled_from(tool_indexes))
    dropped = history[index]["tool_call_id"]
    broken = history[:index] + history[index + 1 :]
    due = next(
        (i for i in range(index, len(broken)) if broken[i]["role"] != "tool"), None
    )
    if (
        due is None
    ):  # a call still unanswered at the very end is allowed: the model just made it
        validate_messages(broken)
        return
    try:
        validate_messages(broken)
    except InvalidMessagesError as error:
        assert str(error).startswith(f"tool call {dropped!r} of messages[")
        assert f"never answered: messages[{due}] ({broken[due]['role']}) comes" in str(
            error
        )
    else:
        raise AssertionError("a conversation with an unanswered call was accepted")


def test_the_profile_is_deterministic_and_writes_no_database():
    assert (
        PROFILE.derandomize and PROFILE.database is None and PROFILE.max_examples >= 100
    )
