"""What `python -m minilib compare` costs: every production policy on one long log.

    python bench/bench_policies.py                                       # measure
    python bench/bench_policies.py --markdown docs/benchmark_policies.md  # and write it
    python bench/bench_policies.py --against HEAD~8   # that revision beside this one

The log is the generated 1,000-call session (`generate_history(1000, user_turns=10)`,
753 rounds, ten follow-ups from the person), written as an OpenAI chat JSON list under
`build/bench_policies/`. Measured in one run:

- the command as a user types it, in a child process, at a 200,000- and a 32,000-token
  window: `python -m minilib compare LOG --window N --json rows.json` (wall time from
  spawn to exit, the interpreter's start included; median of `--repeats`);
- in this process, each policy alone (`measure_policy`, the facts read once and
  shared, as `compare` does): the median of `--repeats` runs, so a slow policy shows;
- the time `compare` takes inside the command at 200k (the log read, its facts found,
  every policy replayed and the table printed; the interpreter's start and the
  imports left out), as it runs by default (two processes) and with `--jobs 1`, runs
  taking turns, with the ratio and whether both wrote the same rows;
- `--against REV`: that git revision's minilib (exported under build/bench_policies/,
  run from its own PYTHONPATH) beside this checkout's, taking turns with them;
- chapter 10's Run All, headless: `jupyter nbconvert --execute` of
  notebooks/10_production_policies.ipynb into build/ (the notebook in the checkout is
  not touched), wall time, this checkout's and, with `--against`, that revision's
  own chapter on its own minilib (`--no-notebook` leaves it out); and the same
  chapter's cells run in a kernel started first, as Run All runs them in a notebook a
  student has open.

Targets (printed PASS/FAIL): every policy on the 1,000-call log at 200k within 30 s;
the command's compare within 1 s.
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
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.logs.replay import with_output_ids  # noqa: E402
from minilib.measure.used_facts import used_facts  # noqa: E402
from minilib.policies.production import POLICIES  # noqa: E402
from minilib.policies.production.compare import measure_policy  # noqa: E402
from minilib.scale import generate_history  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import write_markdown  # noqa: E402
from revisions import exported  # noqa: E402

BUILD = ROOT / "build" / "bench_policies"
CALLS, USER_TURNS = 1000, 10
WINDOWS = (200_000, 32_000)
TARGET_S = 30.0
TARGET_COMPARE_S = 1.0
CHAPTER = "notebooks/10_production_policies.ipynb"
# Run in a child process with a revision's minilib first on its path: the command's
# own main, timed inside, so the interpreter's start and the imports are left out.
TIMED_COMPARE = """
import json, sys, time
from minilib.cli.main import main
start = time.perf_counter()
code = main(
    ["compare", sys.argv[1], "--window", sys.argv[2], "--json", sys.argv[3]]
    + sys.argv[4:]
)
sys.stderr.write(json.dumps({"seconds": time.perf_counter() - start, "code": code}))
"""
# Chapter 10's lab, each control as a student uses it, in a child process with a
# revision's minilib first on its path (the imports left out): the seconds from the
# change to the table and chart updated (the callback's return).
TIMED_CONTROLS = """
import json, sys, time
from minilib.lab.policies_view import PolicyLab
took = {}
start = time.perf_counter()
lab = PolicyLab()
took["the lab's first screen"] = time.perf_counter() - start
def timed(name, widget, value):
    start = time.perf_counter()
    widget.value = value
    took[name] = time.perf_counter() - start
LONG = "generated session, 1,000 tool calls, 10 user turns"
ONE = "generated session, 1,000 tool calls, one task"
timed("log: the 1,000-call session", lab.choice, LONG)
timed("window: 200,000", lab.window, 200_000)
timed("window: 8,000", lab.window, 8_000)
timed("window: 32,000", lab.window, 32_000)
for key in ("swe-agent-last-n", "claude-code"):
    slider = lab.sliders[key]
    timed(f"slider: {key} one step down", slider, slider.value - slider.step)
