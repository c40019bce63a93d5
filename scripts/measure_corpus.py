"""Measure the lab's model of each agent on folders of real sessions, by source and by
agent, and name the worst sessions and what their logs show about why.

    python scripts/measure_corpus.py corpus data/real             # print the report
    python scripts/measure_corpus.py corpus data/real --write docs/real_logs.md
    python scripts/measure_corpus.py ~/.claude/projects           # your own folder

For every log that records its usage (any shape the readers take), each measure is
taken against the log's own record, and nothing is fitted on the folder:

- the count: calibrated on the first half of the calls, its median |error| on the
  second half, predicted from the log's messages alone (`minilib calibrate`);
- the agent's own policy (Claude Code, Codex), replayed at the log's window: each
  automatic compaction the agent recorded matched by one of the replay within 10
  rounds, the user's /compact followed, the replay's extra compactions;
- the bill from the record (`minilib cost`), where the price data is installed.

A session's source is the repository its file came from: `SOURCES.json` (a list of
{file, repo, ...}) or `SOURCES.md` (`## path` then `- Repository: URL`) in a folder
above it, else the folder it is in. With --write the report replaces what stands
between the page's two markers (`<!-- corpus:start -->`, `<!-- corpus:end -->`).
"""

import argparse
import json
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.agents.windows import agent_window  # noqa: E402
from minilib.logs import LogFileError, load_log  # noqa: E402
from minilib.measure.calibration import GAP, calibrate, predicted_calls  # noqa: E402
from minilib.policies.production.compare import NEAR  # noqa: E402
from minilib.policies.production.own_agent import own_agent_row  # noqa: E402

START, END = "<!-- corpus:start -->", "<!-- corpus:end -->"
TARGET, CEILING = 0.05, 0.15  # a source's median, and any one session's
REDACTED = re.compile(r"\[REDACTED[_A-Z]* len=(\d+)")


def sources_of(folder: Path) -> dict:
    """file path -> repository, from the SOURCES files under `folder`."""
    found = {}
    for manifest in folder.rglob("SOURCES.json"):
        for entry in json.loads(manifest.read_text(encoding="utf-8")):
            found[(manifest.parent / entry["file"]).resolve()] = entry["repo"]
    for manifest in folder.rglob("SOURCES.md"):
        current = None
        for line in manifest.read_text(encoding="utf-8").splitlines():
            if line.startswith("## "):
                current = (manifest.parent / line[3:].strip()).resolve()
            elif current and line.startswith("- Repository: "):
                url = line.split("github.com/")[-1].split()[0].rstrip("/,")
                found[current] = url
    return found


def redacted_share(log) -> float:
    """The share of the log's text that its publisher replaced by placeholders."""
    total = redacted = 0
    for message in log.messages:
        text = message.get("content") or ""
        total += len(text)
        redacted += sum(len(m.group(0)) for m in REDACTED.finditer(text))
    return redacted / total if total else 0.0


def causes(log, calls) -> list:
    """What the log shows before the held-out calls the count misses by more than a
    tenth: the named events, most frequent first, and a publisher's redaction."""
    said = Counter()
    for call in calls:
        if call.held_out and abs(call.held_out_error) > GAP:
            for event in call.events or ("not explained by anything the log records",):
                said[re.sub(r"\d[\d,]*", "N", event.split(" (")[0])] += 1
    found = [f"{event} ({count} calls)" for event, count in said.most_common(3)]
    jump = largest_jump(calls)
    if jump:
        found.insert(0, jump)
    share = redacted_share(log)
    if share > 0.5:
        found.insert(0, f"text redacted by its publisher ({share:.0%} of it)")
    return found


def largest_jump(calls) -> str:
    """The first call where the record moved beyond what the log's messages account
    for (the gap between the record and the held-out prediction, from one call to the
    next) by a tenth of the call or more, with nothing the log records before it:
    named with its size; "" if there is none."""
    for before, call in zip(calls, calls[1:]):
        moved = (call.recorded - call.held_out_predicted) - (
            before.recorded - before.held_out_predicted
        )
        if abs(moved) >= GAP * call.recorded and not call.events:
            return (
                f"at round {call.round} the record {'rose' if moved > 0 else 'fell'} "
                f"{abs(moved):,} tokens beyond what the log's messages account for"
            )
    return ""


