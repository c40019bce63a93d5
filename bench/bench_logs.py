"""What `python -m minilib compress` costs on long logs, on the user's own path.

    python bench/bench_logs.py                                   # the full run
    python bench/bench_logs.py --quick                           # 100 and 1,000 calls
    python bench/bench_logs.py --markdown docs/benchmark_logs.md # also write it

The logs are the files a user would have: OpenAI chat JSON lists (`json.dump` of
`generate_history(calls, seed)`, one line, UTF-8 as is), of 100, 1,000 and 8,000 tool
calls (82, 753 and 6,130 rounds; the largest about 47 MB), written under
`build/bench_logs/` and the same for the same seed. Each run is the CLI in a child
process, exactly as a user types it:

    python -m minilib compress LOG --threshold N --out DIR

with its output sent to a file. Per run: the wall time (spawn to exit, interpreter start
included), the child's peak memory (max RSS, by `/usr/bin/time -f %M`), the
size of `trace.jsonl`, the exit status and how far it got (rounds in `rounds.json` of
the log's rounds). The small logs run `--repeats` times (median wall time, largest
peak); the largest runs `--large-repeats` times. The floor is measured in this process
in the same run: `json.load` of the file and `minilib.logs.load_log` (median of three),
and the interpreter's start with the CLI imported, in a child like the runs.

Targets (printed PASS/FAIL; a measurement, so the exit status does not depend on them):
the largest log at 200k completes, with a peak under 1 GiB, a trace at most 1.5x the
log's size plus 1 KiB a round, and a wall time at most 10x the load_log floor; the
1,000-call log completes at 8k, 32k, 128k and 200k.
"""

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.logs import load_log  # noqa: E402
from minilib.scale import generate_history  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import write_markdown  # noqa: E402  (the same doc markers rule)

BUILD = ROOT / "build" / "bench_logs"
CALLS = (100, 1000, 8000)
THRESHOLDS = (32_000, 200_000)
MID_CALLS = 1000
MID_THRESHOLDS = (8_000, 32_000, 128_000, 200_000)
ARTICLE_THRESHOLD = 32_000
TARGET_PEAK_BYTES = 1024**3
TARGET_TRACE_RATIO = 1.5
TARGET_TRACE_PER_ROUND = 1024
TARGET_FLOOR_RATIO = 10
BEGIN = "<!-- measured by bench/bench_logs.py: begin -->"
END = "<!-- measured by bench/bench_logs.py: end -->"


@dataclass
class Log:
    calls: int
    path: Path
    rounds: int
    size: int
    json_load_s: float = 0.0
    load_log_s: float = 0.0


@dataclass
class Run:
    log: Log
    threshold: int
    article: bool
    walls: List[float] = field(default_factory=list)
    peak_bytes: int = 0
    trace_bytes: int = 0
    status: int = 0
    rounds_done: int = 0
    stopped: str = ""

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def completed(self) -> bool:
        return self.status == 0 and self.rounds_done == self.log.rounds


def write_logs(calls_list, seed: int) -> List[Log]:
    """Each log as a user's file: an OpenAI chat JSON list on one line."""
    BUILD.mkdir(parents=True, exist_ok=True)
    logs = []
    for calls in calls_list:
        history = generate_history(calls, seed)
        path = BUILD / f"openai_{calls}calls_seed{seed}.json"
        with path.open("w", encoding="utf-8") as file:
            json.dump(list(history.messages), file, ensure_ascii=False)
        rounds = history.stats().rounds
        logs.append(Log(calls, path, rounds, path.stat().st_size))
        generate_history.cache_clear()
    return logs


