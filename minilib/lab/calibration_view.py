"""Chapter 7's "what the API counted", on a real log: the record beside the article's
estimate and the count calibrated to the record (`minilib.measure.calibration`),
fitted on the first half of the calls and judged on the second; and an upload that
shows the same figure and table for your log. `calibration_view(name, bytes)` is a
pure function of the upload, so tests call it without a browser."""

import html
import textwrap
from dataclasses import dataclass, field
from statistics import median
from typing import List, Optional

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from IPython.display import HTML, display

from ..logs import LogFileError, decoded_text, load_log, parse_log, split_upload
from ..logs.base import repair_counts
from ..measure.calibration import (
    GAP,
    MIN_CALLS,
    POOR_FIT,
    Calibration,
    PredictedCall,
    calibrate,
    call_points,
    plural_calls,
    predicted_calls,
)
from ..measure.recorded_usage import usage_rows
from .prose import plural
from .shown import TextUploadExplorer, described, reading_line, upload_files
from .style import (
    BASELINE_COLOR,
    BLUE,
    FITTED_SHADE,
    HELD_OUT_SHADE,
    ORIGIN_LABEL_GAP,
    PRINTED_COLUMNS,
    PROBLEM_CSS,
    RECORDED_COLOR,
    REPORT_CSS,
)
from .tables import scroll_box, shown_table

# up to this many rounds, the axis marks every round (never half a round)
FEW_ROUNDS = 20
# an overhead this many times the first call's record is not an overhead alone
OVERHEAD_PAST_FIRST = 1.5


@dataclass
class CalibratedLog:
    """A log, its calibration, and per call with usage: the record, the article's
    estimate of the window, the held-out fit's prediction and what the log shows."""

    name: str
    calibration: Calibration
    calls: List[PredictedCall]  # the fit's prediction, held out past the first half
    estimates: List[int]  # the article's estimate of each call's window
    # the lab's count of what each call sent (the count the ratio multiplies)
    counts: List[int] = field(default_factory=list)

    @property
    def held_out_words(self) -> str:
        """The held-out error in words a student follows."""
        held = self.calibration.held_out
        fitted = self.calibration.fitted_calls
        if not held.get("calls"):
            return textwrap.fill(
                f"Only {plural(self.calibration.calls, 'call')} of this log "
                "records usage: the fit needs calls to learn from and others to be "
                "tested on, so this log gives no held-out error. Its figures below "
                "are the fit on all it has, untested.",
                PRINTED_COLUMNS,
            )
        few = (
            f" {'That is' if held['calls'] == 1 else 'Those are'} too few to judge "
            "the fit by."
            if held["calls"] < MIN_CALLS
            else ""
        )
        direction = "over" if held["median_error"] > 0 else "under"
        return textwrap.fill(
            f"Fitted on the first {plural(fitted, 'call')}, the calibrated count is "
            f"off by {held['median_abs_error']:.1%} (median) on the other "
            f"{plural(held['calls'], 'call')}, which the fit never saw, mostly "
            f"{direction} the record; on those the article's estimate of the window "
            f"counts {_less_or_more(self.estimate_error)} than the API did.{few}"
            f"{self.poor_fit_words}",
            PRINTED_COLUMNS,
        )

    @property
    def poor_fit_words(self) -> str:
        """A warning where the fit is poor (its held-out error over `POOR_FIT`), and
        where its overhead is well past the first call's whole record (the fit traded
        its ratio for an overhead no call holds: the two are right only together)."""
        held = self.calibration.held_out
        words = ""
        if held.get("median_abs_error", 0) > POOR_FIT:
            words += (
                f" The fit is poor (over {POOR_FIT:.0%}): read the calls the table "
                "names; a jump the log does not record is not in the fit."
            )
        first = next((call.recorded for call in self.calls if call.recorded), None)
        overhead = max(
            (fit.overhead for fit in self.calibration.held_out_fits.values()), default=0
        )
        if first is not None and overhead > OVERHEAD_PAST_FIRST * first:
            words += (
                f" Its overhead ({overhead:,}) is more than the whole first call "
                f"({first:,}): the fit traded its ratio for it, so the two are right "
                "only together, not each as what it names."
            )
        return words

    @property
    def formula_words(self) -> str:
        """How a call's calibrated count is made, with the numbers of the held-out
        fit: one formula, or one a model when the log switches models."""
        fits = list(self.calibration.held_out_fits.values())
        fit = fits[0]
        lacks = (
            f", plus the {fit.missing:,} of history the file lacks until it compacts"
            if fit.missing
            else ""
        )
        by_class = (
            "; here it weighs each character by its class, as Claude's API counts"
            if self.calibration.agent == "claude-code" and fit.model.startswith("claude-")
            else ""
        )
        if len(fits) == 1:
            formula = (
                f"Each call's calibrated count is {fit.overhead:,} (the overhead: "
                f"system prompt and tools) + {fit.ratio:.2f} x the lab's count of "
                f"what it sent{lacks}."
            )
        else:
            each = "; ".join(
                f"{f.model}: {f.ratio:.2f} x"
                + (
                    ""
                    if f.own_ratio
                    else f" (all calls' ratio: {plural_calls(f.calls)} "
                    "of its own are too few)"
                )
                for f in fits
            )
            formula = (
                f"The log switches models, and each model's calls are counted by its "
                f"own ratio: a call's calibrated count is {fit.overhead:,} (the "
                f"overhead: system prompt and tools) + the ratio of the model that "
                f"answered x the lab's count of what it sent{lacks} ({each})."
            )
        return textwrap.fill(
            f"{formula} The lab's count takes in the calls' arguments and the "
            f"thinking the model keeps, which the article's estimate leaves "
            f"out{by_class}.",
            PRINTED_COLUMNS,
        )

    @property
    def estimate_error(self) -> float:
        held = [
            (estimate - call.recorded) / call.recorded
            for call, estimate in zip(self.calls, self.estimates)
            if call.held_out
        ]
        return median(held) if held else 0.0


