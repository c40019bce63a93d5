"""scripts/measure_real_logs.py on the real Claude Code sessions the project holds: a
session's snapshots count once, what is not a Claude Code session is skipped, and each
figure is the library's own measure of that session."""

import importlib.util
import json
import shutil
from pathlib import Path

from minilib.logs import load_log
from minilib.measure.calibration import calibrate
from minilib.session import DATA_DIR
from minilib.tokens import estimate_message_tokens, estimate_text_tokens

REAL = DATA_DIR / "real" / "claude-code"
SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "measure_real_logs.py"


def script():
    spec = importlib.util.spec_from_file_location("measure_real_logs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_session_counts_once_and_its_figures_are_the_librarys(tmp_path, capsys):
    folder = tmp_path / "projects"
    folder.mkdir()
    names = sorted(path.name for path in REAL.glob("entire-*.jsonl"))
    for name in names:
        shutil.copy(REAL / name, folder / name)
    # a snapshot taken earlier in one session: the same first lines, fewer of them
    lines = (REAL / names[0]).read_text(encoding="utf-8").splitlines()
    (folder / "earlier-snapshot.jsonl").write_text(
        "\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8"
    )
    (folder / "notes.jsonl").write_text('{"hello": "world"}\n', encoding="utf-8")
    out = tmp_path / "measured.json"
    assert script().main([str(folder), "--json", str(out)]) == 0
    written = json.loads(out.read_text())
    measured = {k.rsplit("/", 1)[-1]: v for k, v in written["measured"].items()}
    assert "earlier-snapshot.jsonl" not in measured  # the longer snapshot is kept
    assert sorted(written["skipped"]) == [str(folder / "notes.jsonl")]
    for name, figures in measured.items():
        calibration = calibrate(load_log(folder / name))
        assert figures["held_out_error"] == calibration.held_out["median_abs_error"]
    printed = capsys.readouterr().out
    assert f"sessions measured: {len(measured)} (1 skipped)" in printed
    recorded = sum(f["recorded"] for f in measured.values())
    matched = sum(f["matched"] for f in measured.values())
    assert f"recorded compactions matched: {matched} of {recorded}" in printed


def test_one_results_cost_is_the_api_step_over_each_count(capsys):
    module = script()
    steps = [
        s
        for path in sorted(REAL.glob("entire-*.jsonl"))
        for s in module.result_steps(load_log(path))
    ]
    assert len(steps) >= 4
    for step in steps:
        assert step["api"] > 0 and step["text"] and step["tool"]
    lines = module.steps_report(steps)
    ratios = sorted(s["api"] / estimate_text_tokens(s["text"]) for s in steps)
    middle, width = module.spread(ratios)
    assert f"characters / 4: {middle:.2f}, spread {width:.1%}" in lines[1]
    assert lines[0].startswith(
        f"one tool result's tokens, the API's over a count of its text ({len(steps)} "
    )


def test_a_step_of_many_small_messages_stands_for_no_result():
    module = script()
    log = load_log(REAL / "entire-94-de498254e2-0.jsonl")
    count = estimate_message_tokens
    for step in module.result_steps(log):
        # each step's result is the largest message of its call's growth, by far
        assert (
            count({"role": "tool", "content": step["text"]})
            >= module.MIN_STEP * module.ONE_RESULT
        )
