"""Count what the API counted: a count fitted to a log's recorded usage, and its error
on the calls it was not fitted on.

The article's estimate counts a message's text and its calls' names. What a model's
API counted for a call is more: the calls' arguments, the thinking it keeps, the
system prompt and tool definitions no log holds, and all of it by a tokenizer no one
can run offline (Anthropic publishes none since Claude 3; `count_tokens` is an API
call). So the lab counts what the call sent with the article's text rule, arguments
and kept thinking included (`sent_counter`), and learns from the log how the API's
tokens relate to it. For Claude Code with a Claude model the text rule is the
article's reweighted by character class (`claude_text`: fitted on real sessions, prose
cheaper than code and punctuation, the same total on average), which follows what the
API counted for one result about a third more closely than characters / 4:

    recorded input of a call  ~  overhead + ratio x (the lab's count of what it sent)

- `ratio` is taken from what consecutive calls added (where both the record and the
  lab's count grew): the part of each call that a compaction, a resumed session or the
  overhead cannot touch. It is the sum of what the API added over the sum of what the
  lab's count added, leaving out the steps whose own ratio is more than twice off the
  typical one (a jump the log does not explain); a sum, because a count runs up what
  every step added, and the larger steps add a little more than the typical one (a
  median step under-predicted late calls by 1-2% on real sessions). It is steady
  within a log and differs by model (Claude's tokenizer cuts text finer than 4
  characters).
- `overhead` is the median of what each call counted beyond ratio x count, so a first
  call that already holds a long history (a resumed session) is one call among many,
  not the overhead. Where the fitted calls reach past the log's first compaction, the
  calls after it give the overhead alone, and what the calls before it counted beyond
  that is history the file lacks (`Fit.missing`: the file begins mid-session), which
  the compaction replaced and no later call pays.
- After one of Claude Code's compactions, what the harness re-attaches (the files read
  last and the todo list) is added to the call's count (`reattached_tokens`).

A fit is judged on calls it did not see: fitted on the first half of the calls, its
per-call error on the second half is the held-out error; the in-sample error (fitted
on all, measured on all) is set beside it. One fit a model when a log switches models.

>>> from minilib.logs.base import LoadedLog, RecordedUsage
>>> messages = [{"role": "user", "content": "x" * 400}]
>>> usage = []
>>> for n in range(6):
...     messages.append({"role": "assistant", "content": "y" * 40 * (n + 1)})
...     usage.append(RecordedUsage(len(messages) - 1, 1, None, None, "l"))
...     messages.append({"role": "user", "content": "z" * 400})
>>> log = LoadedLog(messages, "demo", usage=usage)
>>> points = call_points(log)
>>> recorded = [5000 + round(1.5 * p.sent) for p in points]
>>> log.usage[:] = [RecordedUsage(u.message, r, None, None, "l", "m")
...     for u, r in zip(usage, recorded)]
>>> calibration = calibrate(log)
>>> fit = calibration.fits["m"]
>>> (round(fit.ratio, 2), fit.overhead, calibration.held_out["median_abs_error"])
(1.5, 5000, 0.0)
"""

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from statistics import median
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..agents import client_class
from ..agents.windows import agent_window
from ..logs.replay import sent_stretches
from ..tokens import (
    TokenCounter,
    estimate_message_tokens,
    estimate_text_tokens,
)
from .recorded_usage import arguments_tokens

FORMAT = "minilib-calibration/1"
KEPT, TOOL_LOOP = "kept", "tool loop"
# How a count by `sent_counter` is named, its thinking rule in it.
SENT_LABEL = (
    "estimated (the article's rule over each message's text, its calls' names and "
    "arguments, and the thinking the model keeps: {rule})"
)
THINKING_RULES = {
    KEPT: "every earlier turn's thinking is kept in context and counted",
    TOOL_LOOP: "the thinking of the tool loop under way is counted, earlier turns' "
    "is dropped",
}
MIN_GROWTH = 20  # lab tokens: a smaller step is mostly the rounding of one message
MISSING_SHARE = 0.10  # a first call this much over its prediction began mid-session
MIN_CALLS = 4  # fewer calls than this are too few to judge a fit by
# a fit whose median error on the calls it did not see is over this is poor: what it
# counts is said to be unsure wherever it is used
POOR_FIT = 0.15
# A model of a log that switches models fits a ratio of its own only on this many calls;
# with fewer, one resumed or re-attached call moves its ratio (8 calls of a second
# model gave 9.86 on a real log), so it borrows the ratio of all the log's calls.
MIN_OWN_RATIO_CALLS = 12
FITTED, HELD_OUT, OTHER_LOG = "fitted", "held out", "other log"


