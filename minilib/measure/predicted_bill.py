"""What a session would be billed, predicted from its messages: each call's prompt as
the calibrated count predicts it, split as the agent's client and its provider's
prompt cache split it, and priced (`bill`).

The cache, by provider (each a documented behaviour, docs/references.md):

- **Anthropic** (Claude Code, pi on Claude): the client sets a cache breakpoint at the
  end of each call's prompt, so a call reads from the cache what the last call sent
  and writes the rest; a few tokens after the last breakpoint are billed uncached. A
  cache entry lives 5 minutes, or an hour where the client writes 1-hour entries
  (the log's usage says which); a call after a longer idle gap (the log's timestamps)
  writes its whole prompt again. A call whose history changed (a compaction, results
  cleared, a resumed session) reads only the part before the change.
- **OpenAI** (Codex) and **Gemini**: the cache is automatic; its reads are a part of
  the prompt (never added to it) in 128-token blocks, and no writes are billed.

What the agent's client does is fitted on the calls the fit may see (the first half
of a log's, when judged): the share of its writes that are 1-hour writes, the tokens
it leaves uncached, what a call reads when its history changed (the system prompt
and tool definitions, cached apart from the history), and the share of calls
answering a person that found their history gone from the cache all the same. The
output of a call is counted from its reply, scaled by what the record's first half
shows the model's output cost beside that count (thinking a log may not hold is in
that ratio). Each call is priced as the model that answered it.
"""

from dataclasses import dataclass, field, replace
from statistics import median
from typing import Dict, List, Mapping, Optional, Sequence

from ..logs.base import timestamp_seconds
from .bill import KINDS, Bill, counts_of, price_counts, record_bill

FIVE_MINUTES, ONE_HOUR = 300.0, 3600.0
# OpenAI keeps a cached prefix "typically 5 to 10 minutes" of inactivity, in blocks
# of 128 tokens past the first 1,024 (OpenAI prompt caching guide).
OPENAI_TTL, OPENAI_BLOCK, OPENAI_MINIMUM = 600.0, 128, 1024
AUTOMATIC = ("openai", "google")
# A call read less than this share of the last call's prompt: its history was gone.
MISSED = 0.6


@dataclass(frozen=True)
class CacheBehaviour:
    """How one agent's client and its provider cache a call's prompt."""

    provider: str
    ttl_seconds: float
    hour_share: float  # of the writes, the 1-hour ones
    uncached: int  # tokens after the last breakpoint (Anthropic)
    prefix: int  # what a call reads when its history changed
    # what the log's first call read, of its prompt: a session resumed or begun
    # mid-way finds its history cached already; None where no record shows it
    first_read_share: Optional[float] = None
    # A call that starts a person's turn, inside the time to live, still finds its
    # history gone from the cache now and then (after an interrupt, a background
    # task's note, or for nothing the log shows): of those calls, the share that
    # did, and what such a call read. A prediction bills each such call as that
    # share of a miss: right on average, never on the one call.
    turn_miss_share: float = 0.0
    turn_miss_read: int = 0

    @classmethod
    def fitted(
        cls,
        calls: Sequence,
        overhead: int = 0,
        turn_gaps: Optional[Mapping[int, Optional[float]]] = None,
    ) -> "CacheBehaviour":
        """Fitted on `calls` (BilledCall, in order: the calls the fit may see);
        `turn_gaps` maps the message of each call that starts a person's turn to the
        seconds since the call before it was sent."""
        provider = next((c.provider for c in calls if c.provider), "")
        written = sum(c.cache_write_5m + c.cache_write_1h for c in calls)
        hour = sum(c.cache_write_1h for c in calls)
        share = hour / written if written else 0.0
        if provider in AUTOMATIC:
            ttl = OPENAI_TTL
        else:
            ttl = ONE_HOUR if share > 0.5 else FIVE_MINUTES
        uncached = round(median(c.input for c in calls)) if calls else 0
        breaks = [
            b.cache_read
            for a, b in zip(calls, calls[1:])
            if 0 < b.cache_read < MISSED * a.prompt
        ]
        prefix = round(median(breaks)) if breaks else overhead
        if provider in AUTOMATIC:
            uncached = 0
        first = (
            calls[0].cache_read / calls[0].prompt if calls and calls[0].prompt else None
        )
        turns = [
            (a, b)
            for a, b in zip(calls, calls[1:])
            if turn_gaps
            and b.message in turn_gaps
            and (turn_gaps[b.message] or 0) <= ttl
            and a.prompt
        ]
        missed = [b.cache_read for a, b in turns if b.cache_read < MISSED * a.prompt]
        return cls(
            provider,
            ttl,
            share,
            uncached,
            prefix,
            first,
            len(missed) / len(turns) if turns else 0.0,
            round(median(missed)) if missed else 0,
        )


