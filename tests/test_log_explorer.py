"""Notebook 07's "bring your own log": every log in the data folders gets a report that
names its file, at a threshold chosen from the log; a file it cannot read gets one line
that names it, in place of the last report; every table fits the 848-px notebook.

The fixtures are found by listing the folders, so a log added there is tested too.
"""

import datetime as dt
import json
import os
import re
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest

from minilib import Settings
from minilib.lab.log_explorer import (
    LOG_SETTINGS,
    LOG_WINDOW,
    LogExplorer,
    choose_threshold,
    cut_table,
    explore_bytes,
    explore_file,
    explore_text,
    grid_step,
    report_outputs,
    report_tables,
)
from minilib.lab.shown import upload_value
from minilib.lab.style import LOG_ERROR_COLUMNS, LOG_TOOL_COLUMNS
from minilib.lab.tables import _text
from minilib.lab.transcripts_view import OBSERVATION
from minilib.logs import MAX_LOG_BYTES, LogFileError, load_transcript, replay_transcript
from minilib.messages import is_observation
from minilib.policies.on_logs import LOG_PATHS
from minilib.reports.rounds import FINAL_LIST

EPOCH = dt.datetime(2026, 12, 2, tzinfo=dt.timezone.utc)  # what the browser sends
DATA = Path(__file__).resolve().parent.parent / "data"
LOGS = DATA / "logs"
FIXTURES = sorted(
    path
    for folder in (DATA / "logs", DATA / "transcripts")
    for path in folder.iterdir()
    if path.is_file() and not path.name.startswith(".")
)
# Bad files no fixture is: empty, not UTF-8, a folder.
BAD_BYTES = {
    "empty.jsonl": b"",
    "latin1.json": '[{"role": "user", "content": "café"}]'.encode("latin-1"),
    "binary.bin": bytes(range(256)),
}

# ---- how wide a table is in JupyterLab ------------------------------------------------
# Measured in JupyterLab 4 in headless Chromium (tests/browser): a rendered output's table
# is 13 px (--jp-ui-font-size1 wins over .ccl-table's 14 px), in DejaVu Sans, the face
# `system-ui` resolves to here and the widest of the usual ones. Each character is
# estimated at these shares of the font size (at or above every cell measured: narrow
# letters, capitals, digits, others; a CJK character is a full em); headers are bold
# (x 1.15) and wrap at their spaces (LOG_TABLE_CSS), cells do not. Each column adds its
# padding and border.
NOTEBOOK_WIDTH = 848  # a 1280x720 projector, JupyterLab's file browser open
FONT_PX, BOLD, COLUMN_PAD = 13, 1.15, 17
NARROW, WIDE = set("iljtfr.,:;'|!()[] "), set("mwMW@%#✓")


def char_em(ch: str) -> float:
    if unicodedata.east_asian_width(ch) in "WF" or ch in WIDE:
        return 1.0 if ch not in WIDE else 0.95
    if ch in NARROW:
        return 0.42
    return 0.76 if ch.isupper() else 0.64 if ch.isdigit() else 0.63


def text_px(text: str, bold: bool = False) -> float:
    return sum(char_em(ch) for ch in text) * FONT_PX * (BOLD if bold else 1)


def table_px(table) -> float:
    """The narrowest the browser can lay `table` out: each column as wide as its widest
    cell or its header's longest word."""
    columns = [(table.index.name or "", [_text(i) for i in table.index], True)]
    columns += [(str(c), [_text(v) for v in table[c]], False) for c in table.columns]
    return sum(
        max(
            [text_px(word, bold=True) for word in header.split()]
            + [text_px(cell, bold=bold) for cell in cells]
            + [0]
        )
        + COLUMN_PAD
        for header, cells, bold in columns
    )


def upload(explorer, name, content: bytes):
    explorer.upload.value = upload_value([(name, content)])


def readable(path):
    """The checked messages of a fixture, or None when the library refuses it."""
    try:
        return load_transcript(path).messages
    except LogFileError:
        return None


def outputs_html(explorer) -> list:
    return [output["data"].get("text/html", "") for output in explorer.output.outputs]


