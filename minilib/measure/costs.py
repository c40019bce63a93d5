"""What a replay cost the agent, measured from the windows it sent: facts, cache, cuts.

`RunMeter` is fed each window a replay sent, in order (`sent`), and the outputs as
they arrive (`output`); it needs nothing but the log itself, no planted facts and no
answer key:

- the facts the agent used (`minilib.measure.used_facts`): kept, restorable or lost at
  the round that used them;
- the prompt cache (`minilib.measure.cache`): tokens reused and written, what the
  compressions made it write again, and the bill under a price table;
- each tool output's fate: still whole in the last window sent, cut (aged to head and
  tail), or folded away (into a summary, or dropped), the round that first happened,
  and whether the trace can give its whole text back.

`measure_replay(run, messages)` reads a `SessionRun`'s trace this way, and
`RunCosts.report()` is the plain dict `python -m minilib compress --report` writes.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence

from ..tokens import estimate_message_tokens
from ..trace import event_records
from .cache import (
    DEFAULT_PRICES,
    CacheCost,
    CacheRound,
    KnownCounts,
    PrefixCache,
    cache_cost,
    shared_prefix,
    window_change,
)
from .used_facts import FactFate, FactMeter, UsedFacts, used_facts

WHOLE, CUT, FOLDED = "whole", "cut", "folded"
ESTIMATED = (
    "estimated (the article's rule, not a tokenizer)"  # how an estimate is labelled
)
# The keys every report has (`compress --report`'s report.json, `compare`'s rows).
REPORT_KEYS = (
    "rounds",
    "overflow_round",
    "tokens_sent",
    "facts_used",
    "facts_kept",
    "facts_restorable",
    "facts_lost",
    "cache_reused_tokens",
    "cache_written_tokens",
    "cut",
)


@dataclass
class OutputFate:
    """One tool output (or environment output) over a run."""

    id: str
    tool: str
    round: int  # the round whose call it answers
    characters: int
    fate: str = WHOLE
    changed_at: Optional[int] = None  # the first round it was not whole
    recoverable: bool = True  # the trace holds its whole text

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class RunCosts:
    """A run's measured costs; `report()` is the dict the CLI writes."""

    rounds: int
    rounds_total: int
    overflow_round: Optional[int]
    tokens: List[int]
    counted_with: str  # "estimated (...)" or "counted (o200k_base)"
    facts: Dict[str, int]
    lost: List[FactFate]
    cache: CacheCost
    outputs: List[OutputFate] = field(default_factory=list)
    estimated_tokens: Optional[int] = None  # the estimate's sum, beside a real count
    cache_rounds: List[CacheRound] = field(default_factory=list)  # one a window sent

    def report(self) -> dict:
        return {
            "rounds": self.rounds,
            "rounds_total": self.rounds_total,
            "overflow_round": self.overflow_round,
            "tokens_sent": sum(self.tokens),
            "tokens_peak": max(self.tokens, default=0),
            "tokens_counted_with": self.counted_with,
            "tokens_sent_estimated": (
                sum(self.tokens)
                if self.estimated_tokens is None
                else self.estimated_tokens
            ),
            **self.facts,
            "facts_lost_list": [
                {"fact": f.fact, "kind": f.kind, "round": f.round} for f in self.lost
            ],
            "cache_prices": self.cache.prices,
            "cache_reused_tokens": self.cache.reused,
            "cache_written_tokens": self.cache.written,
            "cache_rewritten_tokens": self.cache.rewritten,
            "cache_breaks": self.cache.breaks,
            "cache_cost": round(self.cache.cost, 1),
            "uncached_cost": self.cache.uncached,
            "cut": [output.as_dict() for output in self.outputs],
        }