def replay_measures(log) -> dict:
    """The agent's own policy replayed: compactions matched, manual ones followed."""
    row, _ = own_agent_row(log, agent_window(log)[0])
    if row is None:
        return {}
    recorded = row["recorded_compaction_rounds"] or []
    replayed = [c["round"] for c in row["compaction_rounds"]]
    auto = [c["round"] for c in recorded if not c.get("manual")]
    manual = [c["round"] for c in recorded if c.get("manual")]
    near = [r for r in auto if any(abs(x - r) <= NEAR for x in replayed)]
    claimed = {x for r in auto + manual for x in replayed if abs(x - r) <= NEAR}
    return {
        "auto": len(auto),
        "auto_matched": len(near),
        "manual": len(manual),
        "manual_followed": sum(1 for r in manual if r in replayed),
        "extra": len([x for x in replayed if x not in claimed]),
    }


def bill_measures(log, calibration) -> dict:
    """The bill from the record, and the bill predicted from the messages alone on the
    calls the fit did not see (`held_out_errors`). Empty where the price data is not
    installed."""
    try:
        from minilib.measure.predicted_bill import held_out_errors

        return held_out_errors(log, calibration)
    except ImportError:  # the price data is optional
        return {}


def measure(path: Path, source: str):
    try:
        log = load_log(path)
    except LogFileError as error:
        return {"file": path.name, "source": source, "skipped": str(error)[-120:]}
    calibration = calibrate(log)
    if calibration is None:
        return {"file": path.name, "source": source, "skipped": "records no usage"}
    calls = predicted_calls(log, calibration)
    held = calibration.held_out
    return {
        "file": path.name,
        "source": source,
        "agent": log.agent or log.shape,
        "version": log.agent_version,
        "models": list(calibration.fits),
        "calls": calibration.calls,
        "held_out": held.get("median_abs_error"),
        "in_sample": calibration.in_sample.get("median_abs_error"),
        "causes": causes(log, calls),
        **replay_measures(log),
        **bill_measures(log, calibration),
    }


def measure_folders(folders) -> list:
    rows = []
    for folder in folders:
        folder = Path(folder)
        sources = sources_of(folder)
        paths = sorted(folder.rglob("*.json*"))
        for path in (p for p in paths if not p.name.startswith("SOURCES")):
            where = str(path.parent.relative_to(folder.parent))
            source = sources.get(path.resolve(), where)
            rows.append(measure(path, source))
    return rows


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _pct(value) -> str:
    return "–" if value is None else f"{value:.1%}"


def _has(row: dict, key: str) -> bool:
    return row.get(key) is not None


def _signed(value) -> str:
    return "–" if value is None else f"{value:+.1%}"


