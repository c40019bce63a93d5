"""FastWindow gives the plain window's answers: the same windows, trace and errors.

A property test replays generated histories (small ones, repeated call ids across
turns, thresholds from ones that overflow to ones that never compress) through a
plain window and through a FastWindow around an equal one, and between rounds does
to both lists what a harness might: append an invalid message (and take it away
again after the error), or replace an earlier message with a shorter, a much longer
or an invalid copy. Every window sent, every
compression, every trace record and every error text must be the same.
"""

import copy

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from scale_helpers import SCALE_PROFILE

from minilib import (
    ContextOverflowError,
    ContextWindow,
    InvalidMessagesError,
    Settings,
    Tracer,
    article_window,
    estimate_tokens,
    replay,
    scripted_summary,
)
from minilib.messages import ConversationChecker
from minilib.scale import generate_history
from minilib.scale.bounded import bounded_window
from minilib.scale.fast import FastWindow
from minilib.strategy import CompressionResult, unchanged
from minilib.tokens import estimate_message_tokens


def invalid_additions(messages):
    """Messages a buggy harness might append, each invalid after `messages`."""
    last_call = next(
        (m["tool_calls"][0]["id"] for m in reversed(messages) if m.get("tool_calls")),
        "call_x",
    )
    return [
        {"role": "tool", "tool_call_id": last_call, "content": "answered twice"},
        {"role": "tool", "tool_call_id": "nobody_asked", "content": "orphan"},
        {"role": "user"},  # no content
        {"role": "robot", "content": "?"},
        "not a message",
        {"role": "assistant", "content": "x", "tool_calls": [{"id": "", "function": {}}]},
        # Valid as far as the second call: a checker that is not copied keeps call "a"
        # open, and the next valid message would be refused.
        {
            "role": "assistant",
            "content": "x",
            "tool_calls": [tool_call("a"), tool_call("a")],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call("b"), {"id": "c"}],
        },
    ]


def tool_call(call_id):
    return {"id": call_id, "type": "function", "function": {"name": "read_file"}}


def edited(message, how: str):
    """A changed copy of an earlier message, as a harness that rewrites history makes:
    shorter, much longer, or (for a tool result) no longer answering its call."""
    content = message.get("content") or ""
    if how == "trim":
        return dict(message, content=content[:100] + "\n(trimmed)")
    if how == "grow":
        return dict(message, content=content + "\n(more)" * 2_000)
    if message.get("role") == "tool":  # "break"
        return dict(message, tool_call_id="edited_away")
    return dict(message, role="robot")


def drive(window, history, actions, tracer):
    """Run the history's rounds through `window`; what each round sent or raised."""
    conversation = history.conversation()
    messages = conversation.opening()
    outcomes = []
    for step in range(len(conversation.replies)):
        action = actions.get(step)
        if action is not None and action[0] == "invalid":
            bad = invalid_additions(messages)[action[1]]
            messages.append(bad)
            try:
                window.before_model_call(messages, tracer, step)
                outcomes.append(("accepted an invalid message", step))
            except InvalidMessagesError as error:
                outcomes.append(("invalid", str(error)))
            messages.pop()
        elif action is not None and len(messages) > 2:
            index = 2 + action[1] % (len(messages) - 2)
            messages[index] = edited(messages[index], action[0])
        try:
            compressions = window.before_model_call(messages, tracer, step)
            # What the window says it sent is what the list it left counts.
            assert window.tokens_sent == window.count_tokens(messages)
            outcomes.append(
                ("sent", [dict(m) for m in messages], [c.payload() for c in compressions])
            )
        except ContextOverflowError as error:
            outcomes.append(
                ("overflow", str(error), error.largest_index, error.written_by)
            )
        except InvalidMessagesError as error:
            outcomes.append(("invalid", str(error)))
            break  # an edit broke the pairing: both stop here
        reply = conversation.reply(messages, step)
        messages.append(reply)
        arrived, more = conversation.arrivals(reply, step, None)
        messages.extend(arrived)
        if not more:
            break
    return outcomes


PIPELINES = {
    "article": lambda threshold, tail: article_window(
        scripted_summary, threshold=threshold, protect_tail=tail
    ),
    "article, user turns folded": lambda threshold, tail: article_window(
        scripted_summary, threshold=threshold, protect_tail=tail, fold_user_turns=True
    ),
    "bounded": lambda threshold, tail: bounded_window(
        Settings(threshold=threshold, protect_tail=tail)
    ),
}


@settings(SCALE_PROFILE, max_examples=120)
@given(
    calls=st.integers(1, 30),
    seed=st.integers(0, 10_000),
    repeat_ids=st.booleans(),
    threshold=st.sampled_from([60, 300, 1_200, 4_000, 12_000, 40_000, 10**6])
    | st.integers(30, 50_000),
    at_a_round=st.none() | st.tuples(st.integers(0, 30), st.integers(-1, 1)),
    protect_tail=st.integers(0, 6),
    pipeline=st.sampled_from(sorted(PIPELINES)),
    actions=st.dictionaries(
        st.integers(0, 30),
        st.tuples(
            st.sampled_from(["invalid", "trim", "grow", "break"]), st.integers(0, 7)
        ),
        max_size=4,
    ),
)
def test_the_fast_path_sends_what_the_walk_sends(
    calls, seed, repeat_ids, threshold, at_a_round, protect_tail, pipeline, actions
):
    history = generate_history(calls, seed, repeat_ids=repeat_ids)
    if at_a_round is not None:  # a threshold right at a round's size: the edge case
        sizes = [r.tokens_before for r in replay(history.conversation(), None).rounds]
        round_number, offset = at_a_round
        threshold = max(1, sizes[round_number % len(sizes)] + offset)
    make = PIPELINES[pipeline]
    # the replay of a log traces behind FastWindow by identity: the same trace
    plain_tracer, fast_tracer = Tracer(), Tracer(messages_are_values=True)
    plain = drive(make(threshold, protect_tail), history, actions, plain_tracer)
    fast_window = FastWindow(make(threshold, protect_tail))
    fast = drive(fast_window, history, actions, fast_tracer)
    assert fast == plain
    assert fast_tracer.to_jsonl() == plain_tracer.to_jsonl()
    assert fast_window.fast_path_off is None
    kinds = {outcome[0] for outcome in plain}
    compressed = any(outcome[0] == "sent" and outcome[2] for outcome in plain)
    event(f"outcomes: {sorted(kinds)}, compressed: {compressed}")
    event(f"fast rounds: {'some' if fast_window.fast_rounds else 'none'}")