def _first_read(call: "SentCall", behaviour: CacheBehaviour) -> int:
    """What a log's first call reads: the share its record shows, else the prefix."""
    if behaviour.first_read_share is not None:
        return round(behaviour.first_read_share * call.prompt)
    return min(behaviour.prefix, call.prompt)


def _expired(call: "SentCall", behaviour: CacheBehaviour) -> bool:
    return call.gap_seconds is not None and call.gap_seconds > behaviour.ttl_seconds


@dataclass(frozen=True)
class SentCall:
    """One call as predicted: its prompt, the part it shares from its start with the
    last call's (what the cache can hold), how long after the last call it came, its
    output."""

    prompt: int
    shared: int
    gap_seconds: Optional[float]
    output: int
    turn_start: bool = False  # the call answers a person's message


def split_prompt(call: SentCall, behaviour: CacheBehaviour, first: bool) -> dict:
    """A call's prompt split as the bill counts it (`bill.KINDS`); a call that starts
    a person's turn as the client's share of such calls that missed the cache."""
    expired = _expired(call, behaviour)
    shared = 0 if expired else (_first_read(call, behaviour) if first else call.shared)
    miss = behaviour.turn_miss_share
    if expired or first or not call.turn_start or not miss:
        return _split(call, behaviour, shared)
    hit = _split(call, behaviour, shared)
    missed = _split(call, behaviour, min(behaviour.turn_miss_read, shared))
    counts = {k: round((1 - miss) * hit[k] + miss * missed[k]) for k in KINDS}
    counts["input"] = call.prompt - sum(counts[k] for k in KINDS[1:4])  # rounding
    return counts


def _split(call: SentCall, behaviour: CacheBehaviour, shared: int) -> dict:
    counts = dict.fromkeys(KINDS, 0)
    counts["output"] = call.output
    if behaviour.provider in AUTOMATIC:
        cached = shared - shared % OPENAI_BLOCK if shared >= OPENAI_MINIMUM else 0
        counts["cache_read"] = min(cached, call.prompt)
        counts["input"] = call.prompt - counts["cache_read"]
        return counts
    uncached = min(behaviour.uncached, call.prompt)
    read = max(0, min(shared, call.prompt) - uncached)
    written = call.prompt - uncached - read
    hour = round(written * behaviour.hour_share)
    counts.update(
        input=uncached,
        cache_read=read,
        cache_write_5m=written - hour,
        cache_write_1h=hour,
    )
    return counts


def sent_calls(
    prompts: Sequence[int],
    changed: Sequence[bool],
    gaps: Sequence[Optional[float]],
    outputs: Sequence[int],
    prefix: int,
    reused: Optional[Sequence[int]] = None,
    turn_starts: Sequence[bool] = (),
) -> List[SentCall]:
    """Calls from what each sent: a call whose history did not change shares the
    whole of the last call's prompt; one whose history changed shares the cached
    prefix and, in a replay, the messages before the change (`reused`).
    `turn_starts` says which calls answer a person's message."""
    calls = []
    for index, prompt in enumerate(prompts):
        last = prompts[index - 1] if index else 0
        if changed[index]:
            kept = reused[index] if reused is not None else 0
            shared = min(prefix + kept, last)
        else:
            shared = last
        turn = index < len(turn_starts) and turn_starts[index]
        calls.append(SentCall(prompt, shared, gaps[index], outputs[index], turn))
    return calls


