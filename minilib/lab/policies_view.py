"""Chapter 10's policy lab: a log, the model's window and one slider a policy, the
table and the trade-off figure beside them (`PolicyLab`). The log chooser offers the
bundled generated sessions and transcripts, or an upload (one task's files together);
a slider re-runs its own policy only. The runs live in `log_runs.py`, the rows and
table in `policy_rows.py`, the figure in `tradeoff_figure.py`. Every number shown is
computed by the library.
"""

import html
from typing import Dict, List, Mapping, Sequence, Tuple

import ipywidgets as widgets
import plotly.graph_objects as go

from ..logs import LogFileError, decoded_text, split_upload
from ..logs.replay import parse_transcript
from ..policies.production import POLICIES, build_policy
from ..reports.rounds import plural
from .log_runs import (
    BUNDLED_TRANSCRIPTS,
    GENERATED_LOGS,
    LogRuns,
    counting_words,
    default_value,
    log_runs,
)
from .numbers import boxed_slider, format_number, short_count
from .policy_rows import (
    available_policies,
    comparison_frame,
    policy_rows,
    rounds_cell,
    row_problems,
    same_run,
    saved_percent,
)
from .shown import ShownAsWidget, reading_line, upload_files
from .six_paths import table_html
from .style import (
    NOTE_COLOR,
    POLICY_LAB_CSS,
    POLICY_LABEL_WIDTH,
    POLICY_SLIDER_WIDTH,
    PROBLEM_CSS,
    REPORT_CSS,
    STATUS_LINE_HEIGHT,
    WRAPPED_TEXT_CSS,
)
from .tradeoff_figure import lab_chart_title, tradeoff_figure, tradeoff_traces

POLICY_WINDOWS = (200_000, 32_000, 8_000)
# A main parameter that is a token count moves over a share of the window.
TOKEN_PARAMETERS = {
    "threshold",
    "max_tokens",
    "auto_compact_token_limit",
    "trigger",
    "prune_protect",
}


def short_problems(problems: Sequence[str]) -> str:
    """A run's problems beside its slider: alone, in short words, so that two lines
    hold them (the tokens sent and the long words are on hover)."""
    return " · ".join(p.replace("the task gone from", "task gone in") for p in problems)


def row_readout(
    row: Mapping, inert: str = "", same_as: str = "", said_above: bool = False
) -> str:
    """A policy's row in one line, beside its slider. Problems come first and in red (a
    stop, broken windows, lost facts), and a run with one is never shown as a saving: a
    stopped run saved nothing, it failed; a run with broken windows sent windows an API
    rejects. A clean run (it ran every round) says tokens saved, facts kept and tokens
    sent, in three figures (`1.88M`) so that the line fits beside a slider at 1280
    pixels with the file browser open; the exact line, rounds too, is on hover.
    `inert`, why the slider can change nothing on this log, goes on a second line; else
    `same_as`, the value the slider just left when the run is the same (so a move that
    changed nothing is not taken for one that did not register). `said_above`: every
    row was refused for one reason, which the status line says once; the line points
    there. A line wraps to a second line rather than lose its end. The table under
    the sliders has every column."""
    problems = row_problems(row)
    sent = row.get("tokens_sent", 0)
    if "error" in row:
        text = whole = problems[0]
        if said_above:
            text = "not run: the line under the sliders says why"
    elif problems:
        text = short_problems(problems)
        whole = " · ".join(problems) + f" · {plural(sent, 'token')} sent"
    else:
        # what a policy is chosen by first: a narrow column cuts the line's end
        kept = f"{saved_percent(row)} saved · {row['facts_kept']} kept"
        text = f"{kept} · {short_count(sent)} sent"
        whole = f"{kept} · {rounds_cell(row)} rounds · {plural(sent, 'token')} sent"
    style = PROBLEM_CSS + "padding:0 4px;" if problems else ""
    # on two lines in a slider row's height where its column is narrow (problems at
    # 1280, any line beside the chart at 1920), where no note needs the second line
    wrap = (
        "white-space:normal;line-height:15px;max-height:30px;"
        if not (inert or same_as)
        else "white-space:nowrap;text-overflow:ellipsis;"
    )
    line = (
        f'<div title="{html.escape(whole)}" style="overflow:hidden;{wrap}{style}">'
        f"{html.escape(text)}</div>"
    )
    second, title = "", ""
    if inert:
        second, title = (
            f"no effect: {inert}",
            f"this slider changes nothing here: {inert}",
        )
    elif same_as:
        second = title = f"the same run as at {same_as}"
    if second:  # on a line of its own, short enough to be read without hovering
        line += (
            f'<div class="ccl-policy-inert" title="{html.escape(title)}" '
            f'style="font-size:11px;line-height:13px;color:{NOTE_COLOR};'
            'white-space:nowrap;overflow:hidden;text-overflow:ellipsis">'
            f"{html.escape(second)}</div>"
        )
    # two lines in the height of one slider row: the first line no taller than its text
    tight = "line-height:17px;" if second else ""
    return f'<div class="ccl-policy-readout" style="font-size:13px;{tight}">{line}</div>'


