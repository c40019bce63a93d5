"""Measure the lab against a folder of real Claude Code session files it does not hold.

    python scripts/measure_real_logs.py ~/.claude/projects/my-project
    python scripts/measure_real_logs.py DIR --json build/real_logs.json

For each session (files that are snapshots of one session, the same first five message
ids, count once: the longest is kept), two measures, each on the session's own record:

- the count: calibrated on the first half of the calls, its median |error| on the second
  half (`minilib calibrate`);
- the agent's own policy: `compare LOG --policies claude-code` at the log's window, and
  whether each compaction the agent recorded is matched by one of the replay within 10
  rounds, the replay's extra compactions, and sessions the agent never compacted that
  the replay compacts.

And one measure of the count's base, over the sessions together: where what a call
added is mostly one tool result, what the API counted for it over the lab's estimate
(characters / 4), over its rule by character class (`minilib.agents.claude_code.text`),
and over a real BPE tokenizer's count of the same text when the optional `bpe-openai`
is installed. The spread of that ratio (its interquartile range
over its median) says how far a count can trust one ratio for every kind of text.

Files that do not read as Claude Code sessions, or record no usage, are counted and
skipped. A measurement, not a test: nothing here fails on a number.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.agents.claude_code.text import claude_text_tokens  # noqa: E402
from minilib.logs import load_log  # noqa: E402
from minilib.logs.base import LogFileError  # noqa: E402
from minilib.measure import tokenizers  # noqa: E402
from minilib.measure.calibration import calibrate  # noqa: E402
from minilib.measure.recorded_usage import arguments_tokens  # noqa: E402
from minilib.policies.production.compare import NEAR  # noqa: E402
from minilib.policies.production.own_agent import own_agent_row  # noqa: E402
from minilib.tokens import (  # noqa: E402
    estimate_message_tokens,
    estimate_text_tokens,
    tool_call_name,
)

MIN_CALLS = 20  # fewer calls with usage: too few to hold half of them out
FIRST_IDS = 5
MIN_STEP = 1_500  # lab tokens a call added: smaller steps are mostly rounding
ONE_RESULT = 0.85  # the share of a step one tool result must hold to stand for it


def session_key(path: Path) -> tuple:
    """The first message ids of a session file: snapshots of one session share them."""
    ids = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("type") in ("user", "assistant") and record.get("uuid"):
                ids.append(record["uuid"])
                if len(ids) == FIRST_IDS:
                    break
    return tuple(ids) or (str(path),)


def sessions(folder: Path) -> list:
    longest = {}
    for path in sorted(folder.rglob("*.jsonl")):
        key = session_key(path)
        if key not in longest or path.stat().st_size > longest[key].stat().st_size:
            longest[key] = path
    return sorted(longest.values())


def measure(path: Path) -> dict:
    log = load_log(path, max_bytes=10**9)
    if log.agent != "claude-code" or not log.usage:
        return {"skipped": "not a Claude Code session with usage"}
    calibration = calibrate(log)
    if calibration is None or calibration.calls < MIN_CALLS:
        return {"skipped": f"fewer than {MIN_CALLS} calls with usage"}
    row, _ = own_agent_row(log, log.context_window or 200_000)
    recorded = [c["round"] for c in row["recorded_compaction_rounds"] or ()]
    replayed = [c["round"] for c in row["compaction_rounds"]]
    # a compaction a person asked for (/compact) is no trigger's to reproduce
    manual = ["trigger manual" in (c.detail or "") for c in log.compactions]
    matched = [any(abs(r - at) <= NEAR for r in replayed) for at in recorded]
    return {
        "version": log.agent_version,
        "held_out_error": calibration.held_out["median_abs_error"],
        "steps": result_steps(log),
        "recorded": len(recorded),
        "matched": sum(matched),
        "auto": sum(not m for m in manual),
        "auto_matched": sum(hit for hit, m in zip(matched, manual) if not m),
        "extra": sum(not any(abs(r - at) <= NEAR for at in recorded) for r in replayed),
        **bill_errors(log, calibration),
    }


def bill_errors(log, calibration) -> dict:
    """The predicted bill on the second half of the calls (`held_out_errors`); empty
    where the price data is not installed."""
    try:
        from minilib.measure.predicted_bill import held_out_errors
    except ImportError:  # the price data is optional
        return {}
    errors = held_out_errors(log, calibration)
    return errors if errors["bill_error"] is not None else {}


def result_steps(log) -> list:
    """Per call whose growth since the call before is mostly one tool result (and no
    compaction lies between): the tool, the result's text, what the API added."""

    # chosen by the article's count, so no text rule picks the results it is judged on
    def count(message):
        return estimate_message_tokens(message) + arguments_tokens(
            message, estimate_text_tokens
        )

    names = {
        call.get("id"): tool_call_name(call)
        for message in log.messages
        for call in message.get("tool_calls") or ()
    }
    compacted = {compaction.at for compaction in log.compactions}
    usage = sorted((u.message, u.input_tokens) for u in log.usage if u.input_tokens)
    steps = []
    for (before, was), (at, now) in zip(usage, usage[1:]):
        if any(before < c <= at for c in compacted) or now <= was:
            continue
        span = log.messages[before:at]
        counts = [count(message) for message in span]
        largest = max(range(len(span)), key=counts.__getitem__, default=None)
        if largest is None or sum(counts) < MIN_STEP:
            continue
        message = span[largest]
        if message["role"] != "tool" or counts[largest] < ONE_RESULT * sum(counts):
            continue
        steps.append(
            {
                "tool": names.get(message.get("tool_call_id"), ""),
                "text": message.get("content") or "",
                "api": now - was,
            }
        )
    return steps