def turn_starts(messages: Sequence[Mapping], rounds: Sequence[int]) -> List[bool]:
    """Per call (its reply's index in `rounds`), whether it answers a person."""
    return [bool(i) and messages[i - 1]["role"] == "user" for i in rounds]


def turn_gaps(
    messages: Sequence[Mapping], rounds: Sequence[int]
) -> Dict[int, Optional[float]]:
    """The reply of each call that answers a person, to the seconds since the last
    call was sent (what `CacheBehaviour.fitted` reads)."""
    gaps = reply_gaps(messages, rounds)
    starts = turn_starts(messages, rounds)
    return {i: gap for i, gap, start in zip(rounds, gaps, starts) if start}


@dataclass
class PredictedBill:
    """The calls predicted and priced, beside the record where there is one."""

    model: str
    behaviour: CacheBehaviour
    counts: List[Dict[str, int]]  # per call, by kind
    usd: List[Optional[float]]
    recorded: List[Optional[Dict[str, int]]] = field(default_factory=list)
    recorded_usd: List[Optional[float]] = field(default_factory=list)
    held_out_from: int = 0  # the calls from here on were predicted by a fit blind to them
    messages: List[int] = field(default_factory=list)  # each call's reply, by index
    extra_usd: float = 0.0  # calls outside the conversation, priced as recorded
    compaction_usd: float = 0.0  # the compaction calls a replay made
    sent: List[SentCall] = field(default_factory=list)  # the calls as predicted
    models: List[str] = field(default_factory=list)  # each call's, as priced
    when: Sequence[Optional[str]] = ()  # each call's date, as priced

    def priced_as(self, behaviour: CacheBehaviour) -> "PredictedBill":
        """The same calls priced by another cache behaviour, beside the same record:
        what one rule of the behaviour is worth."""
        bill = price_calls(self.models, behaviour, self.sent, self.when)
        bill.recorded, bill.recorded_usd = self.recorded, self.recorded_usd
        bill.held_out_from, bill.messages = self.held_out_from, self.messages
        bill.extra_usd = self.extra_usd
        return bill

    @property
    def total_usd(self) -> float:
        calls = sum(u for u in self.usd if u is not None)
        return calls + self.extra_usd + self.compaction_usd

    @property
    def rows(self) -> List[dict]:
        return [{**c, "usd": u} for c, u in zip(self.counts, self.usd)]


def price_calls(
    models: Sequence[str], behaviour: CacheBehaviour, calls: Sequence[SentCall], when=()
) -> PredictedBill:
    """`calls` split by `behaviour` and priced, call i as `models[i]` on `when[i]`."""
    counts = [split_prompt(c, behaviour, i == 0) for i, c in enumerate(calls)]
    usd = [
        price_counts(
            models[i],
            behaviour.provider,
            c,
            when[i] if i < len(when) else None,
            by_kind=False,
        ).usd
        for i, c in enumerate(counts)
    ]
    return PredictedBill(
        models[0] if models else "",
        behaviour,
        counts,
        usd,
        sent=list(calls),
        models=list(models),
        when=when,
    )


