"""ToolResultAging's age-after-seen option: a result is aged only once the model has been
sent it.

Off by default (the article ages the newest result in the round it arrives). On, a
result that no assistant message follows is left whole, so the model reads every
result in full once; at the article's threshold the 4,276-token first round then
cannot fit.
"""

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import PROFILE, histories

from minilib import Settings, ToolResultAging, estimate_tokens, is_aged, run_session
from minilib.aging import first_unseen
from minilib.measure.grounding import article_pipeline, run_grounded, threshold_to_finish
from minilib.model import ScriptedModel


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


def test_first_unseen_is_just_after_the_last_assistant_message():
    system = {"role": "system", "content": "s"}
    user = {"role": "user", "content": "u"}
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    result = {"role": "tool", "tool_call_id": "c1", "content": "x" * 1000}
    assert first_unseen([system, user]) == 0
    assert first_unseen([system, user, call, result]) == 3
    assert first_unseen([system, user, call, result, {**call, "content": "ok"}]) == 5


def test_off_by_default_and_checked():
    assert ToolResultAging().keep_unseen is False
    assert ToolResultAging() == ToolResultAging(keep_unseen=False)
    with pytest.raises(ValueError, match="keep_unseen must be True or False"):
        ToolResultAging(keep_unseen="yes")


def test_the_pipeline_without_the_option_is_the_articles(session):
    model = ScriptedModel(session.replies)
    window = article_pipeline(model.summarize, Settings(), estimate_tokens, False)
    assert window.strategies[0] == ToolResultAging()
    plain = run_grounded(session, grounded=False).run.tracer.to_jsonl()
    assert plain == run_session(session).tracer.to_jsonl()


def test_every_result_is_sent_whole_in_the_round_after_it_arrives(session):
    threshold, finished = threshold_to_finish(session, grounded=False)
    run = finished.run
    assert run.overflow is None and threshold > Settings().threshold
    decisions = [c for c in run.tracer.events("model_call") if c["purpose"] == "decision"]
    outputs = {c["tool_call_id"]: c["output"] for c in run.tracer.events("tool_call")}
    checked = 0
    for decision in decisions:
        sent = decision["input"]
        for message in sent[first_unseen(sent) :]:
            if message["role"] == "tool":
                assert not is_aged(message)
                assert message["content"] == outputs[message["tool_call_id"]]
                checked += 1
    assert checked == len(outputs)  # every result, once, whole
    # and aging still happens once a result has been seen
    assert any(c.strategy == "tool_result_aging" for c in run.compressions)


def test_at_the_articles_threshold_the_first_result_overflows_round_1(session):
    run = run_grounded(session, keep_unseen=True, grounded=False).run
    baseline_round_1 = run_session(session).rounds[1].baseline_tokens
    assert baseline_round_1 == 4_276  # the article's round-1 window before aging
    assert run.overflow is not None and len(run.rounds) == 1
    assert run.overflow.tokens == baseline_round_1 > Settings().threshold
    assert run.overflow.largest_role == "tool"


def test_the_threshold_to_finish_is_the_first_one_that_fits_the_largest_result(session):
    threshold, finished = threshold_to_finish(session, grounded=False)
    # one token less and the run overflows, needing exactly that threshold
    short = run_grounded(
        session, Settings(threshold=threshold - 1), grounded=False, keep_unseen=True
    ).run
    assert short.overflow is not None and short.overflow.tokens == threshold
    # it is the window of the round after the largest result arrived, sent whole
    largest = max(finished.run.tracer.events("tool_call"), key=lambda c: len(c["output"]))
    assert largest["tool_call_id"] == "call_03"  # logs/build.log
    assert max(r.tokens_after for r in finished.run.rounds) == threshold
