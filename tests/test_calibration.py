"""The count calibrated to a log's recorded usage, judged on real logs: fitted on the
first half of the calls, its error on the second half (never seen by the fit)."""

import json

import pytest

from minilib.agents.claude_code import behaviour as agent
from minilib.cli.main import main
from minilib.logs.replay import load_transcript
from minilib.measure.calibration import (
    KEPT,
    TOOL_LOOP,
    CalibrationError,
    calibrate,
    call_points,
    load_calibration,
    thinking_rule,
)
from minilib.session import DATA_DIR

REAL = DATA_DIR / "real"
# every real log the project holds that records usage, and the held-out target
REAL_WITH_USAGE = sorted(REAL.glob("claude-code/entire-*.jsonl")) + sorted(
    REAL.glob("pi/*.jsonl")
)
HELD_OUT_TARGET = 0.10


@pytest.mark.parametrize("path", REAL_WITH_USAGE, ids=lambda p: p.name)
def test_real_log_held_out_error_within_target(path):
    log = load_transcript(path, max_bytes=10**8)
    calibration = calibrate(log)
    assert calibration.held_out["calls"] == calibration.calls - calibration.fitted_calls
    assert calibration.held_out["median_abs_error"] <= HELD_OUT_TARGET
    # the count the lab fits is not the API's: the ratio is learnt, not 1
    fit = next(iter(calibration.fits.values()))
    assert 1.1 < fit.ratio < 1.8
    assert fit.overhead > 1_000  # the system prompt and tool definitions


def test_prediction_reads_no_usage(tmp_path):
    """The same predictions from a copy of the log with every usage record removed."""
    source = REAL / "claude-code" / "entire-e1-2c3e2b3f2a-0.jsonl"
    copy = tmp_path / "no-usage.jsonl"
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if isinstance(record.get("message"), dict):
            record["message"].pop("usage", None)
        lines.append(json.dumps(record))
    copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log, stripped = load_transcript(source), load_transcript(copy)
    assert log.usage and not stripped.usage
    calibration = calibrate(log)
    assert calibration.predictions(log) == calibration.predictions(stripped)
    assert calibration.predictions(log, held_out=True) == calibration.predictions(
        stripped, held_out=True
    )


def test_resumed_first_call_is_not_the_overhead():
    """A file whose first call already holds history: the overhead is the median of
    what the calls counted beyond their messages, not the first call's whole input."""
    log = load_transcript(REAL / "claude-code" / "entire-4b-7d5121b42a-0.jsonl")
    calibration = calibrate(log)
    first = call_points(log)[0]
    assert first.recorded > 140_000 and first.sent < 100  # history the file lacks
    assert calibration.fits[log.model].overhead < first.recorded / 2


@pytest.mark.parametrize(
    "model, rule",
    [
        ("claude-opus-4-5-20251101", KEPT),
        ("claude-opus-4-6", KEPT),
        ("claude-sonnet-4-6", KEPT),
        ("claude-sonnet-4-5-20250929", TOOL_LOOP),
        ("claude-sonnet-4-20250514", TOOL_LOOP),
        ("claude-opus-4-1-20250805", TOOL_LOOP),
        ("claude-haiku-4-5-20251001", TOOL_LOOP),
        ("gpt-5.1-codex", TOOL_LOOP),
    ],
)
def test_thinking_rule_by_model(model, rule):
    assert thinking_rule(model) == rule


def test_token_microcompact_keeps_newest_three_and_forty_thousand():
    results = [(n, "x" * 4 * 15_000) for n in range(6)]  # 15,000 tokens each
    cleared = agent.token_microcompact(results)
    # 90,000 in all: clear the oldest until 40,000 or less remain, never the newest 3
    assert cleared == [0, 1, 2]
    # 60,000: clearing the one result it may clear saves 15,000, under 20,000
    assert agent.token_microcompact(results[:4]) == []
    assert agent.token_microcompact([(0, "x" * 4 * 19_000)] * 5)[:1] == [0]


def test_token_microcompact_saves_at_least_twenty_thousand():
    results = [(n, "x" * 4 * 11_000) for n in range(4)]  # 44,000: clear one, save 11k
    assert agent.token_microcompact(results) == []
    five = [(n, "x" * 4 * 11_000) for n in range(5)]  # 55,000: two cleared save 22k
    assert agent.token_microcompact(five) == [0, 1]