def errors_by_kind(predicted: PredictedBill, start: int = 0) -> dict:
    """Per-call |predicted - recorded| / recorded medians from call `start` on: cache
    reads, cache writes, and the call's dollars; and the error of their total."""
    out = {}
    pairs = list(zip(predicted.counts, predicted.recorded))[start:]
    for name, kinds in (("cache_read", ("cache_read",)), ("cache_write", WRITES)):
        sizes = [
            abs(sum(p[k] for k in kinds) - sum(r[k] for k in kinds))
            / sum(r[k] for k in kinds)
            for p, r in pairs
            if r is not None and sum(r[k] for k in kinds) > 0
        ]
        out[name] = median(sizes) if sizes else None
    dollars = [
        (p, r)
        for p, r in zip(predicted.usd[start:], predicted.recorded_usd[start:])
        if p is not None and r
    ]
    out["usd_per_call"] = median(abs(p - r) / r for p, r in dollars) if dollars else None
    total_p, total_r = sum(p for p, _ in dollars), sum(r for _, r in dollars)
    out["usd_total"] = (total_p - total_r) / total_r if total_r else None
    out["calls"] = len(pairs)
    return out


WRITES = ("cache_write_5m", "cache_write_1h")


def reply_gaps(
    messages: Sequence[Mapping], rounds: Sequence[int]
) -> List[Optional[float]]:
    """Per call (its assistant message's index in `rounds`), the seconds since the
    last call was sent: each call is sent when the message before its reply arrives."""
    sent_at = []
    for index in rounds:
        before = messages[index - 1] if index else None
        when = timestamp_seconds(before) if before is not None else None
        sent_at.append(when if when is not None else timestamp_seconds(messages[index]))
    gaps: List[Optional[float]] = [None]
    for a, b in zip(sent_at, sent_at[1:]):
        gaps.append(None if a is None or b is None else b - a)
    return gaps


def reply_tokens(log, replies: Sequence[int], fitted_calls: Sequence) -> List[int]:
    """Each reply's output tokens from its message alone: the lab's count of what the
    model wrote (text, call arguments, thinking), times the ratio of the recorded
    output to that count on the calls the fit may see (thinking the log does not hold,
    and the tokenizer, are in that ratio)."""
    from .calibration import sent_counter, text_rule

    count = sent_counter(log, "kept", text_rule(log)).per_message
    counted = {index: count(log.messages[index]) for index in replies}
    recorded = [
        (c.output, counted[c.message]) for c in fitted_calls if c.message in counted
    ]
    lab = sum(n for _, n in recorded)
    ratio = sum(o for o, _ in recorded) / lab if lab else 1.0
    return [round(ratio * counted[index]) for index in replies]


