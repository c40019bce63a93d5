"""Chapter 7.10 and 7.11's views on a real log, and the upload that shows the same
for a student's own log, driven without a browser."""

import re
from pathlib import Path

from minilib.lab.agent_replay_view import agent_replay_of
from minilib.lab.calibration_view import (
    CalibrationExplorer,
    calibrated_file,
    calibrated_log,
    calibration_figure,
    calibration_frame,
    calibration_view,
    scrolling_table,
)
from minilib.lab.shown import upload_value
from minilib.logs import load_log
from minilib.session import DATA_DIR

SESSION = DATA_DIR / "real" / "claude-code" / "entire-91-b42542f24f-0.jsonl"


def test_the_figure_shades_fitted_and_held_out_calls_apart():
    view = calibrated_file(SESSION)
    figure = calibration_figure(view)
    names = [trace.name for trace in figure.data]
    assert names == [
        "API counted (the log's record)",
        "the article's estimate of the window",
        "calibrated count (fitted on the first half)",
    ]
    shapes = figure.layout.shapes
    fitted_end = view.calls[view.calibration.fitted_calls - 1].round + 0.5
    assert [s.x1 for s in shapes][0] == fitted_end == shapes[1].x0
    frame = calibration_frame(view)
    assert len(frame) == view.calibration.calls
    assert (frame["fit"] == "held out").sum() == view.calibration.held_out["calls"]
    # the words quote the held-out error the calibration measured
    assert f"{view.calibration.held_out['median_abs_error']:.1%}" in view.held_out_words
    # and how a call's calibrated count is made, which the table lets a student redo
    fit = next(iter(view.calibration.held_out_fits.values()))
    assert fit.missing == 0
    assert f"{fit.overhead:,} (the overhead" in view.formula_words
    assert f"+ {fit.ratio:.2f} x the lab's count" in " ".join(view.formula_words.split())
    for call, count, shown in zip(view.calls, view.counts, frame["lab's count"]):
        assert shown == f"{count:,}"
        assert call.held_out_predicted == fit.overhead + round(fit.ratio * count)


def test_an_upload_gets_the_same_view_or_says_why_not():
    words, figure, frame, problem = calibration_view(SESSION.name, SESSION.read_bytes())
    assert not problem and figure is not None and len(frame) == 50
    no_usage = DATA_DIR / "logs" / "openai_chat.json"
    words, figure, frame, problem = calibration_view(no_usage.name, no_usage.read_bytes())
    assert problem and figure is None and "records no usage" in words
    words, figure, _, problem = calibration_view("x.png", b"\x89PNG\r\n\x1a\n....")
    assert problem and figure is None and "PNG" in words
    explorer = CalibrationExplorer()
    assert explorer.render() is None  # nothing uploaded yet


def test_the_agent_replay_figure_marks_both_compactions():
    figure, lines, row = agent_replay_of(load_log(SESSION))
    replayed = next(t for t in figure.data if t.name.startswith("the replay compacted"))
    assert list(replayed.x) == [c["round"] for c in row["compaction_rounds"]]
    # each at the count that crossed the trigger: above it, and above every window
    # the replay sent before it (those stayed under the trigger)
    assert list(replayed.y) == [c["tokens_before"] for c in row["compaction_rounds"]]
    first = row["compaction_rounds"][0]
    assert (
        first["tokens_before"] >= 167_000 > max(row["tokens_per_round"][: first["round"]])
    )
    vertical = [s for s in figure.layout.shapes if s.x0 == s.x1]
    assert [s.x0 for s in vertical] == [
        c["round"] - 0.5 for c in row["recorded_compaction_rounds"]
    ]
    # the count at which the version that wrote the log compacts, drawn across
    (level,) = [s for s in figure.layout.shapes if s.y0 == s.y1]
    assert level.y0 == 167_000  # 2.1.36 at 200,000: 200,000 - 20,000 - 13,000
    assert any("the real summary used" in line for line in lines)
    assert all(len(line) <= 100 for line in lines)


def test_the_calibration_table_scrolls_under_its_header_numbers_right_words_left():
    frame = calibration_frame(calibrated_file(SESSION))
    shown = scrolling_table(frame).data
    assert 'class="ccl-scrolling"' in shown and "position: sticky" in shown
    header = re.search(r"<thead>(.*?)</thead>", shown).group(1)
    found = re.findall(r'<th style="text-align:(\w+)">([^<]+)</th>', header)
    sides = {name.replace("&#x27;", "'"): side for side, name in found}
    numbers = ["API counted", "article's estimate", "lab's count", "calibrated", "error"]
    words = ["fit", "what the log shows before the call"]
    assert sides == {**dict.fromkeys(numbers, "right"), **dict.fromkeys(words, "left")}
    # every row is there, in the frame's order
    assert re.findall(r"<tr><th[^>]*>(\d+)</th>", shown) == [str(i) for i in frame.index]