# ---- every fixture --------------------------------------------------------------------


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_every_log_gets_a_report_naming_its_file_or_one_line(path):
    messages = readable(path)
    report = explore_file(path)
    if messages is None:  # refused by the reader: the lab says so in one line
        assert report.error is not None and "\n" not in report.error
        assert report.error.startswith(f"{path.name}: ")
        assert "Traceback" not in report.error
        [output] = report_outputs(report)
        assert output["text/plain"] == report.error
        return
    assert report.error is None, report.error
    assert report.header.splitlines()[0] == f"file: {path.name}"
    choice = report.choice
    assert report.settings == replace(LOG_SETTINGS, threshold=choice.threshold)
    chosen = f"threshold: {choice.threshold:,} tokens, chosen from this log"
    assert chosen in report.header
    outputs = report_outputs(report)
    assert outputs[0]["text/plain"].startswith(f"file: {path.name}\nthreshold: ")
    # environment output recorded as a user message is cut like a tool result
    outputs_in_log = [
        i for i, m in enumerate(messages) if m["role"] == "tool" or is_observation(m)
    ]
    assert list(report.cut.index) == outputs_in_log
    assert list(report.paths.index) == ["0 no compression"] + [p.title for p in LOG_PATHS]
    for title, (table, _) in report_tables(report).items():
        assert table_px(table) <= NOTEBOOK_WIDTH, (title, table_px(table))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_the_chosen_threshold_is_where_the_replay_just_completes(path):
    messages = readable(path)
    if messages is None:
        pytest.skip("a file the readers refuse")
    for fold in (True, False):
        settings = replace(LOG_SETTINGS, fold_user_turns=fold)
        choice = choose_threshold(messages, settings)
        at = replay_transcript(
            messages, replace(settings, threshold=choice.threshold), window=LOG_WINDOW
        )
        assert at.overflow is None
        if choice.stops_at:
            below = replace(settings, threshold=choice.stops_at)
            assert replay_transcript(messages, below, window=LOG_WINDOW).overflow
            assert choice.threshold - choice.stops_at <= choice.step
        assert choice.threshold <= max(1, choice.largest_window)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_the_cut_list_matches_the_last_window_at_any_threshold(path):
    messages = readable(path)
    if messages is None:
        pytest.skip("a file the readers refuse")
    choice = choose_threshold(messages)
    for threshold in sorted(
        {
            max(1, choice.stops_at),  # stops: some outputs never arrive
            choice.threshold,
            (choice.threshold + choice.largest_window) // 2,
            choice.largest_window + 1,  # nothing compressed
        }
    ):
        settings = replace(LOG_SETTINGS, threshold=threshold)
        report = explore_text(path.read_text(encoding="utf-8"), path.name, settings)
        run = replay_transcript(messages, settings, window=LOG_WINDOW)
        cut = report.cut
        kept = [m for m in run.final_messages if m["role"] == "tool" or is_observation(m)]
        in_window = cut[cut["fate"].isin(["verbatim", "aged"])]
        assert len(in_window) == len(kept), (threshold, cut["fate"].tolist())
        assert sorted(in_window["characters in last window"]) == sorted(
            len(m["content"] or "") for m in kept
        )
        whole = cut[cut["fate"] == "verbatim"]
        assert (whole["characters"] == whole["characters in last window"]).all()
        if run.overflow is None:
            assert "not reached" not in set(cut["fate"])
            # the trace holds every output whole, environment output included
            assert cut["recoverable"].all()
        if threshold > choice.largest_window:
            assert set(cut["fate"]) <= {"verbatim"}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.name)