def refused_words(rows: Sequence[Mapping]) -> str:
    """Where no policy runs at this window for one reason, that reason once, in a line
    that wraps (beside each slider it is cut to fit)."""
    reasons = {row.get("error") for row in rows}
    if len(reasons) != 1 or None in reasons:
        return ""
    return f"; no policy runs at this window: {reasons.pop()}. Pick a larger window."


def inert_reason(runs: LogRuns, key: str, window: int, slider) -> str:
    """Why `slider` can change nothing of `key`'s run on this log ("" when it can): the
    run at the slider's two ends is the same run. Checked again for each log and window,
    not on every move."""
    if slider.min == slider.max:
        return "one value at this window"
    ends = [runs.row(key, window, value) for value in (slider.min, slider.max)]
    if not same_run(*ends):
        return ""
    if key.startswith("claude-code") and not runs.timestamps:
        return "no timestamps: never idle"
    if ends[0]["overflow_round"] is not None:
        return f"it stops at round {ends[0]['overflow_round']:,} anyway"
    return "the same run at every value"


def accepts(key: str, window: int, value) -> bool:
    """Whether policy `key` at `window` takes `value` for its main parameter: asked of
    the policy itself (its constructor checks its settings), so a slider offers what the
    policy accepts whatever its defaults and checks are."""
    try:
        build_policy(key, window, **{POLICIES[key].main_parameter: value})
    except ValueError:
        return False
    return True


