"""One prediction of a call, whichever path asks for it: `calibrate`'s printed errors,
`compress --calibration`'s table and rounds.json give the same numbers on every real
log the project holds, and a calibration file gives back every term it was written
with."""

import json
import re

import pytest

from minilib.cli.main import main
from minilib.logs.base import LoadedLog, RecordedUsage
from minilib.logs.replay import load_transcript
from minilib.measure.calibration import (
    FITTED,
    HELD_OUT,
    MIN_OWN_RATIO_CALLS,
    OTHER_LOG,
    calibrate,
    call_points,
    fit_points,
    format_calibration,
    load_calibration,
    predicted_calls,
)
from minilib.session import DATA_DIR

REAL = DATA_DIR / "real"
REAL_WITH_USAGE = sorted(REAL.glob("*/*.jsonl"))
ROW = re.compile(
    r"^\s*(\d+)\s+([\d,]+)\s+([\d,]+)\s+[+-]\d+%\s+([\d,]+)\s+[+-]\d+%\s+"
    r"(fitted|held out|other log)\b"
)
ERRORS = re.compile(r"(fitted on [^:]*: median [\d.]+%, p90 [\d.]+%)$")


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _table_rows(printed: str) -> dict:
    """round -> (recorded, predicted, held-out prediction, fit) from compress's table."""
    rows = {}
    for line in printed.splitlines():
        if match := ROW.match(line):
            round_, recorded, predicted, held, fit = match.groups()
            rows[int(round_)] = (
                _number(recorded),
                _number(predicted),
                _number(held),
                fit,
            )
    return rows


def _error_lines(printed: str) -> list:
    return [m.group(1) for line in printed.splitlines() if (m := ERRORS.search(line))]


@pytest.mark.parametrize("path", REAL_WITH_USAGE, ids=lambda p: p.name)
def test_calibrate_compress_and_rounds_json_give_one_number(path, tmp_path, capsys):
    calibration_file = tmp_path / "calibration.json"
    assert main(["calibrate", str(path), "--out", str(calibration_file)]) == 0
    calibrated = capsys.readouterr().out
    out = tmp_path / "out"
    main(
        ["compress", str(path), "--calibration", str(calibration_file), "--out", str(out)]
    )
    compressed = capsys.readouterr().out

    # the same two errors, in the same words
    errors = _error_lines(calibrated)
    assert len(errors) == 2
    assert _error_lines(compressed.split("recorded usage beside")[1]) == errors

    table = _table_rows(compressed)
    rounds = json.loads((out / "rounds.json").read_text())["rounds"]
    with_usage = {r["round"]: r for r in rounds if r.get("recorded_input_tokens")}
    assert set(table) == set(with_usage) and table
    for round_, (recorded, predicted, held, fit) in table.items():
        row = with_usage[round_]
        assert (
            row["recorded_input_tokens"],
            row["predicted_input_tokens"],
            row["held_out_predicted_input_tokens"],
            row["fit"],
        ) == (recorded, predicted, held, fit)

    # every call truly labelled: the first half fitted, the rest held out
    calibration = load_calibration(calibration_file)
    labels = [table[r][3] for r in sorted(table)]
    assert labels == [FITTED] * calibration.fitted_calls + [HELD_OUT] * (
        len(labels) - calibration.fitted_calls
    )
    # and the file's errors are those of the printed rows
    sizes = sorted(abs(p - r) / r for r, p, _, _ in table.values())
    middle = len(sizes) // 2
    median = sizes[middle] if len(sizes) % 2 else (sizes[middle - 1] + sizes[middle]) / 2
    assert median == pytest.approx(calibration.in_sample["median_abs_error"], abs=1e-12)


@pytest.mark.parametrize("path", REAL_WITH_USAGE, ids=lambda p: p.name)
def test_a_calibration_file_gives_back_every_term(path, tmp_path):
    log = load_transcript(path)
    calibration = calibrate(log)
    calibration.write(tmp_path / "c.json")
    loaded = load_calibration(tmp_path / "c.json")
    assert loaded == calibration
    assert predicted_calls(log, loaded) == predicted_calls(log, calibration)
    assert format_calibration(loaded) == format_calibration(calibration)


def _switching_log(calls_of_second: int) -> LoadedLog:
    """A log whose model answers 30 calls, then another answers `calls_of_second`:
    the API counted 2 tokens a token of the lab's count for the first, 3 for the
    second, over a 1,000-token overhead."""
    messages = [{"role": "user", "content": "task " + "x" * 400}]
    models = ["model-a"] * 30 + ["model-b"] * calls_of_second
    model_of, usage = {}, []
    for n, model in enumerate(models):
        messages.append({"role": "assistant", "content": "y" * (40 + 8 * n)})
        model_of[len(messages) - 1] = model
        usage.append(RecordedUsage(len(messages) - 1, 1, None, None, "l", model))
        messages.append({"role": "user", "content": "z" * (200 + 12 * n)})
    log = LoadedLog(messages, "demo", usage=usage, model="model-a")
    log.model_of.update(model_of)
    points = call_points(log)
    ratios = {"model-a": 2.0, "model-b": 3.0}
    log.usage[:] = [
        RecordedUsage(
            u.message, 1000 + round(ratios[p.model] * p.sent), None, None, "l", p.model
        )
        for u, p in zip(usage, points)
    ]
    return log


def test_each_model_is_fitted_on_its_own_calls_when_it_has_enough():
    calibration = calibrate(_switching_log(MIN_OWN_RATIO_CALLS))
    fits = calibration.fits
    assert round(fits["model-a"].ratio, 2) == 2.0
    assert round(fits["model-b"].ratio, 2) == 3.0
    assert fits["model-b"].own_ratio


def test_a_model_with_too_few_calls_is_said_to_borrow_the_logs_ratio(tmp_path):
    log = _switching_log(MIN_OWN_RATIO_CALLS - 1)
    calibration = calibrate(log)
    second = calibration.fits["model-b"]
    assert not second.own_ratio
    # the ratio fitted on every call of the log, the second model's own nowhere
    assert second.ratio == fit_points(call_points(log), "*", "").ratio
    assert 2.0 < second.ratio < 3.0
    printed = format_calibration(calibration)
    assert (
        f"{MIN_OWN_RATIO_CALLS - 1} calls of model-b are too few for a ratio of its own"
        in printed
    )
    calibration.write(tmp_path / "c.json")
    assert load_calibration(tmp_path / "c.json") == calibration


def test_another_logs_calibration_labels_every_call_as_unseen(tmp_path):
    own, other = (
        REAL / "claude-code" / "entire-e1-2c3e2b3f2a-0.jsonl",
        (REAL / "claude-code" / "entire-d7-0360ee0899-0.jsonl"),
    )
    calibration = calibrate(load_transcript(own))
    calls = predicted_calls(load_transcript(other), calibration)
    assert calls and {c.fit for c in calls} == {OTHER_LOG}
    # the history the fitted file lacked is no part of another log's count
    fits = calibration.fits_for(load_transcript(other))
    assert all(f.missing == 0 for f in fits.values())