def test_the_widget_shows_each_uploaded_file_and_its_chosen_threshold(path):
    explorer = LogExplorer()
    assert explorer.render() is None and explorer.output.outputs == ()
    upload(explorer, "previous.jsonl", (LOGS / "codex_rollout.jsonl").read_bytes())
    assert "file: previous.jsonl" in outputs_html(explorer)[0]
    upload(explorer, path.name, path.read_bytes())
    report = explorer.report
    shown = outputs_html(explorer)
    assert "previous.jsonl" not in "".join(shown)  # the old report is gone
    if report.error is not None:
        assert len(shown) == 1 and path.name in shown[0]
        return
    assert explorer.threshold.value == report.choice.threshold
    assert f"file: {path.name}" in shown[0] and "chosen from this log" in shown[0]
    # the callbacks are functions of the widgets' values: the same values, the same report
    text = path.read_text(encoding="utf-8")
    threshold = report.choice.largest_window + 1  # nothing compressed
    explorer.threshold.value = threshold
    explorer.fold.value = False
    again = explore_text(
        text, path.name, replace(LOG_SETTINGS, threshold=threshold, fold_user_turns=False)
    )
    assert explorer.report.header == again.header
    assert explorer.report.summary == again.summary
    assert explorer.report.cut.equals(again.cut)
    assert outputs_html(explorer)[0].count("file: ") == 1
    assert f"threshold: {threshold:,} tokens" in explorer.report.header


def test_a_file_it_cannot_read_replaces_the_report_with_one_line():
    explorer = LogExplorer()
    bad = {name: content for name, content in BAD_BYTES.items()}
    bad["damaged.jsonl"] = (LOGS / "damaged.jsonl").read_bytes()
    bad["unknown_shape.json"] = (LOGS / "unknown_shape.json").read_bytes()
    assert explorer.threshold.disabled  # before any log: no log's threshold to change
    for name, content in bad.items():
        upload(explorer, "good.jsonl", (LOGS / "claude_code_session.jsonl").read_bytes())
        # the file and threshold, the curve under them, the report, the cut, the paths
        assert len(explorer.output.outputs) == 5
        assert "figure" in explorer.output.outputs[1]["data"]["text/plain"]
        assert not explorer.threshold.disabled
        upload(explorer, name, content)
        assert explorer.threshold.disabled, name  # and none after a file it refused
        [output] = explorer.output.outputs
        line = output["data"]["text/plain"]
        assert line.startswith(f"{name}: ") and "\n" not in line, line
        assert "good.jsonl" not in output["data"]["text/html"]
    assert "not UTF-8 text (byte " in explore_bytes(BAD_BYTES["latin1.json"], "x").error
    assert explore_bytes(b"", "empty.jsonl").error == "empty.jsonl: the file is empty"
    folder = explore_file(LOGS)
    assert folder.error == f"{LOGS}: is a folder, not a log file"
    png = explore_bytes(b"\x89PNG\r\n\x1a\n" + bytes(40), "shot.png")
    assert png.error == "shot.png: a PNG image, not a text log"


def test_a_log_without_tool_messages_and_one_that_starts_with_the_model():
    chat = [
        {"role": "user", "content": "Rename the module."},
        {"role": "assistant", "content": "Done: it is now called " + "x" * 900},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "You are welcome."},
    ]
    opens_with_model = [{"role": "assistant", "content": "Hello."}]
    for messages in (chat, chat[1:], opens_with_model):
        report = explore_text(json.dumps(messages), "chat.json")
        assert report.error is None, report.error
        assert report.cut.empty and list(report.cut.columns)[-1] == "recoverable"
        assert "nothing to cut" in report_tables(report)["What was cut"][1]
        assert report.figure is not None and report.figure.layout.title.text


def test_a_log_gives_the_curve_the_cut_list_and_every_path():
    settings = Settings(threshold=800)
    report = explore_file(LOGS / "codex_rollout.jsonl", settings)
    messages = load_transcript(LOGS / "codex_rollout.jsonl").messages
    run = replay_transcript(messages, settings, window=LOG_WINDOW)
    assert report.error is None and report.description.startswith("shape: codex-rollout")
    assert report.header.splitlines()[1].startswith("threshold: 800 tokens. On this log")
    assert f"{FINAL_LIST}: {len(run.final_messages)} messages" in report.summary
    sent = report.figure.data[1].y  # the compressed line: what each round sent
    assert list(sent) == [r.tokens_after for r in run.rounds]
    assert len(report.cut) == sum(m["role"] == "tool" for m in messages)
    article = report.paths.loc["3 rolling summary (the article)"]
    assert article["tokens sent"] == sum(r.tokens_after for r in run.rounds)
    # the cut list, a row an output, scrolls in a box one screen high; the paths do not
    shown = [o["text/html"] for o in report_outputs(report) if "text/html" in o]
    cut = next(html for html in shown if "<b>What was cut</b>" in html)
    paths = next(html for html in shown if "6 is not run" in html)
    assert 'class="ccl-scrolling"' in cut and 'class="ccl-scrolling"' not in paths
    # paths that stop at the lab's threshold are said to, and why, above the table
    if report.stops:
        assert f"runs at {settings.threshold:,} tokens" in paths
        assert f"{len(report.stops)} of the 5 paths" in paths or "all 5 paths" in paths
    else:
        assert "cannot fit this log" not in paths