def predicted_bill(log, calibration, bill: Optional[Bill] = None) -> PredictedBill:
    """The bill of `log`'s conversation predicted from its messages: each call's
    prompt as `calibration` predicts it (the held-out fit for a call the full fit saw
    when the calibration was fitted on this log, so every call after the first half
    is predicted blind), the cache as its client behaves (fitted on the first half of
    the calls the record shows), each call's output counted from its reply
    (`reply_tokens`): nothing of a call's own usage is read for it."""
    from .calibration import call_points, fit_for

    fits = calibration.fits_for(log, held_out=True)
    points = call_points(log, fits, every_call=True)
    rounds = [i for i, m in enumerate(log.messages) if m["role"] == "assistant"]
    billed = {c.message: c for c in log.billed if c.message is not None}
    half = max(1, len(billed) // 2)
    fitted_calls = [billed[i] for i in sorted(billed)][:half]
    overhead = fit_for(fits, log.model or "").overhead
    behaviour = CacheBehaviour.fitted(
        fitted_calls, overhead, turn_gaps(log.messages, rounds)
    )
    prompts, changed = [], []
    previous = None
    for point in points:
        prompts.append(fit_for(fits, point.model).predict(point))
        changed.append(
            previous is not None
            and (
                point.stretch != previous.stretch
                or point.cleared != previous.cleared
                or point.resumed != previous.resumed
            )
        )
        previous = point
    outputs = reply_tokens(log, rounds[: len(points)], fitted_calls)
    calls = sent_calls(
        prompts,
        changed,
        reply_gaps(log.messages, rounds),
        outputs,
        behaviour.prefix,
        turn_starts=turn_starts(log.messages, rounds),
    )
    named = log.model or (bill.calls[0].model if bill and bill.calls else "")
    models = [point.model or named for point in points]
    when = [log.messages[i].get("timestamp") for i in rounds]
    predicted = price_calls(models, behaviour, calls, when)
    recorded_usd = {}
    if bill is not None:
        recorded_usd = {c.message: c.usd for c in bill.calls if c.message is not None}
        predicted.extra_usd = sum(c.usd or 0 for c in bill.calls if c.message is None)
    predicted.messages = rounds[: len(calls)]
    predicted.recorded = [
        counts_of(billed[i]) if i in billed else None for i in rounds[: len(calls)]
    ]
    predicted.recorded_usd = [recorded_usd.get(i) for i in rounds[: len(calls)]]
    numbered = sorted(billed)
    predicted.held_out_from = rounds.index(numbered[half]) if len(numbered) > half else 0
    return predicted


def held_out_errors(log, calibration) -> dict:
    """The bill from the record, and the predicted bill judged on the calls the fit
    did not see: its total's error, and per call its cache reads' and dollars'
    (medians); beside it, the total's error with every call that answers a person
    billed as a cache hit (what the share of turns that missed is worth)."""
    bill = record_bill(log)
    predicted = predicted_bill(log, calibration, bill)
    start = predicted.held_out_from
    held = errors_by_kind(predicted, start)
    hits = predicted.priced_as(replace(predicted.behaviour, turn_miss_share=0.0))
    return {
        "bill_usd": round(bill.total_usd, 2),
        "bill_error": held["usd_total"],
        "bill_error_all_hits": errors_by_kind(hits, start)["usd_total"],
        "cache_read_error": held["cache_read"],
        "usd_per_call_error": held["usd_per_call"],
    }


def format_predicted(predicted: PredictedBill) -> List[str]:
    """Lines for the terminal: the predicted bill beside the record, and its errors on
    the calls the fit did not see."""
    behaviour = predicted.behaviour
    ttl = (
        "1 hour"
        if behaviour.ttl_seconds >= ONE_HOUR
        else (f"{behaviour.ttl_seconds / 60:.0f} minutes")
    )
    lines = [
        f"predicted from the log's messages alone: ${predicted.total_usd:,.2f}",
        f"  the cache as {behaviour.provider or 'its provider'} bills this client: "
        f"entries live {ttl}, {behaviour.hour_share:.0%} of writes 1-hour,",
        f"  {behaviour.uncached:,} tokens a call uncached, {behaviour.prefix:,} read "
        "when the history changed",
    ]
    if behaviour.turn_miss_share:
        share, read = behaviour.turn_miss_share, behaviour.turn_miss_read
        lines += [
            f"  of the calls answering a person, {share:.0%} found "
            f"their history gone from the cache (they read {read:,});",
            "  each such call is billed as that share of a miss",
        ]
    if predicted.extra_usd:
        lines.append(
            f"  of it ${predicted.extra_usd:,.2f} for calls outside the conversation "
            "(subagents', stopped replies'), taken as recorded"
        )
    held = errors_by_kind(predicted, predicted.held_out_from)
    if held["calls"]:
        lines += [
            f"  on the {held['calls']} calls the fit did not see, per call (medians): "
            f"cache reads off by {_pct(held['cache_read'])},",
            f"  cache writes by {_pct(held['cache_write'])}, dollars by "
            f"{_pct(held['usd_per_call'])}; their total off by "
            f"{_signed(held['usd_total'])}",
        ]
    return lines


def _pct(value) -> str:
    return "–" if value is None else f"{value:.1%}"


def _signed(value) -> str:
    return "–" if value is None else f"{value:+.1%}"


# What a compaction call writes when the policy names no summary size: the lab's
# stand-in summary's budget for a 200,000-token window (its policies' default).
DEFAULT_SUMMARY_TOKENS = 5_000


def provider_of(model: str) -> str:
    """The provider that bills `model`, from its name."""
    name = (model or "").lower()
    if "claude" in name:
        return "anthropic"
    if "gemini" in name:
        return "google"
    if name.startswith(("gpt", "o1", "o3", "o4", "codex")) or "/gpt" in name:
        return "openai"
    return ""


@dataclass
class LogPricing:
    """What every policy's bill on one log is priced with: the client's cache
    behaviour, each round's model, date, idle gap and output."""

    behaviour: CacheBehaviour
    models: List[str]
    when: List[Optional[str]]
    gaps: List[Optional[float]]
    outputs: List[int]
    turn_starts: List[bool] = field(default_factory=list)


class UnpricedModel(LookupError):
    """A log whose model the price data does not know, or that names none."""


def log_pricing(log, overhead: int = 0, model: Optional[str] = None) -> LogPricing:
    """How `log`'s rounds are priced under any policy: the cache behaviour fitted on
    the first half of the calls it records (a provider's defaults where it records
    none), each round's output counted from its reply."""
    rounds = [i for i, m in enumerate(log.messages) if m["role"] == "assistant"]
    billed = [c for c in log.billed if c.message is not None]
    fitted = billed[: max(1, len(billed) // 2)] if billed else []
    if fitted:
        behaviour = CacheBehaviour.fitted(
            fitted, overhead, turn_gaps(log.messages, rounds)
        )
    else:
        provider = provider_of(model or log.model)
        ttl = OPENAI_TTL if provider in AUTOMATIC else FIVE_MINUTES
        behaviour = CacheBehaviour(provider or "anthropic", ttl, 0.0, 0, overhead)
    named = model or log.model or next((c.model for c in log.billed), "")
    models = [(None if model else log.model_of.get(i)) or named for i in rounds]
    _check_priced(named, behaviour.provider)
    return LogPricing(
        behaviour,
        models,
        [log.messages[i].get("timestamp") for i in rounds],
        reply_gaps(log.messages, rounds),
        reply_tokens(log, rounds, fitted),
        turn_starts(log.messages, rounds),
    )


def _check_priced(model: str, provider: str) -> None:
    """UnpricedModel, in words a person acts on, when `model` cannot be priced."""
    if not model:
        raise UnpricedModel(
            "the log names no model, so its calls cannot be priced; give the model "
            "it ran (e.g. --model claude-sonnet-4-5)"
        )
    counts = dict.fromkeys(KINDS, 0)
    if price_counts(model, provider, dict(counts, input=1), by_kind=False).usd is None:
        raise UnpricedModel(
            f"{model}: not in the price data; give a model it knows (--model)"
        )


def policy_bill(row: Mapping, pricing: LogPricing) -> PredictedBill:
    """The bill of one policy's replay (a `compare_policies(per_round=True)` row):
    each round as it sent it, its cache as the client's, and each compaction the
    policy made as a call of its own (it reads the history, warm in the cache, and
    writes the summary: the policy's summary size)."""
    prompts = row["rounds_sent"]
    rounds = len(prompts)
    changed = [False] + list(row["rounds_broke"][1:])
    calls = sent_calls(
        prompts,
        changed,
        pricing.gaps[:rounds],
        pricing.outputs[:rounds],
        pricing.behaviour.prefix,
        reused=row["rounds_reused"],
        turn_starts=pricing.turn_starts,
    )
    bill = price_calls(pricing.models[:rounds], pricing.behaviour, calls, pricing.when)
    summary = (row.get("parameters") or {}).get(
        "summary_tokens"
    ) or DEFAULT_SUMMARY_TOKENS
    for compaction in row.get("compaction_rounds") or ():
        at = min(compaction["round"], rounds - 1)
        before = compaction.get("tokens_before") or (prompts[at - 1] if at else 0)
        counts = split_prompt(
            SentCall(before, before, None, summary), pricing.behaviour, False
        )
        bill.compaction_usd += (
            price_counts(
                pricing.models[at],
                pricing.behaviour.provider,
                counts,
                pricing.when[at],
                by_kind=False,
            ).usd
            or 0.0
        )
    return bill
