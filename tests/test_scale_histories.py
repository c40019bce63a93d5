"""The generated long histories: deterministic, and holding what they claim to hold."""

import pytest

from minilib import replay, validate_messages
from minilib.messages import call_ids
from minilib.scale import generate_history
from minilib.scale.histories import MAX_RESULT_CHARS, MIN_RESULT_CHARS
from minilib.tokens import count_cjk


def fresh(*args, **options):
    """A newly generated history, not the cached one."""
    return generate_history.__wrapped__(*args, **options)


def test_the_same_seed_gives_the_same_messages_and_another_seed_does_not():
    assert fresh(120, seed=7).messages == fresh(120, seed=7).messages
    assert fresh(120, seed=7).messages != fresh(120, seed=8).messages
    assert (
        fresh(120, seed=7, repeat_ids=True).messages
        == fresh(120, seed=7, repeat_ids=True).messages
    )


def test_a_long_history_has_what_it_claims():
    history = generate_history(1000, seed=0)
    messages = list(history.messages)
    validate_messages(messages)
    stats = history.stats()
    assert stats.tool_calls == 1000
    assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
    assert messages[-1]["role"] == "assistant" and "tool_calls" not in messages[-1]
    widths = [len(m["tool_calls"]) for m in messages if m.get("tool_calls")]
    assert set(widths) == {1, 2, 3, 4}  # parallel calls, 2-4 in one message
    assert 50 <= stats.parallel_rounds <= 250
    errors = [m for m in messages if m.get("error") is not None]
    assert 30 <= len(errors) <= 120
    for message in errors:
        assert set(message["error"]) == {"code", "message"}
        assert message["content"].startswith(f"error {message['error']['code']}: ")
    assert stats.cjk_results >= 30
    assert any(
        count_cjk(m["content"] or "") for m in messages if m["role"] == "assistant"
    )
    sizes = [len(m["content"]) for m in messages if m["role"] == "tool"]
    assert MIN_RESULT_CHARS <= min(sizes) <= 250
    assert 40_000 <= max(sizes) <= MAX_RESULT_CHARS
    assert 1_200 <= stats.tokens_per_call <= 1_600  # ~1.4k estimated tokens a call


def test_the_average_size_holds_for_other_seeds():
    for seed in (1, 2):
        assert 1_200 <= generate_history(1000, seed).stats().tokens_per_call <= 1_600


def test_repeated_ids_reuse_call_ids_across_turns_and_stay_valid():
    messages = list(generate_history(200, seed=3, repeat_ids=True).messages)
    validate_messages(messages)
    ids = [call_id for m in messages for call_id in call_ids(m)]
    assert len(set(ids)) <= 4 < len(ids)


def test_a_generated_conversation_replays_to_the_end():
    history = generate_history(150, seed=2)
    run = replay(history.conversation(), None, max_steps=None)
    assert run.overflow is None
    assert len(run.rounds) == history.stats().rounds
    assert run.messages == list(history.messages)


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="tool_calls"):
        generate_history(0)
    with pytest.raises(ValueError, match="parallel_share"):
        generate_history(10, parallel_share=1.5)


@pytest.mark.parametrize("calls, turns", [(100, 4), (1000, 10), (7, 7)])
def test_user_turns_add_follow_ups_and_leave_the_session_as_it_was(calls, turns):
    from minilib.scale.histories import FOLLOW_UPS

    one = generate_history(calls).messages
    many = generate_history(calls, user_turns=turns).messages
    validate_messages(many)
    follow_ups = [m for m in many if m["role"] == "user" and m["content"] in FOLLOW_UPS]
    assert len(follow_ups) == turns - 1
    assert [m for m in many if m not in follow_ups] == list(one)
    # each comes after a round's results, before the next reply
    for index, message in enumerate(many):
        if message in follow_ups:
            assert many[index - 1]["role"] in ("tool", "user")
            assert many[index + 1]["role"] in ("assistant", "user")