def test_a_round_that_only_appends_and_fits_takes_the_fast_path():
    history = generate_history(60, seed=1)
    window = FastWindow(article_window(scripted_summary, threshold=10**7))
    outcomes = drive(window, history, {}, Tracer())
    assert all(outcome[0] == "sent" and outcome[2] == [] for outcome in outcomes)
    assert window.full_rounds == 0 and window.fast_rounds == len(outcomes)


def test_a_failed_check_leaves_the_state_as_it_was():
    history = generate_history(10, seed=2)
    window = FastWindow(article_window(scripted_summary, threshold=10**7))
    messages = list(history.messages[:4])
    window.before_model_call(messages)
    state = (list(window._messages), window._tokens, window._checker.open_calls)
    messages.append({"role": "tool", "tool_call_id": "nobody_asked", "content": "x"})
    with pytest.raises(InvalidMessagesError, match=r"messages\[4\]\.tool_call_id"):
        window.before_model_call(messages)
    assert (list(window._messages), window._tokens, window._checker.open_calls) == state
    messages.pop()
    assert window.before_model_call(messages) == []


def test_a_counter_not_known_to_be_additive_always_takes_the_full_walk():
    def counter(messages):  # additive in fact, but nothing says so
        return estimate_tokens(messages)

    history = generate_history(20, seed=3)
    window = FastWindow(
        article_window(scripted_summary, Settings(), counter, threshold=10**7)
    )
    drive(window, history, {}, Tracer())
    assert window.fast_rounds == 0 and "not known to be a sum" in window.fast_path_off
    declared = FastWindow(
        article_window(scripted_summary, Settings(), counter, threshold=10**7),
        estimate_message_tokens,
    )
    drive(declared, history, {}, Tracer())
    assert declared.full_rounds == 1 and declared.fast_path_off is None


def test_a_false_claim_of_additivity_is_caught_and_turns_the_fast_path_off():
    def per_message_with_a_bonus(message):
        return estimate_message_tokens(message) + 1

    history = generate_history(20, seed=3)
    window = FastWindow(
        article_window(scripted_summary, threshold=10**7), per_message_with_a_bonus
    )
    drive(window, history, {}, Tracer())
    assert window.fast_rounds == 0 and "not a sum over messages" in window.fast_path_off


def test_it_stands_where_a_window_stands():
    inner = article_window(scripted_summary, threshold=900)
    window = FastWindow(inner)
    assert (window.threshold, window.strategies, window.count_tokens) == (
        900,
        inner.strategies,
        inner.count_tokens,
    )
    messages = copy.deepcopy(list(generate_history(5, seed=0).messages[:4]))
    assert window.walk(messages)[-1].state == inner.walk(messages)[-1].state
    with pytest.raises(TypeError, match="ContextWindow"):
        FastWindow(object())


class RewriteTools:
    """A strategy that rewrites every tool result of the window as `rewrite` says,
    keeping the list's length (as aging does)."""

    name = "rewrite_tools"

    def __init__(self, rewrite):
        self.rewrite = rewrite

    def compress(self, messages):
        result, affected = list(messages), []
        for index, message in enumerate(messages):
            if message.get("role") == "tool" and not message["content"].startswith("~"):
                result[index] = self.rewrite(message)
                affected.append(index)
        if not affected:
            return unchanged(self.name, messages)
        return CompressionResult(self.name, result, affected)


def counting_checks(monkeypatch):
    """How many messages ConversationChecker has checked so far, as a list to read."""
    checked = [0]
    add = ConversationChecker.add

    def counted(self, message, index):
        checked[0] += 1
        return add(self, message, index)

    monkeypatch.setattr(ConversationChecker, "add", counted)
    return checked


def test_a_compression_that_keeps_pairing_is_not_checked_whole_again(monkeypatch):
    history = generate_history(40, seed=4)
    shorten = RewriteTools(lambda m: dict(m, content="~" + m["content"][:40]))
    window = FastWindow(ContextWindow(4_000, [shorten]))
    checked = counting_checks(monkeypatch)
    outcomes = drive(window, history, {}, Tracer())
    compressed = [o for o in outcomes if o[0] == "sent" and o[2]]
    assert compressed and window.fast_path_off is None
    # each message is checked once as it arrives; a compressed round adds no full check
    arrived = len(outcomes[-1][1]) if outcomes[-1][0] == "sent" else None
    assert arrived is not None and checked[0] == arrived


def test_a_compression_that_breaks_pairing_is_still_reported_at_the_next_round():
    history = generate_history(20, seed=5)

    def make():
        breaks = RewriteTools(lambda m: dict(m, tool_call_id="~moved", content="~"))
        return ContextWindow(1_500, [breaks])

    plain = drive(make(), history, {}, Tracer())
    fast = drive(FastWindow(make()), history, {}, Tracer())
    assert fast == plain
    assert plain[-1][0] == "invalid" and "~moved" in plain[-1][1]
