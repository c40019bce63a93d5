"""Chapter 09's views: a coding-agent session of 1,000 tool calls, governed every round.

`scale_run` replays one generated history (`minilib.scale.histories`) through the
article's pipeline with the bounded summary (or the article's unbounded one), behind
`FastWindow`, and records per round what was sent and how big the summary in the
window was. `scale_figure` draws both against their limits; `ScaleExplorer` puts a
slider on the summary's budget. Everything shown is computed by the core.
"""

import html
from dataclasses import dataclass
from functools import lru_cache
from typing import List, Optional

import ipywidgets as widgets
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..loop import replay
from ..markers import is_summary
from ..model import scripted_summary
from ..scale.bounded import (
    CONDENSED_PREFIX,
    bounded_window,
    default_summary_budget,
    parse_line,
)
from ..scale.fast import FastWindow
from ..scale.histories import GeneratedConversation, generate_history
from ..tokens import estimate_message_tokens
from ..window import ContextOverflowError, Settings, article_window
from .numbers import boxed_slider, note_under
from .shown import ShownAsWidget
from .style import (
    COMPRESSED_COLOR,
    OVERFLOW_COLOR,
    OVERFLOW_SYMBOL,
    PROBLEM_CSS,
    SCALE_EXPLORER_HEIGHT,
    SCALE_FIGURE_HEIGHT,
    SCALE_FIGURE_WIDTH,
    STATUS_BOX_HEIGHT,
    STATUS_LINE_HEIGHT,
    SUMMARY_COLOR,
    THRESHOLD_COLOR,
    TOKENS_PANEL_TITLE,
    UNBOUNDED_NOTE,
    WIDE_SLIDER_WIDTH,
)


@dataclass
class ScaleRun:
    threshold: int
    budget: Optional[int]  # None: the article's unbounded summary
    sent: List[int]  # tokens sent, per round
    summary: List[int]  # tokens of the summary message in the window sent (0: none)
    rounds: int  # rounds the history has
    overflow: Optional[ContextOverflowError]
    # older facts the last summary sent says it dropped (its condensed line's count)
    dropped: int = 0

    def status(self) -> str:
        kind = (
            "unbounded summary"
            if self.budget is None
            else f"summary budget {self.budget:,}"
        )
        head = f"threshold {self.threshold:,}, {kind}: "
        dropped = (
            f"\n  the last summary: {self.dropped:,} older facts dropped to fit "
            "its budget"
            if self.dropped
            else ""
        )
        if self.overflow is None:
            return (
                head
                + f"all {self.rounds} rounds governed; largest summary "
                + f"{max(self.summary):,} tokens"
                + dropped
            )
        # short lines: a notebook breaks a long output line anywhere, numbers included
        error = self.overflow
        written = f", written by {error.written_by}" if error.written_by else ""
        largest = error.window[error.largest_index]
        # a summary carried from an earlier round is a user message: say what it is
        what = "the rolling summary" if is_summary(largest) else error.largest_role
        return "\n".join(
            [
                head + f"stopped before round {len(self.sent)} of {self.rounds}",
                f"  the window needs {error.tokens:,} tokens after compression, over "
                f"the threshold of {error.threshold:,}",
                f"  largest message left: #{error.largest_index} ({what}, "
                f"{error.largest_tokens:,} tokens{written}), which nothing may cut",
            ]
        )


@lru_cache(maxsize=4)
def _history(calls: int, seed: int):
    return generate_history(calls, seed)


def scale_run(
    calls: int = 1000,
    threshold: int = 32_000,
    budget: Optional[int] = -1,
    bounded: bool = True,
    seed: int = 0,
    min_chars: int = 240,
) -> ScaleRun:
    """Replay `calls` generated tool calls at `threshold`; `budget=-1`: the default one.

    `min_chars` is aging's: the article's 240 ages nearly every result; a production
    agent keeps results whole far longer (try 20,000)."""
    history = _history(calls, seed)
    settings = Settings(threshold=threshold, min_chars=min_chars)
    if bounded:
        budget = default_summary_budget(threshold) if budget == -1 else budget
        window = bounded_window(settings, summary_budget=budget)
    else:
        budget, window = None, article_window(scripted_summary, settings)
    sent, summary, dropped = [], [], [0]

    def observe(step, messages, compressions):
        sent.append(sum(estimate_message_tokens(m) for m in messages))
        folded = [m for m in messages if is_summary(m)]
        summary.append(sum(estimate_message_tokens(m) for m in folded))
        if folded:
            dropped[0] = dropped_facts(folded[-1].get("content") or "")

    run = replay(
        GeneratedConversation(history),
        FastWindow(window),
        max_steps=None,
        on_round=observe,
    )
    rounds = sum(1 for m in history.messages if m["role"] == "assistant")
    return ScaleRun(threshold, budget, sent, summary, rounds, run.overflow, dropped[0])


def dropped_facts(summary_text: str) -> int:
    """The older facts a bounded summary says it dropped (0: none, or no condensed
    line): the count its condensed line ends with."""
    start = summary_text.find(CONDENSED_PREFIX)
    if start < 0:
        return 0
    line = summary_text[start:].split("\n", 1)[0]
    condensed = parse_line(line)
    return condensed.dropped if condensed is not None else 0