def spread(ratios: list) -> tuple:
    quartiles = statistics.quantiles(ratios, n=4)
    middle = statistics.median(ratios)
    return middle, (quartiles[2] - quartiles[0]) / middle


def steps_report(steps: list) -> list:
    """The API's count of one result over each counter's, its median and spread."""
    if len(steps) < 4:
        return []
    counters = {
        "characters / 4": estimate_text_tokens,
        "by character class (the calibrated count's rule for Claude Code)": (
            claude_text_tokens
        ),
    }
    if tokenizers.available():
        counters.update(
            {name: tokenizers.text_counter(name) for name in tokenizers.ENCODINGS}
        )
    lines = [
        f"one tool result's tokens, the API's over a count of its text ({len(steps)} "
        "calls that added mostly one result): median, and spread (IQR / median)"
    ]
    for name, count in counters.items():
        ratios = [s["api"] / count(s["text"]) for s in steps if s["text"]]
        middle, width = spread(ratios)
        by_tool = {}
        for step, ratio in zip((s for s in steps if s["text"]), ratios):
            by_tool.setdefault(step["tool"], []).append(ratio)
        tools = ", ".join(
            f"{tool} {statistics.median(r):.2f}"
            for tool, r in sorted(by_tool.items(), key=lambda kv: -len(kv[1]))
            if len(r) >= 5
        )
        lines.append(f"  {name}: {middle:.2f}, spread {width:.1%}; by tool: {tools}")
    return lines


def share(part: int, whole: int) -> str:
    return f"{part} of {whole} ({part / whole:.0%})" if whole else "none"


def report(results: dict, skipped: dict) -> str:
    measured = list(results.values())
    errors = [r["held_out_error"] for r in measured]
    compacted = [r for r in measured if r["recorded"]]
    recorded = sum(r["recorded"] for r in measured)
    lines = [
        f"sessions measured: {len(measured)} ({len(skipped)} skipped)",
        "the count, fitted on the first half of each session's calls, its median |error| "
        "on the second half:",
    ]
    if errors:
        within = [sum(e <= limit for e in errors) for limit in (0.10, 0.15)]
        lines.append(
            f"  median over sessions {statistics.median(errors):.1%}; "
            f"within 10%: {share(within[0], len(errors))}; "
            f"within 15%: {share(within[1], len(errors))}"
        )
    matched = sum(r["matched"] for r in measured)
    auto = sum(r["auto"] for r in measured)
    auto_matched = sum(r["auto_matched"] for r in measured)
    lines += [
        f"the agent's own policy replayed (claude-code, matched within {NEAR} rounds):",
        f"  recorded compactions matched: {share(matched, recorded)} "
        f"on {len(compacted)} sessions",
        "  of them auto compactions (not a person's /compact): "
        f"{share(auto_matched, auto)}",
        f"  extra compactions of the replay: {sum(r['extra'] for r in measured)}",
        "  sessions with more extra compactions than recorded ones: "
        f"{sum(r['extra'] > r['recorded'] for r in measured)}",
        "  sessions never compacted that the replay compacts: "
        f"{sum(not r['recorded'] and r['extra'] > 0 for r in measured)} of "
        f"{len(measured) - len(compacted)}",
    ]
    billed = [r for r in measured if "bill_error" in r]
    if billed:
        lines += [
            "the bill predicted from the messages, on the second half of the calls:",
            "  the median session's total off by "
            f"{statistics.median(abs(r['bill_error']) for r in billed):.1%} (with every "
            "call that answers a person billed as a cache hit, "
            f"{statistics.median(abs(r['bill_error_all_hits']) for r in billed):.1%}); "
            "per call, cache reads off by "
            f"{statistics.median(r['cache_read_error'] for r in billed):.1%}",
        ]
    lines += steps_report([step for r in measured for step in r.get("steps", ())])
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", type=Path, help="write each session's numbers here")
    args = parser.parse_args(argv)
    results, skipped = {}, {}
    for path in sessions(args.folder):
        try:
            outcome = measure(path)
        except (LogFileError, OSError, ValueError) as error:
            outcome = {"skipped": str(error).splitlines()[0]}
        target = skipped if "skipped" in outcome else results
        target[str(path)] = outcome
    print(report(results, skipped))
    if args.json:
        # the results' text stays in the session files; the file keeps the numbers
        for outcome in results.values():
            outcome["steps"] = [
                {"tool": s["tool"], "api": s["api"], "characters": len(s["text"])}
                for s in outcome["steps"]
            ]
        args.json.write_text(
            json.dumps({"measured": results, "skipped": skipped}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
