"""The agent's own compactions as text: what `python -m minilib compactions LOG` and
`compress --report` print (`minilib.measure.compactions` measures them)."""

from typing import List, Sequence

from ..measure.compactions import CompactionReport
from .rounds import plural

NAMED = 6  # facts named on a line; --json lists them all
# a call whose recorded input is under this share of the call before's, with no
# compaction between: the agent dropped part of its history without a line for it
FELL_TO = 0.75


def _recorded(report: CompactionReport) -> str:
    trigger = f"trigger {report.trigger}" if report.trigger else "trigger not recorded"
    if report.tokens_before is None:
        return f"{trigger}, tokens before not recorded"
    return (
        f"{trigger}, {report.tokens_before:,} tokens before "
        f"({report.tokens_before_field})"
    )


def _last_call(report: CompactionReport) -> List[str]:
    # Codex's record is a usage event already; elsewhere the last call checks it
    if report.last_call_tokens is None or "token_count" in report.tokens_before_field:
        return []
    return [
        f"  the last call before it, as the log's usage records it: "
        f"{report.last_call_tokens:,} tokens in"
    ]


def _lab_count(report: CompactionReport) -> str:
    return (
        f"  the lab's count of the window it replaced: {report.lab_tokens_before:,} "
        "tokens\n    (estimated; not the system prompt and tool definitions the log "
        "does not hold)"
    )


def _named(report: CompactionReport, fate: str) -> str:
    facts = [f for f in report.facts if f.fate == fate]
    shown = ", ".join(f"{f.fact} (round {f.round})" for f in facts[:NAMED])
    more = len(facts) - NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def format_compaction(report: CompactionReport) -> List[str]:
    """A few lines for one compaction."""
    summary = (
        "opaque (nothing to read: an encrypted or empty summary)"
        if report.summary_tokens is None
        else f"{report.summary_tokens:,} tokens (estimated)"
    )
    d = report.as_dict()
    lines = [
        f"compaction {report.number}, before round {report.round} ({report.where})",
        f"  recorded: {_recorded(report)}",
        *_last_call(report),
        _lab_count(report),
        f"  summary: {summary}; it replaced {plural(report.replaced, 'message')}",
        f"  facts the agent used after it that a tool showed before it: "
        f"{d['facts_after']}",
    ]
    if not report.facts:
        return lines
    # an opaque summary holds nothing the lab can read: what holds a fact is what the
    # agent kept beside it (the messages its compaction kept)
    holder = (
        "the summary"
        if report.summary_tokens is not None
        else "the messages kept with the opaque summary"
    )
    lines += [
        f"    held by {holder} {d['held']}, re-read by a tool before use "
        f"{d['reread']} ({plural(report.reread_calls, 'call')}, "
        f"{report.reread_tokens:,} tokens), neither {d['neither']}",
        f"    of those not held, restorable by a way back the harness offers: "
        f"{d['restorable']}",
        f"    the lab's stand-in summary ({report.standin_tokens:,} tokens, the same "
        f"room): held {d['standin_held']}, restorable {d['standin_restorable']}",
    ]
    for fate, title in (("reread", "re-read"), ("neither", "neither")):
        if d[fate]:
            lines.append(f"    {title}: {_named(report, fate)}")
    return lines


def record_falls(log) -> List[tuple]:
    """(round, tokens before, tokens after) of each call whose recorded input fell
    under FELL_TO of the call before it, outside any compaction the log records:
    history the agent dropped (a trim, a truncation) where the file says nothing."""
    rounds = {}
    for index, message in enumerate(log.messages):
        if message["role"] == "assistant":
            rounds[index] = len(rounds)
    # what the log does record of a drop: a compaction, results cleared, a resume
    recorded = [*log.compactions, *log.clearings, *log.resumes]
    compacted = {event.at for event in recorded}
    usage = sorted(
        (u for u in log.usage if u.message in rounds and u.input_tokens > 0),
        key=lambda u: u.message,
    )
    falls = []
    for last, call in zip(usage, usage[1:]):
        between = any(last.message < at <= call.message for at in compacted)
        if call.input_tokens < FELL_TO * last.input_tokens and not between:
            falls.append((rounds[call.message], last.input_tokens, call.input_tokens))
    return falls


def format_compactions(reports: Sequence[CompactionReport], falls=()) -> str:
    """Every compaction's lines, or a line saying the log records none; `falls`
    (`record_falls`): where the record fell with no compaction to say why."""
    if not reports:
        line = "the log records no compaction made by the agent itself"
        if falls:
            each = ", ".join(
                f"before round {at}: {before:,} -> {after:,}"
                for at, before, after in falls
            )
            line += (
                f"; yet its usage record falls by over a quarter "
                f"{plural(len(falls), 'time')} ({each}): the agent dropped part of its "
                "history there, and this file has no line that says so"
            )
        return line
    lines = [f"the agent's own compactions: {len(reports)}"]
    for report in reports:
        lines += format_compaction(report)
    return "\n".join(lines)