def report(rows: list) -> str:
    measured = [r for r in rows if "skipped" not in r]
    skipped = [r for r in rows if "skipped" in r]
    lines = [
        f"Sessions measured: {len(measured)} from "
        f"{len({r['source'] for r in measured})} repositories "
        f"({len(skipped)} files skipped: no usage, or not a log).",
        "",
        *targets(measured),
        "",
        "### By source",
        "",
        "| source | agent | sessions | calls | held-out median (median over sessions) "
        "| worst session | auto compactions matched | manual followed | extra |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += _group_rows(measured, "source")
    lines += [
        "",
        "### By agent",
        "",
        "| agent | sessions | calls | held-out median (median over sessions) "
        "| worst session | auto compactions matched | manual followed | extra |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += _group_rows(measured, "agent", with_agent=False)
    lines += [
        "",
        "### Every session, the worst first",
        "",
        "| session | source | agent, version | models | calls | held out | in sample "
        "| bill | cache reads | total | what the log shows where the count misses |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in sorted(measured, key=lambda r: -(r["held_out"] or 0)):
        bill = "–" if row.get("bill_usd") is None else f"${row['bill_usd']:,.2f}"
        lines.append(
            f"| {row['file']} | {row['source']} | {row['agent']} {row['version']} | "
            f"{', '.join(row['models'])} | {row['calls']} | {_pct(row['held_out'])} | "
            f"{_pct(row['in_sample'])} | {bill} | {_pct(row.get('cache_read_error'))} | "
            f"{_signed(row.get('bill_error'))} | {'; '.join(row['causes']) or ''} |"
        )
    lines += [
        "",
        '"bill" is what the record says the provider billed; "cache reads" the '
        'median per-call error of the predicted cache reads and "total" the error of '
        "the predicted bill, both on the second half of the calls, predicted from the "
        "messages by a fit on the first half.",
    ]
    return "\n".join(lines) + "\n"


def targets(rows: list) -> list:
    """The targets, each with what met it and what did not, and why."""
    by_source = defaultdict(list)
    for row in rows:
        by_source[row["source"]].append(row)
    missed = {
        source: _median(r["held_out"] for r in group)
        for source, group in by_source.items()
        if (_median(r["held_out"] for r in group) or 0) > TARGET
    }
    over = [r for r in rows if (r["held_out"] or 0) > CEILING]
    billed = [r for r in rows if _has(r, "bill_error_all_hits")]
    auto = sum(r.get("auto", 0) for r in rows)
    matched = sum(r.get("auto_matched", 0) for r in rows)
    manual = sum(r.get("manual", 0) for r in rows)
    followed = sum(r.get("manual_followed", 0) for r in rows)
    never = [r for r in rows if "auto" in r and not r["auto"] and not r["manual"]]
    lines = [
        f"- The median session within {TARGET:.0%}: {len(by_source) - len(missed)} of "
        f"{len(by_source)} sources"
        + (
            "; not "
            + "; ".join(f"{source} ({_pct(value)})" for source, value in missed.items())
            if missed
            else ""
        )
        + ".",
        f"- Sessions over {CEILING:.0%}: {len(over)}"
        + "".join(
            f"; {r['file']} ({_pct(r['held_out'])}: "
            f"{r['causes'][0] if r['causes'] else 'nothing the log records explains it'})"
            for r in over
        )
        + ".",
        f"- The predicted bill of the second half: the median session off by "
        f"{_pct(_median(abs(r['bill_error']) for r in rows if _has(r, 'bill_error')))}"
        f" (with every call that answers a person billed as a cache hit, "
        f"{_pct(_median(abs(r['bill_error_all_hits']) for r in billed))})"
        f"; per call, the median session's cache reads off by "
        f"{_pct(_median(r.get('cache_read_error') for r in rows))}.",
        f"- Automatic compactions matched within {NEAR} rounds by the agent's own "
        f"replay: {matched} of {auto}; the user's /compact followed: {followed} of "
        f"{manual}; sessions the agent never compacted that the replay compacts: "
        f"{sum(1 for r in never if r.get('extra'))} of {len(never)}.",
    ]
    return lines


def _group_rows(rows, key, with_agent=True) -> list:
    groups = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row)
    out = []
    for name, group in sorted(groups.items()):
        worst = max(group, key=lambda r: r["held_out"] or 0)
        auto = sum(r.get("auto", 0) for r in group)
        manual = sum(r.get("manual", 0) for r in group)
        cells = [name]
        if with_agent:
            cells.append(", ".join(sorted({r["agent"] for r in group})))
        cells += [
            str(len(group)),
            str(sum(r["calls"] for r in group)),
            _pct(_median(r["held_out"] for r in group)),
            f"{_pct(worst['held_out'])} ({worst['file']})",
            f"{sum(r.get('auto_matched', 0) for r in group)} of {auto}" if auto else "–",
            f"{sum(r.get('manual_followed', 0) for r in group)} of {manual}"
            if manual
            else "–",
            str(sum(r.get("extra", 0) for r in group)),
        ]
        out.append("| " + " | ".join(cells) + " |")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--write", type=Path, default=None, metavar="PAGE")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE")
    args = parser.parse_args()
    rows = measure_folders(args.folders)
    text = report(rows)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    if args.write is not None:
        page = args.write.read_text(encoding="utf-8")
        if START not in page or END not in page:
            print(f"{args.write}: no {START} ... {END} markers to write between")
            return 2
        head, rest = page.split(START, 1)
        args.write.write_text(
            head + START + "\n" + text + END + rest.split(END, 1)[1], encoding="utf-8"
        )
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
