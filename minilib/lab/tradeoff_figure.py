"""The trade-off figure: one row a policy, what it saved, what it lost and what the
prompt cache cost, in three panels side by side (chapter 10 and the policy lab).
"""

from typing import List, Mapping, Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .policy_rows import broke_windows, cache_percent, lost_task, saved_percent
from .style import (
    AGING_COLOR,
    BAR_LABEL_OUTSIDE,
    BROKEN_PATTERN,
    BROKEN_TRACE,
    COMPRESSED_COLOR,
    OVERFLOW_COLOR,
    PANEL_TITLE_SIZE,
    POLICY_FIGURE_HEIGHT,
    POLICY_FIGURE_WIDTH,
    SUMMARY_COLOR,
    TEXT_COLOR,
)


def tradeoff_traces(rows: Sequence[Mapping]) -> List[dict]:
    """The figure's bar traces, one bar a policy in every panel: tokens saved
    (`saved_bars`) and the legend's key to its hatching (no bars, in the legend only
    when a run broke windows); the facts lost and restorable; the cache's cost. Always
    the same five, so a figure on screen is updated trace by trace. One that refused
    its setting gets no bar anywhere (the table says why)."""
    names = [row["policy"] for row in rows]
    hatched_key = dict(
        x=[None],
        y=[None],
        orientation="h",
        name=BROKEN_TRACE,
        marker=dict(color=COMPRESSED_COLOR, pattern=BROKEN_PATTERN),
        xaxis="x",
        yaxis="y",
        showlegend=any(map(broke_windows, rows)),
    )

    def ran_or_zero(value) -> list:
        return [0 if "error" in row else value(row) for row in rows]

    cost = ran_or_zero(
        lambda row: round(100 * row["cache_cost"] / max(row["uncached_cost"], 1))
    )
    return [
        saved_bars(rows),
        hatched_key,
        _panel_bars(
            names, 2, ran_or_zero(lambda r: r["facts_lost"]), "facts lost", OVERFLOW_COLOR
        ),
        _panel_bars(
            names,
            2,
            ran_or_zero(lambda r: r["facts_restorable"]),
            "restorable",
            AGING_COLOR,
        ),
        _panel_bars(
            names,
            3,
            cost,
            "cache cost",
            SUMMARY_COLOR,
            text=["" if "error" in row else cache_percent(row) for row in rows],
            **BAR_LABEL_OUTSIDE,
        ),
    ]


def saved_bars(rows: Sequence[Mapping]) -> dict:
    """The tokens each policy saved. A policy whose window overflowed gets no bar, only
    "stopped at round N" in red: it saved nothing, the agent failed there; one that
    refused its setting, only "not run" in red. One that sent windows an API rejects
    (broken pairing) gets its bar hatched and, in red, how many it broke instead of a
    share: what it cut by breaking them is not a saving an agent could have had."""
    stopped = ["error" in row or row["overflow_round"] is not None for row in rows]
    broken = [broke_windows(row) for row in rows]
    forgot = [lost_task(row) for row in rows]
    return _panel_bars(
        [row["policy"] for row in rows],
        1,
        [
            0 if stop else round(100 * row["tokens_saved"], 1)
            for row, stop in zip(rows, stopped)
        ],
        "tokens saved",
        dict(
            color=COMPRESSED_COLOR,
            pattern=BROKEN_PATTERN | dict(shape=["/" if bad else "" for bad in broken]),
        ),
        text=[saved_text(row) for row in rows],
        textfont=dict(
            color=[
                OVERFLOW_COLOR if stop or bad or gone else TEXT_COLOR
                for stop, bad, gone in zip(stopped, broken, forgot)
            ]
        ),
        **BAR_LABEL_OUTSIDE,
    )


def _panel_bars(names: list, column: int, x: list, name: str, color, **more) -> dict:
    """One bar a policy in the figure's panel `column` (its axes x, x2, x3 and y, y2,
    y3); `color` a colour, or a whole marker (a colour and a pattern)."""
    axis = "" if column == 1 else str(column)
    return dict(
        orientation="h",
        y=names,
        x=x,
        name=name,
        marker=color if isinstance(color, dict) else dict(color=color),
        xaxis=f"x{axis}",
        yaxis=f"y{axis}",
        **more,
    )


def saved_text(row: Mapping) -> str:
    """The label of a policy's bar of tokens saved: the table's percentage, or why
    there is no bar."""
    if "error" in row:
        return "not run (the table says why)"
    if row["overflow_round"] is not None:
        return f"stopped at round {row['overflow_round']:,}"
    if broke_windows(row):  # short: it sits between the bar and the next panel
        return f"{row['windows_invalid']:,} broken"
    if lost_task(row):  # a saving made by forgetting the task, said like a stop
        return f"{saved_percent(row)}, task gone"
    return saved_percent(row)


def tradeoff_figure(rows: Sequence[Mapping], title: str = "") -> go.Figure:
    """One row a policy, three panels side by side: what it saved, what it lost, what
    the cache cost (a bar chart names every policy; a scatter piled their labels up)."""
    figure = make_subplots(
        rows=1,
        cols=3,
        shared_yaxes=True,
        horizontal_spacing=0.05,
        column_widths=[0.4, 0.3, 0.3],
        subplot_titles=(
            "tokens saved (%)",
            "facts lost, restorable",
            "cache cost (% of uncached)",
        ),
    )
    # the panels' titles apart where the chart stands beside the sliders (800 px)
    figure.update_annotations(font_size=PANEL_TITLE_SIZE)
    figure.add_traces([go.Bar(**trace) for trace in tradeoff_traces(rows)])
    figure.update_yaxes(autorange="reversed", row=1, col=1)  # the table's order, top down
    # room for "stopped at round N", and for "240 broken" after a bar at 99%
    figure.update_xaxes(range=[0, 150], tickvals=[0, 25, 50, 75, 100], row=1, col=1)
    # room after a bar for its label: a cache can cost more than sending it uncached
    # (122% for a batched policy), and the lab redraws bars, never this axis
    figure.update_xaxes(range=[0, 150], tickvals=[0, 50, 100], row=1, col=3)
    # facts are counts: from 0, and no -1...1 axis when no policy lost any
    figure.update_xaxes(rangemode="tozero", row=1, col=2)
    figure.update_layout(
        title=title,
        barmode="stack",
        width=POLICY_FIGURE_WIDTH,
        height=POLICY_FIGURE_HEIGHT,
        template="plotly_white",
        margin=dict(l=180, r=20, t=70, b=40),
        # in the panels' order, left to right (stacked bars list theirs reversed)
        legend=dict(orientation="h", y=-0.08, traceorder="normal"),
    )
    return figure


def lab_chart_title(log: str, window: int) -> str:
    return f"{log} at a {window:,}-token window"
