"""The bill at each threshold (chapter 11 and `sweep --figure`): what a session would
have cost under one policy, and the facts it would have lost, threshold by
threshold, with the recorded bill marked."""

from typing import Optional, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import BLUE, RECORDED_COLOR, RED


def sweep_figure(
    points: Sequence, policy: str, recorded_usd: Optional[float] = None, title: str = ""
) -> go.Figure:
    """Two panels over the thresholds: the bill in dollars (bars, the compaction
    calls' share darker) with the record's bill as a line, and the facts the agent
    used later that the windows lost."""
    thresholds = [p.threshold for p in points]
    figure = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        row_heights=[0.62, 0.38],
        vertical_spacing=0.08,
    )
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
        marker_color="#0b3c66",
        customdata=[p.compactions for p in points],
        hovertemplate="%{customdata} compactions: $%{y:,.2f}<extra></extra>",
        row=1,
        col=1,
    )
    if recorded_usd is not None:
        figure.add_hline(
            y=recorded_usd,
            line={"color": RECORDED_COLOR, "dash": "dash", "width": 2},
            annotation_text=f"recorded bill ${recorded_usd:,.2f}",
            annotation_position="top left",
            row=1,
            col=1,
        )
    figure.add_scatter(
        x=thresholds,
        y=[p.facts_lost for p in points],
        name="facts lost (used later, gone from the window)",
        mode="lines+markers",
        line={"color": RED, "width": 2},
        row=2,
        col=1,
    )
    figure.update_layout(
        title=title or f"{policy}: the bill and the facts lost, threshold by threshold",
        barmode="stack",
        height=460,
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
        legend={"orientation": "h", "yanchor": "top", "y": -0.14},
    )
    figure.update_yaxes(title_text="dollars", tickprefix="$", row=1, col=1)
    figure.update_yaxes(title_text="facts lost", rangemode="tozero", row=2, col=1)
    figure.update_xaxes(title_text="threshold (tokens)", tickformat=",", row=2, col=1)
    return figure
