"""The lab's count beside what the API counted, where a log records it.

A log that records each call's usage (Claude Code's `message.usage`, Codex's
`token_count` events, Gemini CLI's `tokens`, pi's `usage`: `LoadedLog.usage`) holds
the truth for the windows its agent sent. The replay's baseline of a round is that
window as the lab rebuilt it from the log, so the two can be set side by side, call
by call, and the gap closed in three steps, each said as such:

1. **the window**, as the lab counts it (the article's rule: messages and call names);
2. **what else the window sent**: each call's arguments (the article's rule counts
   only a call's name) and the thinking the API takes back, which is the thinking of
   the tool loop under way (the assistant turns since the last user message: the
   Messages API counts those and drops the thinking of earlier turns), both by the
   same text rule;
3. **the fixed overhead**: the system prompt the log may not hold and the tool
   definitions no log holds, estimated from the first call with usage (what it
   counted beyond steps 1 and 2) and added to every call.

What remains after step 3 is the error. The first call after one of the agent's own
compactions shows what the harness sent that the log does not hold (Claude Code
re-attaches recently read files and its todo list there): `after_compaction` rows.

The prompt cache, too: the lab's prefix model (`measure.cache`) says which tokens a
call could read from the cache, the window the call before sent plus, after the
first call, the overhead; set beside the recorded cache reads.

>>> from minilib.logs.base import LoadedLog, RecordedUsage
>>> messages = [{"role": "user", "content": "x" * 400},
...     {"role": "assistant", "content": "ok"},
...     {"role": "user", "content": "y" * 400}, {"role": "assistant", "content": "done"}]
>>> log = LoadedLog(messages, "demo", usage=[RecordedUsage(1, 1104, None, None, "l1"),
...     RecordedUsage(3, 1212, None, None, "l2")])
>>> rows = usage_rows(log)
>>> [(row.round, row.recorded, row.counted, row.overhead, row.lab_reused) for row in rows]
[(0, 1104, 104, 1000, 0), (1, 1212, 213, 1000, 1104)]
>>> round(usage_summary(rows)["median_abs_error_with_overhead"], 4)
0.0004
"""

from dataclasses import dataclass
from statistics import median
from typing import Callable, List, Mapping, Optional, Sequence

from ..logs.replay import sent_stretches
from ..tokens import estimate_message_tokens, estimate_text_tokens, tool_call_name
from .sent import count_or_dash

OVERHEAD_SOURCE = (
    "estimated: what the first call with usage counted beyond the lab's count of what "
    "it sent (system prompt and tool definitions the log does not hold)"
)


@dataclass(frozen=True)
class UsageRow:
    """One model call: what the API counted beside the lab's count of its window."""

    round: int  # the replay's round (the log's assistant messages, in order)
    recorded: int  # the prompt as the API counted it
    counted: int  # the lab's count of the window the agent sent (the baseline)
    sent_extra: int  # what else the window sent: call arguments, thinking taken back
    overhead: int  # the fixed part estimated from the first call (see the module)
    cache_read: Optional[int]
    cache_written: Optional[int]
    lab_reused: int  # what the lab's prefix model says the call could read from cache
    where: str
    after_compaction: bool = False  # the first call after one of the agent's compactions

    @property
    def error(self) -> float:
        """(lab - API) / API, the window as the lab counts it."""
        return (self.counted - self.recorded) / self.recorded

    @property
    def error_sent(self) -> float:
        """The same with what else the window sent."""
        return (self.counted + self.sent_extra - self.recorded) / self.recorded

    @property
    def received(self) -> int:
        """What the lab says the call received: the window, what else it sent, the
        estimated overhead."""
        return self.counted + self.sent_extra + self.overhead

    @property
    def error_with_overhead(self) -> float:
        """The same with the estimated overhead too: what remains unexplained."""
        return (self.received - self.recorded) / self.recorded


@dataclass(frozen=True)
class _Sent:
    """What the lab knows of one call's window."""

    counted: int  # the window by the lab's count (the baseline of the replay)
    extra: int  # call arguments and the thinking the API takes back
    reused_prefix: int  # what the call before sent, by the lab's count
    after_compaction: bool