def test_environment_output_is_cut_like_a_tool_result():
    path = LOGS / "sweagent_text.traj"  # observations only, no tool messages
    report = explore_file(path)
    messages = load_transcript(path).messages
    assert not any(m["role"] == "tool" for m in messages)
    assert set(report.cut["tool"]) == {OBSERVATION}
    assert "aged" in set(report.cut["fate"])
    cut = next(o for o in report_outputs(report) if "What was cut" in o["text/plain"])
    assert OBSERVATION in cut["text/html"]  # and what it means


def test_long_tool_names_and_error_codes_are_cut_to_fit():
    name, code = "mcp__github__create_pull_request_review_comment", "E" * 40
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Review the PR."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{n:040d}",
                    "type": "function",
                    "function": {"name": name, "arguments": "{}"},
                }
                for n in range(3)
            ],
        },
    ] + [
        {
            "role": "tool",
            "tool_call_id": f"call_{n:040d}",
            "content": "failed " * 400,
            "error": {"code": code, "message": "failed"},
        }
        for n in range(3)
    ]
    messages.append({"role": "assistant", "content": "It failed three times."})
    report = explore_text(json.dumps({"messages": messages}), "long.json")
    assert report.error is None, report.error
    cut, cut_html = report_tables(report)["What was cut"]
    assert all(len(shown) <= LOG_TOOL_COLUMNS for shown in cut["tool"])
    assert all(len(shown) <= LOG_ERROR_COLUMNS for shown in cut["error"])
    assert f'title="{name}"' in cut_html  # the whole name on hover
    assert table_px(cut) <= NOTEBOOK_WIDTH
    assert table_px(cut_table(report.cut)) == table_px(cut)


def test_the_grid_is_a_round_step_of_about_a_hundredth():
    assert [grid_step(n) for n in (0, 61, 1_936, 3_592, 17_991, 160_000)] == [
        1,
        1,
        20,
        50,
        200,
        2_000,
    ]


def test_what_79_says_of_the_multi_turn_option_is_what_the_cells_show():
    """7.9's prose: on the Claude Code log its cell shows, at the threshold chosen from
    it, the replay without "fold later user turns" stops before the end; on
    codex_rollout.jsonl at 500 the option decides it too (exercise 4)."""

    def replayed(name, threshold, fold):
        messages = load_transcript(LOGS / name).messages
        settings = Settings(threshold=threshold, fold_user_turns=fold)
        return replay_transcript(messages, settings, window=LOG_WINDOW)

    shown = explore_file(LOGS / "claude_code_session.jsonl")
    assert shown.settings.threshold == 260  # the number the prose names
    folded, kept = (replayed("claude_code_session.jsonl", 260, f) for f in (True, False))
    assert folded.overflow is None and kept.overflow is not None
    assert replayed("codex_rollout.jsonl", 500, True).overflow is None
    assert replayed("codex_rollout.jsonl", 500, False).overflow is not None


def test_the_path_cell_reads_only_a_regular_file_as_the_command_line_does(tmp_path):
    # a pipe would block the kernel forever and a device never ends: one line each
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert explore_file(fifo).error == (
        f"{fifo}: not a regular file (a pipe, socket or device)"
    )
    assert explore_file("/dev/zero").error == (
        "/dev/zero: not a regular file (a pipe, socket or device)"
    )
    assert explore_file(tmp_path / "absent.jsonl").error == (
        f"{tmp_path / 'absent.jsonl'}: no such log file"
    )
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as handle:  # sparse: over the limit without writing it
        handle.truncate(MAX_LOG_BYTES + 1)
    assert explore_file(big).error.startswith(
        f"{big}: larger than the {MAX_LOG_BYTES:,}-byte limit for a log"
    )


