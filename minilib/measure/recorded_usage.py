"""The lab's count beside what the API counted, where a log records it.

A log that records each call's usage (Claude Code's `message.usage`, Codex's
`token_count` events: `LoadedLog.usage`) holds the truth for the windows its agent
sent. The replay's baseline of a round is that window as the lab rebuilt it from the
log, so the two can be set side by side, call by call. The API counts more than the
messages: the system prompt the log may not hold and the tool definitions, which no
log holds. That fixed part is estimated from the first call with usage (what it
counted beyond the lab's count of its messages) and added to every call, said as
such; the error is given without it and with it.

>>> from minilib.logs.base import LoadedLog, RecordedUsage
>>> from minilib.logs.replay import replay_transcript
>>> from minilib.window import Settings
>>> messages = [{"role": "user", "content": "x" * 400},
...     {"role": "assistant", "content": "ok"},
...     {"role": "user", "content": "y" * 400}, {"role": "assistant", "content": "done"}]
>>> log = LoadedLog(messages, "demo", usage=[RecordedUsage(1, 1104, None, None, "l1"),
...     RecordedUsage(3, 1212, None, None, "l2")])
>>> run = replay_transcript(log, Settings(threshold=10_000))
>>> rows = usage_rows(log, run)
>>> [(row.round, row.recorded, row.counted, row.overhead) for row in rows]
[(0, 1104, 104, 1000), (1, 1212, 213, 1000)]
>>> round(usage_summary(rows)["median_abs_error_with_overhead"], 4)
0.0004
"""

from dataclasses import dataclass
from statistics import median
from typing import List, Optional

from .sent import count_or_dash

OVERHEAD_SOURCE = (
    "estimated: what the first call with usage counted beyond the lab's count of its "
    "messages (system prompt and tool definitions the log does not hold)"
)


@dataclass(frozen=True)
class UsageRow:
    """One model call: what the API counted beside the lab's count of its window."""

    round: int  # the replay's round (the log's assistant messages, in order)
    recorded: int  # the prompt as the API counted it
    counted: int  # the lab's count of the window the agent sent (the baseline)
    overhead: int  # the fixed part estimated from the first call (see the module)
    cache_read: Optional[int]
    cache_written: Optional[int]
    where: str

    @property
    def error(self) -> float:
        """(lab - API) / API, messages alone."""
        return (self.counted - self.recorded) / self.recorded

    @property
    def error_with_overhead(self) -> float:
        return (self.counted + self.overhead - self.recorded) / self.recorded


def usage_rows(log, run) -> List[UsageRow]:
    """A row per call the log records usage for and the replay `run` reached
    (`run` replays `log`; its baselines are the windows the agent sent)."""
    rounds = {}
    assistants = 0
    for index, message in enumerate(log.messages):
        if message["role"] == "assistant":
            rounds[index] = assistants
            assistants += 1
    pairs = [
        (usage, run.rounds[rounds[usage.message]])
        for usage in log.usage
        if usage.message in rounds
        and rounds[usage.message] < len(run.rounds)
        and usage.input_tokens > 0
    ]
    if not pairs:
        return []
    first, first_round = pairs[0]
    overhead = max(0, first.input_tokens - first_round.baseline_tokens)
    return [
        UsageRow(
            record.round,
            usage.input_tokens,
            record.baseline_tokens,
            overhead,
            usage.cache_read,
            usage.cache_written,
            usage.where,
        )
        for usage, record in pairs
    ]


def _percentile(values: List[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def usage_summary(rows: List[UsageRow]) -> dict:
    """The per-call error over the rows: median of its size, p10 and p90, without and
    with the estimated overhead; the totals; how the overhead was found."""
    if not rows:
        return {"calls": 0}
    plain = [row.error for row in rows]
    fixed = [row.error_with_overhead for row in rows]
    return {
        "calls": len(rows),
        "overhead_tokens": rows[0].overhead,
        "overhead_source": OVERHEAD_SOURCE,
        "recorded_total": sum(row.recorded for row in rows),
        "counted_total": sum(row.counted for row in rows),
        "counted_total_with_overhead": sum(row.counted + row.overhead for row in rows),
        "median_abs_error": median(abs(e) for e in plain),
        "p10_error": _percentile(plain, 0.1),
        "p90_error": _percentile(plain, 0.9),
        "median_abs_error_with_overhead": median(abs(e) for e in fixed),
        "p10_error_with_overhead": _percentile(fixed, 0.1),
        "p90_error_with_overhead": _percentile(fixed, 0.9),
        "cache_read_total": sum(row.cache_read or 0 for row in rows),
        "cache_written_total": sum(row.cache_written or 0 for row in rows),
    }


def format_usage(rows: List[UsageRow]) -> str:
    """Lines for a report: the totals and the error, then a row per call."""
    summary = usage_summary(rows)
    if not summary["calls"]:
        return "recorded usage: none in this log"
    lines = [
        f"recorded usage: {summary['calls']} calls; the API counted "
        f"{summary['recorded_total']:,} input tokens, the lab "
        f"{summary['counted_total']:,} (messages alone) and "
        f"{summary['counted_total_with_overhead']:,} with an overhead of "
        f"{summary['overhead_tokens']:,} a call ({OVERHEAD_SOURCE})",
        f"per-call error: median {summary['median_abs_error']:.0%} "
        f"(p10 {summary['p10_error']:+.0%}, p90 {summary['p90_error']:+.0%}); with the "
        f"overhead {summary['median_abs_error_with_overhead']:.0%} "
        f"(p10 {summary['p10_error_with_overhead']:+.0%}, "
        f"p90 {summary['p90_error_with_overhead']:+.0%})",
        "round  recorded  cache read  cache written  lab count  error  with overhead",
    ]
    for row in rows:
        read, written = count_or_dash(row.cache_read), count_or_dash(row.cache_written)
        lines.append(
            f"{row.round:>5}  {row.recorded:>8,}  {read:>10}  {written:>13}  "
            f"{row.counted:>9,}  {row.error:>+5.0%}  {row.error_with_overhead:>+13.0%}"
        )
    return "\n".join(lines)