timed("log: the 1,000-call session with one task", lab.choice, ONE)
timed("log: a bundled transcript", lab.choice, "coding_agent_fix.json")
sys.stderr.write(json.dumps(took))
"""
TARGET_CHAPTER_S = 4.0
JUPYTER_DIRS = {
    "JUPYTER_CONFIG_DIR": str(ROOT / "build" / "jupyter" / "config"),
    "JUPYTER_DATA_DIR": str(ROOT / "build" / "jupyter" / "data"),
    "IPYTHONDIR": str(ROOT / "build" / "jupyter" / "ipython"),
}
TARGET_CONTROL_S = 1.0
THIS = "this checkout"
ONE_PROCESS = "this checkout, --jobs 1"
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


def against_code(ref: str) -> Path:
    """The minilib (with its data, as the package ships it) and the notebooks of git
    revision `ref`, exported under build/bench_policies/against/<commit>."""
    return exported(ref, BUILD, ["minilib", "data", "notebooks"], data_in_package=True)


def time_compare(codes: dict, log: Path, window: int, repeats: int) -> dict:
    """For each code (name -> the folder its minilib is in, and the arguments the
    command is given beside the log's), the command's wall time and the compare
    inside it, medians of `repeats`, the codes taking turns; and the rows each
    wrote."""
    runs = {name: {"wall": [], "compare": []} for name in codes}
    rows = {}
    for _ in range(repeats):
        for name, (code, arguments) in codes.items():
            out = BUILD / f"rows_{window}_{name.replace('/', '_').replace(' ', '_')}.json"
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", TIMED_COMPARE, str(log), str(window), str(out)]
                + arguments,
                cwd=code,  # `-c` puts the working folder first on the path
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": str(code)},
            )
            runs[name]["wall"].append(time.perf_counter() - start)
            timed = json.loads(done.stderr.strip().splitlines()[-1])
            if timed["code"] != 0:
                raise SystemExit(f"compare failed on {name}: {done.stderr}")
            runs[name]["compare"].append(timed["seconds"])
            rows[name] = json.loads(out.read_text(encoding="utf-8"))
    return {
        name: {
            "wall": statistics.median(each["wall"]),
            "compare": statistics.median(each["compare"]),
            "each": each["compare"],
            "rows": rows[name],
        }
        for name, each in runs.items()
    }


def chapter_turns(codes: dict, repeats: int, command, seconds) -> dict:
    """Chapter 10 run `repeats` times for each code, the codes taking turns, each its
    own chapter on its own minilib: `command(name, code)` is the child's argv,
    `seconds(done, wall)` what one run took. Medians and every run, by code."""
    times = {name: [] for name in codes}
    for _ in range(repeats):
        for name, code in codes.items():
            start = time.perf_counter()
            done = subprocess.run(
                command(name, code),
                cwd=ROOT,
                capture_output=True,
                text=True,
                env={**os.environ, **JUPYTER_DIRS, "PYTHONPATH": str(code)},
            )
            wall = time.perf_counter() - start
            if done.returncode != 0:
                raise SystemExit(f"chapter 10 failed on {name}: {done.stderr[-2000:]}")
            times[name].append(seconds(done, wall))
    return {
        name: {"median": statistics.median(each), "each": each}
        for name, each in times.items()
    }


def time_chapter(codes: dict, repeats: int) -> dict:
    """Chapter 10 run in full, headless (nbconvert --execute into build/)."""
    out = BUILD / "chapter"
    out.mkdir(parents=True, exist_ok=True)

    def nbconvert(name, code):
        return [
            sys.executable,
            "-m",
            "jupyter",
            "nbconvert",
            "--execute",
            "--to",
            "notebook",
            "--output-dir",
            str(out),
            "--output",
            f"chapter10_{name.replace('/', '_')}",
            str(Path(code) / CHAPTER),
        ]

    return chapter_turns(codes, repeats, nbconvert, lambda done, wall: wall)


# Chapter 10's cells run in order in a kernel started first, as Run All runs them in a
# notebook a student has open (its kernel started when it opened): the seconds from the
# first cell sent to the last one done. The browser's drawing is not in it.
TIMED_RUN_ALL = """
import json, sys, time
import nbformat
from jupyter_client.manager import start_new_kernel
notebook = nbformat.read(sys.argv[1], as_version=4)
manager, client = start_new_kernel(kernel_name="python3", cwd=sys.argv[2])
try:
    client.execute_interactive("pass", timeout=60)  # the kernel answers: it is ready
    start = time.perf_counter()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            reply = client.execute_interactive(
                cell.source, timeout=300, output_hook=lambda message: None
            )
            if reply["content"]["status"] != "ok":
                raise SystemExit(f"a cell failed: {cell.source[:200]}")
    sys.stderr.write(json.dumps({"seconds": time.perf_counter() - start}))
finally:
    client.stop_channels()
    manager.shutdown_kernel(now=True)
"""


def time_open_run_all(codes: dict, repeats: int) -> dict:
    """Chapter 10's Run All in a notebook already open (`TIMED_RUN_ALL`): the seconds
    the child measured, its kernel's start left out."""

    def run_all(name, code):
        chapter = Path(code) / CHAPTER
        return [sys.executable, "-c", TIMED_RUN_ALL, str(chapter), str(chapter.parent)]

    def measured(done, wall):
        return json.loads(done.stderr.strip().splitlines()[-1])["seconds"]

    return chapter_turns(codes, repeats, run_all, measured)


def time_controls(codes: dict, repeats: int) -> dict:
    """Chapter 10's lab, each control once a run (`TIMED_CONTROLS`), for each code:
    medians of `repeats`, the codes taking turns."""
    runs = {name: {} for name in codes}
    for _ in range(repeats):
        for name, code in codes.items():
            done = subprocess.run(
                [sys.executable, "-c", TIMED_CONTROLS],
                cwd=code,
                capture_output=True,
                text=True,
                env={**os.environ, "PYTHONPATH": str(code)},
            )
            if done.returncode != 0:
                raise SystemExit(f"chapter 10's lab failed on {name}: {done.stderr}")
            took = json.loads(done.stderr.strip().splitlines()[-1])
            for control, seconds in took.items():
                runs[name].setdefault(control, []).append(seconds)
    return {
        name: {control: statistics.median(each) for control, each in took.items()}
        for name, took in runs.items()
    }


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


def control_lines(controls: dict, against: Optional[str]) -> list:
    """The table of chapter 10's controls, this checkout's beside `against`'s."""
    names = list(controls)
    lines = [
        "",
        "### Chapter 10's lab: each control, change → table and chart updated (in "
        "process, the imports left out)",
        "",
        "| control | " + " | ".join(names) + " | target | |",
        "|---|" + "---:|" * len(names) + "---:|---|",
    ]
    for control, seconds in controls[THIS].items():
        cells = [
            f"{controls[name][control]:.2f} s" if control in controls[name] else "–"
            for name in names
        ]
        if control == "the lab's first screen":
            target, verdict = "", ""
        else:
            target = f"{TARGET_CONTROL_S:.0f} s"
            verdict = "PASS" if seconds <= TARGET_CONTROL_S else "FAIL"
        lines.append(f"| {control} | " + " | ".join(cells) + f" | {target} | {verdict} |")
    return lines


def side_by_side(
    compared: dict,
    chapter: Optional[dict],
    against: Optional[str],
    opened: Optional[dict] = None,
):
    """The lines of the revisions' comparison and of chapter 10's Run All."""
    here = compared[THIS]
    lines = [
        "",
        "### compare at 200,000, this checkout"
        + (f" beside {against}" if against else "")
        + " (child processes, taking turns)",
        "",
        "| code | command wall (median) | compare inside it (median) | each run "
        "| target | |",
        "|---|---:|---:|---|---:|---|",
    ]
    for name, result in compared.items():
        each = ", ".join(f"{value:.2f}" for value in result["each"])
        verdict = "PASS" if result["compare"] <= TARGET_COMPARE_S else "FAIL"
        lines.append(
            f"| {name} | {result['wall']:.2f} s | {result['compare']:.2f} s | {each} "
            f"| {TARGET_COMPARE_S:.0f} s | {verdict} |"
        )
    for name in [ONE_PROCESS] + ([against] if against else []):
        then = compared[name]
        same = "the same" if then["rows"] == here["rows"] else "DIFFERENT"
        lines += [
            "",
            f"{name} / this checkout: compare {then['compare'] / here['compare']:.1f}x"
            f", command {then['wall'] / here['wall']:.1f}x; the rows both wrote are "
            f"{same}.",
        ]
    if chapter:
        lines += run_all_table(
            "Chapter 10, Run All (nbconvert --execute, headless)", (), chapter, against
        )
    if opened:
        intro = (
            "What a student waits for after opening the chapter and choosing Run All:",
            "the cells run in order in a running kernel, from the first sent to the last",
            "done (the browser's drawing left out). The headless run above also starts",
            "a kernel and nbconvert, which a student who has the chapter open never",
            "waits for.",
        )
        lines += run_all_table(
            "Chapter 10, Run All in a notebook already open (its kernel started)",
            intro,
            opened,
            against,
        )
    return lines


def run_all_table(title: str, intro, timings: dict, against: Optional[str]) -> list:
    """The lines of one Run All measurement: each code's median against the target,
    and with `against` the ratio."""
    lines = ["", f"### {title}", ""]
    if intro:
        lines += [*intro, ""]
    lines += ["| code | wall (median) | each run | target | |", "|---|---:|---|---:|---|"]
    for name, result in timings.items():
        each = ", ".join(f"{value:.1f}" for value in result["each"])
        verdict = "PASS" if result["median"] <= TARGET_CHAPTER_S else "FAIL"
        lines.append(
            f"| {name} | {result['median']:.1f} s | {each} | "
            f"{TARGET_CHAPTER_S:.0f} s | {verdict} |"
        )
    if against:
        ratio = timings[against]["median"] / timings[THIS]["median"]
        lines += ["", f"{against} / this checkout: {ratio:.1f}x."]
    return lines


def markdown(results, repeats: int, whole_s: float, extra=()) -> str:
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
    return "\n".join(lines + list(extra))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument(
        "--against", default=None, help="a git revision to measure beside this one"
    )
    parser.add_argument(
        "--no-notebook", action="store_true", help="leave chapter 10's Run All out"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    log = write_log()
    codes = {THIS: ROOT}
    if args.against:
        codes[args.against] = against_code(args.against)
    # this checkout as the command runs by default, on one process, and REV's
    timed = {THIS: (ROOT, []), ONE_PROCESS: (ROOT, ["--jobs", "1"])}
    timed.update({name: (code, []) for name, code in codes.items() if name != THIS})
    compared = time_compare(timed, log, 200_000, args.repeats)
    for name, result in compared.items():
        print(f"  {name}: compare {result['compare']:.2f} s, wall {result['wall']:.2f} s")
    chapter = None if args.no_notebook else time_chapter(codes, args.repeats)
    opened = None if args.no_notebook else time_open_run_all(codes, args.repeats)
    controls = None if args.no_notebook else time_controls(codes, args.repeats)
    if chapter:
        for name, result in chapter.items():
            print(f"  {name}: chapter 10 Run All {result['median']:.1f} s")
        for name, result in opened.items():
            print(f"  {name}: chapter 10 Run All, open {result['median']:.1f} s")
        for name, took in controls.items():
            print(f"  {name}: chapter 10's controls " + json.dumps(took))
    results = {}
    for window in WINDOWS:
        wall, rows = time_cli(log, window, args.repeats)
        seconds = time_each(log, window, args.repeats)
        results[window] = (wall, rows, seconds)
        print(f"  compare at {window:,}: {wall:.1f} s ({len(rows)} policies)")
    extra = side_by_side(compared, chapter, args.against, opened)
    if controls:
        extra += control_lines(controls, args.against)
    block = markdown(results, args.repeats, time.perf_counter() - started, extra)
    print(block)
    if args.markdown is not None:
        write_markdown(args.markdown, block, BEGIN, END)
        print(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
