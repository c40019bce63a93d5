"""What a team's whole history costs to sweep: sessions a second, in one process and on
1 and 2 Dask workers, side by side in one run, and each worker's peak memory.

    python bench/bench_corpus.py                                       # 2,000 sessions
    python bench/bench_corpus.py --sessions 200 --markdown docs/benchmark_corpus.md

The corpus is generated (`generate_history`, 40 to 120 tool calls a session, a seed
each: real-sized, 200 KB to 700 KB a file, written once under build/bench_corpus/),
with the real sessions of `data/real/claude-code` and `corpus/claude-code` beside it.
Each mode runs `sweep FOLDER --policy claude-code` at two thresholds, priced as
claude-sonnet-4-5 where a session names no model, in a child process of its own (so
its memory is its own): this process alone, a LocalCluster of one worker, of two.
Peak memory is each process's largest resident set (`ru_maxrss`): the child's for
one process, each worker's on Dask.
"""

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUILD = ROOT / "build" / "bench_corpus"
THRESHOLDS = [140_000, 160_000]
MODES = {"one process": 0, "1 Dask worker": 1, "2 Dask workers": 2}


def write_corpus(sessions: int) -> Path:
    """The generated sessions (once: kept between runs) and the real ones."""
    from minilib.scale import generate_history

    folder = BUILD / f"sessions-{sessions}"
    marker = folder / ".complete"
    if not marker.exists():
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "generated").mkdir(parents=True)
        for seed in range(sessions):
            calls = 40 + (seed * 37) % 81
            history = generate_history(calls, seed=seed, user_turns=1 + seed % 4)
            path = folder / "generated" / f"session-{seed:05d}.json"
            path.write_text(json.dumps(list(history.messages)), encoding="utf-8")
        real = folder / "real"
        real.mkdir()
        for source in (
            ROOT / "data" / "real" / "claude-code",
            ROOT / "corpus" / "claude-code",
        ):
            for log in source.glob("*.jsonl"):
                shutil.copy(log, real / log.name)
        marker.touch()
    return folder


def child(folder: Path, jobs: int, out: Path) -> None:
    """One mode, in this (child) process: the sweep, then its measures as JSON."""
    from minilib.corpus.engine import sweep_folder

    started = time.perf_counter()
    run = {}
    peaks = []
    if jobs:
        from distributed import Client, LocalCluster, as_completed

        from minilib.corpus.sessions import session_files, session_rows

        cluster = LocalCluster(
            n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        paths = [str(p) for p in session_files(folder)]
        futures = client.map(
            session_rows,
            paths,
            policy="claude-code",
            thresholds=THRESHOLDS,
            model="claude-sonnet-4-5",
            pure=False,
        )
        failed = 0
        for future in as_completed(futures):
            failed += bool(future.result()[0].get("error"))
            future.release()
        elapsed = time.perf_counter() - started
        peaks = list(
            client.run(
                lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            ).values()
        )
        client.close()
        cluster.close()
        run = {"sessions": len(paths), "failed": failed}
    else:
        result = sweep_folder(
            [folder], "claude-code", THRESHOLDS, model="claude-sonnet-4-5"
        )
        elapsed = time.perf_counter() - started
        peaks = [resource.getrusage(resource.RUSAGE_SELF).ru_maxrss]
        run = {"sessions": result.measured, "failed": result.failed}
    out.write_text(
        json.dumps({**run, "seconds": elapsed, "peak_kb": peaks}), encoding="utf-8"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--markdown", type=Path, default=None)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        folder, jobs, out = args.child
        child(Path(folder), int(jobs), Path(out))
        return 0
    folder = write_corpus(args.sessions)
    files = sum(1 for p in folder.rglob("*.json*"))
    size = sum(p.stat().st_size for p in folder.rglob("*.json*"))
    results = {}
    for name, jobs in MODES.items():
        out = BUILD / f"result-{jobs}.json"
        subprocess.run(
            [sys.executable, __file__, "--child", str(folder), str(jobs), str(out)],
            check=True,
        )
        results[name] = json.loads(out.read_text())
        print(name, results[name], flush=True)
    lines = [
        "# Benchmark: a team's whole history, on one process and on Dask",
        "",
        f"Written by `python bench/bench_corpus.py --markdown docs/benchmark_corpus.md` "
        f"on {date.today():%Y-%m-%d}: Python {platform.python_version()}, "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}. {files:,} sessions "
        f"({size / 1e6:,.0f} MB): {args.sessions:,} generated (40 to 120 tool calls "
        "each) and the real Claude Code sessions of `data/real/` and `corpus/`; "
        "`claude-code` at two thresholds (140,000 and 160,000), each mode in a child "
        "process of its own, one after the other.",
        "",
        "| engine | sessions | seconds | sessions a second | peak memory a process |",
        "|---|---:|---:|---:|---|",
    ]
    for name, result in results.items():
        rate = result["sessions"] / result["seconds"]
        peaks = ", ".join(f"{kb / 1024:,.0f} MB" for kb in result["peak_kb"])
        lines.append(
            f"| {name} | {result['sessions']:,} | {result['seconds']:,.1f} | "
            f"{rate:,.2f} | {peaks} |"
        )
    best = max(results.values(), key=lambda r: r["sessions"] / r["seconds"])
    rate = best["sessions"] / best["seconds"]
    lines += [
        "",
        f"At the best rate measured here ({rate:,.2f} sessions a second), 50,000 "
        f"sessions would take about {50_000 / rate / 3600:,.1f} hours on this 2-core "
        "machine; on a cluster the rate grows with the workers (see "
        "[corpus.md](corpus.md)).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
