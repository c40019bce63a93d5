"""Replay a log under a production policy: one window a round, as the policy sends it.

A round is one assistant message of the log. Before it, the policy is given the log's
history so far (uncompressed, the same list growing) and sends a window
(`Policy.send`). The runner counts each window, ends the replay at the first window
over the model's context window (its messages plus the policy's `overhead_tokens`, the
system prompt and tool definitions every call carries; or the policy's own overflow),
and counts the windows that break pairing (a tool result whose call is not right before
it): a policy that breaks pairing is run as written, and its broken windows are
counted, not hidden.

Counting and checking cost what a round appended, not the whole window, when the
window begins as the last one did (most rounds): the counts come from the prompt-cache
measurement (`minilib.measure.cache.PrefixCache`, which keeps each message's count),
the pairing check from a `ConversationChecker` kept between rounds. So the run also
measures the cache. `on_window(step, window, arrived, measured)` sees each window
sent, the log's messages that arrived since the last one and the window's cache
round, for the measurements that read a run round by round (`minilib.measure.costs`).
"""

from dataclasses import dataclass, field
from typing import Callable, List, Mapping, Optional, Sequence

from ...logs.replay import with_output_ids
from ...measure.cache import (
    CacheRound,
    KnownCounts,
    PrefixCache,
    resumption,
    shared_prefix,
)
from ...messages import ConversationChecker, InvalidMessagesError
from ...tokens import known_per_message
from ...window import ContextOverflowError
from .base import Policy

WindowObserver = Callable[[int, List[Mapping], List[Mapping], CacheRound], None]


@dataclass
class PolicyRun:
    """What one policy sent on one log."""

    policy: str
    rounds_total: int  # the log's rounds (assistant messages)
    cache: List[CacheRound] = field(default_factory=list)  # one a round sent
    invalid_rounds: List[int] = field(default_factory=list)  # windows breaking pairing
    summary_calls: int = 0
    overflow_round: Optional[int] = None
    overflow: Optional[str] = None  # what stopped it, in words

    @property
    def tokens(self) -> List[int]:
        return [measured.tokens for measured in self.cache]

    @property
    def rounds(self) -> int:
        """Rounds sent (a round that overflowed was not sent)."""
        return len(self.cache)

    @property
    def tokens_sent(self) -> int:
        return sum(self.tokens)

    @property
    def peak_tokens(self) -> int:
        return max(self.tokens, default=0)


def per_message_counter(count_tokens) -> Callable[[Mapping], int]:
    """How `count_tokens` counts one message, for counting only what is new."""
    return known_per_message(count_tokens) or (lambda message: count_tokens([message]))


RESUME_TRIES = 4  # places the pairing check tries to pick the last window up at