def calls_sent(
    log,
    count_message: Callable[[Mapping], int] = estimate_message_tokens,
    count_text: Callable[[str], int] = estimate_text_tokens,
) -> List[_Sent]:
    """Per model call of `log` (its assistant messages, in order): the window the agent
    sent, as the lab counts it, what else it sent, and the prefix it shares with the
    call before. One walk over the windows sent (the agent's compactions followed),
    each message counted once, so a long log costs what its messages cost."""
    thinking = {id(log.messages[i]): text for i, text in log.thinking.items()}
    with_arguments = getattr(count_message, "counts_arguments", False)
    # a counter that holds the kept thinking itself (models that keep every turn's)
    if getattr(count_message, "counts_thinking", False):
        thinking = {}
    calls: List[_Sent] = []
    for stretch_number, (stretch, opening) in enumerate(
        sent_stretches(log.messages, log.compactions)
    ):
        window = arguments = loop_thinking = 0
        previous = None  # the window of the call before, in this stretch
        for index, message in enumerate(stretch):
            if message["role"] == "user":
                loop_thinking = 0  # a new turn: the API drops the earlier thinking
            if index >= opening and message["role"] == "assistant":
                reused = previous or 0  # after a compaction: only the overhead
                calls.append(
                    _Sent(
                        window,
                        arguments + loop_thinking,
                        reused,
                        stretch_number > 0 and previous is None,
                    )
                )
                previous = window
            window += count_message(message)
            if message["role"] == "assistant":
                if not with_arguments:  # a real tokenizer's count holds them already
                    arguments += arguments_tokens(message, count_text)
                loop_thinking += count_text(thinking.get(id(message), ""))
    return calls


def arguments_tokens(message, count_text: Callable[[str], int]) -> int:
    """The tokens of a message's call arguments (the article's rule counts the name)."""
    return sum(
        count_text(str((call.get("function") or {}).get("arguments") or ""))
        for call in message.get("tool_calls") or ()
        if tool_call_name(call)
    )


def usage_rows(
    log,
    count_message: Callable[[Mapping], int] = estimate_message_tokens,
    count_text: Callable[[str], int] = estimate_text_tokens,
) -> List[UsageRow]:
    """A row per call `log` records usage for: its window as the lab counts it with
    `count_message` (the estimate by default), what else it sent by `count_text`."""
    rounds = {}
    for index, message in enumerate(log.messages):
        if message["role"] == "assistant":
            rounds[index] = len(rounds)
    pairs = [
        (usage, rounds[usage.message])
        for usage in log.usage
        if usage.message in rounds and usage.input_tokens > 0
    ]
    if not pairs:
        return []
    sent = calls_sent(log, count_message, count_text)
    first, first_round = pairs[0]
    first_sent = sent[first_round].counted + sent[first_round].extra
    overhead = max(0, first.input_tokens - first_sent)
    return [
        UsageRow(
            number,
            usage.input_tokens,
            sent[number].counted,
            sent[number].extra,
            overhead,
            usage.cache_read,
            usage.cache_written,
            sent[number].reused_prefix + (overhead if number else 0),
            usage.where,
            sent[number].after_compaction,
        )
        for usage, number in pairs
    ]


def counted_usage_rows(log, count_tokens) -> List[UsageRow]:
    """`usage_rows` with the counter a replay governed with (`count_tokens`: the
    estimate, or a real tokenizer's, which counts call arguments itself)."""
    return usage_rows(
        log,
        getattr(count_tokens, "per_message", estimate_message_tokens),
        getattr(count_tokens, "count_text", estimate_text_tokens),
    )