def test_after_a_file_it_cannot_read_the_threshold_box_is_no_other_logs():
    explorer = LogExplorer()
    box = explorer.threshold_box.text
    # before a log: no number that would be no log's, and why it is empty
    assert box.disabled and box.value == "" and box.placeholder == "from your log"
    upload(explorer, "good.jsonl", (LOGS / "claude_code_session.jsonl").read_bytes())
    chosen = explorer.report.choice.threshold
    assert chosen != LOG_SETTINGS.threshold  # so the reset below can be seen
    assert not box.disabled and box.value == f"{chosen:,}"
    upload(explorer, "bad.json", b"{not json")
    assert explorer.report.error is not None
    assert explorer.threshold.value == LOG_SETTINGS.threshold
    assert box.disabled and box.value == ""
    assert explorer.threshold_box.note.value == ""  # and no note about a value


def test_a_binary_file_is_called_binary_and_a_file_read_once_is_not_parsed_again(
    monkeypatch,
):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)
    assert explore_bytes(png, "shot.png").error == (
        "shot.png: a PNG image, not a text log"
    )
    other = b"\x00\x01\xfe binary" + bytes(64)  # no known magic, a NUL near the start
    assert explore_bytes(other, "blob.bin").error == (
        "blob.bin: a binary file (an image, an archive...), not a text log"
    )
    from minilib.lab import log_explorer

    calls = []
    real = log_explorer.parse_transcript
    monkeypatch.setattr(
        log_explorer,
        "parse_transcript",
        lambda text, name, beside=None: (
            calls.append(name) or real(text, name, beside=beside)
        ),
    )
    log_explorer.parsed.cache_clear()
    explorer = LogExplorer()
    upload(explorer, "unknown.json", (LOGS / "unknown_shape.json").read_bytes())
    assert explorer.report.error is not None
    assert calls == ["unknown.json"]  # the threshold search and the report share it


def test_the_recorded_row_is_the_baseline_replays_row():
    from minilib.lab.log_explorer import recorded_row
    from minilib.policies.on_logs import baseline_row

    for path in FIXTURES:
        messages = readable(path)
        if messages is not None:
            assert recorded_row(messages) == baseline_row(messages), path.name


def test_an_upload_says_at_once_that_it_is_being_read(monkeypatch):
    from minilib.lab import log_explorer

    explorer = LogExplorer()
    seen = []
    real = log_explorer.explore_bytes

    def explore(content, name, settings=None, beside=None):  # shown meanwhile
        seen.append(explorer.output.outputs[0]["data"]["text/plain"])
        return real(content, name, settings, beside)

    monkeypatch.setattr(log_explorer, "explore_bytes", explore)
    content = (LOGS / "claude_code_session.jsonl").read_bytes()
    upload(explorer, "mine.jsonl", content)
    assert seen == [
        f"mine.jsonl ({len(content):,} bytes): reading it, choosing a threshold and "
        "replaying it..."
    ]
    assert "file: mine.jsonl" in explorer.output.outputs[0]["data"]["text/plain"]


def test_the_report_takes_the_searchs_replay_at_the_chosen_threshold(monkeypatch):
    """An upload replays the log once per step of the threshold search and not again
    for its report; what it shows is what a replay of its own would show."""
    from minilib.lab import log_explorer

    text = (LOGS / "claude_code_session.jsonl").read_text(encoding="utf-8")
    replays = []
    real = log_explorer.replay_transcript
    monkeypatch.setattr(
        log_explorer,
        "replay_transcript",
        lambda *args, **kwargs: replays.append(args[1]) or real(*args, **kwargs),
    )
    log_explorer._threshold_choice.cache_clear()
    explorer = LogExplorer()
    upload(explorer, "mine.jsonl", text.encode())
    chosen = explorer.report.choice.threshold
    assert [s.threshold for s in replays].count(chosen) == 1  # the search's, alone
    assert len(replays) >= 2  # a search of several steps
    again = explore_text(text, "mine.jsonl", explorer.settings())  # nothing kept now
    assert [s.threshold for s in replays].count(chosen) == 2
    assert report_outputs(again) == report_outputs(explorer.report)


