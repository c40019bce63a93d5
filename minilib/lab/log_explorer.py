"""Bring your own log: notebook 07's upload box and what it shows for the file.

`explore_text(text, name, settings)` is the whole computation, a pure function of its
inputs (tests call it directly): read the log (`parse_transcript`, any known shape),
replay it through the article's window, and arrange what came out: what was read,
the curve, what was cut, and every path on the same log. `LogExplorer` is the widget
around it: a file-upload button, the threshold and the multi-turn option.
"""

import html
from dataclasses import dataclass
from typing import Optional

import ipywidgets as widgets
import pandas as pd
from IPython.display import HTML, display

from ..logs.replay import TranscriptFileError, parse_transcript, replay_transcript
from ..policies.on_logs import baseline_row, path_rows
from ..reports import format_summary
from ..window import Settings
from .shown import ShownAsWidget
from .style import PROBLEM_CSS, REPORT_CSS, TABLE_CSS
from .tables import to_html
from .transcripts_view import transcript_figure, what_was_cut

PATH_COLUMNS = [
    "path",
    "completes",
    "rounds",
    "last_window",
    "tokens_sent",
    "extra_calls",
    "outputs_whole",
]


@dataclass
class LogReport:
    """What the lab shows for one log file; `error` is set when it cannot be read."""

    name: str
    error: Optional[str] = None
    description: str = ""
    summary: str = ""
    figure: object = None
    cut: Optional[pd.DataFrame] = None
    paths: Optional[pd.DataFrame] = None


def explore_text(text: str, name: str, settings: Settings = Settings()) -> LogReport:
    """Read, replay and compare one log; a file it cannot read gives `error`, one line."""
    try:
        log = parse_transcript(text, name)
    except TranscriptFileError as problem:
        return LogReport(name, error=str(problem))
    run = replay_transcript(log.messages, settings)
    summary = format_summary(run)
    if run.overflow is not None:
        summary = (
            f"Stopped before the model call of round {len(run.rounds)}: {run.overflow}\n"
        )
        summary += format_summary(run)
    rows = [baseline_row(log.messages)] + path_rows(log.messages, settings)
    return LogReport(
        name,
        description=log.describe(),
        summary=summary,
        figure=transcript_figure(run, log.messages) if run.rounds else None,
        cut=what_was_cut(run, log.messages),
        # budgeting's row has no numbers: blank cells, and whole numbers stay integers
        paths=pd.DataFrame(
            [{column: row.get(column, "") for column in PATH_COLUMNS} for row in rows],
            dtype=object,
        )
        .set_index("path")
        .rename(columns=lambda name: name.replace("_", " ")),
    )


def explore_file(path, settings: Settings = Settings()) -> LogReport:
    """`explore_text` on a file on disk (the path cell of notebook 07)."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as problem:
        return LogReport(str(path), error=f"{path}: cannot be read ({problem})")
    return explore_text(text, str(path), settings)


def show_report(report: LogReport) -> None:
    """Display a report in the notebook: text, curve, cut list, the paths."""
    if report.error is not None:
        display(HTML(_message(report.error, problem=True)))
        return
    display(HTML(_message(report.description + "\n\n" + report.summary)))
    if report.figure is not None:
        display(report.figure)
    display(HTML(TABLE_CSS + "<b>What was cut</b>" + to_html(report.cut)))
    display(
        HTML(
            "<b>Every path on this log</b>"
            + to_html(report.paths)
            + "<small>6 is not run: a log does not record the sections its prompt was "
            "built from.</small>"
        )
    )


def _message(text: str, problem: bool = False) -> str:
    style = PROBLEM_CSS if problem else REPORT_CSS
    return (
        f'<pre class="ccl-log-report" style="{style}padding:6px 10px;'
        "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word;"  # whole words
        f'font-size:13px">{html.escape(text)}</pre>'
    )


class LogExplorer(ShownAsWidget):
    """Upload a log (any shape `minilib.logs` reads); it is replayed as it arrives."""

    def __init__(self, settings: Settings = Settings()):
        self.upload = widgets.FileUpload(
            accept=".json,.jsonl,.traj,.txt", multiple=False, description="Upload a log"
        )
        self.threshold = widgets.BoundedIntText(
            settings.threshold, min=1, max=10**7, step=100, description="threshold"
        )
        self.fold = widgets.Checkbox(
            settings.fold_user_turns, indent=False, description="fold later user turns"
        )
        self.output = widgets.Output()
        self.report: Optional[LogReport] = None
        for control in (self.upload, self.threshold, self.fold):
            control.observe(lambda change: self.render(), "value")
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.upload, self.threshold, self.fold]),
                self.output,
            ]
        )
        self.widget.add_class("ccl-log-explorer")

    def settings(self) -> Settings:
        return Settings(threshold=self.threshold.value, fold_user_turns=self.fold.value)

    def render(self) -> Optional[LogReport]:
        """Replay the uploaded file at the current settings (nothing before an upload)."""
        if not self.upload.value:
            return None
        upload = self.upload.value[0]
        try:
            text = bytes(upload["content"]).decode("utf-8")
        except UnicodeDecodeError as problem:
            self.report = LogReport(
                upload["name"], error=f"{upload['name']}: not UTF-8 text ({problem})"
            )
        else:
            self.report = explore_text(text, upload["name"], self.settings())
        self.output.clear_output()
        with self.output:
            show_report(self.report)
        return self.report

    def text_form(self) -> str:
        return "Log explorer (run the notebook, then upload a log)"