class PairingCheck:
    """Whether each window keeps pairing, checking only where it changed.

    Pairing state after a message that is not a tool result depends only on that
    message (an assistant message opens its calls; any other leaves none open), and
    the part a window shares with the last valid one was checked then: so the check
    restarts at the last such message before the first change (the window's end,
    when it only appended). It stops again where the window goes on as the last one
    did: from a message that is not a tool result on, the rest of the last window
    followed by what is new, at the same place (a message changed in the middle) or
    elsewhere (messages dropped from the front, or replaced by fewer); there the last
    window's final state carries on. A window that breaks pairing leaves the last
    valid one what the next window is checked against (a policy that breaks pairing
    every few rounds is not checked whole after each)."""

    def __init__(self):
        self._last: List[Mapping] = []
        self._valid = False
        self._end: Optional[ConversationChecker] = None  # the state after _last
        self._places: Optional[dict] = None  # id of each of _last's messages -> place
        self._fresh = True  # _last is the window checked last (a `shared` is its)

    def valid(self, window: List[Mapping], shared: Optional[int] = None) -> bool:
        """Whether `window` keeps pairing; `shared`: the messages it shares from the
        start with the last window checked, when the caller knows."""
        last, known = self._last, len(self._last)
        start, end, tail = 0, len(window), None
        if self._valid:
            if shared is None or not self._fresh:
                shared = shared_prefix(last, window)
            if shared == known:  # appended: the last window's state goes on
                return self._appended(window, known)
            else:
                start = shared  # from the last message before it not a tool result
                while start > 0 and window[start - 1].get("role") == "tool":
                    start -= 1
                start = max(start - 1, 0)  # that message itself opens the state
                end, tail = self._resumes(window, shared)
        checker = ConversationChecker()
        try:
            for index in range(start, end):
                checker.add(window[index], index)
            if tail is not None:  # the last window's state, after its own end
                checker = self._end.copy()
                for index in range(tail, len(window)):
                    checker.add(window[index], index)
        except InvalidMessagesError:
            # the last valid window and its state (never changed here) stay
            self._fresh = False
            return False
        self._last, self._valid, self._end, self._places = window, True, checker, None
        self._fresh = True
        return True

    def _appended(self, window: List[Mapping], known: int) -> bool:
        """`valid` for a window that appended to the last valid one: the state after
        it goes on (no copy: an invalid window leaves no state to go on from)."""
        checker = self._end
        try:
            for index in range(known, len(window)):
                checker.add(window[index], index)
        except InvalidMessagesError:
            self._last, self._valid, self._end, self._places = window, False, None, None
            return False
        self._last, self._places, self._fresh = window, None, True
        return True

    def _resumes(self, window: List[Mapping], shared: int):
        """Where the check of `window` (changed at `shared`) can stop, having checked
        a message that is not a tool result, and where the rest of the last window
        ends in it: (stop, end), or (len(window), None) when it does not go on so."""
        last, known = self._last, len(self._last)
        # near the change: a few messages changed, and then the last window's rest
        resumed = resumption(last, window, shared)
        if resumed is not None:
            at = shared + resumed[0]
            end = at + known - shared - resumed[1]
            for place in range(at, end):
                if window[place].get("role") != "tool":
                    return place + 1, end
            # the rest is tool results and what is new: nowhere to pick the last
            # window's state up (what follows the change is not in the last window)
            return len(window), None
        # the same place: the shortest end of the last window that window repeats
        low, high = shared + 1, known
        if len(window) >= known and high > low:
            if window[low:known] == last[low:known]:
                high = low
            while high - low > 1:
                middle = (low + high) // 2
                if window[middle:known] == last[middle:known]:
                    high = middle
                else:
                    low = middle
            for place in range(high, known):
                if window[place].get("role") != "tool":
                    return place + 1, known
        # elsewhere (the front trimmed, messages replaced by fewer or more): a
        # message not a tool result from the change on, found in the last window,
        # with the rest of the last window after it (a few tried, the first ones)
        if self._places is None:
            self._places = dict(zip(map(id, last), range(known)))
        tries = RESUME_TRIES
        for place in range(shared, len(window)):
            message = window[place]
            if message.get("role") == "tool":
                continue
            was = self._places.get(id(message))
            if was is None:
                continue  # written this round: not in the last window
            rest = known - was
            if window[place : place + rest] == last[was:]:
                return place + 1, place + rest
            tries -= 1
            if not tries:
                break
        return len(window), None


def replay_policy(
    messages: Sequence[Mapping],
    policy: Policy,
    on_window: Optional[WindowObserver] = None,
    known: Optional[KnownCounts] = None,
) -> PolicyRun:
    """Send every round of `messages` (a log's, chat-completions shape) through
    `policy`; stop at the first window that does not fit its context window.
    `known`: the log's messages counted already with the policy's count (a caller
    replaying the same log under many policies counts them once)."""
    prepared = with_output_ids(messages)
    replies = [i for i, message in enumerate(prepared) if message["role"] == "assistant"]
    run = PolicyRun(policy.key, len(replies))
    count_message = per_message_counter(policy.count_tokens)
    cache, pairing = PrefixCache(count_message, known), PairingCheck()
    history: List[Mapping] = []
    last: List[Mapping] = []  # the last window sent
    for step, index in enumerate(replies):
        arrived = prepared[len(history) : index]
        history.extend(arrived)
        try:
            sent = policy.send(history, step)
        except ContextOverflowError as error:
            run.overflow_round, run.overflow = step, str(error)
            break
        run.summary_calls += sent.summary_calls
        window = list(sent.messages)  # the policy may change its own list later
        shared = shared_prefix(last, window)  # once a round, for every measure
        last = window
        measured = cache.sent(window, shared)
        needed = measured.tokens + policy.overhead_tokens
        if needed > policy.window_tokens:
            run.overflow_round = step
            run.overflow = (
                f"the window needs {needed:,} tokens ({measured.tokens:,} of messages "
                f"+ {policy.overhead_tokens:,} of system prompt and tools), over the "
                f"model's {policy.window_tokens:,}"
            )
            break
        if not pairing.valid(window, shared):
            run.invalid_rounds.append(step)
        run.cache.append(measured)
        if on_window is not None:
            on_window(step, window, arrived, measured)
    return run
