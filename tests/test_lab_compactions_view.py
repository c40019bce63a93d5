"""Chapter 7's compactions view: the table, the upload's text, the explorer."""

import datetime
from pathlib import Path

from minilib.lab.compactions_view import (
    NO_FIGURE,
    CompactionsExplorer,
    _short_name,
    compactions_frame,
    compactions_of_file,
    compactions_text,
    real_compactions_frame,
)
from minilib.lab.shown import upload_value
from minilib.measure.compactions import real_compactions

LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"
EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)


def test_the_table_has_a_row_a_compaction_with_the_fates_and_the_stand_in():
    reports = compactions_of_file(LOGS / "codex_compacted.jsonl")
    frame = compactions_frame(reports)
    assert list(frame.index) == [1, 2]
    assert list(frame["round"]) == [report.round for report in reports]
    assert list(frame["trigger"]) == ["not recorded", "not recorded"]
    assert {"held", "re-read", "neither", "stand-in held"} <= set(frame.columns)


def test_an_upload_is_measured_with_its_own_records():
    content = (LOGS / "claude_code_compacted.jsonl").read_bytes()
    text, problem = compactions_text("session.jsonl", content)
    assert not problem and text.startswith("session.jsonl: the agent's own compactions")
    # read from the uploaded text, not a file: the record's own fields still count
    assert "trigger auto, 158,340 tokens before (compactMetadata.preTokens)" in text
    codex = (LOGS / "codex_compacted.jsonl").read_bytes()
    text, _ = compactions_text("rollout.jsonl", codex)
    assert text.count("tokens before (token_count") == 2  # each from the records before


def test_an_unreadable_upload_is_one_line_naming_it():
    text, problem = compactions_text("x.bin", b"\xff\xfe")
    assert problem and text == "x.bin: not UTF-8 text (byte 0)"
    text, problem = compactions_text("shot.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    assert problem and text == "shot.png: a PNG image, not a text log"  # as chapter 7.9
    text, problem = compactions_text("x.json", b"[1, 2]")
    assert problem and text.count("\n") == 0 and text.startswith("x.json")


def test_the_explorer_shows_what_it_was_given():
    explorer = CompactionsExplorer()
    assert explorer.render() is None and explorer.output.value == ""
    content = (LOGS / "codex_compacted.jsonl").read_bytes()
    explorer.upload.value = upload_value([("rollout.jsonl", content)])
    assert "the agent&#x27;s own compactions: 2" in explorer.output.value
    # wrapped at its spaces: JupyterLab breaks a <pre> line anywhere, a path mid-word
    assert "word-break:normal;overflow-wrap:break-word" in explorer.output.value


def test_the_real_compactions_table_names_each_log_and_compaction():
    rows = real_compactions()
    frame = real_compactions_frame()
    assert len(frame) == len(rows)
    assert list(frame.index) == [
        f"{name} #{row['number']}"
        for name, row in zip([_short_name(row["log"]) for row in rows], rows)
    ]
    assert _short_name("claude-code/entire-91-b42542f24f-0.jsonl") == "entire-91"
    assert _short_name("pi/pi-mono-opus-4-5-two-compactions.jsonl") == "pi opus-4-5"
    assert list(frame["held"]) == [row["held"] for row in rows]
    assert list(frame["stand-in held"]) == [row["standin_held"] for row in rows]


def test_an_upload_gets_the_figure_the_chapter_draws_for_its_own_session():
    from minilib.agents.windows import agent_window
    from minilib.lab.agent_replay_view import agent_replay_of
    from minilib.lab.compactions_view import compactions_figure
    from minilib.logs import load_log

    real = LOGS.parent / "real" / "claude-code" / "entire-91-b42542f24f-0.jsonl"
    figure = compactions_figure(real.name, real.read_bytes())
    log = load_log(real)
    chapter, _, _ = agent_replay_of(log, agent_window(log)[0])
    assert figure is not None and figure.to_dict() == chapter.to_dict()
    no_usage = LOGS / "openai_chat.json"
    assert compactions_figure(no_usage.name, no_usage.read_bytes()) is None
    assert compactions_figure("x.png", b"\x89PNG\r\n\x1a\n....") is None

    from minilib.lab.shown import upload_value

    explorer = CompactionsExplorer()
    explorer.upload.value = upload_value([(real.name, real.read_bytes())])
    [shown] = explorer.figure.children  # the figure, under the text
    assert [(d.name, list(d.y or ())) for d in shown.data] == [
        (d.name, list(d.y or ())) for d in chapter.data
    ]
    explorer.upload.value = upload_value([(no_usage.name, no_usage.read_bytes())])
    # the last log's figure does not stay; why there is none is said
    [said] = explorer.figure.children
    assert said.value == f"<small>{NO_FIGURE}</small>"
    explorer.upload.value = upload_value([("x.png", b"\x89PNG\r\n\x1a\n....")])
    assert explorer.figure.children == ()  # a refused file: its line says why


def test_the_upload_says_at_once_that_it_is_being_read():
    from minilib.lab.shown import upload_value

    explorer = CompactionsExplorer()
    shown = []
    explorer.output.observe(lambda change: shown.append(change["new"]), "value")
    path = LOGS / "codex_compacted.jsonl"
    explorer.upload.value = upload_value([(path.name, path.read_bytes())])
    first, last = shown[0], shown[-1]
    assert f"{path.name} ({path.stat().st_size:,} bytes): reading it" in first
    assert "the agent&#x27;s own compactions: 2" in last


def test_a_log_without_compactions_has_no_key_for_them():
    """The legend names the agent's compactions only where there are some, and a
    short log's axis marks whole rounds."""
    from minilib.agents.windows import agent_window
    from minilib.lab.agent_replay_view import agent_replay_of
    from minilib.logs import load_log

    viewer = LOGS.parent / "real" / "claude-code"
    log = load_log(
        viewer / "claude-code-viewer-v1.0.98-sonnet-4-todo-app-subagents.jsonl"
    )
    assert not log.compactions
    figure, _, _ = agent_replay_of(log, agent_window(log)[0])
    names = [trace.name for trace in figure.data]
    assert "the agent compacted before this round" not in names
    assert figure.layout.xaxis.dtick == 1  # 9 calls: a tick a round
    compacted = load_log(viewer / "entire-91-b42542f24f-0.jsonl")
    figure, _, _ = agent_replay_of(compacted, agent_window(compacted)[0])
    assert "the agent compacted before this round" in [t.name for t in figure.data]
