"""What `python -m minilib compare` costs: every production policy on one long log.

    python bench/bench_policies.py                                       # measure
    python bench/bench_policies.py --markdown docs/benchmark_policies.md  # and write it

The log is the generated 1,000-call session (`generate_history(1000, user_turns=10)`,
753 rounds, ten follow-ups from the person), written as an OpenAI chat JSON list under
`build/bench_policies/`. Measured in one run:

- the command as a user types it, in a child process, at a 200,000- and a 32,000-token
  window: `python -m minilib compare LOG --window N --json rows.json` (wall time from
  spawn to exit, the interpreter's start included; median of `--repeats`);
- in this process, each policy alone (`measure_policy`, the facts read once and
  shared, as `compare` does): the median of `--repeats` runs, so a slow policy shows.

Target (printed PASS/FAIL): every policy on the 1,000-call log at 200k within 30 s.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.logs.replay import with_output_ids  # noqa: E402
from minilib.measure.used_facts import used_facts  # noqa: E402
from minilib.policies.production import POLICIES  # noqa: E402
from minilib.policies.production.compare import measure_policy  # noqa: E402
from minilib.scale import generate_history  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import write_markdown  # noqa: E402

BUILD = ROOT / "build" / "bench_policies"
CALLS, USER_TURNS = 1000, 10
WINDOWS = (200_000, 32_000)
TARGET_S = 30.0
BEGIN = "<!-- measured by bench/bench_policies.py: begin -->"
END = "<!-- measured by bench/bench_policies.py: end -->"


def write_log() -> Path:
    BUILD.mkdir(parents=True, exist_ok=True)
    path = BUILD / f"openai_{CALLS}calls_{USER_TURNS}turns.json"
    if not path.exists():
        messages = list(generate_history(CALLS, user_turns=USER_TURNS).messages)
        path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return path


def time_cli(log: Path, window: int, repeats: int) -> tuple:
    times, rows = [], None
    for number in range(repeats):
        out = BUILD / f"rows_{window}.json"
        start = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "minilib",
                "compare",
                str(log),
                "--window",
                str(window),
                "--json",
                str(out),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"compare failed at {window}: {done.stderr}")
        rows = json.loads(out.read_text(encoding="utf-8"))
    return statistics.median(times), rows


def time_each(log: Path, window: int, repeats: int) -> dict:
    messages = with_output_ids(json.loads(log.read_text(encoding="utf-8")))
    used = used_facts(messages)
    seconds = {}
    for key in POLICIES:
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            measure_policy(messages, key, window, used=used)
            runs.append(time.perf_counter() - start)
        seconds[key] = statistics.median(runs)
    return seconds


def markdown(results, repeats: int, whole_s: float) -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    lines = [
        f"Measured on {date.today():%Y-%m-%d}: {os.cpu_count()} cores "
        f"({platform.processor() or platform.machine()}), load average {load}, python "
        f"{platform.python_version()}. Command: `python bench/bench_policies.py "
        f"--markdown docs/benchmark_policies.md`; {repeats} runs each (medians). "
        f"Whole run: {whole_s:.0f} s.",
        "",
        "### `python -m minilib compare LOG --window N` (child process, all policies)",
        "",
        "| window | policies | wall (median) | target | |",
        "|---:|---:|---:|---:|---|",
    ]
    for window, (wall, rows, _) in results.items():
        verdict = "PASS" if window != 200_000 or wall <= TARGET_S else "FAIL"
        target = f"{TARGET_S:.0f} s" if window == 200_000 else ""
        lines.append(
            f"| {window:,} | {len(rows)} | {wall:.1f} s | {target} | "
            f"{verdict if target else ''} |"
        )
    lines += [
        "",
        "### Each policy alone (in process, the log's facts read once)",
        "",
        "| policy | " + " | ".join(f"{w:,}: seconds | rounds" for w in results) + " |",
        "|---|" + "---:|---:|" * len(results),
    ]
    for key in POLICIES:
        cells = []
        for window, (_, rows, seconds) in results.items():
            row = next(r for r in rows if r["policy"] == key)
            done = (
                f"{row['rounds']:,}"
                if row["overflow_round"] is None
                else f"stopped at {row['overflow_round']:,}"
            )
            cells += [f"{seconds[key]:.2f}", done]
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    log = write_log()
    results = {}
    for window in WINDOWS:
        wall, rows = time_cli(log, window, args.repeats)
        seconds = time_each(log, window, args.repeats)
        results[window] = (wall, rows, seconds)
        print(f"  compare at {window:,}: {wall:.1f} s ({len(rows)} policies)")
    block = markdown(results, args.repeats, time.perf_counter() - started)
    print(block)
    if args.markdown is not None:
        write_markdown(args.markdown, block, BEGIN, END)
        print(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
