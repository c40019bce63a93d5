"""minilib.cli: a bad command line or file is one line on stderr and exit status 2."""

import subprocess
import sys
from pathlib import Path

import pytest

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
            "python -m minilib: error: bad.json: not valid JSON (Expecting "
            "value, "
            "line 1 column 1)",
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
