"""Chapter 11: what a session cost, and what it would have cost at another threshold.

`record_frame` prices a log's recorded usage by model and by kind of token;
`ThresholdExplorer` moves one policy's threshold over a sweep of it (computed once,
when the chapter opens) and shows the bill, the compactions and the facts lost at the
threshold chosen, the recorded bill marked. `threshold_words` is the pure function
behind its line, so tests drive it without a browser.
"""

import html
from dataclasses import dataclass
from typing import List, Optional, Sequence

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from ..cli.compare import row_counting
from ..logs import load_log
from ..measure.bill import KIND_HEADERS, KINDS, Bill, record_bill
from ..policies.production.sweep import SweepPoint, sweep_log
from .shown import ShownAsWidget
from .style import (
    STATUS_LINE_HEIGHT,
    SWEEP_CHOSEN_COLOR,
    SWEEP_OTHER_COLOR,
    WIDE_SLIDER_WIDTH,
)
from .sweep_view import sweep_figure
from .tables import shown_table


def record_frame(bill: Bill):
    """A row a model: calls, then the dollars of each kind of token, and the total,
    as a chapter shows a table."""
    rows = []
    for model, entry in bill.by_model().items():
        dollars = {
            KIND_HEADERS[k]: sum(
                c.usd_by_kind.get(k, 0.0) for c in bill.calls if c.model == model
            )
            for k in KINDS
        }
        rows.append(
            {
                "model": model,
                "calls": entry["calls"],
                **{kind: f"${usd:,.2f}" for kind, usd in dollars.items()},
                "total": f"${entry['usd']:,.2f}",
            }
        )
    frame = pd.DataFrame(rows).set_index("model")
    return shown_table(frame, *frame.columns)


@dataclass
class SessionSweep:
    """One log swept: its recorded bill and a point a threshold."""

    name: str
    policy: str
    recorded_usd: Optional[float]
    points: List[SweepPoint]

    def at(self, threshold: int) -> SweepPoint:
        return min(self.points, key=lambda p: abs(p.threshold - threshold))

    @property
    def cheapest(self) -> SweepPoint:
        return min(self.points, key=lambda p: p.bill_usd)


def session_sweep(path, policy: str, thresholds: Sequence[int]) -> SessionSweep:
    """`sweep` on one log, counted as `compare` counts it (its one calibrated unit)."""
    log = load_log(path)
    points = sweep_log(log, policy, list(thresholds), row_counting(log))
    recorded = record_bill(log).total_usd if log.billed else None
    return SessionSweep(getattr(path, "name", str(path)), policy, recorded, points)


def threshold_words(sweep: SessionSweep, threshold: int) -> str:
    """The line under the slider: the bill at `threshold` beside the record."""
    point = sweep.at(threshold)
    words = (
        f"at {point.threshold:,} tokens this session would have cost "
        f"${point.bill_usd:,.2f}, compacted {point.compactions} time"
        f"{'s' * (point.compactions != 1)} and lost {point.facts_lost} of the "
        f"{point.facts_used} facts the agent used later"
    )
    if sweep.recorded_usd is not None:
        # of the two figures as printed, so the three add up on screen
        difference = round(point.bill_usd, 2) - round(sweep.recorded_usd, 2)
        words += (
            f"; the provider billed ${sweep.recorded_usd:,.2f} "
            f"({'+' if difference >= 0 else '−'}${abs(difference):,.2f})"
        )
    return words


class ThresholdExplorer(ShownAsWidget):
    """A slider over the swept thresholds; the figure marks the one chosen."""

    def __init__(self, sweep: SessionSweep, start: Optional[int] = None):
        self.sweep = sweep
        values = [p.threshold for p in sweep.points]
        self.slider = widgets.SelectionSlider(
            options=[(f"{v:,}", v) for v in values],
            value=start if start in values else values[len(values) // 2],
            description="threshold",
            continuous_update=False,
            layout=widgets.Layout(width=WIDE_SLIDER_WIDTH),
        )
        self.line = widgets.HTML()
        self.figure = go.FigureWidget(
            sweep_figure(sweep.points, sweep.policy, sweep.recorded_usd)
        )
        self.slider.observe(lambda change: self.render(), "value")
        self.render()
        self.widget = widgets.VBox([self.slider, self.line, self.figure])

    def render(self) -> str:
        threshold = self.slider.value
        words = threshold_words(self.sweep, threshold)
        self.line.value = (
            f'<div style="line-height:{STATUS_LINE_HEIGHT}">{html.escape(words)}</div>'
        )
        colours = [
            SWEEP_CHOSEN_COLOR if p.threshold == threshold else SWEEP_OTHER_COLOR
            for p in self.sweep.points
        ]
        with self.figure.batch_update():
            self.figure.data[0].marker.color = colours
        return words

    def text_form(self) -> str:
        return "Threshold explorer (run the notebook to move the threshold)"
