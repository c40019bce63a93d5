"""One task's files uploaded together are read as the files of one folder: Cline's
api_conversation_history.json with its ui_messages.json gives the usage the command
line reads from the folder, at every upload point of the course."""

import pytest

from minilib.lab.calibration_view import CalibrationExplorer, calibration_view
from minilib.lab.log_explorer import LogExplorer
from minilib.lab.policies_view import PolicyLab
from minilib.lab.shown import upload_value
from minilib.logs import decoded_text, load_log, parse_log, split_upload
from minilib.session import DATA_DIR

TASK = DATA_DIR / "logs" / "as_kept" / "cline_task"
HISTORY, UI = TASK / "api_conversation_history.json", TASK / "ui_messages.json"
FILES = [(UI.name, UI.read_bytes()), (HISTORY.name, HISTORY.read_bytes())]


def uploaded(widget, files):
    """`files` uploaded at once, as a browser sets them."""
    widget.upload.value = upload_value(files)


@pytest.mark.parametrize("files", [FILES, FILES[::-1]], ids=["ui first", "log first"])
def test_the_log_is_told_from_the_file_beside_it_in_any_order(files):
    name, content, beside = split_upload(files)
    assert name == HISTORY.name and content == HISTORY.read_bytes()
    assert list(beside) == [UI.name]


def test_read_together_they_give_what_the_folder_gives():
    from_folder = load_log(HISTORY)
    name, content, beside = split_upload(FILES)
    together = parse_log(decoded_text(content, name), name, beside=beside)
    alone = parse_log(decoded_text(content, name), name)
    assert together.usage == from_folder.usage and together.usage
    assert together.billed == from_folder.billed
    assert together.usage != alone.usage  # the file beside it replaced the metrics
    assert any("read from the file beside it" in why for _, why in together.notes)


def test_a_damaged_file_beside_it_is_a_note_and_the_log_is_read():
    name, content, beside = split_upload([(UI.name, b"\xff\xfe not text"), FILES[1]])
    log = parse_log(decoded_text(content, name), name, beside=beside)
    assert log.messages and any("not read" in why for _, why in log.notes)


def test_the_file_beside_alone_says_to_upload_both():
    words, figure, _, problem = calibration_view(UI.name, UI.read_bytes())
    assert problem and figure is None and "upload both files together" in words


def test_every_upload_point_takes_the_two_files_as_one_task():
    explorer = CalibrationExplorer()
    uploaded(explorer, FILES)
    words = explorer.render()
    assert "records no usage" not in words and "calls" in words
    assert explorer.upload.multiple

    log_explorer = LogExplorer()
    uploaded(log_explorer, FILES)
    report = log_explorer.report
    assert report is not None and report.error is None
    assert report.name == HISTORY.name
    # 7.9 read the usage record it was given, and asks for no file it already has
    assert f"file: {HISTORY.name} with {UI.name}" in report.header
    assert "read from the file beside it" in report.description
    assert "records the split" not in report.description

    lab = PolicyLab()
    uploaded(lab, FILES)
    assert lab.choice.value == f"uploaded: {HISTORY.name}" and not lab.problem.value
    runs = lab.runs[lab.choice.value]
    assert runs.log.usage == load_log(HISTORY).usage


def test_a_fit_on_too_few_calls_is_not_the_unit_of_the_rows():
    """Three calls fit a calibration on one: its ratio would put every row at four
    times the record. The rows count what each call sent instead, and say so."""
    from minilib.measure.calibration import MIN_CALLS, calibrate
    from minilib.policies.production.own_agent import log_counting

    log = load_log(HISTORY)
    assert calibrate(log).fitted_calls < MIN_CALLS
    counting = log_counting(log)
    assert not counting.calibrated and counting.counted_with.startswith("estimated")
    recorded = sum(u.input_tokens for u in log.usage)
    lab = PolicyLab()
    uploaded(lab, FILES)
    row = next(r for r in lab.rows if r["policy"] == "article")
    assert row["tokens_sent"] <= recorded  # what the calls sent, not a runaway fit
    enough = DATA_DIR / "real" / "claude-code" / "entire-e1-2c3e2b3f2a-0.jsonl"
    assert log_counting(load_log(enough)).calibrated  # a log with calls to fit on