def _percentile(values: List[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _errors(values: List[float], name: str) -> dict:
    return {
        f"median_{name}": median(values),
        f"median_abs_{name}": median(abs(e) for e in values),
        f"p10_{name}": _percentile(values, 0.1),
        f"p90_{name}": _percentile(values, 0.9),
    }


def usage_summary(rows: List[UsageRow]) -> dict:
    """The per-call error over the rows at each step (the window; with what else it
    sent; with the estimated overhead): median of its size, p10 and p90; the totals;
    how the overhead was found; the recorded cache reads beside the lab's."""
    if not rows:
        return {"calls": 0}
    return {
        "calls": len(rows),
        "overhead_tokens": rows[0].overhead,
        "overhead_source": OVERHEAD_SOURCE,
        "recorded_total": sum(row.recorded for row in rows),
        "counted_total": sum(row.counted for row in rows),
        "sent_extra_total": sum(row.sent_extra for row in rows),
        "counted_total_with_overhead": sum(row.received for row in rows),
        **_errors([row.error for row in rows], "error"),
        **_errors([row.error_sent for row in rows], "error_sent"),
        **_errors([row.error_with_overhead for row in rows], "error_with_overhead"),
        **_growth(rows),
        "cache_read_total": sum(row.cache_read or 0 for row in rows),
        "cache_written_total": sum(row.cache_written or 0 for row in rows),
        "cache_recorded": any(row.cache_read is not None for row in rows),
        "lab_reused_total": sum(row.lab_reused for row in rows),
        "after_compaction": [
            {"round": row.round, "unexplained": row.recorded - row.received}
            for row in rows
            if row.after_compaction
        ],
    }


def _growth(rows: List[UsageRow]) -> dict:
    """What the calls after the first added to it, summed: the part of the error the
    overhead (fixed, and taken from the first call) cannot hide."""
    first = rows[0]
    recorded = sum(row.recorded - first.recorded for row in rows[1:])
    lab = sum(row.received - first.received for row in rows[1:])
    error = (lab - recorded) / recorded if recorded else None
    return {"growth_recorded": recorded, "growth_counted": lab, "growth_error": error}


def _step(summary: dict, name: str) -> str:
    return (
        f"{summary[f'median_{name}']:+.0%} (p10 {summary[f'p10_{name}']:+.0%}, "
        f"p90 {summary[f'p90_{name}']:+.0%})"
    )


def _cache_line(summary: dict) -> str:
    recorded, lab = summary["cache_read_total"], summary["lab_reused_total"]
    return (
        f"prompt cache: the API read {recorded:,} tokens from it, the lab's prefix "
        f"model says {lab:,} could be ({lab / recorded - 1:+.0%})"
        if recorded
        else f"prompt cache: no reads recorded; the lab's prefix model says {lab:,}"
    )


# the per-call table's columns, said once above them (a report is read without the docs)
COLUMNS_KEY = (
    "per call: recorded and cache read/written, the API's; lab reused, what the lab's",
    "prefix model says the cache could serve; lab count, the window; + sent, its call",
    "arguments and thinking; error, with the overhead; then what the log shows before",
    "the call, where it moves the count",
)
COLUMNS_HEADER = (
    "round  recorded  cache read  lab reused  cache written  lab count  + sent  error"
)
# a call whose error moved this far from the call before, with nothing the log shows
# between them, is said to be unexplained
JUMP = 0.10


def format_usage(
    rows: List[UsageRow], events: Optional[Mapping[int, Sequence[str]]] = None
) -> str:
    """Lines for a report: the totals and the error at each step, then a row per call,
    with `events` (round -> what the log shows before that call) named beside it."""
    summary = usage_summary(rows)
    if not summary["calls"]:
        return "recorded usage: none in this log"
    sent = summary["counted_total"] + summary["sent_extra_total"]
    lines = [
        f"recorded usage: {summary['calls']} calls; the API counted "
        f"{summary['recorded_total']:,} input tokens in all",
        f"  the lab: {summary['counted_total']:,} (the window as it counts it), "
        f"{sent:,} with call arguments and the thinking taken back,",
        f"  {summary['counted_total_with_overhead']:,} with an overhead of "
        f"{summary['overhead_tokens']:,} a call, estimated from the first call",
        "per-call error, (lab - API) / API, its median over the calls (p10, p90):",
        f"  the window {_step(summary, 'error')}",
        f"  with what else it sent {_step(summary, 'error_sent')}",
        f"  with the overhead {_step(summary, 'error_with_overhead')}",
    ]
    if summary["growth_error"] is not None:
        api, lab = summary["growth_recorded"], summary["growth_counted"]
        lines.append(
            f"what the calls after the first added: the API {api:,}, the lab {lab:,} "
            f"({summary['growth_error']:+.0%})"
        )
    if summary["cache_recorded"]:
        lines.append(_cache_line(summary))
    for after in summary["after_compaction"]:
        lines.append(
            f"after a compaction (round {after['round']}): {after['unexplained']:+,} "
            "tokens the lab does not see (what the harness re-attached)"
        )
    lines += [*COLUMNS_KEY, COLUMNS_HEADER]
    previous = None
    for row in rows:
        read, written = count_or_dash(row.cache_read), count_or_dash(row.cache_written)
        said = "; ".join((events or {}).get(row.round, ()))
        moved = previous is not None and (
            abs(row.error_with_overhead - previous.error_with_overhead) > JUMP
        )
        if events is not None and moved and not said:
            said = "not explained by anything the log records"
        lines.append(
            f"{row.round:>5}  {row.recorded:>8,}  {read:>10}  {row.lab_reused:>10,}  "
            f"{written:>13}  {row.counted:>9,}  {row.sent_extra:>+6,}  "
            f"{row.error_with_overhead:>+5.0%}" + (f"  {said}" if said else "")
        )
        previous = row
    return "\n".join(lines)


def measured_overhead(log, count_tokens) -> Optional[int]:
    """What the log's first model call counted beyond what it sent (the system prompt
    and tool definitions the log does not hold: this module), or None when
    the log records no usage for its first call (a later call's count holds history an
    abridged log may lack) or none beyond its own messages."""
    rows = counted_usage_rows(log, count_tokens)
    if not rows or rows[0].round != 0 or rows[0].overhead <= 0:
        return None
    return rows[0].overhead
