"""How long a student waits on their own log: every upload point and control of the
course, on each real log of data/real/, as the kernel computes it.

    python bench/bench_uploads.py                         # printed
    python bench/bench_uploads.py --markdown docs/benchmark_uploads.md

Each widget is driven as the browser drives it (its `upload.value` set to the file, a
control's `value` changed) with no browser attached, and timed with
time.perf_counter from the change to the moment the answer is on the widget: for
chapter 10 the table (`table.value` set to the new log's rows) and, separately, the
notes beside the sliders that follow it; for 7.9 the report; for 7.10 and 7.11 their
text and figure. A line saying the file is being read is on screen before any of
them (it is set first). The browser's share (sending and drawing) is in
docs/benchmark.md. Medians of `--runs` runs (default 3) a log, every cache of the
library emptied before each (a new upload is never in one); the targets: an upload
at most 2 s, a control at most 1 s, PASS or FAIL against the worst log.
This is a measurement, not a test: it prints numbers and never fails on them.
"""

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.session import DATA_DIR  # noqa: E402

UPLOAD_TARGET, CONTROL_TARGET = 2.0, 1.0


def upload(widget, path: Path) -> None:
    from minilib.lab.shown import upload_value

    widget.upload.value = upload_value([(path.name, path.read_bytes())])


def until(widget, trait: str, change) -> float:
    """Seconds from `change()` to the first time `trait` of `widget` is set to a
    non-empty value (the answer on screen)."""
    start, seen = time.perf_counter(), []

    def note(event):
        if event["new"] and not seen:
            seen.append(time.perf_counter())

    widget.observe(note, trait)
    try:
        change()
    finally:
        widget.unobserve(note, trait)
    done = time.perf_counter()
    return (seen[0] if seen else done) - start, done - start


def chapter_10(path: Path) -> dict:
    from minilib.lab.policies_view import PolicyLab

    lab = PolicyLab()
    table, whole = until(lab.table, "value", lambda: upload(lab, path))
    windows = [value for _, value in lab.window.options if value != lab.window.value]
    window, _ = until(
        lab.table, "value", lambda: setattr(lab.window, "value", windows[0])
    )
    slider = lab.sliders["article"]
    moved = slider.value + slider.step if slider.value < slider.max else slider.min
    start = time.perf_counter()
    slider.value = moved
    return {
        "10 upload: the table": table,
        "10 upload: every note": whole,
        "10 window": window,
        "10 slider": time.perf_counter() - start,
    }


def chapter_7_9(path: Path) -> dict:
    from minilib.lab.log_explorer import LogExplorer

    explorer = LogExplorer()
    timings = {}
    start = time.perf_counter()
    upload(explorer, path)
    timings["7.9 upload"] = time.perf_counter() - start
    start = time.perf_counter()
    explorer.threshold.value = explorer.threshold.value + explorer.threshold.step
    timings["7.9 threshold"] = time.perf_counter() - start
    start = time.perf_counter()
    explorer.fold.value = not explorer.fold.value
    timings["7.9 fold"] = time.perf_counter() - start
    return timings


def chapter_7_10_and_11(path: Path) -> dict:
    from minilib.lab.calibration_view import calibration_view
    from minilib.lab.compactions_view import CompactionsExplorer

    explorer = CompactionsExplorer()
    start = time.perf_counter()
    upload(explorer, path)
    compactions = time.perf_counter() - start
    start = time.perf_counter()
    calibration_view(path.name, path.read_bytes())  # what the 7.11 explorer draws
    return {"7.10 upload": compactions, "7.11 upload": time.perf_counter() - start}


MEASURES = (chapter_10, chapter_7_9, chapter_7_10_and_11)
CONTROLS = ("10 window", "10 slider", "7.9 threshold", "7.9 fold")


def forget() -> None:
    """Empty every cache of the library, so each run reads its log as a new upload
    does (the lab keeps the last few files it read: a second upload of the same file
    would be timed from them)."""
    for name, module in list(sys.modules.items()):
        if name.startswith("minilib"):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def measure(paths, runs: int) -> dict:
    """{log name: {what: median seconds}}."""
    results = {}
    for path in paths:
        samples = {}
        for _ in range(runs):
            forget()
            for measured in MEASURES:
                for what, seconds in measured(path).items():
                    samples.setdefault(what, []).append(seconds)
        results[path.name] = {w: statistics.median(s) for w, s in samples.items()}
        print(path.name, {w: round(s, 2) for w, s in results[path.name].items()})
    return results


def target_of(what: str) -> float:
    return CONTROL_TARGET if what in CONTROLS else UPLOAD_TARGET


def table(results: dict) -> str:
    whats = list(next(iter(results.values())))
    lines = [
        "| log | " + " | ".join(whats) + " |",
        "|---|" + "---:|" * len(whats),
    ]
    for name, row in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{row[w]:.2f}" for w in whats) + " |")
    worst = {w: max(row[w] for row in results.values()) for w in whats}
    lines.append("| **worst** | " + " | ".join(f"{worst[w]:.2f}" for w in whats) + " |")
    verdicts = [
        "(after the table)"
        if w.endswith("every note")
        else ("PASS" if worst[w] <= target_of(w) else "FAIL") + f" ({target_of(w):g} s)"
        for w in whats
    ]
    lines.append("| **target** | " + " | ".join(verdicts) + " |")
    return "\n".join(lines)


def slowest(results: dict, paths) -> str:
    """The log each wait was longest on, and its size: what a worst case is made of."""
    sizes = {path.name: path.stat().st_size for path in paths}
    lines = []
    for what in next(iter(results.values())):
        name = max(results, key=lambda log: results[log][what])
        lines.append(
            f"- {what}: longest on {name} ({sizes[name] / 1e6:.1f} MB), "
            f"{results[name][what]:.2f} s"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    paths = sorted((DATA_DIR / "real").glob("*/*.jsonl"))
    results = measure(paths, args.runs)
    measured = table(results) + "\n\n" + slowest(results, paths)
    print(measured)
    if args.markdown:
        when = time.strftime("%Y-%m-%d")
        args.markdown.write_text(
            "# Benchmark: the waits on a student's own log\n\n"
            + __doc__.split("\n\n", 2)[2].split("This is a measurement")[0].strip()
            + f"\n\nSeconds, medians of {args.runs} runs a log, measured {when} on "
            f"{platform.machine()}, Python {platform.python_version()} (`python "
            "bench/bench_uploads.py --markdown docs/benchmark_uploads.md`):\n\n"
            + measured
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