def median_seconds(action, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
        del result
    return statistics.median(times)


def measure_floor(log: Log) -> None:
    def read_json():
        with log.path.open(encoding="utf-8") as file:
            return json.load(file)

    log.json_load_s = median_seconds(read_json)
    log.load_log_s = median_seconds(lambda: load_log(log.path))
    gc.collect()


TIME = shutil.which("time", path="/usr/bin:/bin")


def child(command, stdout_path: Path):
    """Run `command`; its wall time, exit status and peak RSS in bytes.

    The peak is GNU time's %M where /usr/bin/time exists: on Linux a child's own
    ru_maxrss starts from its parent's RSS at the fork, so `os.wait4` on a child of
    this (large) process would report the benchmark's memory, not the CLI's.
    """
    peak_path = stdout_path.with_suffix(".peak")
    if TIME is not None:
        command = [TIME, "-f", "%M", "-o", str(peak_path), *command]
    with stdout_path.open("wb") as out, stdout_path.with_suffix(".err").open("wb") as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    peak_kib = usage.ru_maxrss  # Linux: KiB
    if TIME is not None:
        peak_kib = int(peak_path.read_text().split()[-1])
    return wall, process.returncode, peak_kib * 1024


def startup_seconds(repeats: int) -> float:
    """The interpreter's start with the CLI imported: every run pays it."""
    command = [sys.executable, "-c", "import minilib.cli.main"]
    out = BUILD / "startup.txt"
    return statistics.median(child(command, out)[0] for _ in range(repeats))


def measure_run(log: Log, threshold: int, article: bool, repeats: int) -> Run:
    run = Run(log, threshold, article)
    name = f"{log.calls}calls_{threshold // 1000}k" + ("_article" if article else "")
    out = BUILD / "out" / name
    for _ in range(repeats):
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        command = [
            sys.executable,
            "-m",
            "minilib",
            "compress",
            str(log.path),
            "--threshold",
            str(threshold),
            "--out",
            str(out),
        ] + (["--article"] if article else [])
        gc.collect()
        wall, status, peak = child(command, out / "stdout.txt")
        run.walls.append(wall)
        run.peak_bytes = max(run.peak_bytes, peak)
        run.status = status
    trace = out / "trace.jsonl"
    run.trace_bytes = trace.stat().st_size if trace.exists() else 0
    rounds = out / "rounds.json"
    if rounds.exists():
        run.rounds_done = len(json.loads(rounds.read_text(encoding="utf-8"))["rounds"])
    errors = (out / "stdout.err").read_text(encoding="utf-8", errors="replace")
    stops = [line for line in errors.splitlines() if "stopped:" in line]
    if stops:
        run.stopped = stops[0].split("stopped:", 1)[1].strip()
    elif status != 0:
        run.stopped = errors.strip().splitlines()[-1] if errors.strip() else "no output"
    label = "--article " if article else ""
    print(
        f"  {log.calls:,} calls {label}at {threshold:,}: {run.wall:.2f} s, exit {status}",
        file=sys.stderr,
    )
    return run


def megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB" if size >= 1e6 else f"{size / 1e3:,.0f} kB"


def seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def trace_limit(run: Run) -> float:
    return TARGET_TRACE_RATIO * run.log.size + TARGET_TRACE_PER_ROUND * run.log.rounds


def targets(runs: List[Run], largest: Log) -> List[str]:
    def verdict(ok: bool) -> str:
        return "PASS" if ok else "FAIL"

    lines = []
    big = next(
        (
            r
            for r in runs
            if r.log is largest and r.threshold == 200_000 and not r.article
        ),
        None,
    )
    if big is not None:
        where = f"{largest.calls:,}-call log ({megabytes(largest.size)}) at 200k"
        lines += [
            f"- {verdict(big.completed)}: the {where} completes "
            f"({big.rounds_done:,} of {largest.rounds:,} rounds, exit {big.status})",
            f"- {verdict(big.peak_bytes < TARGET_PEAK_BYTES)}: its peak memory "
            f"{megabytes(big.peak_bytes)} (target under 1 GiB)",
            f"- {verdict(big.trace_bytes <= trace_limit(big))}: its trace "
            f"{megabytes(big.trace_bytes)}, "
            f"{big.trace_bytes / largest.size:.2f}x the log "
            f"(target at most {TARGET_TRACE_RATIO}x the log + "
            f"{TARGET_TRACE_PER_ROUND:,} B a round = {megabytes(trace_limit(big))})",
            f"- {verdict(big.wall <= TARGET_FLOOR_RATIO * largest.load_log_s)}: its wall "
            f"time {seconds(big.wall)}, "
            f"{big.wall / largest.load_log_s:.0f}x the load_log "
            f"floor of {seconds(largest.load_log_s)} (target at most "
            f"{TARGET_FLOOR_RATIO}x)",
        ]
    for run in runs:
        if run.log.calls == MID_CALLS and not run.article:
            lines.append(
                f"- {verdict(run.completed)}: the {MID_CALLS:,}-call log completes at "
                f"{run.threshold // 1000}k ({run.rounds_done:,} of {run.log.rounds:,} "
                f"rounds, exit {run.status})"
            )
    return lines


def report(logs: List[Log], runs: List[Run], startup: float) -> str:
    lines = [
        "### The logs and the floor",
        "",
        "| log | tool calls | rounds | size | `json.load` | `load_log` |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for log in logs:
        lines.append(
            f"| `{log.path.name}` | {log.calls:,} | {log.rounds:,} | "
            f"{megabytes(log.size)} | {seconds(log.json_load_s)} | "
            f"{seconds(log.load_log_s)} |"
        )
    lines += [
        "",
        f"Interpreter start with the CLI imported (in every wall time below): "
        f"{seconds(startup)}.",
        "",
        "### `python -m minilib compress LOG --threshold N --out DIR`",
        "",
        "| tool calls | threshold | window | runs | wall (median) | wall / load_log | "
        "peak RSS | trace.jsonl | trace / log | exit | rounds done | how it ended |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for run in runs:
        ended = "completed"
        if not run.completed:
            said = run.stopped if len(run.stopped) <= 190 else run.stopped[:190] + "…"
            ended = f"stopped at round {run.rounds_done:,}: {said or 'no reason given'}"
        lines.append(
            f"| {run.log.calls:,} | {run.threshold // 1000}k | "
            f"{'--article' if run.article else 'production'} | {len(run.walls)} | "
            f"{seconds(run.wall)} | {run.wall / run.log.load_log_s:,.0f}x | "
            f"{megabytes(run.peak_bytes)} | {megabytes(run.trace_bytes)} | "
            f"{run.trace_bytes / run.log.size:.2f}x | {run.status} | "
            f"{run.rounds_done:,} / {run.log.rounds:,} | {ended} |"
        )
    lines += ["", "### Targets", "", *targets(runs, logs[-1])]
    return "\n".join(lines)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_line(command: str) -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return (
        f"Measured on {date.today().isoformat()}: "
        f"{os.cpu_count()} cores ({cpu_model()}), "
        f"load average {load}, python {platform.python_version()}. "
        f"Command: `{command}`."
    )


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default=",".join(map(str, CALLS)))
    parser.add_argument("--thresholds", default=",".join(map(str, THRESHOLDS)))
    parser.add_argument("--repeats", type=int, default=3, help="runs of a small log")
    parser.add_argument(
        "--large-repeats", type=int, default=3, help="runs of the largest log"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="100 and 1,000 calls")
    parser.add_argument("--markdown", type=Path, help="rewrite the measured block there")
    options = parser.parse_args(argv)
    calls_list = sorted(int(value) for value in options.calls.split(","))
    if options.quick:
        calls_list = [100, MID_CALLS]
    thresholds = [int(value) for value in options.thresholds.split(",")]
    started = time.perf_counter()
    logs = write_logs(calls_list, options.seed)
    for log in logs:
        measure_floor(log)
    startup = startup_seconds(options.repeats)
    runs = []
    for log in logs:
        repeats = options.large_repeats if log is logs[-1] else options.repeats
        chosen = (
            sorted({*thresholds, *MID_THRESHOLDS})
            if log.calls == MID_CALLS
            else (thresholds)
        )
        for threshold in chosen:
            runs.append(measure_run(log, threshold, False, repeats))
        if log.calls == MID_CALLS:
            runs.append(measure_run(log, ARTICLE_THRESHOLD, True, repeats))
    elapsed = time.perf_counter() - started
    command = "python bench/bench_logs.py" + "".join(
        f" {arg}" for arg in (sys.argv[1:] if argv is None else argv)
    )
    block = "\n".join(
        [
            machine_line(command),
            "",
            f"Logs: `generate_history(calls, seed={options.seed})` written as OpenAI "
            f"chat JSON lists. Runs: {options.repeats} per log, "
            f"{options.large_repeats} for the {logs[-1].calls:,}-call log; the wall "
            f"time is their median, the peak their largest. Whole run: {elapsed:.0f} s.",
            "",
            report(logs, runs, startup),
        ]
    )
    print(block)
    if options.markdown is not None:
        write_markdown(options.markdown, block, BEGIN, END)
        print(f"\nwrote {options.markdown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