def _less_or_more(error: float) -> str:
    """A signed error as a count's words: "-35%" is "35% less", "+12%" "12% more"."""
    return f"{-error:.0%} less" if error <= 0 else f"{error:.0%} more"


def calibrated_log(log, name: str) -> Optional[CalibratedLog]:
    """The view of `log`; None when it records no usage. Its calls are the ones
    `calibrate` measured and `compress` prints (`predicted_calls`)."""
    calibration = calibrate(log)
    if calibration is None:
        return None
    points = call_points(log, calibration.held_out_fits)
    estimates = {row.round: row.counted for row in usage_rows(log)}
    calls = predicted_calls(log, calibration)
    return CalibratedLog(
        name,
        calibration,
        calls,
        [estimates.get(c.round, 0) for c in calls],
        [point.seen for point in points],
    )


def calibrated_file(path) -> Optional[CalibratedLog]:
    return calibrated_log(load_log(path), getattr(path, "name", str(path)))


def calibration_figure(view: CalibratedLog) -> go.Figure:
    """Per call: the record (black), the article's estimate (grey) and the calibrated
    count (blue), the calls it was fitted on and those held out shaded apart."""
    rounds = [call.round for call in view.calls]
    fitted_end = view.calls[view.calibration.fitted_calls - 1].round
    figure = go.Figure()
    _shade(
        figure, rounds[0] - 0.5, fitted_end + 0.5, FITTED_SHADE, "fitted on these calls"
    )
    if view.calibration.held_out.get("calls"):  # a log of one call has none
        _shade(
            figure,
            fitted_end + 0.5,
            rounds[-1] + 0.5,
            HELD_OUT_SHADE,
            "held out: the fit never saw these",
        )
    recorded = [c.recorded for c in view.calls]
    calibrated = [c.held_out_predicted for c in view.calls]
    for name, values, color, dash, width in (
        ("API counted (the log's record)", recorded, RECORDED_COLOR, "solid", 3),
        (
            "the article's estimate of the window",
            view.estimates,
            BASELINE_COLOR,
            "dot",
            2,
        ),
        ("calibrated count (fitted on the first half)", calibrated, BLUE, "solid", 2),
    ):
        figure.add_scatter(
            x=rounds,
            y=values,
            name=name,
            mode="lines",
            line={"color": color, "dash": dash, "width": width},
        )
    return per_call_layout(figure, f"{view.name}: input tokens per call", 400)


def per_call_layout(figure: go.Figure, title: str, height: int) -> go.Figure:
    """The layout of a figure of input tokens per model call (chapter 7.10 and 7.11):
    rounds across, tokens up from zero, the legend under the plot."""
    figure.update_layout(
        title=title,
        xaxis_title="round (model call)",
        yaxis_title="input tokens",
        yaxis_rangemode="tozero",
        # the two axes' 0 labels apart at the origin, not touching
        yaxis_ticklabelstandoff=ORIGIN_LABEL_GAP,
        xaxis_ticklabelstandoff=ORIGIN_LABEL_GAP,
        height=height,
        # the legend under the axis title, from its top: on a narrow page it wraps
        # to more lines downwards, never up over the title
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
        legend={"orientation": "h", "yanchor": "top", "y": -0.18},
    )
    rounds = max(
        (x for trace in figure.data for x in (trace.x or ()) if x is not None),
        default=0,
    )
    if rounds <= FEW_ROUNDS:  # a round a tick, never half rounds
        figure.update_xaxes(dtick=1)
    return figure