class RunMeter:
    """Measures a run window by window (see the module text)."""

    def __init__(
        self,
        used: Optional[UsedFacts],
        count_message,
        prices=DEFAULT_PRICES,
        *,
        known_estimates: Optional[KnownCounts] = None,
    ):
        # Without `used` (the log's facts, found elsewhere meanwhile), every measure
        # but the facts' runs as the windows come, and the facts judge the windows
        # kept for them once `facts_found` gives them.
        self.facts: Optional[FactMeter] = None if used is None else FactMeter(used)
        # (step, window, shared, change) of each window sent before the facts came
        self._unjudged: List[tuple] = []
        self.cache = PrefixCache(count_message)
        self.cache_rounds: List[CacheRound] = []
        # The article's estimate of the same windows, beside a real tokenizer's count
        # (`known_estimates`: the log's messages estimated already): the window's
        # estimate, kept from what left and joined it, and its sum over the rounds.
        self.estimate: Optional[KnownCounts] = None
        if count_message is not estimate_message_tokens:
            self.estimate = known_estimates or KnownCounts(estimate_message_tokens, ())
        self._estimated = 0  # the last window's estimate
        self.estimated_tokens = 0  # every window's, summed
        self.prices = prices
        self.outputs: Dict[str, OutputFate] = {}
        self._texts: Dict[str, str] = {}  # output id -> its whole text
        self.tokens: List[int] = []
        # The last window, and the messages in it naming each output: a fate is looked
        # at again only when a message naming its output left or joined the window.
        self._window: List[Mapping] = []
        # output id -> {id(message): [message, how many times the window holds it]}
        self._holders: Dict[str, Dict[int, list]] = {}
        self._shared_names: Dict[str, None] = {}  # outputs more than one message names
        self._changed: Dict[str, None] = {}  # outputs to look at in the next _fates

    def output(self, output_id: str, tool: str, step: int, text) -> None:
        """An output arrived (a tool_call event)."""
        recoverable = isinstance(text, str)
        self._changed[output_id] = None
        self._texts[output_id] = text if recoverable else ""
        self.outputs[output_id] = OutputFate(
            output_id, tool, step, len(self._texts[output_id]), recoverable=recoverable
        )

    def sent(
        self,
        step: int,
        window: Sequence[Mapping],
        measured: Optional[CacheRound] = None,
    ):
        """A window was sent at round `step`; `measured` is its cache round when the
        caller has measured it already, against the last window given here (a policy
        replay counts with the cache): the window is then the caller's own list, and
        where it changed is known."""
        if measured is None:
            window = list(window)
            measured = self.cache.sent(window, shared_prefix(self._window, window))
        shared = measured.shared
        self.cache_rounds.append(measured)
        self.tokens.append(measured.tokens)
        # what left the window and what joined it, found once for every measure
        left, joined = change = window_change(self._window, window, shared)
        if self.estimate is not None:
            many = self.estimate.many
            self._estimated += sum(many(joined)) - sum(many(left))
            self.estimated_tokens += self._estimated
        if self.facts is None:  # a list no one changes: kept until the facts come
            self._unjudged.append((step, window, shared, change))
        else:
            self.facts.sent(step, window, shared, change)
        self._follow(window, left, joined)
        if measured.broke or len(self.tokens) == 1:
            self._fates(step)  # a window that only appended changes no fate

    def facts_found(self, used: UsedFacts) -> None:
        """The log's facts: the windows sent so far are judged now, in order."""
        self.facts = FactMeter(used)
        unjudged, self._unjudged = self._unjudged, []
        for sent in unjudged:
            self.facts.sent(*sent)

    def _follow(
        self, window: List[Mapping], left: List[Mapping], joined: List[Mapping]
    ) -> None:
        """Which messages name each output in `window`, from what `left` the last one
        and what `joined` it (`window_change`)."""
        holders, changed, shared_names = self._holders, self._changed, self._shared_names
        for message in left:
            output_id = message.get("tool_call_id") or message.get("output_id")
            if output_id:
                held = holders[output_id]
                entry = held[id(message)]
                entry[1] -= 1
                if not entry[1]:
                    del held[id(message)]
                    if len(held) < 2:
                        shared_names.pop(output_id, None)
                changed[output_id] = None
        for message in joined:
            output_id = message.get("tool_call_id") or message.get("output_id")
            if output_id:
                held = holders.setdefault(output_id, {})
                entry = held.get(id(message))
                if entry is None:
                    held[id(message)] = [message, 1]
                    if len(held) > 1:
                        shared_names[output_id] = None
                else:
                    entry[1] += 1
                changed[output_id] = None
        changed.update(shared_names)  # their last mention may have moved
        self._window = window

    def _fates(self, step: int) -> None:
        """Each output whose messages changed since the last look: still whole (its
        last mention holds its text), cut, or folded away (not named at all)."""
        for output_id in self._changed:
            fate = self.outputs.get(output_id)
            if fate is None:
                continue
            held = self._holders.get(output_id)
            if not held:
                state = FOLDED
            else:
                text = self._last_mention(output_id, held).get("content")
                whole = text is self._texts[output_id] or text == self._texts[output_id]
                state = WHOLE if whole else CUT
            if state != fate.fate:
                fate.fate = state
                if fate.changed_at is None:
                    fate.changed_at = step
        self._changed.clear()

    def _last_mention(self, output_id: str, held: Dict[int, list]) -> Mapping:
        """The last message of the window naming `output_id`."""
        if len(held) == 1:
            return next(iter(held.values()))[0]
        for message in reversed(self._window):
            if (message.get("tool_call_id") or message.get("output_id")) == output_id:
                return message
        raise AssertionError(f"{output_id} is held but not in the window")

    def costs(self, rounds_total: int, overflow_round: Optional[int], counted_with: str):
        if self.facts is None:
            raise RuntimeError("a run's costs need the log's facts (facts_found)")
        fates = self.facts.fates()
        return RunCosts(
            len(self.tokens),
            rounds_total,
            overflow_round,
            self.tokens,
            counted_with,
            self.facts.counts(),
            [fate for fate in fates if fate.fate == "lost"],
            cache_cost(self.cache_rounds, self.prices),
            list(self.outputs.values()),
            None if self.estimate is None else self.estimated_tokens,
            list(self.cache_rounds),
        )


def measure_replay(
    run,
    messages: Sequence[Mapping],
    count_message,
    *,
    rounds_total: int,
    counted_with: str,
    prices: str = DEFAULT_PRICES,
    recall: Optional[bool] = None,
    used=None,
) -> RunCosts:
    """The costs of a replay (a SessionRun or TranscriptRun), read from its trace.

    `messages` is the log the run replayed (with output ids), `rounds_total` its
    rounds; `recall` whether its harness offers a recall tool (by default: whether
    the log calls one); `used`: `used_facts(messages, recall)` where the caller holds
    it already (it depends on the log alone, not on the replay).
    """
    if used is None:
        used = used_facts(messages, recall)
    meter = RunMeter(used, count_message, prices)
    for record in event_records(run.tracer.records):
        payload = record["payload"]
        if record["event"] == "tool_call":
            meter.output(
                payload["tool_call_id"],
                payload["name"],
                payload["step"],
                payload["output"],
            )
        elif record["event"] == "model_call" and payload["purpose"] == "decision":
            meter.sent(payload["step"], payload["input"])
    overflow_round = len(run.rounds) if run.overflow is not None else None
    return meter.costs(rounds_total, overflow_round, counted_with)