def test_every_bundled_log_gets_its_view_or_one_line_saying_why():
    # the fixtures include logs with one or two calls of usage: nothing to hold out
    logs = [path for path in (DATA_DIR / "logs").rglob("*") if path.is_file()]
    held_out = {}
    for path in logs:
        words, figure, frame, problem = calibration_view(path.name, path.read_bytes())
        assert "the lab failed" not in words, path
        if figure is not None:
            held_out[path.name] = calibrated_file(path).calibration.held_out["calls"]
            shading = [s for s in figure.layout.shapes if s.type == "rect"]
            assert len(shading) == (2 if held_out[path.name] else 1), path
    assert held_out["gemini_session.json"] == 0
    words, *_ = calibration_view(
        "g.json", (DATA_DIR / "logs/gemini_session.json").read_bytes()
    )
    assert words.startswith("Only 1 call of this log records usage")
    assert "no held-out error" in words
    assert held_out["codex_rollout.jsonl"] == 1
    words, *_ = calibration_view(
        "r.jsonl", (DATA_DIR / "logs/codex_rollout.jsonl").read_bytes()
    )
    assert "on the other 1 call," in words and "too few to judge the fit by" in words


def test_a_fault_of_the_lab_on_an_upload_is_a_line_naming_the_file(monkeypatch):
    from minilib.lab import calibration_view as view

    def broken(log, name):
        raise KeyError("median_abs_error")

    monkeypatch.setattr(view, "calibrated_log", broken)
    explorer = CalibrationExplorer()
    content = SESSION.read_bytes()
    explorer.upload.value = upload_value([("mine.jsonl", content)])
    words = explorer.render()  # what it showed (an Output widget needs a kernel)
    assert words.startswith(
        "mine.jsonl: the lab failed to read it (KeyError: 'median_abs_error')"
    )


def test_the_words_say_over_or_under_and_warn_of_a_poor_fit():
    from minilib.lab.calibration_view import OVERHEAD_PAST_FIRST, POOR_FIT

    words, _, _, _ = calibration_view(SESSION.name, SESSION.read_bytes())
    view = calibrated_log(load_log(SESSION), SESSION.name)
    side = "over" if view.calibration.held_out["median_error"] > 0 else "under"
    assert f"mostly {side} the record" in " ".join(words.split())
    assert view.calibration.held_out["median_abs_error"] <= POOR_FIT
    assert "poor" not in words and "traded" not in words

    # a public Codex session whose text is replaced by placeholders: a poor fit, and
    # an overhead past the whole first call
    redacted = Path(__file__).resolve().parent.parent / "corpus" / "codex"
    path = redacted / "localpush-019c8a59.jsonl"
    words, _, _, _ = calibration_view(path.name, path.read_bytes())
    view = calibrated_log(load_log(path), path.name)
    first = next(call.recorded for call in view.calls if call.recorded)
    overhead = max(fit.overhead for fit in view.calibration.held_out_fits.values())
    assert view.calibration.held_out["median_abs_error"] > POOR_FIT
    assert overhead > OVERHEAD_PAST_FIRST * first
    said = " ".join(words.split())
    assert "The fit is poor" in said and f"({overhead:,}) is more than the whole" in said


def test_the_words_name_each_gap_the_reader_repaired():
    """A log with a damaged line, a lost parent and an interrupted call: the words say
    what was repaired and where, as 7.9 does; a whole log says nothing of repairs."""
    damaged = DATA_DIR / "logs" / "gaps" / "pi_damaged_line.jsonl"
    words, _, _, problem = calibration_view(damaged.name, damaged.read_bytes())
    assert not problem
    flat = " ".join(words.split())
    for kind in ("not valid JSON", "parent the file lacks", "no recorded result"):
        assert kind in flat
    assert "(first: line 7)" in flat
    whole = DATA_DIR / "real" / "claude-code" / "entire-94-de498254e2-0.jsonl"
    words, _, _, _ = calibration_view(whole.name, whole.read_bytes())
    assert "repaired" not in words