def scale_figure(
    run: ScaleRun, width: int = SCALE_FIGURE_WIDTH, height: int = SCALE_FIGURE_HEIGHT
) -> go.Figure:
    """Tokens sent against the threshold, the summary against its budget, per round."""
    figure = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12,
        subplot_titles=(TOKENS_PANEL_TITLE, "The summary in the window, per round"),
    )
    for trace in scale_traces(run):
        figure.add_scatter(**trace, col=1)
    figure.update_xaxes(title_text="round", range=[0, run.rounds], row=2, col=1)
    figure.update_yaxes(title_text="tokens", tickformat=",", row=1, col=1)
    figure.update_yaxes(title_text="tokens", tickformat=",", row=2, col=1)
    figure.update_layout(
        width=width,
        height=height,
        template="plotly_white",
        margin=dict(l=70, r=20, t=40, b=50),
        legend=dict(orientation="h", y=-0.12),
    )
    return figure


def scale_traces(run: ScaleRun) -> list:
    """The figure's five traces, each with the row of its panel: the same five for
    every run (empty when there is no budget or no overflow), so the explorer updates
    them in place."""
    rounds, every_round = list(range(len(run.sent))), [0, run.rounds - 1]
    budget, overflow = run.budget, run.overflow
    return [
        dict(row=1, x=rounds, y=run.sent, name="sent", line=dict(color=COMPRESSED_COLOR)),
        dict(
            row=1,
            x=every_round,
            y=[run.threshold] * 2,
            name="threshold",
            line=dict(color=THRESHOLD_COLOR, dash="dash"),
        ),
        dict(
            row=2, x=rounds, y=run.summary, name="summary", line=dict(color=SUMMARY_COLOR)
        ),
        dict(
            row=2,
            x=every_round if budget is not None else [],
            y=[budget] * 2 if budget is not None else [],
            name="budget",
            line=dict(color=SUMMARY_COLOR, dash="dot"),
        ),
        dict(
            row=1,
            x=[len(run.sent)] if overflow is not None else [],
            y=[overflow.tokens] if overflow is not None else [],
            name="overflow",
            mode="markers",
            marker=dict(symbol=OVERFLOW_SYMBOL, size=14, color=OVERFLOW_COLOR),
        ),
    ]


def status_html(run: ScaleRun) -> str:
    """The status in lines of its own height: an ipywidgets HTML box gives each line a
    widget's height (28 px) otherwise, and an overflow's three lines outgrew the box.
    An overflow is a problem, shown in the problem box of chapter 6's dashboard."""
    text = html.escape(run.status()).replace("\n", "<br>")
    box = "" if run.overflow is None else PROBLEM_CSS + "padding:0 8px;border-radius:4px;"
    return f'<div style="{box}line-height:{STATUS_LINE_HEIGHT}"><b>{text}</b></div>'


class ScaleExplorer(ShownAsWidget):
    """A slider on the summary's budget (and the unbounded summary) at one threshold."""

    def __init__(self, threshold: int = 32_000, calls: int = 1000):
        self.threshold, self.calls = threshold, calls
        start = default_summary_budget(threshold)
        self.budget = widgets.IntSlider(
            start,
            min=500,
            readout_format=",d",
            max=threshold,
            step=500,
            description="budget",
            continuous_update=False,
            layout=widgets.Layout(width=WIDE_SLIDER_WIDTH),
        )
        self.budget_box = boxed_slider(self.budget, unit="token")
        self.number_boxes = [self.budget_box]
        self.unbounded = widgets.Checkbox(
            False, description="the article's unbounded summary", indent=False
        )
        # three lines (an overflow's), still: the chart under it never moves; a longer
        # text scrolls inside rather than hide under the chart
        self.status = widgets.HTML(
            layout=widgets.Layout(height=STATUS_BOX_HEIGHT, overflow="auto")
        )
        self.status.add_class("ccl-scale-status")
        self.run = scale_run(calls, threshold, start)
        self.status.value = status_html(self.run)
        self.figure = go.FigureWidget(
            scale_figure(self.run, height=SCALE_EXPLORER_HEIGHT)
        )
        for control in (self.budget, self.unbounded):
            control.observe(lambda change: self.render(), "value")
        self.widget = widgets.VBox(
            [
                note_under([self.budget, self.budget_box, self.unbounded]),
                self.status,
                self.figure,
            ]
        )
        self.widget.add_class("ccl-scale-explorer")

    def render(self) -> ScaleRun:
        unbounded = self.unbounded.value
        if unbounded != self.budget.disabled:  # ticked or unticked: say why, or clear it
            self.budget.disabled = unbounded  # the article's summary has no budget
            self.budget_box.show(self.budget.value, UNBOUNDED_NOTE if unbounded else "")
        self.run = scale_run(
            self.calls,
            self.threshold,
            self.budget.value,
            bounded=not self.unbounded.value,
        )
        self.status.value = status_html(self.run)
        fresh = scale_figure(self.run, height=SCALE_EXPLORER_HEIGHT)
        with self.figure.batch_update():  # one redraw
            for shown, new in zip(self.figure.data, fresh.data):
                shown.x, shown.y = new.x, new.y
        return self.run

    def text_form(self) -> str:
        return "Scale explorer (run the notebook to use the slider)"
