"""Notebook 07's "bring your own log": the curve, cut list and path table of any log."""

import datetime as dt
from pathlib import Path

from minilib import Settings
from minilib.lab.log_explorer import LogExplorer, explore_file, explore_text
from minilib.logs import load_transcript, replay_transcript
from minilib.policies.on_logs import LOG_PATHS

EPOCH = dt.datetime(2026, 12, 2, tzinfo=dt.timezone.utc)  # what the browser sends
LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"


def test_a_log_gives_the_curve_the_cut_list_and_every_path():
    report = explore_file(LOGS / "codex_rollout.jsonl", Settings(threshold=800))
    run = replay_transcript(
        load_transcript(LOGS / "codex_rollout.jsonl").messages, Settings(threshold=800)
    )
    assert report.error is None and report.description.startswith("shape: codex-rollout")
    assert f"final window: {len(run.final_messages)} messages" in report.summary
    sent = report.figure.data[1].y  # the compressed line: what each round sent
    assert list(sent) == [r.tokens_after for r in run.rounds]
    messages = load_transcript(LOGS / "codex_rollout.jsonl").messages
    assert len(report.cut) == sum(m["role"] == "tool" for m in messages)
    assert list(report.paths.index) == ["0 no compression"] + [p.title for p in LOG_PATHS]
    article = report.paths.loc["3 rolling summary (the article)"]
    assert article["tokens sent"] == sum(r.tokens_after for r in run.rounds)


def test_a_file_it_cannot_read_gets_one_readable_line():
    report = explore_text('{"conversation": []}', "mine.json")
    assert report.error.startswith("mine.json: not a known agent log: tried ")
    assert report.figure is None and report.paths is None


def test_the_upload_widget_replays_what_was_uploaded():
    explorer = LogExplorer(Settings(threshold=600))
    assert explorer.render() is None  # nothing before an upload
    content = (LOGS / "claude_code_session.jsonl").read_bytes()
    explorer.upload.value = (
        {
            "name": "session.jsonl",
            "type": "",
            "size": len(content),
            "content": memoryview(content),
            "last_modified": EPOCH,
        },
    )
    report = explorer.report
    assert report.error is None and report.description.startswith("shape: claude-code")
    explorer.threshold.value = 300  # the settings redraw it
    assert explorer.report is not report and "300" in explorer.report.summary
    explorer.upload.value = (
        {
            "name": "bad.jsonl",
            "type": "",
            "size": 3,
            "content": memoryview(b"\xff\xfe\x00"),
            "last_modified": EPOCH,
        },
    )
    assert "not UTF-8 text" in explorer.report.error