class CalibrationError(ValueError):
    """A calibration file that cannot be read, or a log that cannot be calibrated."""


# a Claude model, its family and version: what the thinking and text rules go by
CLAUDE_MODEL = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?=$|[-\[@.])")


def thinking_rule(model: str) -> str:
    """Which earlier thinking the model's API keeps in context: Anthropic keeps every
    turn's for Opus 4.5 and later and Sonnet 4.6 and later, and drops earlier turns'
    for older models (extended-thinking docs); other providers' rule is taken as the
    older one (the thinking of the loop under way), the one the lab can see."""
    match = CLAUDE_MODEL.search(model or "")
    if not match:
        return TOOL_LOOP
    family, major, minor = match.group(1), int(match.group(2)), int(match.group(3) or 0)
    version = (major, minor)
    if family == "opus":
        return KEPT if version >= (4, 5) else TOOL_LOOP
    if family == "sonnet":
        return KEPT if version >= (4, 6) else TOOL_LOOP
    return KEPT if version > (4, 5) else TOOL_LOOP


def text_rule(log) -> Callable[[str], int]:
    """The text rule the calibrated count of `log` uses: its client's rule for the
    model it ran (Claude Code's with a Claude model: the article's rule reweighted by
    character class as Claude's API counted Claude Code's text), else the article's
    characters / 4."""
    return client_class(log.agent).text_rule(log_model(log) or "")


def sent_counter(
    log,
    rule: Optional[str] = None,
    count_text: Callable[[str], int] = estimate_text_tokens,
) -> TokenCounter:
    """A counter of what a call sent: a message's text and structure, its calls'
    names and arguments, and (rule `kept`) the thinking the assistant message
    carried, the text by `count_text` (the article's rule unless told: the
    calibrated count passes the `text_rule` of the log's model). `rule` defaults to
    the thinking rule of the log's model."""
    if rule is None:
        rule = thinking_rule(log_model(log))
    thinking = (
        {id(log.messages[i]): text for i, text in log.thinking.items()}
        if rule == KEPT
        else {}
    )

    # A replay counts the same messages round after round, policy after policy: each
    # is counted once (held here, so its id stays its own).
    counted: dict = {}

    def count_message(message: Mapping) -> int:
        known = counted.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        total = estimate_message_tokens(message, count_text) + arguments_tokens(
            message, count_text
        )
        if thinking and message.get("role") == "assistant":
            total += count_text(thinking.get(id(message), ""))
        counted[id(message)] = (message, total)
        return total

    def count_tokens(messages) -> int:
        return sum(map(count_message, messages))

    count_message.counts_arguments = True
    count_message.counts_thinking = rule == KEPT
    count_tokens.per_message = count_message
    count_tokens.count_text = count_text
    count_tokens.rule = rule
    count_tokens.__name__ = "count_sent"
    return count_tokens


def scaled_counter(count_tokens: TokenCounter, ratio: float) -> TokenCounter:
    """`count_tokens` times `ratio`, message by message: the calibrated count."""
    per_message = count_tokens.per_message

    def count_message(message: Mapping) -> int:
        return int(ratio * per_message(message) + 0.5)

    base_text = getattr(count_tokens, "count_text", estimate_text_tokens)

    def count_text(text: str) -> int:
        return int(ratio * base_text(text) + 0.5)

    def scaled(messages) -> int:
        return sum(map(count_message, messages))

    count_message.counts_arguments = getattr(per_message, "counts_arguments", False)
    count_message.counts_thinking = getattr(per_message, "counts_thinking", False)
    scaled.per_message = count_message
    scaled.count_text = count_text
    scaled.rule = getattr(count_tokens, "rule", TOOL_LOOP)
    scaled.ratio = ratio
    scaled.__name__ = "count_calibrated"
    return scaled


@dataclass(frozen=True)
class CallPoint:
    """One call with recorded usage: what the API counted beside the lab's count."""

    round: int
    recorded: int
    sent: int  # the lab's count of what the call sent (window, arguments, thinking)
    reattached: int  # what the harness re-attached after a compaction, same count
    stretch: int  # how many of the agent's compactions came before it
    model: str
    cleared: int = 0  # results the harness had cleared in place in this stretch
    resumed: int = 0  # times the session was resumed so far (LoadedLog.resumes)
    # of the history the file lacks, what recorded clearings took out so far (the
    # client's own estimate of the results it cleared that the file does not hold)
    lacking_cleared: int = 0
    # entries of text the client added that the log does not hold, so far
    # (LoadedLog.unrecorded)
    unrecorded: int = 0

    @property
    def seen(self) -> int:
        return self.sent + self.reattached


