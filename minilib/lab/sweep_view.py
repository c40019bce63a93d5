"""The bill at each threshold (chapter 11, `sweep --figure`): what a session, or every
session of a folder, would have cost under one policy, and the facts it would have
lost, threshold by threshold, with the recorded bill marked."""

from typing import Optional, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import (
    BLUE,
    COMPACTION_CALLS_COLOR,
    RECORDED_COLOR,
    RED,
    SWEEP_FIGURE_HEIGHT,
)


def _two_panels(secondary: bool = False) -> go.Figure:
    """Dollars above, facts lost below, over the thresholds."""
    return make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        row_heights=[0.62, 0.38],
        vertical_spacing=0.08,
        specs=[[{"secondary_y": secondary}], [{}]],
    )


def _recorded_line(figure: go.Figure, usd: Optional[float], words: str) -> None:
    if usd is not None:
        figure.add_hline(
            y=usd,
            line={"color": RECORDED_COLOR, "dash": "dash", "width": 2},
            annotation_text=f"{words} ${usd:,.2f}",
            annotation_position="top left",
            row=1,
            col=1,
        )


def _facts_lost(figure: go.Figure, thresholds, lost, name: str) -> None:
    figure.add_scatter(
        x=thresholds,
        y=lost,
        name=name,
        mode="lines+markers",
        line={"color": RED, "width": 2},
        row=2,
        col=1,
    )


def _layout(figure: go.Figure, title: str, money: str) -> go.Figure:
    figure.update_layout(
        title=title,
        barmode="stack",
        height=SWEEP_FIGURE_HEIGHT,
        template="plotly_white",  # as every other chart of the course
        margin={"l": 60, "r": 60, "t": 50, "b": 40},
        legend={"orientation": "h", "yanchor": "top", "y": -0.14},
    )
    figure.update_yaxes(title_text=money, tickprefix="$", row=1, col=1)
    figure.update_yaxes(title_text="facts lost", rangemode="tozero", row=2, col=1)
    figure.update_xaxes(title_text="threshold (tokens)", tickformat=",", row=2, col=1)
    return figure


def sweep_figure(
    points: Sequence, policy: str, recorded_usd: Optional[float] = None, title: str = ""
) -> go.Figure:
    """One session: the bill at each threshold (bars, the compaction calls' part
    darker) with the record's bill as a line, and the facts the agent used later that
    the windows lost."""
    thresholds = [p.threshold for p in points]
    figure = _two_panels()
    figure.add_bar(
        x=thresholds,
        y=[p.bill_usd - p.compaction_usd for p in points],
        name="the calls of the session",
        marker_color=BLUE,
        hovertemplate="%{x:,} tokens: $%{y:,.2f}<extra></extra>",
        row=1,
        col=1,
    )
    figure.add_bar(
        x=thresholds,
        y=[p.compaction_usd for p in points],
        name="its compaction calls",
        marker_color=COMPACTION_CALLS_COLOR,
        customdata=[p.compactions for p in points],
        hovertemplate="%{customdata} compactions: $%{y:,.2f}<extra></extra>",
        row=1,
        col=1,
    )
    _recorded_line(figure, recorded_usd, "recorded bill")
    _facts_lost(
        figure,
        thresholds,
        [p.facts_lost for p in points],
        "facts lost (used later, gone from the window)",
    )
    title = title or f"{policy}: the bill and the facts lost, threshold by threshold"
    return _layout(figure, title, "dollars")


def corpus_figure(totals: Sequence[dict], policy: str) -> go.Figure:
    """Every session of a folder, per threshold: the total bill (bars) with the
    recorded total marked, a session's bill (its median and quartiles, right axis),
    and the facts lost in all."""
    thresholds = [t["threshold"] for t in totals]
    figure = _two_panels(secondary=True)
    figure.add_bar(
        x=thresholds,
        y=[t["bill_usd"] for t in totals],
        name="total bill, every session",
        marker_color=BLUE,
        row=1,
        col=1,
    )
    figure.add_scatter(
        x=thresholds,
        y=[t["bill_median"] for t in totals],
        error_y={
            "type": "data",
            "symmetric": False,
            "array": [t["bill_q3"] - t["bill_median"] for t in totals],
            "arrayminus": [t["bill_median"] - t["bill_q1"] for t in totals],
        },
        name="a session's bill: median and quartiles",
        mode="markers",
        marker={"color": COMPACTION_CALLS_COLOR},
        row=1,
        col=1,
        secondary_y=True,
    )
    recorded = next((t["recorded_usd"] for t in totals if t.get("recorded_usd")), None)
    _recorded_line(figure, recorded, "recorded total")
    _facts_lost(figure, thresholds, [t["facts_lost"] for t in totals], "facts lost")
    sessions = max(t["sessions"] for t in totals)
    figure.update_yaxes(
        title_text="a session", tickprefix="$", row=1, col=1, secondary_y=True
    )
    title = f"{policy} over {sessions:,} sessions: the bill and the facts lost"
    return _layout(figure, title, "total")
