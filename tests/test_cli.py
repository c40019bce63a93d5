"""minilib.cli: a bad command line or file is one line on stderr and exit status 2."""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minilib.measure.costs import REPORT_KEYS
from minilib.trace import read_jsonl, recover_tool_output

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "minilib", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["compress", "missing.json"],
            "python -m minilib: error: missing.json: no such log file",
        ),
        (
            ["compress", "bad.json"],
            "python -m minilib: error: bad.json: a plain text file, not JSON, "
            "and no text log shape the lab knows: tried aider-llm-history (no first "
            "line 'TO LLM <time>'), aider-chat-md (no '# aider chat started at' line)",
        ),
        (
            ["compress", "bad.json", "--threshold", "0"],
            "python -m minilib compress: error: argument --threshold: "
            "expected a number >= 1, got 0",
        ),
        (
            ["compress", "bad.json", "--protect-tail", "-1"],
            "python -m minilib compress: error: argument --protect-tail: "
            "expected a number >= 0, got -1",
        ),
        (
            ["compress", "bad.json", "--head-chars", "ten"],
            "python -m minilib compress: error: argument --head-chars: "
            "expected a whole number, got 'ten'",
        ),
        (
            ["compress"],
            "python -m minilib compress: error: the following arguments are required: "
            "file",
        ),
        (
            ["run", "--session", "bad.json"],
            "python -m minilib: error: bad.json: not valid JSON (Expecting value, "
            "line 1 column 1)",
        ),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(tmp_path, args, expected):
    (tmp_path / "bad.json").write_text("nope", encoding="utf-8")
    result = cli(*args, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", expected + "\n")
    assert not (tmp_path / "out").exists()  # nothing written on a failed call


def test_cli_bad_value_is_one_line_and_exit_2(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "minilib",
            "run",
            "--threshold",
            "-5",
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--threshold" in done.stderr


OPENAI_LOG = [
    {"role": "user", "content": "read it"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "line\n" * 400},
    {"role": "assistant", "content": "done"},
]


def write_log(path, messages=OPENAI_LOG):
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def test_out_never_writes_over_the_log_being_read(tmp_path):
    log = write_log(tmp_path / "trace.jsonl")
    before = log.read_bytes()
    result = cli("compress", str(log), "--out", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2 and "would write trace.jsonl over" in result.stderr
    assert log.read_bytes() == before and not (tmp_path / "rounds.json").exists()


def test_only_a_regular_file_is_read(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # reading it would block forever
    result = cli("compress", str(fifo), cwd=tmp_path)
    assert (result.returncode, result.stderr.strip()) == (
        2,
        f"python -m minilib: error: {fifo}: not a regular file (a pipe, socket or "
        "device)",
    )


def test_a_log_over_the_size_limit_names_the_limit_and_the_flag(tmp_path):
    log = write_log(tmp_path / "big.json", OPENAI_LOG * 500)
    assert log.stat().st_size > 1024 * 1024
    refused = cli("compress", str(log), "--max-mb", "1", cwd=tmp_path)
    assert refused.returncode == 2
    assert "larger than the 1,048,576-byte limit" in refused.stderr
    assert "--max-mb" in refused.stderr


def test_exit_statuses_say_done_overflow_bad_input(tmp_path):
    log = write_log(tmp_path / "log.json")
    assert cli("compress", str(log), cwd=tmp_path).returncode == 0
    assert cli("compress", str(log), "--threshold", "5", cwd=tmp_path).returncode == 1
    assert cli("compress", "nope.json", cwd=tmp_path).returncode == 2


def test_an_internal_error_is_one_line_asking_for_a_report(monkeypatch, capsys):
    cli_main = importlib.import_module("minilib.cli.main")  # the module, not main()

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli_main, "replay_transcript", broken)
    status = cli_main.main(["compress", str(ROOT / "data/logs/openai_chat.json")])
    err = capsys.readouterr().err
    assert status == 3 and err.count("\n") == 1
    assert "internal error (ZeroDivisionError: division by zero); please report" in err


def test_a_lone_surrogate_is_kept_in_the_trace_and_the_old_trace_survives_a_failure(
    tmp_path,
):
    messages = json.loads(json.dumps(OPENAI_LOG))
    messages[2]["content"] = "half an emoji \ud83d then more\n" * 40
    text = json.dumps(messages)  # ASCII JSON: the lone surrogate is an escape
    log = tmp_path / "log.json"
    log.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = cli("compress", str(log), "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    records = read_jsonl(out / "trace.jsonl")
    assert recover_tool_output(records, "c1") == messages[2]["content"]
    assert not list(out.glob(".*partial"))  # written through a temporary file


def test_compress_report_writes_the_costs_it_prints(tmp_path):
    log = ROOT / "data" / "transcripts" / "m3_release_check.json"
    done = cli(
        "compress",
        str(log),
        "--threshold",
        "2000",
        "--out",
        "out",
        "--report",
        "rep",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    assert set(REPORT_KEYS) <= set(report)
    used = report["facts_used"]
    assert used > 0
    assert (
        used == report["facts_kept"] + report["facts_restorable"] + report["facts_lost"]
    )
    assert f"facts the agent used: {used} (shown by a tool" in done.stdout
    assert "tokens: estimated (the article's rule, not a tokenizer)" in done.stdout
    trace = read_jsonl(tmp_path / "out" / "trace.jsonl")
    rows = (tmp_path / "rep" / "cut.csv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "id,tool,round,characters,fate,changed_at,recoverable"
    assert len(rows) - 1 == len(report["cut"]) > 0
    for entry in report["cut"]:  # "recoverable" is what the trace really gives back
        whole = recover_tool_output(trace, entry["id"], step=entry["round"])
        assert entry["recoverable"] and len(whole) == entry["characters"]
    assert {entry["fate"] for entry in report["cut"]} <= {"whole", "cut", "folded"}
    assert any(entry["fate"] != "whole" for entry in report["cut"])  # 2,000 compresses


def test_a_replay_with_nothing_to_compress_loses_nothing_and_rewrites_no_cache(tmp_path):
    log = ROOT / "data" / "transcripts" / "m3_release_check.json"
    done = cli(
        "compress", str(log), "--threshold", "1000000", "--report", "rep", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    assert report["facts_lost"] == report["facts_restorable"] == 0
    assert report["cache_rewritten_tokens"] == report["cache_breaks"] == 0
    # each message is written once, when it arrives: the last window's tokens in all
    rounds = json.loads((tmp_path / "out" / "rounds.json").read_text(encoding="utf-8"))
    assert report["cache_written_tokens"] == rounds["rounds"][-1]["tokens_after"]


def test_a_real_tokenizer_governs_and_the_estimate_is_shown_beside_it(tmp_path):
    pytest.importorskip("bpe_openai")
    from minilib.measure.tokenizers import message_counter

    log = ROOT / "data" / "transcripts" / "m3_release_check.json"
    done = cli(
        "compress",
        str(log),
        "--threshold",
        "2000",
        "--tokenizer",
        "o200k",
        "--report",
        "rep",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "rep" / "report.json").read_text(encoding="utf-8"))
    assert report["tokens_counted_with"] == "counted with o200k_base"
    assert report["tokens_sent_estimated"] != report["tokens_sent"]
    count = message_counter("o200k_base")
    trace = read_jsonl(tmp_path / "out" / "trace.jsonl")
    from minilib.trace import model_calls

    windows = [c["input"] for c in model_calls(trace) if c["purpose"] == "decision"]
    assert sum(count(w) for w in windows) == report["tokens_sent"]
    assert max(count(w) for w in windows) <= 2000


def test_after_an_overflow_the_window_left_is_called_never_sent(tmp_path):
    log = ROOT / "data" / "transcripts" / "m3_release_check.json"
    done = cli("compress", str(log), "--threshold", "300", "--article", cwd=tmp_path)
    assert done.returncode == 1
    assert "window left at the overflow (never sent):" in done.stdout
    assert "final window" not in done.stdout
    assert "last model call" not in done.stdout


def test_a_reader_that_stops_reading_is_not_an_internal_error(tmp_path):
    import subprocess
    import sys

    log = Path(__file__).resolve().parent.parent / "data" / "logs" / "codex_rollout.jsonl"
    done = subprocess.Popen(
        [sys.executable, "-m", "minilib", "compress", str(log), "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert done.stdout.readline().startswith(b"window: 272,000 tokens (gpt-5-codex")
    done.stdout.close()  # as `| head -1` does
    _, error = done.communicate()
    assert done.returncode == 0 and b"internal error" not in error
