"""The article's pipeline compressing in batches: down to a share of the threshold."""

import pytest

from minilib.policies.production import build_policy, replay_policy
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens


def test_once_over_the_threshold_it_compresses_to_the_target_share():
    history = generate_history(200, user_turns=4).messages
    windows = []
    run = replay_policy(
        history,
        build_policy("article-batched", 8_000, target_share=0.5),
        lambda step, window, *_: windows.append(window),
    )
    assert run.overflow_round is None and run.invalid_rounds == []
    sizes = [estimate_tokens(w) for w in windows]
    assert max(sizes) <= 8_000
    # a round that compressed lands at or under the target whenever it could
    dropped = [after for before, after in zip(sizes, sizes[1:]) if after < before]
    assert dropped and sum(size <= 4_000 for size in dropped) >= len(dropped) // 2


def test_it_compresses_less_often_than_the_production_window():
    history = generate_history(200, user_turns=4).messages
    plain = replay_policy(history, build_policy("article-bounded", 8_000))
    batched = replay_policy(history, build_policy("article-batched", 8_000))
    assert batched.overflow_round is None
    breaks = [sum(r.broke for r in run.cache) for run in (plain, batched)]
    assert breaks[1] < breaks[0]


@pytest.mark.parametrize("share", [0, -0.5, 1.5, True])
def test_a_share_outside_zero_to_one_is_named(share):
    with pytest.raises(ValueError, match="target_share must be in"):
        build_policy("article-batched", 8_000, target_share=share)