def call_points(
    log, fits: Optional[Mapping[str, "Fit"]] = None, every_call: bool = False
) -> List[CallPoint]:
    """A point per call the log records usage for, in call order: the window the agent
    sent (its own compactions and recorded clearings followed), counted by the rule of
    the model that answered. With `fits`, Claude Code's unrecorded token-rule
    microcompact is replayed too, deciding by the count `fits` predicts (never by the
    record: that is what the points are measured against). `every_call`: a point for
    every call, `recorded` 0 where the log records no usage (what a prediction of each
    round needs; it reads nothing of the usage)."""
    model = log_model(log)
    counting = text_rule(log)
    counters = {
        rule: sent_counter(log, rule, counting).per_message for rule in THINKING_RULES
    }
    thinking = {id(log.messages[i]): text for i, text in log.thinking.items()}
    usage_at = {u.message: u for u in log.usage if u.input_tokens > 0 and not every_call}
    held = {m.get("tool_call_id") for m in log.messages if m["role"] == "tool"}
    rounds = {}
    for index, message in enumerate(log.messages):
        if message["role"] == "assistant":
            rounds[index] = len(rounds)
    # the one simulation of the agent's client (its home's, else the generic one)
    client = client_class(log.agent)
    version = log.agent_version
    token_rule = (
        fits is not None and not log.clearings and client.clears_by_token_rule(version)
    )
    warning = client.warning_tokens(version, agent_window(log)[0])
    resumes = log.resumes if client.drops_resumed_calls(version) else []
    points: List[CallPoint] = []
    for number, (stretch, opening) in enumerate(
        sent_stretches(log.messages, log.compactions)
    ):
        base = log.compactions[number - 1].at - opening if number else 0
        attached = dict.fromkeys(THINKING_RULES, 0)
        if number:
            history = log.messages[: log.compactions[number - 1].at]
            for message in client.reattached(history):
                for rule, count in counters.items():
                    attached[rule] += count(message)
        walk = _Walk(client(counters), held, counting)
        for index, message in enumerate(stretch):
            if message["role"] == "user":
                walk.loop_thinking = 0
            if index >= opening and message["role"] == "assistant":
                original = base + index
                walk.follow_clearings(log.clearings, original)
                walk.follow_resumes(resumes, original)
                usage = usage_at.get(original)
                call_model = log.model_of.get(original) or model
                rule = thinking_rule(call_model)
                if token_rule:
                    fit = fit_for(fits, call_model)
                    seen = walk.sent(rule) + attached[rule]
                    if fit.overhead + fit.ratio * seen >= warning:
                        walk.client.token_microcompact()
                if (usage is not None or every_call) and original in rounds:
                    points.append(
                        CallPoint(
                            rounds[original],
                            0 if every_call else usage.input_tokens,
                            walk.sent(rule),
                            attached[rule],
                            number,
                            call_model,
                            walk.client.cleared,
                            walk.resumed,
                            walk.lacking_cleared,
                            sum(1 for u in log.unrecorded if u.at <= original),
                        )
                    )
            walk.add(message, thinking.get(id(message), ""))
    return points


class _Walk:
    """One stretch of the log (from the start or a compaction) as the client sent it:
    the client's conversation (`minilib.measure.client`, counted by every thinking
    rule), the thinking of the loop under way, and what the log records followed."""

    def __init__(self, client, held=frozenset(), count_text=estimate_text_tokens):
        self.client = client
        self.count_text = count_text
        self.held = held  # the results the file holds, by call id
        self.lacking_cleared = 0
        self.loop_thinking = 0
        self._followed = 0  # recorded clearings already applied
        self.resumed = 0  # resumes followed

    def sent(self, rule: str) -> int:
        thinking = self.loop_thinking if rule == TOOL_LOOP else 0
        return self.client.tokens[rule] + thinking

    def add(self, message: Mapping, thinking: str) -> None:
        self.client.add(message)
        if message["role"] == "assistant":
            self.loop_thinking += self.count_text(thinking)

    def follow_clearings(self, clearings, at: int) -> None:
        while self._followed < len(clearings) and clearings[self._followed].at <= at:
            clearing = clearings[self._followed]
            self.client.clear_calls(set(clearing.call_ids))
            self.lacking_cleared += lacking_cleared(clearing, self.held)
            self._followed += 1

    def follow_resumes(self, resumes, at: int) -> None:
        """Drop the calls a resumed client no longer sent, and their results."""
        while self.resumed < len(resumes) and resumes[self.resumed].at <= at:
            self.client.drop_calls(set(resumes[self.resumed].call_ids))
            self.resumed += 1


