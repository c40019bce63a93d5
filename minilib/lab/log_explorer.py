"""Bring your own log: notebook 07's upload box and what it shows for the file.

`explore_text(text, name, settings)` is the whole computation, a pure function of its
inputs (tests call it directly): read the log (`parse_transcript`, any known shape),
replay it through the production window, and arrange what came out: which file, at which
threshold and why, what was read, the curve, what was cut, and every path on the same
log. A file it cannot read gives one line that names it instead.

Without settings the threshold is chosen from the log (`choose_threshold`): the tightest
budget, on a grid of round numbers, under which that window still replays the
log to its end. There aging and the summary do the most, so the curve, the cut list and
the paths differ most; a fixed number would be too high for a short log (nothing is
compressed) and too low for a long one (the replay stops at once).

The replay here is the production window (`window="production"`), as `python -m
minilib compress` and `replay_transcript` replay a log by default: aging, then the
bounded summary behind FastWindow, later user turns folded, so the summary never becomes
the largest message however long the log runs. The chapters that teach the article
replay its own pipeline; `compress --article` does the same for a log.

`LogExplorer` is the widget around it: a file-upload button, the threshold and the
multi-turn option. An upload sets the threshold to the one chosen from that log; the
report is a function of the three values only.
"""

import html
import json
import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple

import ipywidgets as widgets
import pandas as pd
import plotly.io as pio
from IPython.display import display

from ..logs import LogFileError, decoded_text, read_log_text, split_upload
from ..logs.replay import (
    PRODUCTION,
    TranscriptFileError,
    parse_transcript,
    replay_transcript,
    with_output_ids,
)
from ..measure.cache import DEFAULT_PRICES
from ..measure.costs import ESTIMATED, measure_replay
from ..measure.used_facts import used_facts
from ..policies.on_logs import path_rows
from ..reports import format_summary, plural
from ..reports.costs import format_costs
from ..tokens import estimate_message_tokens
from ..window import Settings
from .numbers import boxed_slider, note_under
from .shown import ShownAsWidget, reading_line, upload_files
from .style import (
    LOG_CUT_TABLE,
    LOG_ERROR_COLUMNS,
    LOG_PATHS_TABLE,
    LOG_TABLE_CSS,
    LOG_TOOL_COLUMNS,
    PROBLEM_CSS,
    REPORT_CSS,
    TABLE_CSS,
    WRAPPED_TEXT_CSS,
)
from .tables import HtmlTable, display_width, preview, scroll_box, to_html
from .transcripts_view import (
    NOT_REACHED,
    OBSERVATION,
    transcript_baseline,
    transcript_figure,
    what_was_cut,
)

# Logs have several user turns (Claude Code, Codex): let the summary fold them, quoted
# whole, or the article's range rule stops most of them at the second turn.
LOG_SETTINGS = Settings(fold_user_turns=True)
LOG_WINDOW = PRODUCTION  # what `compress` replays a log through
GRID_POINTS = 100  # the threshold grid: about this many steps up to the largest window
PATH_COLUMNS = [
    "path",
    "completes",
    "rounds",
    "last_window",
    "tokens_sent",
    "extra_calls",
    "outputs_whole",
]


@dataclass(frozen=True)
class ThresholdChoice:
    """The threshold chosen from a log, and the two numbers that explain it."""

    threshold: int  # the log's window replays it to its end at this budget
    stops_at: int  # the grid point below it, where the replay stops (0: none)
    step: int  # the grid
    largest_window: int  # the log's largest window: at or above it nothing is compressed


@dataclass
class LogReport:
    """What the lab shows for one log file; `error` is set when it cannot be read."""

    name: str
    error: Optional[str] = None
    header: str = ""  # the file, the threshold and why
    description: str = ""
    summary: str = ""
    figure: object = None
    cut: Optional[pd.DataFrame] = None
    paths: Optional[pd.DataFrame] = None
    settings: Optional[Settings] = None
    choice: Optional[ThresholdChoice] = None
    costs: str = ""  # facts the agent used, the prompt cache, the outputs cut
    # why each path that stopped stopped, said under the paths' table
    stops: dict = field(default_factory=dict)