def slider_grid(default, name: str, window: int) -> Tuple[list, object]:
    """The values a slider could take on its grid (before asking the policy), and its
    step: a share in 5% steps, a token count in 40ths of the window, a count up to four
    times its default."""
    if isinstance(default, float):
        return [round(0.05 * i, 2) for i in range(1, 20)], 0.05
    if name in TOKEN_PARAMETERS:
        step = max(window // 40, 1)
        return list(range(step, max(window, default) + 1, step)), step
    top = max(20, 4 * default)
    step = max(1, top // 40)
    # counted from the default, so the handle can rest on it: a grid from 1 in steps of
    # 10 put an attention window of 100 between 91 and 101
    lowest = 0 if default == 0 else 1
    below = range(default, lowest - 1, -step)
    return sorted({*below, *range(default, top + 1, step)}), step


def accepted_range(key: str, window: int, grid: Sequence, default) -> Tuple:
    """(lowest, highest) of the grid's values the policy accepts, the default always
    among them: a slider between them never offers a value its policy refuses."""
    taken = [value for value in grid if accepts(key, window, value)]
    if not taken:
        return default, default
    return min(taken[0], default), max(taken[-1], default)


def slider_for(key: str, window: int) -> widgets.Widget:
    """A slider on a policy's main parameter, starting at its default for `window`,
    over the values the policy accepts (`accepted_range`)."""
    policy = build_policy(key, window)
    name = POLICIES[key].main_parameter
    default = policy.parameters()[name]
    grid, step = slider_grid(default, name, window)
    low, high = accepted_range(key, window, grid, default)
    common = dict(
        description=f"{key}: {name}",
        continuous_update=False,
        style={"description_width": POLICY_LABEL_WIDTH},
        layout=widgets.Layout(width=POLICY_SLIDER_WIDTH),
    )
    if isinstance(default, float):
        slider = widgets.FloatSlider(default, min=low, max=high, step=step, **common)
    elif name in TOKEN_PARAMETERS:
        slider = widgets.IntSlider(
            default, min=low, max=high, step=step, readout_format=",d", **common
        )
    else:
        slider = widgets.IntSlider(default, min=low, max=high, step=step, **common)
    slider.add_class(f"ccl-policy-slider-{key}")
    return slider


def uploaded_log(upload: widgets.FileUpload):
    """The name and the log (a LoadedLog) of the files uploaded together: the log, read
    with the files its agent keeps beside it (Cline's usage record)."""
    name, content, beside = split_upload(upload_files(upload))
    return name, parse_transcript(decoded_text(content, name), name, beside=beside)


class PolicyLab(ShownAsWidget):
    """A log, a window and a slider a policy: the table and the trade-off figure."""

    def __init__(
        self, log: str = "generated session, 200 tool calls, 4 user turns", window=32_000
    ):
        self.runs: Dict[str, LogRuns] = {}
        self._add_log_controls(log, window)
        self.sliders: Dict[str, widgets.Widget] = {}
        self.readouts: Dict[str, widgets.HTML] = {}
        # a slider a line, its policy's row in one line beside it: every slider and
        # what it does on one 1280 x 720 screen (the whole table is under them)
        self.slider_box = widgets.GridBox(
            layout=widgets.Layout(
                grid_template_columns="max-content max-content minmax(0, 1fr)",
                grid_gap="0 10px",
                align_items="center",
            )
        )
        self.table = widgets.HTML()
        # A readout's line is cut with "…" (whole on hover) where its column is narrow:
        # the widget's own box must be allowed to be narrower than the line for that.
        self.readout_style = widgets.HTML(
            POLICY_LAB_CSS, layout=widgets.Layout(display="none")
        )
        # drawn first with the rows the sliders start at (their defaults): the ones
        # `reset` shows, computed once
        defaults = {key: default_value(key, window) for key in available_policies()}
        self.figure = go.FigureWidget(
            tradeoff_figure(
                policy_rows(self.current(), window, defaults),
                lab_chart_title(self.choice.value, window),
            )
        )
        # as wide as its place: the notebook's width, or its column beside the sliders
        self.figure.update_layout(width=None, autosize=True)
        self._holding = False  # while the log list changes: one reset, at its end
        self.choice.observe(lambda change: self._on_log(), "value")
        self.window.observe(lambda change: self._on_log(), "value")
        self.upload.observe(lambda change: self.take_upload(), "value")
        # The log, then each slider beside its policy's row (all on one 1280 x 720
        # screen), then what the log is and the whole table, the chart under it.
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.choice, self.window, self.upload]),
                self.problem,
                self.readout_style,
                self.slider_box,
                self.status,
                self.table,
                self.figure,
            ]
        )
        self.widget.add_class("ccl-policy-lab")
        self.slider_box.add_class("ccl-policy-sliders")  # beside the chart when wide
        self.figure.add_class("ccl-policy-chart")
        self.reset()

    def _add_log_controls(self, log: str, window: int) -> None:
        """The log list, the window list, the upload button, and the lines under them."""
        self.choice = widgets.Dropdown(
            options=list(GENERATED_LOGS) + list(BUNDLED_TRANSCRIPTS),
            value=log,
            description="log",
            layout=widgets.Layout(width="440px"),
        )
        self.window = widgets.Dropdown(
            options=[(f"{w:,}", w) for w in POLICY_WINDOWS],
            value=window,
            description="window",
            layout=widgets.Layout(width="200px"),
        )
        # any file: the shape is found from the content, never the file name
        # several files at once: one task's files (Cline's two) are read together
        self.upload = widgets.FileUpload(accept="", multiple=True)
        self.problem = widgets.HTML()  # an upload refused, under the button that did it
        self.status = widgets.HTML()

    def current(self) -> LogRuns:
        name = self.choice.value
        if name not in self.runs:
            self.runs[name] = log_runs(name)
        return self.runs[name]

    def take_upload(self) -> None:
        if not self.upload.value:
            return
        # said at once, where the refusal of a bad file would be: a large log takes
        # seconds to read and replay, which must not look like nothing
        self.problem.value = (
            f'<div class="ccl-reading" style="{REPORT_CSS}padding:4px 10px;'
            f'{WRAPPED_TEXT_CSS}">'
            + html.escape(
                reading_line(upload_files(self.upload), "running every policy on it")
            )
            + "</div>"
        )
        self.clear_shown()  # the screen never shows two logs at once
        try:
            name, log = uploaded_log(self.upload)
        except LogFileError as error:
            self.problem.value = (
                f'<div style="{PROBLEM_CSS}padding:4px 10px;{WRAPPED_TEXT_CSS}">'
                f"{html.escape(str(error))}<br>The table below still shows "
                f"<b>{html.escape(self.choice.value)}</b>.</div>"
            )
            self.render()  # the last log back, its rows known: a moment
            self.show_title()
            return
        label = f"uploaded: {name}"
        runs = self.runs[label] = LogRuns(log=log)
        options = [o for o in self.choice.options if not o.startswith("uploaded: ")]
        # A Dropdown whose options change picks their first for a moment: held, so the
        # first log's table is neither computed nor shown before the uploaded one's.
        self._holding = True
        try:
            # one message to the page: the list and its choice together, so the page
            # never draws the list's first log for a moment
            with self.choice.hold_sync():
                self.choice.options = options + [label]
                self.choice.value = label
            if runs.counting is not None:  # the window its agent ran at
                self._show_window(runs.counting.window)
        finally:
            self._holding = False
        self.reset()

    def _show_window(self, window: int) -> None:
        """`window` chosen in the window list, added to it if it is not one of them."""
        if window not in [value for _, value in self.window.options]:
            windows = sorted({value for _, value in self.window.options} | {window})
            self.window.options = [(f"{w:,}", w) for w in reversed(windows)]
        self.window.value = window

    def _on_log(self) -> None:
        if not self._holding:
            # at once, in place of the last log's or window's words: the replays take
            # a second or more on a long log
            self.status.value = (
                f'<div style="line-height:{STATUS_LINE_HEIGHT}"><i>replaying every '
                f"policy on {html.escape(self.choice.value)} at a "
                f"{self.window.value:,}-token window…</i></div>"
            )
            self.reset()

    def reset(self) -> List[dict]:
        """New sliders at the defaults for this window, and every row again."""
        self.sliders = {
            key: slider_for(key, self.window.value) for key in available_policies()
        }
        self.readouts = {key: widgets.HTML() for key in self.sliders}
        self.boxes = {key: boxed_slider(slider) for key, slider in self.sliders.items()}
        self.number_boxes = list(self.boxes.values())
        for key, box in self.boxes.items():
            # a note has a line of its own under its box and row (seventeen rows share
            # the box's column, and a note in it would wrap to five lines), and none
            # when empty; it goes when another control is used
            box.note_css = "display:block;line-height:15px"
            box.empty_note_display = box.note.layout.display = "none"
            box.text.observe(lambda change, key=key: self._notes_but(key), "value")
        for key, slider in self.sliders.items():
            slider.observe(lambda change, key=key: self._moved(key, change), "value")
            self.readouts[key].add_class(f"ccl-policy-readout-{key}")
        self.inert = {}  # found after the table is on screen (`note_inert`)
        parts = []
        for number, key in enumerate(self.sliders):
            # each in its own cell, placed (a note that appears must not push the
            # grid's later items a column along): the slider, its box and its line,
            # and under the box and the line its note. `grid_area`, as ipywidgets
            # never hands `grid_row` and `grid_column` to the page.
            top = 2 * number + 1
            cells = (
                (self.sliders[key], f"{top} / 1 / {top + 1} / 2"),
                (self.boxes[key].text, f"{top} / 2 / {top + 1} / 3"),
                (self.readouts[key], f"{top} / 3 / {top + 1} / 4"),
                (self.boxes[key].note, f"{top + 1} / 2 / {top + 2} / 4"),
            )
            for part, area in cells:
                part.layout.grid_area = area
                parts.append(part)
        self.slider_box.children = parts
        rows = self.render()
        if self.problem.value.startswith('<div class="ccl-reading"'):
            self.problem.value = ""  # read and shown: the reading line has done its work
        # what the chart shows, named as the chapter's earlier charts are: it changes
        # with the log and the window, so here, not on every slider move; named once
        # its bars are the log's
        self.show_title()
        self.note_inert(rows)
        return rows

    def show_title(self) -> None:
        self.figure.layout.title.text = lab_chart_title(
            self.choice.value, self.window.value
        )

    def clear_shown(self) -> None:
        """The last log's status line, table and bars gone, while a new one is read:
        the line above says which file is being read."""
        self.status.value = ""
        self.table.value = ""
        for readout in self.readouts.values():  # each slider's line, the last log's
            readout.value = ""
        with self.figure.batch_update():
            self.figure.layout.title.text = ""
            for trace in self.figure.data:
                trace.visible = False

    def note_inert(self, rows: List[dict]) -> None:
        """Beside each slider that can change nothing of its policy's run on this log,
        why. Found once the table and the chart are on screen: it runs each policy at
        its slider's two ends, twice the work of the table, which must not keep the
        table from the student."""
        self.inert = {
            key: reason
            for key, slider in self.sliders.items()
            if (reason := inert_reason(self.current(), key, self.window.value, slider))
        }
        for row in rows:
            if row["policy"] in self.inert:
                key = row["policy"]
                self.readouts[key].value = row_readout(row, self.inert[key])

    def _moved(self, key: str, change) -> List[dict]:
        """A slider moved: every row again, and where its run is the one it had at the
        value it left, its line says so."""
        before = next((row for row in self.rows if row["policy"] == key), None)
        rows = self.render()
        after = next(row for row in rows if row["policy"] == key)
        if before is not None and same_run(before, after) and key not in self.inert:
            self.readouts[key].value = row_readout(
                after, same_as=format_number(change["old"])
            )
        return rows

    def _notes_but(self, key: str) -> None:
        """Every box's note gone but `key`'s: a box's value shown anew (typed, or its
        slider moved) means the student is on that one now."""
        for other, box in self.boxes.items():
            if other != key and box.note.value:
                box.clear_note()

    def values(self) -> Dict[str, object]:
        return {key: slider.value for key, slider in self.sliders.items()}

    def render(self) -> List[dict]:
        runs = self.current()
        rows = policy_rows(runs, self.window.value, self.values())
        used = runs.facts_used
        refused = refused_words(rows)
        self.status.value = (
            f'<div style="line-height:{STATUS_LINE_HEIGHT}">'
            f"<b>{html.escape(self.choice.value)}</b>: "
            f"{plural(len(runs.baseline.per_round), 'round')}, "
            f"{plural(used, 'fact')} the agent used; "
            + counting_words(runs, self.window.value)
            + html.escape(refused)
            + "</div>"
        )
        # a policy's name and its rounds on one line, as in the chapter's tables
        self.table.value = table_html(comparison_frame(rows), keep_first=True)
        for row in rows:
            key = row["policy"]
            self.readouts[key].value = row_readout(
                row, self.inert.get(key, ""), said_above=bool(refused)
            )
        fresh = tradeoff_traces(rows)
        with self.figure.batch_update():
            for shown, new in zip(self.figure.data, fresh):
                shown.update(new)
                shown.visible = new.get("visible", True)
        self.rows = rows
        return rows

    def text_form(self) -> str:
        return "Policy lab (run the notebook to use the sliders)"