def lacking_cleared(clearing, held) -> int:
    """Of what a recorded clearing saved (the client's estimate), the share of the
    results it names that the file does not hold: history a file that begins
    mid-session lacks, taken out by the clearing."""
    if not clearing.saved_tokens or not clearing.call_ids:
        return 0
    lacking = sum(1 for call_id in clearing.call_ids if call_id not in held)
    return round(clearing.saved_tokens * lacking / len(clearing.call_ids))


@dataclass(frozen=True)
class Fit:
    """How the API's tokens relate to the lab's count for one model."""

    model: str
    ratio: float  # API tokens per token of the lab's count
    overhead: int  # API tokens every call counted beyond its messages
    calls: int  # the calls it was fitted on
    thinking: str  # the thinking rule its count used
    # what each call before the log's first compaction counted beyond the overhead:
    # history the file does not hold (it begins mid-session), which that compaction
    # replaced; measured where the fitted calls reach past a compaction, else 0
    missing: int = 0
    # False when the model had too few calls of its own to fit a ratio on, so the
    # ratio is the one fitted on every call of the log (`borrowed_note` says so)
    own_ratio: bool = True

    def predict(self, point: CallPoint) -> int:
        missing = 0
        if point.stretch == 0:
            # what a clearing took of the history the file lacks comes off it; where
            # the fit could not tell that history from the overhead, off the overhead
            missing = self.missing - round(self.ratio * point.lacking_cleared)
        return max(0, self.overhead + missing) + round(self.ratio * point.seen)


def fit_points(points: Sequence[CallPoint], model: str, rule: str) -> Fit:
    """The ratio from consecutive calls' growth, then the overhead (module text)."""
    steps = [
        (b.recorded - a.recorded, b.seen - a.seen)
        for a, b in zip(points, points[1:])
        if a.stretch == b.stretch
        and b.seen - a.seen >= MIN_GROWTH
        and b.recorded > a.recorded
    ]
    if steps:
        ratio = _growth_ratio(steps)
    else:  # no growth to learn from: the calls' own ratio
        ratio = median(p.recorded / p.seen for p in points if p.seen) if points else 1.0
    overhead = max(0, round(median(p.recorded - ratio * p.seen for p in points)))
    return Fit(model, ratio, overhead, len(points), rule)


def _growth_ratio(steps: List[tuple]) -> float:
    """What the API added over what the lab's count added, summed over the steps
    whose own ratio is within a factor of 2 of their median: a sum, since a count
    runs up what every step added (a median step undercounts a session whose larger
    steps add more), without the steps that moved for a reason the log does not show."""
    typical = _weighted_median([(api / lab, lab) for api, lab in steps])
    kept = [(api, lab) for api, lab in steps if typical / 2 <= api / lab <= typical * 2]
    return sum(api for api, _ in kept) / sum(lab for _, lab in kept)


def _weighted_median(pairs: List[tuple]) -> float:
    pairs = sorted(pairs)
    half, running = sum(weight for _, weight in pairs) / 2, 0.0
    for value, weight in pairs:
        running += weight
        if running >= half:
            return value
    return pairs[-1][0]


def fit_models(points: Sequence[CallPoint], default_model: str = "") -> Dict[str, Fit]:
    """One ratio a model (a model with too few calls borrows the ratio of all the
    calls) and one overhead for all: the system prompt and tool definitions are the
    same whichever model answers."""
    models = list(dict.fromkeys(p.model or default_model for p in points))
    everything = fit_points(points, "*", thinking_rule(default_model))
    ratios, use_own = {}, {}
    for model in models:
        own = [p for p in points if (p.model or default_model) == model]
        use_own[model] = len(own) >= MIN_OWN_RATIO_CALLS or len(models) == 1
        ratios[model] = (
            fit_points(own, model, "").ratio if use_own[model] else everything.ratio
        )
    beyond = [
        (p.stretch, p.recorded - ratios[p.model or default_model] * p.seen)
        for p in points
    ]
    overhead = max(0, round(median(extra for _, extra in beyond)))
    missing = 0
    after = [extra for stretch, extra in beyond if stretch > 0]
    before = [extra for stretch, extra in beyond if stretch == 0]
    if len(after) >= MIN_CALLS and before:
        # calls after a compaction show the overhead alone; what the calls before it
        # counted beyond that, when it is a tenth of the first call, is history the
        # file lacks (not an overhead every later call pays)
        alone = max(0, round(median(after)))
        lacking = round(median(before)) - alone
        if lacking > MISSING_SHARE * points[0].recorded:
            overhead, missing = alone, lacking
    return {
        model: Fit(
            model,
            ratios[model],
            overhead,
            sum(1 for p in points if (p.model or default_model) == model),
            thinking_rule(model),
            missing,
            use_own[model],
        )
        for model in models
    }


