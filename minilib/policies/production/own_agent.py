"""The row of the log's own agent: counted as its API counted (calibrated on the first
half of the log's calls, so the second half tests it) and replayed as the version that
wrote the log behaved (`minilib.agents`): what `compare` and chapter 7 set beside the
agent's own record."""

from dataclasses import dataclass, field
from typing import Callable, List, NamedTuple, Optional

from ...agents import home_of
from ...agents.windows import agent_window
from ...measure.calibration import (
    MIN_CALLS,
    POOR_FIT,
    SENT_LABEL,
    THINKING_RULES,
    calibrate,
    fit_lines,
    lacking_cleared,
    sent_counter,
)
from ...measure.recorded_usage import measured_overhead
from .compare import AGENT_POLICY, compare_policies, rounds_before


@dataclass
class LogCounting:
    """How every policy is run on a real log that records its usage, as `compare` runs
    it with no flag: at the agent's window, every row in one unit, the count
    calibrated on the log's first calls (so the later ones test it), with its
    overhead (the system prompt and tool definitions no log holds); the agent's own
    policy replayed as the version that wrote the log. Where the usage cannot be
    fitted, every row counts what each call sent, with the overhead the first call
    measured."""

    window: int
    window_why: str
    count_tokens: Callable
    counted_with: str
    overhead: Optional[int]  # None: each policy's documented default
    own_key: Optional[str] = None
    own_count: Optional[Callable] = None
    own_parameters: dict = field(default_factory=dict)
    lines: List[str] = field(default_factory=list)  # how the count was fitted
    calibrated: bool = False
    # the calibration's median error on the calls it did not see, where it is over
    # POOR_FIT: every row's numbers are as unsure, and the chapter says so
    poor_fit: Optional[float] = None

    def run_with(self, key: str) -> tuple:
        """(the count, the parameters) policy `key` runs with on this log."""
        parameters = {} if self.overhead is None else {"overhead_tokens": self.overhead}
        if key == self.own_key:
            return self.own_count, {**parameters, **self.own_parameters}
        return self.count_tokens, parameters


def log_counting(log, version: Optional[str] = None) -> Optional[LogCounting]:
    """The `LogCounting` of `log` (a LoadedLog); None where it records no usage (the
    article's estimate and each policy's defaults are all there is to go by)."""
    if not log.usage:
        return None
    window, why, _ = agent_window(log)
    own = own_agent_count(log, None)
    if own.count is None:
        count_tokens, overhead = sent_count(log)
        counted_with = SENT_LABEL.format(rule=THINKING_RULES[count_tokens.rule])
        return LogCounting(window, why, count_tokens, counted_with, overhead)
    count, overhead, missing = own.count, own.overhead, own.missing
    counting = LogCounting(
        window,
        why,
        count,
        CALIBRATED_UNIT,
        overhead,
        lines=own.lines,
        calibrated=True,
        poor_fit=own.poor_fit,
    )
    key = AGENT_POLICY.get(log.shape)
    if key is not None and log.agent:
        counting.own_key, counting.own_count = key, count
        counting.own_parameters = own_agent_parameters(
            log, version, overhead, missing, count
        )
    return counting


# The unit of every row of a log that records its usage: one count for all, so a row's
# saved tokens and the tokens it sent compare with every other row's.
CALIBRATED_UNIT = (
    "calibrated: API tokens as fitted on the log's first half of calls (every row "
    "in this unit)"
)


def own_agent_row(log, window: int, version: Optional[str] = None):
    """(row, lines) of the agent's own policy on `log` at `window`; None for a log of
    an agent the lab does not replay, or one with no usage to count by. Where its
    calls are too few to fit a count on, it counts what each call sent, with the
    overhead its first call measured, as the other rows of such a log do."""
    key = AGENT_POLICY.get(log.shape)
    if key is None or not log.usage or not log.agent:
        return None, []
    count, overhead, lines, missing = own_agent_count(log, None)[:4]
    if count is None:
        count, overhead = sent_count(log)
        beyond = (
            "the policy's documented overhead"
            if overhead is None
            else f"the {overhead:,} tokens a call the first call measured beyond it"
        )
        lines = [
            "the count: what each call sent (too few calls to fit a calibration on), "
            f"with {beyond}"
        ]
    row = compare_policies(
        log.messages,
        [key],
        window,
        count,
        agent_log=log,
        agent_count=count,
        agent_parameters=own_agent_parameters(log, version, overhead, missing, count),
    )[0]
    return row, lines


