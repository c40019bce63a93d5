"""Chapter 7's recorded-usage view: the figure, the table and the upload, driven
without a browser."""

from datetime import datetime, timezone

from minilib.lab.usage_view import (
    UsageExplorer,
    usage_figure,
    usage_frame,
    usage_of_file,
    usage_text,
)
from minilib.logs import load_log
from minilib.measure.recorded_usage import format_usage, usage_rows
from minilib.session import DATA_DIR

COMPACTED = DATA_DIR / "logs" / "claude_code_compacted.jsonl"


def test_the_figure_draws_the_record_and_each_step_per_call():
    rows = usage_of_file(COMPACTED)
    figure = usage_figure(rows)
    traces = {trace.name: trace for trace in figure.data}
    assert list(traces["API counted (the log's record)"].y) == [r.recorded for r in rows]
    full = traces["+ overhead (estimated from the first call): lab in all"]
    assert list(full.y) == [r.counted + r.sent_extra + r.overhead for r in rows]
    # the table's "lab in all" is that line, point for point
    assert list(usage_frame(rows)["lab in all"]) == list(full.y)
    ringed = traces["first call after a compaction"]
    assert list(ringed.x) == [r.round for r in rows if r.after_compaction] != []


def test_the_table_has_a_row_a_call_and_the_error_left():
    rows = usage_of_file(COMPACTED)
    frame = usage_frame(rows)
    assert list(frame.index) == [r.round for r in rows]
    assert list(frame["error left"]) == [f"{r.error_with_overhead:+.1%}" for r in rows]


def test_an_upload_shows_what_compress_prints_or_one_line():
    content = COMPACTED.read_bytes()
    text, problem = usage_text("session.jsonl", content)
    assert not problem
    assert text == format_usage(usage_rows(load_log(COMPACTED)))
    text, problem = usage_text("x.bin", b"\xff\xfe")
    assert problem and text.startswith("x.bin: not UTF-8")
    text, problem = usage_text("x.json", b"[1, 2]")
    assert problem and "\n" not in text
    no_usage = (DATA_DIR / "logs" / "cline_task.json").read_bytes()
    assert usage_text("cline_task.json", no_usage) == (
        "recorded usage: none in this log",
        False,
    )


def test_the_explorer_renders_an_upload():
    explorer = UsageExplorer()
    assert explorer.render() is None
    content = COMPACTED.read_bytes()
    explorer.upload.value = (
        {
            "name": "s.jsonl",
            "type": "",
            "size": len(content),
            "content": memoryview(content),
            "last_modified": datetime.fromtimestamp(0, timezone.utc),
        },
    )
    assert "recorded usage: 7 calls" in explorer.output.value