def errors_of(pairs: Sequence[Tuple[int, int]]) -> dict:
    """The per-call error (predicted - recorded) / recorded over (predicted,
    recorded) pairs: its median size, signed median, p90 of its size, and the calls
    measured."""
    if not pairs:
        return {"calls": 0}
    values = [(predicted - recorded) / recorded for predicted, recorded in pairs]
    sizes = sorted(abs(v) for v in values)
    return {
        "calls": len(pairs),
        "median_abs_error": median(sizes),
        "median_error": median(values),
        "p90_abs_error": sizes[min(len(sizes) - 1, int(0.9 * len(sizes)))],
    }


def errors(points: Sequence[CallPoint], fits: Mapping[str, Fit]) -> dict:
    """`errors_of` the fits' prediction of each point beside its record."""
    return errors_of([(predict(fits, p), p.recorded) for p in points])


def predict(fits: Mapping[str, Fit], point: CallPoint) -> int:
    """What the lab predicts the API counted for `point`'s call."""
    return fit_for(fits, point.model).predict(point)


def fit_for(fits: Mapping[str, Fit], model: str) -> Fit:
    """The fit of `model`, else the first fit (a calibration applies to another log
    of the same model; `Calibration.model_note` says when the models differ)."""
    return fits.get(model) or next(iter(fits.values()))


