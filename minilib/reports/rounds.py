"""A replay as plain text: the per-round table, the run's summary lines and the
grounded outcome, as `python -m minilib run` and `compress` print them (the lab shows
the same lines)."""

from ..measure.grounding import GroundedSessionRun
from ..session import SessionRun

COLUMNS = ("round", "baseline", "msgs", "before", "after", "msgs", "aging", "summary")


def _cell(value) -> str:
    """A number with thousands separators; "-" where there is none (a look-up round has
    no baseline round)."""
    return "-" if value is None else f"{value:,}"


def format_rounds(run: SessionRun) -> str:
    """The per-round table: baseline window beside the compressed one."""
    lines = ["{:>5}  {:>9} {:>5}  {:>7} {:>6} {:>5}  {:>5}  {:>7}".format(*COLUMNS)]
    for r in run.rounds:
        lines.append(
            "{:>5}  {:>9} {:>5}  {:>7,} {:>6,} {:>5}  {:>5}  {:>7}".format(
                r.round,
                _cell(r.baseline_tokens),
                _cell(r.baseline_messages),
                r.tokens_before,
                r.tokens_after,
                r.messages_after,
                "yes" if r.aged else "",
                "yes" if r.summarized else "",
            )
        )
    return "\n".join(lines)


FINAL_LIST = "list after the last model call (never sent, so not held to the threshold)"


def plural(count: int, noun: str) -> str:
    """'1 round', '8 rounds'."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def saved_percent(saved: float) -> str:
    """A share saved, as a whole percent, but with one decimal where that would round up
    to 100% (1,813 tokens sent against 480,715 is 99.6% less, not 100%)."""
    return f"{saved:.1%}" if 0.995 <= saved < 1 else f"{saved:.0%}"


def format_summary(run: SessionRun) -> str:
    """Calls made, compressions by kind, the agent's own compactions a replayed log
    records (where, what they replaced), the last round against no compression, and
    the final window."""
    counts = {}
    for compression in run.compressions:
        counts[compression.strategy] = counts.get(compression.strategy, 0) + 1
    last = run.rounds[-1] if run.rounds else None
    # environment output a log recorded as a user turn is traced like a call's output,
    # but the agent made no call for it: counted apart, as the log's header counts it
    outputs = sum(
        1 for call in run.tracer.events("tool_call") if call["name"] == "environment"
    )
    text = [
        f"model decisions: {run.model_decisions}, summary calls: {run.summary_calls}, "
        f"tool calls: {run.tool_calls - outputs}"
        + (f", environment outputs: {outputs}" if outputs else ""),
        f"compressions: aging in {plural(counts.get('tool_result_aging', 0), 'round')}, "
        f"summary in {counts.get('rolling_summary', 0)}",
    ]
    text += getattr(run, "compaction_lines", list)()  # a log replay (TranscriptRun)
    if last is not None and last.baseline_tokens:
        saved = 1 - last.tokens_after / last.baseline_tokens
        text.append(
            f"round {last.round}: {last.tokens_after:,} tokens sent against "
            f"{last.baseline_tokens:,} "
            f"without compression ({saved_percent(saved)} less)"
        )
    # After an overflow the list left is the one that did not fit: it was never sent.
    # Otherwise it is the last window sent plus what came back after it (the answer, a
    # last tool result): never sent either, so it may be over the threshold, which is
    # no failure of the guarantee (only windows sent must fit).
    said = "window left at the overflow (never sent)" if run.overflow else FINAL_LIST
    text.append(
        f"{said}: {plural(len(run.final_messages), 'message')}, "
        f"{plural(run.final_tokens, 'token')}"
    )
    return "\n".join(text)


def format_grounded(grounded: GroundedSessionRun) -> str:
    """The grounded outcome, printed under the table."""
    outcome = grounded.outcome
    lines = [
        f"round {step.call}: look-up for reply {step.reply}: "
        + ", ".join(f"{fact} ({call_id})" for fact, call_id in step.lookups)
        for step in grounded.steps
        if step.is_lookup
    ]
    lost = f" (lost: {', '.join(outcome.lost)})" if outcome.lost else ""
    lines += [
        f"grounded: the final answer states {len(outcome.right)} of "
        f"{len(outcome.declared)} facts it rests on{lost}",
        f"look-ups: {outcome.lookup_rounds} extra rounds, {outcome.lookup_calls} extra "
        f"tool calls; tokens sent over all rounds {outcome.tokens_sent:,} against "
        f"{outcome.plain_tokens_sent:,} not grounded ({outcome.extra_tokens:+,})",
        f"finished: {'yes' if outcome.finished else 'no'}",
        f"reads: {outcome.tool_calls} tool calls, each against the window it was "
        f"decided on: {len(outcome.ungrounded)} ungrounded",
    ]
    lines += [
        f"  round {round_}, {call_id}: {scripted}, which its window lacks, made as {made}"
        for round_, call_id, scripted, made in outcome.rerouted
    ]
    lines += [
        f"  ungrounded: round {round_} {call_id} ({fact})"
        for round_, call_id, fact in outcome.ungrounded
    ]
    if outcome.unknown:
        lines.append(
            "unknown markers: "
            + ", ".join(f"round {round_} {fact}" for round_, fact in outcome.unknown)
        )
    return "\n".join(lines)
