"""The prompt cache: the prefix each call shares with the last, and what it costs."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import PROFILE

from minilib.measure.cache import CACHE_PRICES, PrefixCache, cache_cost
from minilib.tokens import estimate_message_tokens


def message(number, size=3):
    return {"role": "user", "content": f"m{number} " + "x" * size}


@settings(PROFILE, max_examples=60)
@given(
    sizes=st.lists(st.integers(0, 200), min_size=1, max_size=12),
    rounds=st.lists(st.integers(0, 3), min_size=1, max_size=6),
    change=st.none() | st.integers(0, 30),
)
def test_reused_is_the_shared_prefix_and_written_the_rest(sizes, rounds, change):
    messages = [message(n, size) for n, size in enumerate(sizes)]
    cache = PrefixCache(estimate_message_tokens)
    window, previous = [], []
    for added in rounds:
        window = window + messages[len(window) : len(window) + added + 1]
        if change is not None and window and len(rounds) > 1:
            at = change % len(window)
            window = (
                window[:at] + [dict(window[at], content="changed")] + window[at + 1 :]
            )
        measured = cache.sent(window)
        shared = 0
        while (
            shared < min(len(previous), len(window))
            and previous[shared] == window[shared]
        ):
            shared += 1
        counts = [estimate_message_tokens(m) for m in window]
        assert measured.tokens == sum(counts)
        assert measured.reused == sum(counts[:shared])
        assert measured.written == sum(counts[shared:])
        assert measured.broke == (shared < len(previous))
        previous = window


def test_a_window_that_only_appends_rewrites_nothing():
    cache = PrefixCache(estimate_message_tokens)
    window = []
    for number in range(5):
        window = window + [message(number, 40)]
        measured = cache.sent(window)
        assert measured.rewritten == 0 and not measured.broke
    cost = cache_cost(cache.rounds, "anthropic-5m")
    # every message is written once, when it arrives, and read every round after
    assert cost.written == sum(estimate_message_tokens(m) for m in window)
    assert cost.breaks == 0 and cost.rewritten == 0


def test_a_change_early_in_the_window_is_written_again_after_it():
    cache = PrefixCache(estimate_message_tokens)
    window = [message(n, 40) for n in range(4)]
    cache.sent(window)
    aged = [window[0], dict(window[1], content="[aged]")] + window[2:]
    measured = cache.sent(aged)
    tail = sum(estimate_message_tokens(m) for m in aged[1:])
    unchanged = sum(estimate_message_tokens(m) for m in aged[2:])
    assert measured.reused == estimate_message_tokens(window[0])
    assert measured.written == tail
    assert measured.rewritten == unchanged  # held before, sent again after the change
    assert measured.broke


def test_changing_only_the_newest_message_rewrites_nothing_cached():
    cache = PrefixCache(estimate_message_tokens)
    window = [message(n, 40) for n in range(3)]
    cache.sent(window[:2])
    aged_newest = window[:2] + [dict(window[2], content="[aged]")]
    measured = cache.sent(aged_newest)  # the newest arrived aged: never cached whole
    assert measured.rewritten == 0 and not measured.broke


def test_the_cost_uses_the_price_table():
    cache = PrefixCache(estimate_message_tokens)
    first = [message(0, 400)]
    cache.sent(first)
    cache.sent(first + [message(1, 40)])
    cost = cache_cost(cache.rounds, "anthropic-5m")
    prices = CACHE_PRICES["anthropic-5m"]
    assert cost.cost == pytest.approx(
        cost.reused * prices.read + cost.written * prices.write
    )
    assert cache_cost(cache.rounds, "none").cost == cost.uncached
    with pytest.raises(ValueError, match="unknown cache prices 'cheap'"):
        cache_cost(cache.rounds, "cheap")


def test_window_change_is_what_left_and_joined_by_identity():
    """A window less what left plus what joined is the new window, whatever the
    policy did: appended, changed in place, trimmed at the front, dropped from the
    middle, with a message twice."""
    import random
    from collections import Counter

    from minilib.measure.cache import shared_prefix, window_change

    rng = random.Random(3)
    pool = [{"role": "user", "content": f"m{i}"} for i in range(60)]
    for _ in range(2_000):
        last = rng.sample(pool, rng.randrange(0, 30))
        if last and rng.random() < 0.2:
            last.append(last[0])  # a message twice
        window = list(last)
        edit = rng.randrange(6)
        if edit == 1 and window:  # in place
            window[rng.randrange(len(window))] = {"role": "user", "content": "new"}
        elif edit == 2:  # the front trimmed, by a few or by many
            del window[1 : 1 + rng.randrange(0, 24)]
        elif edit == 3 and window:  # some replaced by fewer, more or none
            at = rng.randrange(len(window))
            new = [{"role": "user", "content": "new"}] * rng.randrange(0, 3)
            window[at : at + rng.randrange(0, 4)] = new
        elif edit == 4:
            window = rng.sample(pool, rng.randrange(0, 30))
        elif edit == 5 and len(window) > 2:  # one changed, a later one an equal copy
            at = rng.randrange(len(window) - 1)
            window[at] = {"role": "user", "content": "new"}
            later = rng.randrange(at + 1, len(window))
            window[later] = dict(window[later])
        window += [{"role": "tool", "content": "x"}] * rng.randrange(0, 3)
        shared = shared_prefix(last, window)
        left, joined = window_change(last, window, shared)
        counted = Counter(map(id, last))
        counted.subtract(map(id, left))
        counted.update(map(id, joined))
        assert +counted == Counter(map(id, window))
        assert len(left) <= len(last) - shared