def test_calibrate_cli_writes_a_file_compress_reads(tmp_path, capsys):
    source = REAL / "claude-code" / "entire-e1-2c3e2b3f2a-0.jsonl"
    out = tmp_path / "calibration.json"
    assert main(["calibrate", str(source), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "held out" in printed and f"wrote {out}" in printed
    data = json.loads(out.read_text())
    assert set(data["models"]) == {"claude-opus-4-5-20251101"}
    assert data["held_out"]["median_abs_error"] <= HELD_OUT_TARGET
    calibration = load_calibration(out)
    assert (
        calibration.fits["claude-opus-4-5-20251101"].overhead
        == (data["models"]["claude-opus-4-5-20251101"]["overhead_tokens"])
    )


def test_calibrate_cli_log_without_usage(capsys):
    assert main(["calibrate", str(DATA_DIR / "logs" / "openai_chat.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        "calibration: the log records no usage, so there is nothing to fit on"
    )


@pytest.mark.parametrize(
    "text, words",
    [
        ("not json", "not JSON"),
        ('{"format": "other"}', "not a calibration file"),
        (
            '{"format": "minilib-calibration/1", "models": {"m": {"ratio": -1, '
            '"overhead_tokens": 3}}}',
            "ratio must be > 0",
        ),
        ('{"format": "minilib-calibration/1", "models": {}}', "at least one model"),
    ],
)
def test_bad_calibration_file_is_named(tmp_path, text, words):
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(CalibrationError, match=words) as caught:
        load_calibration(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    "name, window, why",
    [
        ("claude_code_compacted.jsonl", 200_000, "claude-sonnet-4-5: Claude models'"),
        ("codex_rollout.jsonl", 272_000, "gpt-5-codex: Codex's current models"),
        ("gemini_session.json", 1_048_576, "gemini-2.5-pro: Gemini's"),
        ("pi_session.jsonl", 200_000, "claude-sonnet-4-5: Claude models'"),
        ("openai_chat.json", 200_000, "a stated default (the log names no model"),
    ],
)
def test_compress_runs_at_the_agents_window_with_no_flag(
    name, window, why, tmp_path, capsys
):
    assert main(["compress", str(DATA_DIR / "logs" / name), "--out", str(tmp_path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(f"window: {window:,} tokens ({why}")
    settings = json.loads((tmp_path / "rounds.json").read_text())["settings"]
    assert settings["threshold"] == window


def test_the_articles_transcripts_keep_the_articles_threshold(tmp_path, capsys):
    path = DATA_DIR / "transcripts" / "m3_release_check.json"
    main(["compress", str(path), "--out", str(tmp_path)])
    assert capsys.readouterr().out.startswith("window: 1,200 tokens (the article's")


def _recorded_beside_predicted(log, rounds):
    numbers = {
        index: n
        for n, index in enumerate(
            i for i, m in enumerate(log.messages) if m["role"] == "assistant"
        )
    }
    recorded = {numbers[u.message]: u.input_tokens for u in log.usage if u.input_tokens}
    return [
        (recorded[row["round"]], row["predicted_input_tokens"])
        for row in rounds
        if row["round"] in recorded
    ]


def test_compress_with_a_calibration_predicts_each_calls_input(tmp_path, capsys):
    source = REAL / "claude-code" / "entire-d7-0360ee0899-0.jsonl"
    calibration = tmp_path / "calibration.json"
    main(["calibrate", str(source), "--out", str(calibration)])
    capsys.readouterr()
    out = tmp_path / "out"
    assert (
        main(
            ["compress", str(source), "--calibration", str(calibration)]
            + ["--out", str(out)]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "threshold: " in printed.splitlines()[1]  # the window less the overhead
    rounds = json.loads((out / "rounds.json").read_text())["rounds"]
    assert all("predicted_input_tokens" in row for row in rounds)
    pairs = _recorded_beside_predicted(load_transcript(source), rounds)
    errors = sorted(abs(p - r) / r for r, p in pairs)
    assert errors[len(errors) // 2] <= HELD_OUT_TARGET


def test_compress_prediction_is_the_same_without_usage(tmp_path):
    source = REAL / "claude-code" / "entire-e1-2c3e2b3f2a-0.jsonl"
    copy = tmp_path / "no-usage.jsonl"
    records = [json.loads(line) for line in source.read_text().splitlines()]
    for record in records:
        if isinstance(record.get("message"), dict):
            record["message"].pop("usage", None)
    copy.write_text("".join(json.dumps(r) + "\n" for r in records))
    calibration = tmp_path / "calibration.json"
    main(["calibrate", str(source), "--out", str(calibration)])
    predicted = []
    for log in (source, copy):
        out = tmp_path / log.stem
        main(["compress", str(log), "--calibration", str(calibration), "--out", str(out)])
        rounds = json.loads((out / "rounds.json").read_text())["rounds"]
        predicted.append([row["predicted_input_tokens"] for row in rounds])
    assert predicted[0] == predicted[1] and len(predicted[0]) == 47


def test_calibrated_tokenizer_prints_held_out_beside_in_sample(tmp_path, capsys):
    source = REAL / "claude-code" / "entire-e1-2c3e2b3f2a-0.jsonl"
    main(["compress", str(source), "--tokenizer", "calibrated", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert "fitted on all the calls, measured on them: median" in printed
    assert "fitted on the first 23, measured on the other 24 (held out)" in printed
    assert "recorded usage beside the calibrated prediction: 47 calls" in printed


def test_a_calibration_of_another_model_says_so(tmp_path, capsys):
    calibration = tmp_path / "calibration.json"
    main(
        [
            "calibrate",
            str(REAL / "pi" / "pi-mono-sonnet-4-5-large-session.jsonl"),
            "--out",
            str(calibration),
        ]
    )
    source = REAL / "claude-code" / "entire-e1-2c3e2b3f2a-0.jsonl"
    main(
        ["compress", str(source), "--calibration", str(calibration)]
        + ["--out", str(tmp_path / "o")]
    )
    assert "the log's model is claude-opus-4-5-20251101, so claude-sonnet-4-5's fit" in (
        capsys.readouterr().out
    )


def test_the_committed_calibration_page_is_the_code_s():
    from minilib.reports.calibration_page import build_markdown

    page = DATA_DIR.parent / "docs" / "calibration.md"
    assert page.read_text(encoding="utf-8") == build_markdown(), (
        "docs/calibration.md is out of date: python -m minilib.reports calibration "
        "--write docs/calibration.md"
    )


def test_a_subagent_s_lines_in_the_session_file_are_not_the_session_s():
    log = load_transcript(
        REAL
        / "claude-code"
        / "claude-code-viewer-v1.0.98-sonnet-4-todo-app-subagents.jsonl"
    )
    assert len(log.usage) == 9  # the main chain's calls; 161 were its subagents'
    assert any("isSidechain" in why for _, why in log.skipped)
    assert calibrate(log).held_out["median_abs_error"] <= HELD_OUT_TARGET
