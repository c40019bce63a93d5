"""What compression costs in the prompt cache: the prefix each call can reuse.

Providers cache the prefix of a prompt: a call whose window begins exactly as the
last one did reads that prefix from the cache at a fraction of the input price, and
what follows is written to the cache (Anthropic bills the write at a premium). So a
window that only appended costs little, and a compression that changes an early
message (aging an old result, inserting a summary) makes every token after it a
write again. Per round this module measures, on the windows actually sent:

- **reused**: the tokens of the longest run of messages shared with the previous
  window, from its start (a provider can read them from the cache);
- **written**: the rest of the window (written anew);
- **rewritten**: the part of the written tokens that is messages the last window
  already held, unchanged, after the point where it changed: what a compression made
  the cache write again (0 in a round that only appended, and 0 when only the newest
  message changed: it was never cached);

and over a run, their cost in input-token equivalents under a price table
(`CACHE_PRICES`, a parameter; sources in docs/references.md).

Limits: the prefix is compared message by message (a provider matches tokens, so a
changed message's own unchanged start is counted as written); every call is assumed
to come within the cache's lifetime, with a cache breakpoint at the end of each
window (what an agent harness sets); minimum cacheable sizes are ignored.

Example: a window that only appended reuses all of the last one; a changed first
message breaks the cache for everything after it.

    >>> from minilib.tokens import estimate_message_tokens
    >>> cache = PrefixCache(estimate_message_tokens)
    >>> task = {"role": "user", "content": "go"}
    >>> reply = {"role": "assistant", "content": "ok"}
    >>> cache.sent([task]).written
    5
    >>> cache.sent([task, reply]).reused, cache.sent([task, reply]).written
    (5, 0)
    >>> cache.sent([{"role": "user", "content": "gone"}, reply]).reused
    0
"""

import operator
from dataclasses import dataclass, field
from itertools import accumulate, compress
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

MessageCounter = Callable[[Mapping], int]


@dataclass(frozen=True)
class CachePrices:
    """What a cached token costs, in multiples of the base input price."""

    key: str
    read: float  # a token read from the cache
    write: float  # a token written to the cache
    source: str


# Sources: docs/references.md ("Prompt caching prices").
CACHE_PRICES = {
    "anthropic-5m": CachePrices(
        "anthropic-5m", 0.1, 1.25, "Anthropic prompt caching, 5-minute cache"
    ),
    "anthropic-1h": CachePrices(
        "anthropic-1h", 0.1, 2.0, "Anthropic prompt caching, 1-hour cache"
    ),
    "openai": CachePrices(
        "openai", 0.1, 1.0, "OpenAI prompt caching (gpt-5 family: cached input at 10%)"
    ),
    "none": CachePrices("none", 1.0, 1.0, "no prompt cache: every token at full price"),
}
DEFAULT_PRICES = "anthropic-5m"


@dataclass(frozen=True)
class CacheRound:
    """One call: its window's tokens, the prefix reused, the rest written."""

    tokens: int
    reused: int
    written: int
    rewritten: int  # unchanged messages written again, after an earlier change
    broke: bool = False  # the window did not begin with the whole last one
    # messages it shares with the last window from the start (what changed begins
    # there: a meter of the same windows need not look for it again)
    shared: int = field(default=0, compare=False, repr=False)


class KnownCounts:
    """Each of `messages` counted once, by identity: a replay sends the log's own
    messages again every round, and a counter need not count them again. It keeps
    the messages, so no other object can take one's id while it is in use."""

    def __init__(self, count_message: MessageCounter, messages: Sequence[Mapping]):
        self.count_message = count_message
        self.messages = list(messages)
        self.counts: Dict[int, int] = {
            id(message): count_message(message) for message in self.messages
        }
        # Messages a policy wrote (a cleared result, a summary) are counted once too:
        # a window sends them again round after round. Held here, so their ids stay
        # theirs.
        self._written: List[Mapping] = []

    def __call__(self, message: Mapping) -> int:
        known = self.counts.get(id(message))
        return self._count(message) if known is None else known

    def _count(self, message: Mapping) -> int:
        counted = self.counts[id(message)] = self.count_message(message)
        self._written.append(message)
        return counted

    def many(self, messages: Sequence[Mapping]) -> List[int]:
        """The count of each of `messages`, the known ones looked up."""
        counts = list(map(self.counts.get, map(id, messages)))
        if None in counts:
            count = self._count
            counts = [
                count(message) if known is None else known
                for message, known in zip(messages, counts)
            ]
        return counts