def test_each_path_that_stopped_says_why_under_the_table():
    from minilib.lab.log_explorer import explore_file, report_tables
    from minilib.window import Settings

    path = (
        Path(__file__).resolve().parent.parent
        / "data"
        / "transcripts"
        / "coding_agent_fix.json"
    )
    # at a threshold where the paths part: some go through, some stop
    report = explore_file(path, Settings(threshold=250, fold_user_turns=True))
    stopped = [
        p for p, done in report.paths["completes"].items() if "overflow" in str(done)
    ]
    assert stopped and sorted(report.stops) == sorted(stopped)
    html_shown = report_tables(report)["Every path on this log"][1]
    for name in stopped:
        assert f"{name} stopped: needed " in html_shown


def test_each_note_under_the_paths_table_is_a_line_of_its_own():
    report = explore_file(LOGS / "claude_code_session.jsonl", Settings(threshold=260))
    paths = report_outputs(report)[-1]["text/html"]
    notes = paths.split("</table>", 1)[1]
    assert report.stops  # at 260 tokens, paths stop
    assert notes.count("<small>") == len(report.stops) + 1  # and "6 is not run"
    assert notes.count("<br><small>") == notes.count("<small>")
    # the sizes in a stop's reason are tokens, and say so
    for why in report.stops.values():
        assert re.search(r"largest left: an? \w+ message of [\d,]+ tokens", why), why
        assert "a assistant" not in why and "an user" not in why


def test_paths_that_stop_at_the_chosen_threshold_are_said_to_above_the_table():
    report = explore_file(LOGS / "codex_rollout.jsonl")  # the threshold chosen tight
    shown = [o["text/html"] for o in report_outputs(report) if "text/html" in o]
    paths = next(html for html in shown if "6 is not run" in html)
    stopped = len(report.stops)
    assert stopped, "the tightest threshold of the lab's replay stops some path"
    which = "all 5 paths" if stopped == 5 else f"{stopped} of the 5 paths"
    assert f"runs at {report.settings.threshold:,} tokens" in paths
    assert f"{which} cannot fit this log in it" in paths


@pytest.mark.parametrize(
    "name, prices, note",
    [
        ("codex_rollout.jsonl", "OpenAI prompt caching", False),
        ("gemini_session.json", "Anthropic prompt caching", True),
        ("claude_code_session.jsonl", "Anthropic prompt caching", False),
    ],
)
def test_the_cache_is_priced_as_the_logs_provider_prices_it_or_says_it_is_not(
    name, prices, note
):
    costs = explore_file(LOGS / name).costs
    assert f"under {prices}" in costs
    assert ("these are the lab's default prices" in costs) == note
    assert "of those written a second time" in costs


def test_a_threshold_change_says_at_once_what_it_replays(monkeypatch):
    """The file and threshold lines give way, the moment the threshold changes, to a
    line naming the log and the new threshold; the last curve stays under it until
    the new report replaces everything."""
    from minilib.lab import log_explorer

    explorer = LogExplorer()
    upload(explorer, "mine.jsonl", (LOGS / "claude_code_session.jsonl").read_bytes())
    before = explorer.output.outputs
    seen = []
    real = log_explorer.explore_bytes

    def explore(content, name, settings=None, beside=None):  # shown meanwhile
        seen.append(explorer.output.outputs)
        return real(content, name, settings, beside)

    monkeypatch.setattr(log_explorer, "explore_bytes", explore)
    explorer.threshold.value = explorer.threshold.value + 100
    shown = seen[0]
    first = shown[0]["data"]["text/plain"]
    assert first.startswith(f"mine.jsonl: replaying at {explorer.threshold.value:,}")
    assert shown[1:] == before[1:]  # the last curve and text, until the new ones
    assert explorer.output.outputs[0]["data"]["text/plain"].startswith("file: mine")
