"""Run `sessions.session_rows` over every session under a folder: in this process, on
a Dask `LocalCluster` of N worker processes (`jobs`), or on a running Dask cluster
(`scheduler`, its address). Each session is one task, and a worker runs one task at a
time, so a worker holds one session in memory, however large the corpus. Rows are
written as each session's arrive, the sessions a table already holds are skipped,
and whatever stops the run (Ctrl-C, a failure) the table written so far stays
readable for the rerun that completes it. The rows are the same, row for row, whoever
runs them (sorted by path and threshold when read back).
"""

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Sequence

from .sessions import content_key, session_files, session_rows
from .table import RowWriter, done_keys


@dataclass
class Progress:
    """Sessions done, failed and left, with a time estimate, on one line."""

    total: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)
    stream: object = None

    def line(self) -> str:
        finished = self.done + self.failed
        left = self.total - self.skipped - finished
        elapsed = time.monotonic() - self.started
        eta = f", about {_duration(elapsed / finished * left)} left" if finished else ""
        skipped = f" ({self.skipped:,} done before)" if self.skipped else ""
        return (
            f"sessions: {self.done:,} done, {self.failed:,} failed, {left:,} to go"
            f"{skipped}{eta}"
        )

    def show(self, final: bool = False) -> None:
        if self.stream is not None:
            self.stream.write("\r" + self.line() + ("\n" if final else ""))
            self.stream.flush()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass
class CorpusRun:
    """What a run did: the sessions it measured now, those skipped as done, the
    failed ones, and the rows it wrote."""

    measured: int
    skipped: int
    failed: int
    rows: List[dict]


def sweep_folder(
    folders: Sequence[Path],
    policy: str,
    thresholds: Sequence[int],
    out: Optional[Path] = None,
    model: Optional[str] = None,
    jobs: int = 0,
    scheduler: Optional[str] = None,
    progress_stream=None,
    on_rows: Optional[Callable[[List[dict]], None]] = None,
) -> CorpusRun:
    """Every session under `folders` (see the module text). `jobs` > 0: a Dask
    LocalCluster of that many worker processes; `scheduler`: a running cluster's
    address; neither: this process."""
    paths = [p for folder in folders for p in _files(Path(folder))]
    already = done_keys(out)
    todo = [p for p in paths if not already or content_key(p) not in already]
    progress = Progress(len(paths), len(paths) - len(todo), stream=progress_stream)
    writer = RowWriter(out)
    rows: List[dict] = []

    def arrived(session: List[dict]) -> None:
        writer.write(session)
        rows.extend(session)
        failed = bool(session) and bool(session[0].get("error"))
        progress.failed += failed
        progress.done += not failed
        progress.show()
        if on_rows is not None:
            on_rows(session)

    progress.show()
    try:
        if scheduler or jobs > 0:
            _on_dask(todo, policy, thresholds, model, jobs, scheduler, arrived)
        else:
            for path in todo:
                arrived(session_rows(path, policy, thresholds, model))
    finally:
        writer.close()  # an interrupted run leaves a table the rerun completes
        progress.show(final=True)
    measured = progress.done + progress.failed
    return CorpusRun(measured, progress.skipped, progress.failed, rows)


def _files(folder: Path) -> List[Path]:
    return [folder] if folder.is_file() else session_files(folder)


def _on_dask(paths, policy, thresholds, model, jobs, scheduler, arrived) -> None:
    """The sessions as tasks on Dask: a LocalCluster of `jobs` single-threaded worker
    processes, or the cluster at `scheduler`; each session's rows as it finishes."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError(
            "a corpus on Dask needs dask[distributed]: pip install -e '.[corpus]'"
        ) from None
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(
            n_workers=jobs,
            threads_per_worker=1,  # one session at a time a worker
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)
    try:
        futures = client.map(
            session_rows,
            [str(p) for p in paths],
            policy=policy,
            thresholds=list(thresholds),
            model=model,
            pure=False,
            retries=1,  # a worker that died: its session runs again elsewhere
        )
        for future in as_completed(futures):
            arrived(future.result())
            future.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def sorted_rows(rows: List[dict]) -> List[dict]:
    """Rows in a stable order, whatever ran them: by path, then threshold."""
    return sorted(rows, key=lambda r: (r["path"], r.get("threshold") or 0))


def totals_by_threshold(rows: List[dict]) -> List[dict]:
    """Per threshold over the sessions measured: the total bill, its spread over
    sessions (the quartiles of each session's bill), the facts lost, and the record's
    total over the same sessions."""
    import statistics

    by_threshold = {}
    for row in rows:
        if not row.get("error"):
            by_threshold.setdefault(row["threshold"], []).append(row)
    totals = []
    for threshold in sorted(by_threshold):
        group = by_threshold[threshold]
        bills = sorted(r["bill_usd"] for r in group)
        quartiles = statistics.quantiles(bills, n=4) if len(bills) > 1 else bills * 3
        recorded = [r["recorded_usd"] for r in group if r.get("recorded_usd") is not None]
        totals.append(
            {
                "threshold": threshold,
                "sessions": len(group),
                "bill_usd": sum(bills),
                "bill_q1": quartiles[0],
                "bill_median": statistics.median(bills),
                "bill_q3": quartiles[-1],
                "facts_lost": sum(r["facts_lost"] for r in group),
                "compactions": sum(r["compactions"] for r in group),
                "recorded_usd": sum(recorded) if recorded else None,
            }
        )
    return totals


def format_totals(totals: List[dict]) -> List[str]:
    """A line a threshold: sessions, the total and median bill, compactions, facts
    lost; then the record's total over the same sessions."""
    lines = [
        f"{'threshold':>10} {'sessions':>9} {'total bill':>12} {'median':>9} "
        f"{'compactions':>12} {'facts lost':>11}"
    ]
    for t in totals:
        lines.append(
            f"{t['threshold']:>10,} {t['sessions']:>9,} "
            f"{'$' + format(t['bill_usd'], ',.2f'):>12} "
            f"{'$' + format(t['bill_median'], ',.2f'):>9} {t['compactions']:>12,} "
            f"{t['facts_lost']:>11,}"
        )
    recorded = next((t["recorded_usd"] for t in totals if t["recorded_usd"]), None)
    if recorded is not None:
        lines.append(f"the record, over the sessions that record usage: ${recorded:,.2f}")
    return lines