def _shade(figure: go.Figure, start: float, end: float, color: str, label: str) -> None:
    figure.add_vrect(
        x0=start,
        x1=end,
        fillcolor=color,
        line_width=0,
        annotation_text=label,
        annotation_position="top left",
    )


def calibration_frame(view: CalibratedLog) -> pd.DataFrame:
    """One row a call: the record, the article's estimate, the lab's count of what
    the call sent, the calibrated count made of it, its error, and whether the fit
    saw that call."""
    return pd.DataFrame(
        {
            "API counted": [f"{c.recorded:,}" for c in view.calls],
            "article's estimate": [f"{n:,}" for n in view.estimates],
            "lab's count": [f"{n:,}" for n in view.counts],
            **(
                {"model": [c.model for c in view.calls]}
                if len(view.calibration.fits) > 1
                else {}
            ),
            "calibrated": [f"{c.held_out_predicted:,}" for c in view.calls],
            "error": [f"{c.held_out_error:+.1%}" for c in view.calls],
            "fit": ["held out" if c.held_out else "fitted on" for c in view.calls],
            "what the log shows before the call": [
                "; ".join(c.events)
                or (
                    "not explained by anything the log records"
                    if abs(c.held_out_error) > GAP
                    else ""
                )
                for c in view.calls
            ],
        },
        index=pd.Index([c.round for c in view.calls], name="round"),
    )


def scrolling_table(frame: pd.DataFrame) -> HTML:
    """A long table in a frame that scrolls, its header in view, as the lab's other
    tables look (`shown_table`): the columns of numbers written as text ("42,404",
    "+2.7%") right-aligned, the words left."""
    texts = frame.astype(str)
    numbers = [
        column
        for column in frame.columns
        if texts[column].str.fullmatch(r"[+−-]?[\d,.]*\d%?|").all()
        and texts[column].str.len().any()
    ]
    return HTML(scroll_box(shown_table(frame, *numbers).html))


def calibration_view(name: str, content: bytes, beside=None):
    """(words, figure, frame, is_a_problem) of an uploaded log: its calibration, or
    words saying why there is none (figure and frame None). `beside`: the files
    uploaded with it, by name (Cline's usage record)."""
    try:
        log = parse_log(decoded_text(bytes(content), name), name, beside=beside)
    except LogFileError as error:
        return str(error), None, None, True
    view = calibrated_log(log, name)
    if view is None:
        return (
            f"{name}: the log records no usage (no per-call token counts), so there "
            "is nothing to calibrate on",
            None,
            None,
            True,
        )
    words = view.held_out_words + "\n" + view.formula_words + repaired_words(log)
    return words, calibration_figure(view), calibration_frame(view), False


def repaired_words(log) -> str:
    """The gaps the reader repaired, on lines of their own ("" when none): the calls
    are counted as the agent would have sent them after the repair."""
    rows = repair_counts(log.repairs)
    if not rows:
        return ""
    each = "; ".join(f"{r['count']} x {r['what']} (first: {r['first']})" for r in rows)
    return "\n" + textwrap.fill(
        "The file had gaps, repaired as the agent would before its next call, and "
        f"the calls are counted as repaired: {each}.",
        PRINTED_COLUMNS,
    )


class CalibrationExplorer(TextUploadExplorer):
    """Upload a log: its record, the article's estimate and the calibrated count, as
    the chapter shows the bundled real session (a figure and a table, not text)."""

    def __init__(self):
        super().__init__(
            calibration_view, "Calibration explorer (run the notebook, then upload a log)"
        )
        self.output = widgets.Output()
        self.widget = widgets.VBox([self.upload, self.output])

    def render(self):
        if not self.upload.value:
            return None
        files = upload_files(self.upload)
        line = reading_line(files, "fitting its count on its calls")
        self.output.outputs = (  # at once: a large log takes a moment
            {
                "output_type": "display_data",
                "data": {"text/plain": line, "text/html": html.escape(line)},
                "metadata": {},
            },
        )
        name, content, beside = split_upload(files)
        words, figure, frame, problem = described(
            calibration_view, name, content, parts=4, beside=beside
        )
        style = PROBLEM_CSS if problem else REPORT_CSS
        self.output.clear_output()
        with self.output:
            display(HTML(f'<p style="{style}padding:6px 10px">{html.escape(words)}</p>'))
            if figure is not None:
                display(figure)
                display(scrolling_table(frame))
        return words
