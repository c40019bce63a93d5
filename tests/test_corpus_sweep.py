"""A team's whole history: every session under a folder, one row a session and
threshold, the same rows whoever runs them (this process, a 2-worker Dask
LocalCluster, a scheduler and workers started here), a failed session a row saying
why, a rerun that skips what is done, an interrupted run a table the rerun completes,
and nothing of a session's text written out."""

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minilib.cli.main import main
from minilib.corpus.engine import sorted_rows, sweep_folder, totals_by_threshold
from minilib.corpus.table import COLUMNS, complete, read_rows
from minilib.logs import load_log
from minilib.session import DATA_DIR

pytest.importorskip("genai_prices", reason="a corpus sweep prices its sessions")

REAL = DATA_DIR / "real" / "claude-code"
SESSIONS = ("entire-d7-0360ee0899-0.jsonl", "entire-e1-2c3e2b3f2a-0.jsonl")
THRESHOLDS = [140_000, 160_000]
POLICY = "claude-code"


@pytest.fixture
def folder(tmp_path):
    """Two real sessions, and a file that is no log."""
    corpus = tmp_path / "corpus"
    (corpus / "team").mkdir(parents=True)
    for name in SESSIONS:
        shutil.copy(REAL / name, corpus / "team" / name)
    (corpus / "team" / "notes.json").write_text('{"todo": "not a session"}')
    return corpus


def _comparable(rows):
    """Rows as compared across runs: every column, the path relative to its folder."""
    return [dict(complete(row), path=Path(row["path"]).name) for row in sorted_rows(rows)]


@pytest.fixture
def reference(folder):
    return _comparable(sweep_folder([folder], POLICY, THRESHOLDS).rows)


def test_every_session_gives_a_row_a_threshold_and_a_bad_file_one_saying_why(
    reference,
):
    good = [r for r in reference if not r["error"]]
    bad = [r for r in reference if r["error"]]
    assert len(good) == len(SESSIONS) * len(THRESHOLDS)
    assert [r["path"] for r in bad] == ["notes.json"]
    assert "not a known agent log" in bad[0]["error"] or "shape" in bad[0]["error"]
    assert all(set(r) <= set(COLUMNS) for r in reference)
    totals = totals_by_threshold(reference)
    assert [t["threshold"] for t in totals] == THRESHOLDS
    assert all(t["sessions"] == len(SESSIONS) for t in totals)


def test_nothing_of_a_sessions_text_is_written(folder, tmp_path):
    out = tmp_path / "rows.jsonl"
    sweep_folder([folder], POLICY, THRESHOLDS, out)
    written = out.read_text()
    for name in SESSIONS:
        log = load_log(folder / "team" / name)
        texts = [m["content"] for m in log.messages if len(m.get("content") or "") > 40]
        assert texts and not any(text[:40] in written for text in texts)
    assert "not a session" not in written  # the bad file's content either


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_rerun_skips_what_is_done_and_an_interrupted_run_is_completed(
    folder, reference, tmp_path, suffix
):
    out = tmp_path / f"rows{suffix}"
    seen = []

    def interrupt(rows):
        seen.append(rows)
        if len(seen) == 1:
            raise KeyboardInterrupt  # Ctrl-C after the first session

    with pytest.raises(KeyboardInterrupt):
        sweep_folder([folder], POLICY, THRESHOLDS, out, on_rows=interrupt)
    kept = read_rows(out)  # a table, readable, holding the first session
    assert {r["path"] for r in kept} == {seen[0][0]["path"]}
    rerun = sweep_folder([folder], POLICY, THRESHOLDS, out)
    assert rerun.skipped == 1 and rerun.measured == 2
    assert _comparable(read_rows(out)) == reference
    again = sweep_folder([folder], POLICY, THRESHOLDS, out)
    assert again.measured == 0 and again.skipped == 3


def test_the_command_writes_the_table_and_the_totals(folder, tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    argv = ["sweep", str(folder), "--policy", POLICY, "--threshold", "140k:160k:20k"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2 sessions measured now" not in printed  # three files, one not a log
    assert "3 sessions measured now (1 could not be read)" in printed
    assert len(read_rows(out)) == 5
    assert main([*argv, "--out", str(tmp_path / "rows.csv")]) == 2


def test_a_two_worker_local_cluster_gives_the_same_rows(folder, reference):
    pytest.importorskip("distributed", reason="the corpus extra: dask[distributed]")
    rows = sweep_folder([folder], POLICY, THRESHOLDS, jobs=2).rows
    assert _comparable(rows) == reference


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_scheduler_and_workers_started_here_give_the_same_rows(folder, reference):
    pytest.importorskip("distributed", reason="the corpus extra: dask[distributed]")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    started = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--dashboard-address",
                ":0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        time.sleep(2)
        started += [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    address,
                    "--nthreads",
                    "1",
                    "--dashboard-address",
                    ":0",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(2)
        ]
        rows = sweep_folder([folder], POLICY, THRESHOLDS, scheduler=address).rows
        assert _comparable(rows) == reference
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            process.wait(timeout=30)


def test_the_jsonl_table_opens_in_pandas(folder, tmp_path):
    pandas = pytest.importorskip("pandas")
    out = tmp_path / "rows.jsonl"
    sweep_folder([folder], POLICY, THRESHOLDS, out)
    frame = pandas.read_json(out, lines=True)
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 5
    assert json.loads(out.read_text().splitlines()[0])["key"]


def test_the_figure_across_sessions_marks_the_recorded_total(folder, tmp_path, capsys):
    pytest.importorskip("plotly")
    from minilib.lab.sweep_view import corpus_figure

    rows = sweep_folder([folder], POLICY, THRESHOLDS).rows
    totals = totals_by_threshold(rows)
    figure = corpus_figure(totals, POLICY)
    bars = next(t for t in figure.data if t.name == "total bill, every session")
    assert list(bars.y) == [t["bill_usd"] for t in totals]
    recorded = sum(r["recorded_usd"] for r in rows if r.get("threshold") == 140_000)
    assert any(
        f"recorded total ${recorded:,.2f}" in (a.text or "")
        for a in figure.layout.annotations
    )
    html = tmp_path / "corpus.html"
    argv = ["sweep", str(folder), "--policy", POLICY, "--threshold", "140k:160k:20k"]
    assert main([*argv, "--figure", str(html)]) == 0
    assert html.stat().st_size > 0 and f"wrote {html}" in capsys.readouterr().out