def sent_count(log) -> tuple:
    """(what each call sent, the overhead its first call measured beyond it): the count
    of a log whose calls are too few to fit a calibration on."""
    count = sent_counter(log)
    return count, measured_overhead(log, count)


class OwnCount(NamedTuple):
    """A log's calibrated count (None where its usage cannot be fitted), its
    overhead, the lines that say how it was fitted, the history the file lacks, and
    its median error on the calls the fit did not see where that is over POOR_FIT."""

    count: Optional[Callable]
    overhead: Optional[int]
    lines: List[str]
    missing: int
    poor_fit: Optional[float] = None


def own_agent_count(log, counting) -> OwnCount:
    """The calibrated count of a log that records its usage: fitted on the first half
    of its calls (so the second half is a test of it), unless a count was chosen;
    with its overhead, the lines that say so and the history the file lacks (a file
    that begins mid-session)."""
    if (counting is not None and counting.calibration is not None) or not log.usage:
        return OwnCount(None, None, [], 0)
    calibration = calibrate(log)
    # a fit on fewer calls than can be judged counts nothing a row may rest on: one
    # call's ratio put a 3-call log at four times its record
    if calibration is None or calibration.fitted_calls < MIN_CALLS:
        return OwnCount(None, None, [], 0)
    count = calibration.counter(log, held_out=True)
    overhead = calibration.overhead(log, held_out=True)
    lines = [
        f"the count: calibrated on the log's first "
        f"{calibration.fitted_calls} calls (the API's count of a call ~ {overhead:,} "
        "+ the ratio of the model that answered x the lab's count of what it sent):"
    ] + [f"  {line}" for line in fit_lines(calibration.held_out_fits)]
    error = calibration.held_out.get("median_abs_error") or 0.0
    poor = error if error > POOR_FIT else None
    if poor is not None:
        lines.append(
            f"the fit is poor: off by {error:.0%} on the calls it did not see (over "
            f"{POOR_FIT:.0%}); every row's count is as unsure (calibrate shows where)"
        )
    missing = calibration.missing_history(log)
    if missing:
        lines.append(
            f"the file begins mid-session: its first call counted {missing:,} tokens "
            f"more than the file holds; {log.agent or 'the agent'}'s own row carries "
            "them as history until it compacts"
        )
    return OwnCount(count, overhead, lines, missing, poor)


def own_agent_parameters(log, version, overhead, missing: int = 0, count=None) -> dict:
    """What the row of the log's own agent replays: its calibrated overhead and what
    its home adds (`own_row_parameters` of its policy module: for Claude Code the
    version that wrote the log, or `version`, and what the log records of its
    client). `count` is the row's count: its ratio puts what a clearing saved in the
    row's tokens."""
    parameters = {} if overhead is None else {"overhead_tokens": overhead}
    home = home_of(log.agent)
    if home is not None and home.policy is not None:
        own = getattr(home.module(home.policy), "own_row_parameters", None)
        if own is not None:
            ratio = getattr(count, "ratio", 1.0)
            parameters.update(own(log, version, ratio, missing))
    return parameters


def recorded_clearing_rounds(log, ratio: float = 1.0) -> list:
    """(round, call ids, lacking) of each clearing the log records, by the round it
    came before (the log's assistant messages before it); lacking: what it saved of
    results the file does not hold (it begins mid-session), `ratio` times the
    client's estimate."""
    before = rounds_before(log)
    held = {m.get("tool_call_id") for m in log.messages if m["role"] == "tool"}
    return [
        (before[c.at], c.call_ids, round(ratio * lacking_cleared(c, held)))
        for c in log.clearings
    ]


def recorded_resume_rounds(log) -> list:
    """(round, call ids the resumed client no longer sent) of each resume."""
    before = rounds_before(log)
    return [(before[r.at], r.call_ids) for r in log.resumes]