def grid_step(tokens: int) -> int:
    """A round step (1, 2 or 5 times a power of ten) that cuts `tokens` into at most
    about GRID_POINTS steps."""
    wanted = max(1, tokens / GRID_POINTS)
    power = 10 ** max(0, math.floor(math.log10(wanted)))
    return next(power * m for m in (1, 2, 5, 10) if power * m >= wanted)


def largest_window(messages: Sequence[Mapping]) -> int:
    """The most tokens the log sends in one model call, uncompressed (the window before
    its biggest assistant message)."""
    return max(transcript_baseline(messages).tokens, default=0)


def choose_threshold(
    messages: Sequence[Mapping], settings: Settings = LOG_SETTINGS
) -> ThresholdChoice:
    """The tightest threshold on the grid at which the production window (with the
    other `settings`) replays `messages` to the end, found by halving: at the answer it
    completes, one grid point lower it stops. At the largest window it completes, as
    nothing is compressed, so there is always an answer (the largest window itself when
    every compression of the log fails)."""
    return _search(messages, settings)[0]


def _search(messages: Sequence[Mapping], settings: Settings):
    """`choose_threshold`, and the replay it made at the answer (None when the answer
    is the largest window, which the search never replays)."""
    largest = largest_window(messages)
    step = grid_step(largest)
    low, high, at_high = 0, max(1, largest), None
    while math.ceil(high / step) - low // step > 1:
        middle = (low // step + (math.ceil(high / step) - low // step) // 2) * step
        run = replay_transcript(
            messages, replace(settings, threshold=middle), window=LOG_WINDOW
        )
        if run.overflow is None:
            high, at_high = middle, run
        else:
            low = middle
    return ThresholdChoice(high, low, step, largest), at_high


def threshold_choice(
    text: str, name: str, settings: Settings = LOG_SETTINGS
) -> Optional[ThresholdChoice]:
    """`choose_threshold` for a log's text (None if it cannot be read). The last few
    are kept, so a change of threshold does not search again."""
    found = _threshold_choice(text, name, replace(settings, threshold=1))
    return None if found is None else found[0]


@lru_cache(maxsize=8)
def _threshold_choice(text: str, name: str, settings: Settings):
    """(the choice, [the search's replay at it]), or None; the report at the chosen
    threshold takes that replay (`searched_run`), so a cached search holds it only
    until then."""
    log, _ = parsed(text, name)
    if log is None:
        return None
    choice, run = _search(log.messages, settings)
    return choice, [] if run is None else [run]


def searched_run(text: str, name: str, settings: Settings):
    """The replay the threshold search made of this log at `settings` (the same call
    as a replay of the report's own, so the same run), or None. Taken once: a report
    never shares its run with another."""
    found = _threshold_choice(text, name, replace(settings, threshold=1))
    if found is None or not found[1] or found[1][0].settings != settings:
        return None
    return found[1].pop()


@lru_cache(maxsize=2)
def facts_used(text: str, name: str):
    """The facts the log's agent used (`used_facts`): of the log alone, so found once
    for the last two files, not again at each threshold or checkbox change (a second
    on a 2 MB log)."""
    log, _ = parsed(text, name)
    return used_facts(with_output_ids(log.messages))


@lru_cache(maxsize=2)
def parsed(text: str, name: str, beside: Tuple[Tuple[str, bytes], ...] = ()):
    """(the log, None) or (None, the one line that says why it cannot be read). Kept
    for the last two files: an upload chooses its threshold and then replays, and a
    file read once is not read again (a large file of no known shape took seconds).
    `beside`: the files uploaded with it, (name, bytes) pairs: what they add (Cline's
    usage record) is the log's description's, never its messages'."""
    try:
        return parse_transcript(text, name, beside=dict(beside) if beside else None), None
    except TranscriptFileError as problem:
        return None, str(problem)


def threshold_line(threshold: int, choice: ThresholdChoice) -> str:
    """Which threshold the report is at, and what this log does around it."""
    largest = f"{plural(choice.largest_window, 'token')} (its largest window)"
    at = plural(threshold, "token")
    chosen = threshold == choice.threshold
    if choice.threshold >= choice.largest_window:  # every compression of it fails
        if chosen:
            return (
                f"threshold: {at}, chosen from this log: its largest "
                "window. Below it the window stops, so this log cannot be "
                "compressed."
            )
        return (
            f"threshold: {at}. This log cannot be compressed: below "
            f"{largest} the window stops."
        )
    stops = f" (at {choice.stops_at:,} it stops)" if choice.stops_at else ""
    if chosen:
        return (
            f"threshold: {at}, chosen from this log: the tightest "
            f"budget (on a grid of {choice.step:,}) at which the window "
            f"still replays it to the end{stops}, so aging and the summary do the "
            f"most. At {largest} and above, nothing is compressed."
        )
    return (
        f"threshold: {at}. On this log the production window replays "
        f"to the end at {choice.threshold:,} tokens{stops}; at {largest} and above, "
        "nothing is compressed."
    )


def explore_text(
    text: str, name: str, settings: Optional[Settings] = None, beside=()
) -> LogReport:
    """Read, replay and compare one log; a file it cannot read gives `error`, one line
    that names the file. `settings` None: LOG_SETTINGS at the threshold chosen from the
    log; `beside`: the files uploaded with it, (name, bytes) pairs."""
    # the same key as the threshold search's when nothing is beside it: read once
    log, problem = parsed(text, name, tuple(beside)) if beside else parsed(text, name)
    if log is None:
        return LogReport(name, error=problem)
    try:
        return _report(text, name, log, settings, tuple(beside))
    except Exception as problem:  # a reader's new shape the lab trips on: still one line
        return LogReport(
            name,
            error=f"{name}: read as {log.shape}, but the lab could not replay it "
            f"({type(problem).__name__}: {problem})",
        )


def _report(
    text: str, name: str, log, settings: Optional[Settings], beside=()
) -> LogReport:
    messages = log.messages
    choice = threshold_choice(text, name, settings or LOG_SETTINGS)
    if settings is None:
        settings = replace(LOG_SETTINGS, threshold=choice.threshold)
    run = searched_run(text, name, settings)
    if run is None:
        run = replay_transcript(messages, settings, window=LOG_WINDOW)
    summary = format_summary(run)
    if run.overflow is not None:
        summary = (
            f"Stopped before the model call of round {len(run.rounds)}: {run.overflow}\n"
            + summary
        )
    rows = [recorded_row(messages)] + path_rows(messages, settings)
    costs = measure_replay(
        run,
        with_output_ids(messages),
        estimate_message_tokens,
        rounds_total=log.rounds,
        counted_with=ESTIMATED,
        used=facts_used(text, name),
        prices=cache_prices_of(log),
    )
    with_files = "".join(f" with {other}" for other, _ in beside)
    header = f"file: {name}{with_files}\n" + threshold_line(settings.threshold, choice)
    if getattr(log, "compactions", None):  # the lab replays what the log holds, whole
        header += (
            f"\nThe agent compacted its own history "
            f"{plural(len(log.compactions), 'time')}; "
            "this replays the whole history, as if it had not (as `python -m minilib "
            "compress --full-history` does)."
        )
    return LogReport(
        name,
        header=header,
        description=log.describe(),
        summary=summary,
        figure=transcript_figure(run, messages) if run.rounds else None,
        cut=what_was_cut(run, messages),
        # budgeting's row has no numbers: blank cells, and whole numbers stay integers
        paths=pd.DataFrame(
            [{column: row.get(column, "") for column in PATH_COLUMNS} for row in rows],
            dtype=object,
        )
        .set_index("path")
        .rename(columns=lambda name: name.replace("_", " ")),
        settings=settings,
        choice=choice,
        costs=format_costs(costs) + default_prices_note(log),
        stops={
            row["path"]: row["why_it_stopped"]
            for row in rows
            if row.get("why_it_stopped")
        },
    )


def recorded_row(messages: Sequence[Mapping]) -> dict:
    """`baseline_row` (the log as recorded, every window uncompressed) from the
    transcript's baseline, which counts each message once: the replay it made instead
    counted every round's whole window again (half a second on a 2 MB log)."""
    sizes = transcript_baseline(messages).tokens
    outputs = sum(message["role"] == "tool" for message in messages)
    return {
        "path": "0 no compression",
        "completes": "as recorded",
        "rounds": f"{len(sizes)} of {len(sizes)}",
        "tokens_sent": sum(sizes),
        "last_window": sizes[-1] if sizes else 0,
        "extra_calls": 0,
        "outputs_whole": f"{outputs} of {outputs}",
    }


def explore_file(path, settings: Optional[Settings] = None) -> LogReport:
    """`explore_text` on a file on disk (the path cell of notebook 07). The report names
    the file as an upload does, by its name: the folder is where it was on one machine."""
    try:  # a regular file only, within the command line's size limit, as it reads
        text = read_log_text(path)
    except LogFileError as problem:
        return LogReport(str(path), error=str(problem))
    return explore_text(text, Path(path).name, settings)


def explore_bytes(
    content: bytes, name: str, settings: Optional[Settings] = None, beside=None
) -> LogReport:
    """`explore_text` on a file's bytes (an upload); not UTF-8 text gives one line.
    `beside`: the files uploaded with it, by name."""
    try:
        text = decoded_text(bytes(content), name)
    except LogFileError as problem:
        return LogReport(name, error=str(problem))
    files = tuple((key, bytes(value)) for key, value in (beside or {}).items())
    return explore_text(text, name, settings, files)


def _decoded(content: bytes) -> Optional[str]:
    try:
        return bytes(content).decode("utf-8")
    except UnicodeDecodeError:
        return None


def cut_table(cut: pd.DataFrame) -> pd.DataFrame:
    """The cut list as the report shows it: short headers, long names cut (with …)."""
    shown = cut.drop(columns="tool_call_id").rename(
        columns={"characters in last window": "in last window"}
    )
    shown.index.name = "#"
    shown["tool"] = [preview(str(name), LOG_TOOL_COLUMNS) for name in shown["tool"]]
    shown["error"] = [preview(str(code), LOG_ERROR_COLUMNS) for code in shown["error"]]
    return shown


def cache_prices_of(log) -> str:
    """The prompt-cache prices of the provider the log names (its billed calls'): the
    lab's default (Anthropic's 5-minute cache) where it names none the lab prices."""
    return "openai" if providers_of(log) == {"openai"} else DEFAULT_PRICES


def providers_of(log) -> set:
    return {call.provider for call in getattr(log, "billed", ()) if call.provider}


def default_prices_note(log) -> str:
    """Where the cache is priced by the lab's default though the log names another
    provider, a line that says so."""
    others = providers_of(log) - {"anthropic", "openai"}
    if not others:
        return ""
    return (
        f"\n  (the log's provider, {', '.join(sorted(others))}, prices its cache "
        "otherwise: these are the lab's default prices)"
    )


def paths_preface(report: LogReport) -> str:
    """Why paths stop in the table under it, where they do: they run at the threshold
    chosen for the lab's own replay, which cuts more than the article's paths may."""
    if not report.stops:
        return ""
    run = len(report.paths) - 2  # not the record's row, nor budgeting's (not run)
    stopped = len(report.stops)
    how = "its summary bounded" + (
        ", later user turns folded" if report.settings.fold_user_turns else ""
    )
    which = f"all {run} paths" if stopped == run else f"{stopped} of the {run} paths"
    words = (
        f"Each path runs at {report.settings.threshold:,} tokens, the threshold chosen "
        f"above for the lab's own replay ({how}): {which} cannot fit this log in it "
        "and stop. Give a larger threshold above to see how far each gets."
    )
    return f"<br><small>{html.escape(words)}</small>"


def report_tables(report: LogReport) -> dict:
    """{title: (table, the HTML shown)} of a report: the cut list and the paths."""
    cut = cut_table(report.cut)
    titles = {  # a cut name or code: its whole text on hover
        column: [
            str(t) if display_width(str(t)) > width else "" for t in report.cut[column]
        ]
        for column, width in (("tool", LOG_TOOL_COLUMNS), ("error", LOG_ERROR_COLUMNS))
    }
    return {
        "What was cut": (
            cut,
            to_html(
                cut,
                css_class=LOG_CUT_TABLE,
                empty="nothing to cut: no tool results, no environment output",
                cell_titles=titles,
            ),
        ),
        "Every path on this log": (
            report.paths,
            paths_preface(report)
            + to_html(report.paths, css_class=LOG_PATHS_TABLE)
            + "".join(
                f"<br><small>{html.escape(path)} stopped: {html.escape(why)}</small>"
                for path, why in report.stops.items()
            ),
        ),
    }


def cut_notes(cut: pd.DataFrame) -> str:
    """What the cut list's less obvious values mean, for the values it has."""
    notes = []
    if (cut["tool"] == OBSERVATION).any():
        notes.append(
            f"{OBSERVATION}: environment output the agent logged as a user message; "
            "compression cuts it like a tool result, and the trace keeps it whole under "
            "the id env_<#> that its aged copy names."
        )
    if (cut["fate"] == NOT_REACHED).any():
        notes.append(f"{NOT_REACHED}: the replay stopped before this output arrived.")
    return "".join(f"<br><small>{html.escape(note)}</small>" for note in notes)


def report_outputs(report: LogReport) -> List[dict]:
    """The report as the notebook shows it, one MIME bundle an output: the file and
    the threshold; the curve, right under the threshold box that moves it; what was
    read and what the replay did; the cut list; the paths. A file it cannot read is
    one output: its line."""
    if report.error is not None:
        return [_html(_message(report.error, problem=True), report.error)]
    outputs = [_html(_message(report.header), report.header)]
    if report.figure is not None:
        outputs.append(
            {
                "application/vnd.plotly.v1+json": json.loads(
                    pio.to_json(report.figure, validate=False)
                ),
                "text/plain": f"figure: {report.figure.layout.title.text}",
            }
        )
    parts = (report.description, report.summary, report.costs)
    text = "\n\n".join(part for part in parts if part)
    outputs.append(_html(_message(text), text))
    tables = report_tables(report)
    for title, (table, table_html) in tables.items():
        notes = (
            cut_notes(report.cut)
            if title == "What was cut"
            else "<br><small>6 is not run: a log does not record the sections its prompt "
            "was built from.</small>"
        )
        if title == "What was cut":  # a row an output: hundreds on a long log
            table_html = scroll_box(table_html)
        outputs.append(
            _html(
                TABLE_CSS + LOG_TABLE_CSS + f"<b>{title}</b>" + table_html + notes,
                f"{title}\n{HtmlTable(table)!r}",
            )
        )
    return outputs


def show_report(report: LogReport) -> None:
    """Display a report in the notebook (the path cell of 7.9)."""
    for bundle in report_outputs(report):
        display(bundle, raw=True)


def _html(html_text: str, plain: str) -> dict:
    return {"text/html": html_text, "text/plain": plain}


def _message(text: str, problem: bool = False) -> str:
    style = PROBLEM_CSS if problem else REPORT_CSS
    return (
        f'<pre class="ccl-log-report" style="{style}padding:6px 10px;'
        f'{WRAPPED_TEXT_CSS}font-size:13px">{html.escape(text)}</pre>'
    )


class LogExplorer(ShownAsWidget):
    """Upload a log (any shape `minilib.logs` reads); it is replayed as it arrives, at
    the threshold chosen from it, which the field then shows and lets you change."""

    def __init__(self, settings: Settings = LOG_SETTINGS):
        self.base = settings  # everything but the threshold and the multi-turn option
        self.upload = widgets.FileUpload(
            # any file: the shape is found from the content, never the file name;
            # several at once: one task's files (the log is told from the others)
            accept="",
            multiple=True,
            description="Upload a log",
        )
        # off until a log arrives: the threshold is chosen from the log, so a number
        # shown before one would be no log's
        self.threshold = widgets.BoundedIntText(
            settings.threshold,
            min=1,
            max=10**9,
            step=100,
            description="threshold",
            disabled=True,
            layout=widgets.Layout(display="none"),  # the box below shows and takes it
        )
        # typed as every box of the course reads numbers (1,500, 1 500, 1.5k); 0 or
        # words are refused beside the box, in words
        # the label inside the box's width: the number gets the rest (96 px of it)
        self.threshold_box = boxed_slider(
            self.threshold,
            unit="token",
            snap=False,
            width="176px",
            waiting="from your log",
        )
        self.threshold_box.text.description = "threshold"
        self.threshold_box.text.style.description_width = "72px"
        self.number_boxes = [self.threshold_box]
        self.fold = widgets.Checkbox(
            settings.fold_user_turns, indent=False, description="fold later user turns"
        )
        self.output = widgets.Output()
        self.report: Optional[LogReport] = None
        self._choosing = False  # the upload is setting the threshold: render once
        self.upload.observe(lambda change: self.choose_and_render(), "value")
        for control in (self.threshold, self.fold):
            control.observe(lambda change: self._setting_changed(), "value")
        self.widget = widgets.VBox(
            [
                note_under([self.upload, self.threshold, self.threshold_box, self.fold]),
                self.output,
            ]
        )
        self.widget.add_class("ccl-log-explorer")

    def settings(self) -> Settings:
        return replace(
            self.base, threshold=self.threshold.value, fold_user_turns=self.fold.value
        )

    def uploaded(self):
        """(name, bytes, the files beside it) of the uploaded log (of the files
        uploaded together, the one that is not kept beside a log); None before an
        upload."""
        if not self.upload.value:
            return None
        return split_upload(upload_files(self.upload))

    def choose_and_render(self) -> Optional[LogReport]:
        """A new file: set the threshold to the one chosen from it, then replay. A line
        says so at once: a large log takes seconds, which must not look like nothing."""
        uploaded = self.uploaded()
        if uploaded is not None:
            line = reading_line(
                upload_files(self.upload), "choosing a threshold and replaying it"
            )
            self.output.outputs = (
                {
                    "output_type": "display_data",
                    "data": _html(_message(line), line),
                    "metadata": {},
                },
            )
        text = None if uploaded is None else _decoded(uploaded[1])
        choice = None
        if text is not None:
            choice = threshold_choice(text, uploaded[0], self.settings())
        # a file it cannot read leaves no threshold of the last log behind
        threshold = self.base.threshold if choice is None else choice.threshold
        self._choosing = True
        try:
            self.threshold.step = 100 if choice is None else choice.step
            self.threshold.value = threshold
            self.threshold.disabled = choice is None  # a file it cannot read: no log
        finally:
            self._choosing = False
        return self.render()

    def _setting_changed(self) -> None:
        if not self._choosing:
            self._say_replaying()
            self.render()

    def _say_replaying(self) -> None:
        """In place of the file and threshold lines, at once, what is being replayed
        (a long log takes a second): the same log's last curve and text stay under it
        until the new ones replace them."""
        if self.report is None or self.report.error is not None:
            return
        fold = "folding" if self.fold.value else "not folding"
        line = (
            f"{self.report.name}: replaying at {self.threshold.value:,} tokens, "
            f"{fold} later user turns…"
        )
        working = {
            "output_type": "display_data",
            "data": _html(_message(line), line),
            "metadata": {},
        }
        self.output.outputs = (working,) + tuple(self.output.outputs[1:])

    def render(self) -> Optional[LogReport]:
        """Replay the uploaded file at the widgets' values (nothing before an upload).
        The old report goes first, so a file that cannot be read never leaves the last
        one on screen."""
        uploaded = self.uploaded()
        if uploaded is None:
            return None
        name, content, beside = uploaded
        self.report = explore_bytes(content, name, self.settings(), beside)
        # one assignment replaces the old report, whatever the new one is
        self.output.outputs = tuple(
            {"output_type": "display_data", "data": bundle, "metadata": {}}
            for bundle in report_outputs(self.report)
        )
        return self.report

    def text_form(self) -> str:
        return "Log explorer (run the notebook, then upload a log)"
