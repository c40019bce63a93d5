"""A replay's measured costs as text and files: what `compress --report DIR` prints and
writes (`report.json`, `cut.csv`)."""

import csv
import io
import json
from pathlib import Path

from ..measure.cache import CACHE_PRICES
from ..measure.costs import RunCosts
from ..trace import write_text_safely
from .rounds import plural

CUT_COLUMNS = ("id", "tool", "round", "characters", "fate", "changed_at", "recoverable")
LOST_SHOWN = 8  # facts lost named in the printed lines; the report lists them all


def format_costs(costs: RunCosts) -> str:
    """A few lines: tokens (estimated or counted), facts, cache, outputs cut."""
    report = costs.report()
    lines = [f"tokens: {costs.counted_with}"]
    if costs.estimated_tokens is not None:
        lines[0] += (
            f"; {report['tokens_sent']:,} sent over all rounds, "
            f"{costs.estimated_tokens:,} by the article's estimate"
        )
    lines.append(
        f"facts the agent used: {report['facts_used']} (shown by a tool or the "
        "environment, later written by the agent)"
    )
    lines.append(
        f"  kept {report['facts_kept']}, restorable {report['facts_restorable']}, "
        f"lost {report['facts_lost']}"
    )
    if report["facts_restorable"]:
        lines.append(
            "  restorable: a read-only call whose arguments the window still holds, or "
            f"recall; bringing them back would add {report['facts_restorable_tokens']:,} "
            "tokens"
        )
    lost = costs.lost[:LOST_SHOWN]
    if lost:
        named = ", ".join(f"{fate.fact} (round {fate.round})" for fate in lost)
        more = len(costs.lost) - len(lost)
        lines.append(f"  lost: {named}" + (f" and {more} more" if more else ""))
    prices = CACHE_PRICES[costs.cache.prices]
    lines.append(
        f"prompt cache: {costs.cache.reused:,} tokens reused, {costs.cache.written:,} "
        f"written, {costs.cache.rewritten:,} of those written a second time"
    )
    breaks = plural(costs.cache.breaks, "round")
    lines.append(f"  because a compression changed the prefix ({breaks})")
    if costs.cache.uncached:
        share = costs.cache.cost / costs.cache.uncached
        lines.append(
            f"  cost: {costs.cache.cost:,.0f} input-token equivalents against "
            f"{costs.cache.uncached:,} uncached ({share:.0%}),"
        )
        lines.append(
            f"  under {prices.source} (read {prices.read}x, write {prices.write}x)"
        )
    fates = {}
    for output in costs.outputs:
        fates[output.fate] = fates.get(output.fate, 0) + 1
    recoverable = sum(1 for output in costs.outputs if output.recoverable)
    lines.append(
        f"tool outputs: {len(costs.outputs)}; in the last window sent "
        f"{fates.get('whole', 0)} whole, {fates.get('cut', 0)} cut, "
        f"{fates.get('folded', 0)} folded away;"
    )
    lines.append(f"  {recoverable} recoverable whole from the trace")
    return "\n".join(lines)


def cut_csv(costs: RunCosts) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, CUT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for output in costs.outputs:
        writer.writerow(output.as_dict())
    return out.getvalue()


def write_report(costs: RunCosts, folder: Path, extra: dict) -> None:
    """`report.json` (the report's keys, then `extra`: settings, window) and
    `cut.csv` (one row a tool output)."""
    document = {**costs.report(), **extra}
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    write_text_safely(Path(folder) / "report.json", text)
    write_text_safely(Path(folder) / "cut.csv", cut_csv(costs))
