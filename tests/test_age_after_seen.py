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

from minilib import ToolResultAging
from minilib.aging import first_unseen


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