class PrefixCache:
    """Feed it each window sent (`sent`); it measures the cache per round.

    It keeps the last window and its messages' running token totals, so a round
    costs what it appended plus, where the prefix changed, one walk to the change.
    `known` (a `KnownCounts` of the same counter) gives the counts of messages it
    has counted already.
    """

    def __init__(
        self, count_message: MessageCounter, known: Optional[KnownCounts] = None
    ):
        self.count_message = count_message
        self._many = (
            known.many
            if known is not None
            else lambda messages: list(map(count_message, messages))
        )
        self._last: List[Mapping] = []
        self._totals: List[int] = [0]  # _totals[k]: tokens of the last window's first k
        self.rounds: List[CacheRound] = []

    def sent(self, window: Sequence[Mapping], shared: Optional[int] = None) -> CacheRound:
        """Measure one window. `shared`: how many messages it shares from the start
        with the last one, when the caller knows (the caller's own list then, which
        it does not change afterwards)."""
        last = self._last
        if shared is None:
            window = list(window)
            shared = shared_prefix(last, window)
        totals = self._totals
        del totals[shared + 1 :]  # what the window changed is counted again
        new = window[shared:]
        counts = self._many(new)
        running = accumulate(counts, initial=totals[-1])
        next(running)  # the total before the change, already in totals
        totals.extend(running)
        tokens, reused = totals[-1], totals[shared]
        broke = shared < len(last)
        rewritten = 0
        if broke:  # what the last window held after the change, sent again unchanged
            held = set(map(id, last[shared:]))
            rewritten = sum(compress(counts, map(held.__contains__, map(id, new))))
        measured = CacheRound(tokens, reused, tokens - reused, rewritten, broke, shared)
        self._last = window
        self.rounds.append(measured)
        return measured


def shared_prefix(last: List[Mapping], window: List[Mapping]) -> int:
    """How many messages `window` shares with `last` from the start."""
    known = len(last)
    if len(window) >= known and window[:known] == last:  # the usual round: appended
        return known
    # Halving with slice comparisons (identity first, then value, in C): a window that
    # changed early costs a few passes at C speed, not a Python loop over every message.
    low, high = 0, min(known, len(window))  # the first `low` are shared; `high` are not
    if window[:high] == last[:high]:
        return high
    while high - low > 1:
        middle = (low + high) // 2
        if window[low:middle] == last[low:middle]:
            low = middle
        else:
            high = middle
    return low


def resumption(
    last: List[Mapping], window: List[Mapping], shared: int
) -> Optional[Tuple[int, int]]:
    """Where `window`, changed at `shared` (the messages the two share from the
    start), goes on as `last` ended: (k, d) such that after `k` messages of its own
    the window repeats all of `last` after the `d` messages of it that left, through
    its end (what follows in the window is new); the smallest change tried first
    (a message changed in place, one replaced by another or by none, the front of a
    long window trimmed by a few); None when it is not so near.

    Each try is one identity check, and the one that holds one comparison in C."""
    known, length = len(last), len(window)
    for size in range(1, RESUME_AHEAD + RESUME_BEHIND + 1):
        for k in range(min(size, RESUME_AHEAD) + 1):
            d = size - k
            at, was = shared + k, shared + d
            if d > RESUME_BEHIND or was >= known or at >= length:
                continue
            rest = known - was
            if window[at] is last[was] and window[at : at + rest] == last[was:]:
                return k, d
    return None


# How far `resumption` looks: messages of the window's own, and messages that left.
RESUME_AHEAD, RESUME_BEHIND = 4, 16


def window_change(
    last: List[Mapping], window: List[Mapping], shared: int
) -> Tuple[List[Mapping], List[Mapping]]:
    """What left the window and what joined it since `last` (the two share their
    first `shared` messages, as `shared_prefix` compares them): (left, joined), so
    that `window` holds `last`'s messages less `left`, plus `joined`, a message
    counted as often as it is there. A round that appended costs nothing; one that
    changed a few messages and went on as the last window did (`resumption`), the
    same objects, compared in C; any other, the messages of the changed parts, less
    those in both (when each is in them once), found by identity."""
    known = len(last)
    joined = window[shared:]
    if shared == known:
        return [], joined
    resumed = resumption(last, window, shared)
    if resumed is not None:
        k, d = resumed
        after = shared + k + known - shared - d  # the end of the last window in it
        # the same message objects, not equal copies (what is counted is theirs)
        if all(map(operator.is_, window[shared + k : after], last[shared + d :])):
            return last[shared : shared + d], window[shared : shared + k] + window[after:]
    left = last[shared:]
    was = dict(zip(map(id, left), left))
    now = dict(zip(map(id, joined), joined))
    if len(was) == len(left) and len(now) == len(joined):  # each once: the difference
        left = [was[key] for key in was.keys() - now.keys()]
        joined = [now[key] for key in now.keys() - was.keys()]
    return left, joined


@dataclass(frozen=True)
class CacheCost:
    """A run's cache bill in input-token equivalents, beside the same tokens uncached."""

    prices: str
    reused: int
    written: int
    rewritten: int
    breaks: int  # rounds whose window did not begin with the last one
    cost: float  # reused × read + written × write
    uncached: int  # every token sent at the full input price

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def cache_cost(rounds: Sequence[CacheRound], prices: str = DEFAULT_PRICES) -> CacheCost:
    """What `rounds` cost under the price table `prices` (a key of CACHE_PRICES)."""
    if prices not in CACHE_PRICES:
        raise ValueError(
            f"unknown cache prices {prices!r}; expected one of {', '.join(CACHE_PRICES)}"
        )
    table = CACHE_PRICES[prices]
    reused = sum(r.reused for r in rounds)
    written = sum(r.written for r in rounds)
    return CacheCost(
        prices,
        reused,
        written,
        sum(r.rewritten for r in rounds),
        sum(1 for r in rounds if r.broke),
        reused * table.read + written * table.write,
        sum(r.tokens for r in rounds),
    )