def conversation_id(log) -> str:
    """What names one conversation whatever file holds it: a digest of its messages
    (its usage records and its path play no part, so a copy without usage, or the
    same file elsewhere, is the same conversation)."""
    text = json.dumps(log.messages, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class Calibration:
    """A log's fit: per model, the ratio and overhead; the calls used; the errors.

    Two fits: `fits`, fitted on every call (the calibrated count every path uses), and
    `held_out_fits`, fitted on the first `fitted_calls` only, whose error on the
    others is the held-out error."""

    fits: Dict[str, Fit]
    calls: int
    fitted_calls: int  # the first half: what the held-out fit saw
    in_sample: dict
    held_out: dict
    held_out_fits: Dict[str, Fit]
    log: str = ""
    agent: str = ""
    agent_version: str = ""
    rounds: List[int] = field(default_factory=list)  # the calls used, by round
    conversation: str = ""  # `conversation_id` of the log it was fitted on

    def is_of(self, log) -> bool:
        """Whether this calibration was fitted on `log`'s conversation."""
        return bool(self.conversation) and self.conversation == conversation_id(log)

    def fits_for(
        self, log, held_out: bool = False, own: Optional[bool] = None
    ) -> Dict[str, Fit]:
        """The fits that count `log`: the history the fitted file lacked is part of
        its own count only, never of another log's (`own`: whether it is this
        calibration's log, where the caller knows it already)."""
        fits = self.held_out_fits if held_out else self.fits
        if self.is_of(log) if own is None else own:
            return fits
        return {m: replace(f, missing=0) for m, f in fits.items()}

    def counter(self, log, held_out: bool = False) -> TokenCounter:
        """The calibrated count for `log`: its model's ratio times the lab's count
        (by the text rule of the log's model, as the fit counted)."""
        model = log_model(log)
        fit = fit_for(self.held_out_fits if held_out else self.fits, model)
        return scaled_counter(sent_counter(log, fit.thinking, text_rule(log)), fit.ratio)

    def overhead(self, log, held_out: bool = False) -> int:
        return fit_for(
            self.held_out_fits if held_out else self.fits, log_model(log)
        ).overhead

    def predictions(self, log, held_out: bool = False) -> Dict[int, int]:
        """Per round of `log`, what this calibration predicts the API counted as the
        call's input, from the log's messages alone (never its recorded usage)."""
        fits = self.fits_for(log, held_out)
        return {
            point.round: fit_for(fits, point.model).predict(point)
            for point in call_points(log, fits, every_call=True)
        }

    def missing_history(self, log) -> int:
        """What the log's first call counted beyond the held-out prediction of it, when
        that is more than a tenth of it: history the file does not hold (it begins
        mid-session). One recorded number, the first call's, is read for it."""
        fit = fit_for(self.held_out_fits, log_model(log))
        if fit.missing:  # measured beside the overhead, across a compaction
            return fit.missing
        points = call_points(log, self.held_out_fits)
        if not points or points[0].round != 0:
            return 0
        gap = points[0].recorded - predict(self.held_out_fits, points[0])
        return gap if gap > MISSING_SHARE * points[0].recorded else 0

    def model_note(self, log) -> Optional[str]:
        """A line when `log`'s model is not one this calibration was fitted on."""
        model = log_model(log)
        if model in self.fits:
            return None
        used = fit_for(self.fits, model).model
        return (
            f"note: the calibration was fitted on {', '.join(self.fits)}; the log's "
            f"model is {model or 'not named'}, so {used}'s fit is used and the count "
            "may be off by the two tokenizers' difference"
        )

    def as_dict(self) -> dict:
        return {
            "format": FORMAT,
            "log": self.log,
            "conversation": self.conversation,
            "agent": self.agent,
            "agent_version": self.agent_version,
            "count": "the article's text rule (for Claude Code with a Claude "
            "model reweighted by character class) over each message's text, its "
            "calls' names and arguments, and the thinking the model's API keeps",
            "models": {m: _fit_dict(f) for m, f in self.fits.items()},
            "calls": self.calls,
            "rounds_used": self.rounds,
            "in_sample": self.in_sample,
            "held_out": {
                **self.held_out,
                "fitted_calls": self.fitted_calls,
                "fitted_on": f"the first {self.fitted_calls} calls",
                "models": {m: _fit_dict(f) for m, f in self.held_out_fits.items()},
            },
        }

    def write(self, path: Path) -> None:
        from ..trace import write_text_safely

        write_text_safely(path, json.dumps(self.as_dict(), indent=2) + "\n")


def _fit_dict(fit: Fit) -> dict:
    return {
        "ratio": fit.ratio,  # unrounded: the file gives back the count it was
        "overhead_tokens": fit.overhead,
        "calls": fit.calls,
        "missing_history_tokens": fit.missing,
        "thinking": fit.thinking,
        "thinking_rule": THINKING_RULES[fit.thinking],
        "ratio_from": "its own calls" if fit.own_ratio else "every call of the log",
    }


def log_model(log) -> str:
    return log.model or next(iter(log.models), "")


def calibrate(log) -> Optional[Calibration]:
    """Fit `log`'s recorded usage; None when it records none. Twice: the first fit
    decides where an unrecorded microcompact cleared (`call_points`), the second is
    fitted on the window so cleared. The held-out fit sees the first half only, in
    both passes. Its errors are measured on `predicted_calls`, the one prediction of
    a call every path prints."""
    model = log_model(log)
    first = call_points(log)
    if not first:
        return None
    half = max(1, len(first) // 2)
    points = call_points(log, fit_models(first, model))
    held_points = call_points(log, fit_models(first[:half], model))
    calibration = Calibration(
        fit_models(points, model),
        len(points),
        half,
        {},
        {},
        fit_models(held_points[:half], model),
        str(log.path or ""),
        log.agent,
        log.agent_version,
        [p.round for p in points],
        conversation_id(log),
    )
    calls = predicted_calls(log, calibration)
    calibration.in_sample, calibration.held_out = call_errors(calls)
    return calibration


def load_calibration(path: Path) -> Calibration:
    """A calibration file `calibrate --out` wrote; CalibrationError naming what is
    wrong where."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise CalibrationError(f"{path}: cannot read it ({error.strerror})") from None
    except ValueError as error:
        raise CalibrationError(f"{path}: not JSON ({error})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CalibrationError(
            f"{path}: not a calibration file (no 'format': {FORMAT!r}); write one "
            "with: python -m minilib calibrate LOG --out FILE"
        )

    def fits(models, where):
        if not isinstance(models, dict) or not models:
            raise CalibrationError(f"{path}: {where} must name at least one model")
        out = {}
        for model, fit in models.items():
            try:
                ratio, overhead = float(fit["ratio"]), int(fit["overhead_tokens"])
                rule = fit.get("thinking", thinking_rule(model))
                missing = int(fit.get("missing_history_tokens", 0))
            except (TypeError, KeyError, ValueError):
                raise CalibrationError(
                    f"{path}: {where}.{model} needs a number 'ratio' and "
                    "'overhead_tokens'"
                ) from None
            if not ratio > 0 or overhead < 0 or rule not in THINKING_RULES:
                raise CalibrationError(
                    f"{path}: {where}.{model}: ratio must be > 0, overhead >= 0 and "
                    f"thinking one of {', '.join(THINKING_RULES)}"
                )
            own = fit.get("ratio_from", "its own calls") != "every call of the log"
            out[model] = Fit(
                model, ratio, overhead, int(fit.get("calls", 0)), rule, missing, own
            )
        return out

    held = data.get("held_out") or {}
    try:
        fitted_calls = int(held.get("fitted_calls", 0))
    except (TypeError, ValueError):
        raise CalibrationError(
            f"{path}: held_out.fitted_calls must be a whole number"
        ) from None
    return Calibration(
        fits(data.get("models"), "models"),
        int(data.get("calls", 0)),
        fitted_calls,
        data.get("in_sample") or {},
        {
            k: v
            for k, v in held.items()
            if k not in ("models", "fitted_on", "fitted_calls")
        },
        fits(held.get("models") or data.get("models"), "held_out.models"),
        str(data.get("log", "")),
        str(data.get("agent", "")),
        str(data.get("agent_version", "")),
        list(data.get("rounds_used") or []),
        str(data.get("conversation", "")),
    )


def format_calibration(calibration: Optional[Calibration]) -> str:
    """Lines for the terminal: the fit of each model and the two errors."""
    if calibration is None:
        return "calibration: the log records no usage, so there is nothing to fit on"
    lines = [f"calibration: {calibration.calls} calls with recorded usage"]
    lines += [f"  {line}" for line in fit_lines(calibration.fits)]
    lines += [f"  {line}" for line in error_lines(calibration)]
    return "\n".join(lines)


def fit_lines(fits: Mapping[str, Fit]) -> List[str]:
    """A line a model: its ratio, the overhead, its thinking rule, and where its
    ratio came from when it had too few calls of its own."""
    lines = []
    for fit in fits.values():
        lines.append(
            f"{fit.model or 'model not named'}: the API counted {fit.ratio:.2f} "
            f"tokens a token of the lab's count, plus {fit.overhead:,} a call "
            f"(thinking: {THINKING_RULES[fit.thinking]})"
        )
        if not fit.own_ratio:
            lines.append(f"  {borrowed_note(fit)}")
    return lines


def borrowed_note(fit: Fit) -> str:
    return (
        f"{plural_calls(fit.calls)} of {fit.model} are too few for a ratio of its own "
        f"(it needs {MIN_OWN_RATIO_CALLS}): the ratio fitted on every call of the log "
        "is used"
    )


def plural_calls(count: int) -> str:
    return f"{count} call" + ("" if count == 1 else "s")


def error_lines(calibration: Calibration) -> List[str]:
    """The two errors, in the words `calibrate` and `compress` both print."""
    return [
        "error a call, |predicted - recorded| / recorded: "
        + _error_words(
            calibration.in_sample, "fitted on all the calls, measured on them"
        ),
        _error_words(
            calibration.held_out,
            f"fitted on the first {calibration.fitted_calls}, measured on the other "
            f"{calibration.held_out.get('calls', 0)} (held out)",
        ),
    ]


def _error_words(errors: dict, how: str) -> str:
    if not errors.get("calls"):
        return f"{how}: no calls to measure"
    return (
        f"{how}: median {errors['median_abs_error']:.1%}, p90 "
        f"{errors['p90_abs_error']:.1%}"
    )


@dataclass(frozen=True)
class PredictedCall:
    """One call with usage: the record, the calibration's prediction of it, the
    held-out fit's, and what the log shows just before it."""

    round: int
    recorded: int
    predicted: int  # the calibrated count: the fit on every call
    held_out_predicted: int  # the fit on the first half only
    fit: str  # FITTED (the held-out fit saw it), HELD_OUT, or OTHER_LOG
    events: Tuple[str, ...]
    model: str = ""

    @property
    def held_out(self) -> bool:
        """Not among the calls the held-out fit saw."""
        return self.fit != FITTED

    @property
    def error(self) -> float:
        return (self.predicted - self.recorded) / self.recorded

    @property
    def held_out_error(self) -> float:
        return (self.held_out_predicted - self.recorded) / self.recorded


GAP = 0.10  # a call this far off, with nothing named before it, is said to be unexplained


def predicted_calls(log, calibration: Calibration) -> List[PredictedCall]:
    """Per call with usage, in call order: the one prediction of it that `calibrate`'s
    errors, `compress`'s table and rounds.json all give, labelled by whether the
    held-out fit saw it (every call of another log is OTHER_LOG)."""
    own = calibration.is_of(log)
    fits = calibration.fits_for(log, own=own)
    held_fits = calibration.fits_for(log, held_out=True, own=own)
    full = call_points(log, fits)
    held = call_points(log, held_fits)
    calls = []
    previous = None
    for number, (point, held_point) in enumerate(zip(full, held)):
        label = OTHER_LOG
        if own:
            label = FITTED if number < calibration.fitted_calls else HELD_OUT
        calls.append(
            PredictedCall(
                point.round,
                point.recorded,
                predict(fits, point),
                predict(held_fits, held_point),
                label,
                call_events(previous, point, log),
                point.model,
            )
        )
        previous = point
    return calls


def call_errors(calls: Sequence[PredictedCall]) -> Tuple[dict, dict]:
    """The in-sample error (the calibrated count on every call) and the held-out
    error (the held-out fit on the calls it did not see)."""
    return (
        errors_of([(c.predicted, c.recorded) for c in calls]),
        errors_of([(c.held_out_predicted, c.recorded) for c in calls if c.held_out]),
    )


def call_events(
    before: Optional[CallPoint], point: CallPoint, log=None
) -> Tuple[str, ...]:
    """What the log shows between two calls that moves the count (with `log`, also a
    fall in the record its client version made without writing it down)."""
    if before is None:
        return ("the first call",)
    events = []
    if point.stretch > before.stretch:
        events.append(
            f"after a compaction (re-attached: {point.reattached:,} by the lab's count)"
        )
    elif point.cleared > before.cleared:
        events.append(f"microcompact cleared {point.cleared - before.cleared} results")
    if point.resumed > before.resumed:
        events.append("the session was resumed (its history rebuilt along parentUuid)")
    if point.model != before.model:
        events.append(f"model changed to {point.model}")
    if log is not None and point.unrecorded > before.unrecorded:
        for added in log.unrecorded[before.unrecorded : point.unrecorded]:
            events.append(added.describe())
    if not events and log is not None:
        unrecorded = unrecorded_clearing(log, before, point)
        if unrecorded:
            events.append(unrecorded)
    return tuple(events)


def unrecorded_clearing(log, before: CallPoint, point: CallPoint) -> Optional[str]:
    """The words for a fall in the record that the log's client made without a line
    for it (`unrecorded_fall` of its client: Claude Code before 2.1.12 cleared by a
    token rule and wrote nothing). Only where the replay cleared nothing (its results
    may lie in history the file lacks); None for any other fall."""
    if not before.recorded or not point.recorded:
        return None
    return client_class(log.agent).unrecorded_fall(
        log.agent_version, agent_window(log)[0], before.recorded, point.recorded
    )


def logged_events(log) -> Dict[int, Tuple[str, ...]]:
    """Per call with usage, by round, what the log shows just before it that moves
    the count (`call_events`): read from the log's records alone, and a fall its
    client version made without a record named as such."""
    points = call_points(log)
    return {
        point.round: call_events(before, point, log)
        for before, point in zip([None, *points[:-1]], points)
    }


def format_predicted_calls(calls: List[PredictedCall]) -> str:
    """The calibrated prediction beside the record, a line a call, each jump or drop
    named by what the log shows, or said to be unexplained; above it, the errors in
    the words `calibrate` prints, from the same predictions."""
    if not calls:
        return "recorded usage: none in this log"
    in_sample, held_out = call_errors(calls)
    if calls[0].fit == OTHER_LOG:
        head = [
            f"recorded usage beside the calibrated prediction: {len(calls)} calls, "
            "none of them fitted (the calibration was fitted on another log): "
            + _error_words(in_sample, "the calibrated count")
        ]
    else:
        fitted = sum(1 for c in calls if not c.held_out)
        head = [
            f"recorded usage beside the calibrated prediction: {len(calls)} calls",
            "  " + _error_words(in_sample, "fitted on all the calls, measured on them"),
            "  "
            + _error_words(
                held_out,
                f"fitted on the first {fitted}, measured on the other "
                f"{len(calls) - fitted} (held out)",
            ),
        ]
    lines = head + [
        "round  recorded  predicted  error  held-out fit  error  fit        "
        "what the log shows before the call",
    ]
    for call in calls:
        said = "; ".join(call.events)
        if not said and abs(call.error) > GAP:
            said = "not explained by anything the log records"
        lines.append(
            f"{call.round:>5}  {call.recorded:>8,}  {call.predicted:>9,}  "
            f"{call.error:>+5.0%}  {call.held_out_predicted:>12,}  "
            f"{call.held_out_error:>+5.0%}  {call.fit:<9}  {said}"
        )
    return "\n".join(lines)
