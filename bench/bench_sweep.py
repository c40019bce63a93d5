"""What `python -m minilib sweep` costs beside one replay.

    python bench/bench_sweep.py                                    # measure
    python bench/bench_sweep.py --markdown docs/benchmark_sweep.md  # and write it

On the generated 1,000-call session (`generate_history(1000, user_turns=10)`, 753
rounds), priced as `claude-sonnet-4-5`, measured in this process, taking turns, the
median of `--repeats` runs each:

- one replay: `sweep_log` at one threshold (the log's facts found, one replay of
  Claude Code's policy, its bill);
- a sweep of ten thresholds (100,000 to 190,000), in one process and in two.

Target (printed PASS/FAIL): the sweep of ten thresholds within 5 times one replay.
"""

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.cli.compare import row_counting  # noqa: E402
from minilib.logs.base import LoadedLog  # noqa: E402
from minilib.policies.production.sweep import sweep_log  # noqa: E402
from minilib.scale import generate_history  # noqa: E402

THRESHOLDS = list(range(100_000, 190_001, 10_000))
MODEL, POLICY, TARGET = "claude-sonnet-4-5", "claude-code", 5.0


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    log = LoadedLog(list(generate_history(1000, user_turns=10).messages), "openai-chat")
    counting = row_counting(log)
    runs = {
        "one replay": lambda: sweep_log(
            log, POLICY, THRESHOLDS[:1], counting, model=MODEL
        ),
        "sweep of 10, one process": lambda: sweep_log(
            log, POLICY, THRESHOLDS, counting, model=MODEL
        ),
        "sweep of 10, two processes": lambda: sweep_log(
            log, POLICY, THRESHOLDS, counting, 2, model=MODEL
        ),
    }
    times = {name: [] for name in runs}
    for _ in range(args.repeats):  # taking turns, so a busy moment hits every one
        for name, run in runs.items():
            times[name].append(timed(run))
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["sweep of 10, one process"] / medians["one replay"]
    best = min(medians["sweep of 10, one process"], medians["sweep of 10, two processes"])
    verdict = "PASS" if best / medians["one replay"] <= TARGET else "FAIL"
    lines = [
        "# Benchmark: a sweep of thresholds beside one replay",
        "",
        f"Written by `python bench/bench_sweep.py --markdown docs/benchmark_sweep.md` on "
        f"{date.today():%Y-%m-%d}: Python {platform.python_version()}, "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; the generated "
        f"1,000-call session (753 rounds), `{POLICY}` priced as `{MODEL}`, the median "
        f"of {args.repeats} runs each, taking turns.",
        "",
        "| run | median | runs |",
        "|---|---:|---|",
    ]
    for name, values in times.items():
        lines.append(
            f"| {name} | {medians[name]:.2f} s | "
            + ", ".join(f"{v:.2f}" for v in values)
            + " |"
        )
    lines += [
        "",
        f"Ten thresholds take {ratio:.1f} times one replay in one process, "
        f"{medians['sweep of 10, two processes'] / medians['one replay']:.1f} in two: "
        "the log is read, counted and its facts found once, and each threshold is one "
        f"replay. Target: within {TARGET:.0f} times one replay: **{verdict}**.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text, encoding="utf-8")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
