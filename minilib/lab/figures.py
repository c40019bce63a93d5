"""The article's two-panel figure, and the lab's version of it with a zoom on the
threshold.

`session_figure`: the article's figure as a static chart (chapter 7 draws real transcripts
with it). Left: baseline (grey), compressed (blue), the threshold (red dashed), aging
rounds
(orange down-triangles), summary rounds (purple stars) and, when a setting cannot be
governed, the round that overflowed (red cross). Right: messages per round, baseline
against compressed.

`lab_figure`: the same two panels on top, sized for a projector, and under them a zoom on
the compressed window (y from 0 to 1.5 x the threshold): per round the window before
compression (top of a drop) and the window sent (bottom), joined into the sawtooth the
article describes, breathing just under the threshold line. On the 0-18,000 axis of the
top panel
that sawtooth is a flat line near zero. Values above the zoom's top are labelled at its
edge.

`figure_traces(run, baseline)` computes every trace's data; building a figure and
updating it both go through it, so a slider change draws exactly what a fresh figure
for that setting would show.
"""

import math
from typing import Dict, Optional

import plotly.graph_objects as go
from plotly.basedatatypes import Undefined
from plotly.subplots import make_subplots

from ..session import Baseline, SessionRun

BASELINE_COLOR = "#8c8c8c"
COMPRESSED_COLOR = "#1f77b4"
THRESHOLD_COLOR = "#d62728"
AGING_COLOR = "#ff7f0e"
SUMMARY_COLOR = "#9467bd"
OVERFLOW_COLOR = "#d62728"

# Trace names in figure order; updates and tests find traces by these names.
TOKEN_TRACES = ("baseline", "compressed", "threshold", "aging", "summary", "overflow")
MESSAGE_TRACES = ("baseline messages", "compressed messages")
TRACE_NAMES = TOKEN_TRACES + MESSAGE_TRACES  # session_figure
# The zoom under them (lab_figure); each named after the trace of the token panel it
# repeats.
ZOOM_TRACES = (
    "window (zoom)",
    "threshold (zoom)",
    "aging (zoom)",
    "summary (zoom)",
    "overflow (zoom)",
    "off the scale (zoom)",
)
LAB_TRACE_NAMES = TRACE_NAMES + ZOOM_TRACES

HEADROOM = 1.06  # room above the highest point, so markers are not clipped
FIGURE_WIDTH, FIGURE_HEIGHT = 840, 500  # fits JupyterLab beside its file browser
LOG_AXIS_FLOOR = 50  # tokens; below the smallest window (the protected head alone is 135)
ZOOM_FACTOR = (
    1.5  # the zoom's y axis ends at 1.5 x the threshold: room to see a window go over it
)
OFF_SCALE_AT = (
    0.95  # where, as a fraction of the zoom's top, a value above it is drawn and labelled
)
BEFORE, SENT = (
    "before compression",
    "sent",
)  # the two points of a round in the zoom, in its hover text


# How far, in rounds, the aging and summary markers of one round are drawn apart: in a
# round where both fired the star would hide the triangle (a student counts one aging
# too few).
MARKER_OFFSET = 0.2


def marker_rounds(rounds, side: int) -> list:
    """x of each round's marker: `side` x MARKER_OFFSET off when both strategies fired."""
    return [
        r.round + side * MARKER_OFFSET if r.aged and r.summarized else r.round
        for r in rounds
    ]


def aging_marks(aged, compressions) -> dict:
    """The aging triangles of these rounds: where aging left the window, from what.

    In a round where the summary follows, that is aging's own result (round 9: 1,464 →
    1,282, before the summary's 742), as the state machine of chapter 5 steps it."""
    aged_to = {
        c.step: c.after_tokens for c in compressions if c.strategy == "tool_result_aging"
    }
    return {
        "x": marker_rounds(aged, -1),
        "y": [aged_to.get(r.round, r.tokens_after) for r in aged],
        "customdata": [r.tokens_before for r in aged],
        "text": [str(r.round) for r in aged],
    }


def summary_marks(summarized) -> dict:
    """The summary stars of these rounds, with the message count before the fold."""
    return {
        "x": marker_rounds(summarized, +1),
        "y": [r.tokens_after for r in summarized],
        "customdata": [r.messages_before for r in summarized],
        "text": [str(r.round) for r in summarized],
    }


def figure_traces(run: SessionRun, baseline: Baseline) -> Dict[str, dict]:
    """The data of every trace, by trace name, for one run (and the session's uncompressed
    baseline).

    The baseline is drawn for every round of the session: it does not depend on the
    settings and, unlike `run.rounds`, it does not stop at an overflow.
    """
    rounds = run.rounds
    all_rounds = list(range(len(baseline.tokens)))
    aged = [r for r in rounds if r.aged]
    summarized = [r for r in rounds if r.summarized]
    overflow = run.overflow
    return {
        "baseline": {"x": all_rounds, "y": list(baseline.tokens)},
        "compressed": {
            "x": [r.round for r in rounds],
            "y": [r.tokens_after for r in rounds],
            "customdata": [r.tokens_before for r in rounds],
        },
        "threshold": {
            "x": [all_rounds[0], all_rounds[-1]],
            "y": [run.settings.threshold] * 2,
        },
        "aging": aging_marks(aged, run.compressions),
        "summary": summary_marks(summarized),
        # The round that could not be governed: the first one missing from run.rounds.
        "overflow": {
            "x": [len(rounds)] if overflow else [],
            "y": [overflow.tokens] if overflow else [],
        },
        "baseline messages": {"x": all_rounds, "y": list(baseline.messages)},
        "compressed messages": {
            "x": [r.round for r in rounds],
            "y": [r.messages_after for r in rounds],
        },
    }


def zoom_points(run: SessionRun) -> list:
    """(round, tokens, BEFORE or SENT) along the sawtooth: per round the window as
    measured, then as sent.

    A round that compressed nothing has one point; one that did drops straight down at its
    round.
    """
    points = []
    for r in run.rounds:
        if r.tokens_before != r.tokens_after:
            points.append((r.round, r.tokens_before, BEFORE))
        points.append((r.round, r.tokens_after, SENT))
    return points


def zoom_axis_range(run: SessionRun) -> list:
    """Fixed for a threshold, whatever the other knobs: the sawtooth moves against a still
    axis."""
    return [0, run.settings.threshold * ZOOM_FACTOR]


def zoom_traces(run: SessionRun, baseline: Baseline) -> Dict[str, dict]:
    """The data of the zoom's traces (see `figure_traces` for the panels above it)."""
    rounds = run.rounds
    top = zoom_axis_range(run)[1]
    points = zoom_points(run)
    aged = [r for r in rounds if r.aged]
    summarized = [r for r in rounds if r.summarized]
    overflow = run.overflow
    # Values above the zoom's top: drawn at its edge, with the number written beside them.
    off_scale = [(x, y) for x, y, _ in points if y > top]
    if overflow is not None and overflow.tokens > top:
        off_scale.append((len(rounds), overflow.tokens))
    last_round = len(baseline.tokens) - 1
    return {
        "window (zoom)": {
            "x": [x for x, _, _ in points],
            "y": [y for _, y, _ in points],
            "customdata": [kind for _, _, kind in points],
        },
        "threshold (zoom)": {"x": [0, last_round], "y": [run.settings.threshold] * 2},
        "aging (zoom)": aging_marks(aged, run.compressions),
        "summary (zoom)": summary_marks(summarized),
        "overflow (zoom)": {
            "x": [len(rounds)] if overflow else [],
            "y": [overflow.tokens] if overflow else [],
        },
        "off the scale (zoom)": {
            "x": [x for x, _ in off_scale],
            "y": [top * OFF_SCALE_AT] * len(off_scale),
            "text": [f"{y:,}" for _, y in off_scale],
        },
    }


def lab_traces(run: SessionRun, baseline: Baseline) -> Dict[str, dict]:
    """Every trace of `lab_figure`, by name, in figure order."""
    return {**figure_traces(run, baseline), **zoom_traces(run, baseline)}


def figure_title(run: SessionRun) -> str:
    """One line under which a change of setting is readable at a glance."""
    if run.overflow is not None:
        return (
            f"Stopped at round {len(run.rounds)}: {run.overflow.tokens:,} tokens left "
            "after compression, "
            f"threshold {run.settings.threshold:,}"
        )
    last = run.rounds[-1]
    saved = 1 - last.tokens_after / last.baseline_tokens
    return (
        f"Round {last.round}: {last.tokens_after:,} tokens sent against "
        f"{last.baseline_tokens:,} "
        f"without compression ({saved:.0%} less)"
    )


def token_axis_range(run: SessionRun, baseline: Baseline, log: bool = False) -> list:
    """A fixed y-range for the token panel: autorange would rescale and hide a change.

    It depends only on the baseline and the threshold, so moving any other slider
    keeps the axis still and the compressed line visibly moves against it.
    """
    top = max(max(baseline.tokens), run.settings.threshold) * HEADROOM
    if log:  # plotly takes a log axis range in powers of ten
        return [math.log10(min(LOG_AXIS_FLOOR, run.settings.threshold)), math.log10(top)]
    return [0, top]


LOG_TICKS = [50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000]


def token_axis_ticks(log: bool, switching: bool = False) -> dict:
    """A log axis labels every minor tick by default (50, 60, 70...): list readable ones
    instead.

    `switching`: the axis was log before, so its tick list must be cleared (a new axis
    needs nothing).
    """
    if log:
        return dict(tickmode="array", tickvals=LOG_TICKS)
    return dict(tickmode="auto", tickvals=None) if switching else {}


def message_axis_range(baseline: Baseline) -> list:
    """Compressed windows never hold more messages than the baseline, so its maximum
    bounds the panel."""
    return [0, max(baseline.messages) * HEADROOM + 1]


def _trace_styles() -> Dict[str, dict]:
    """Mode, colour, marker and hover text of every trace of session_figure, by name."""
    token_styles = {
        "baseline": dict(
            mode="lines+markers",
            line=dict(color=BASELINE_COLOR, width=2),
            marker=dict(size=5),
            hovertemplate="round %{x}<br>%{y:,} tokens without "
            "compression<extra></extra>",
        ),
        "compressed": dict(
            mode="lines+markers",
            line=dict(color=COMPRESSED_COLOR, width=3),
            marker=dict(size=6),
            hovertemplate="round %{x}<br>%{y:,} tokens sent<br>%{customdata:,} before "
            "compression"
            "<extra></extra>",
        ),
        "threshold": dict(
            mode="lines",
            line=dict(color=THRESHOLD_COLOR, width=2, dash="dash"),
            hovertemplate="threshold %{y:,} tokens<extra></extra>",
        ),
        "aging": dict(
            mode="markers",
            marker=dict(
                symbol="triangle-down",
                size=13,
                color=AGING_COLOR,
                line=dict(color="white", width=1),
            ),
            hovertemplate="round %{text}: aging<br>%{customdata:,} → %{y:,} "
            "tokens<extra></extra>",
        ),
        "summary": dict(
            mode="markers",
            marker=dict(
                symbol="star",
                size=18,
                color=SUMMARY_COLOR,
                line=dict(color="white", width=1),
            ),
            hovertemplate="round %{text}: rolling summary<br>%{customdata} messages "
            "before, %{y:,} tokens after<extra></extra>",
        ),
        "overflow": dict(
            mode="markers",
            marker=dict(symbol="x", size=16, color=OVERFLOW_COLOR),
            hovertemplate="round %{x}: overflow<br>%{y:,} tokens left, nothing more may "
            "be cut"
            "<extra></extra>",
        ),
    }
    message_styles = {
        "baseline messages": dict(
            mode="lines+markers",
            line=dict(color=BASELINE_COLOR, width=2),
            marker=dict(size=5),
            legendgroup="baseline",
            showlegend=False,
            hovertemplate="round %{x}<br>%{y} messages without "
            "compression<extra></extra>",
        ),
        "compressed messages": dict(
            mode="lines+markers",
            line=dict(color=COMPRESSED_COLOR, width=3),
            marker=dict(size=6),
            legendgroup="compressed",
            showlegend=False,
            hovertemplate="round %{x}<br>%{y} messages sent<extra></extra>",
        ),
    }
    return {**token_styles, **message_styles}


def session_figure(
    run: SessionRun, baseline: Baseline, *, widget: bool = True, log_tokens: bool = False
):
    """The article's two-panel figure for one run, as a static go.Figure (or a
    FigureWidget)."""
    figure = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.62, 0.38],
        horizontal_spacing=0.09,
        subplot_titles=("Tokens sent to the model, per round", "Messages per round"),
    )
    data, styles = figure_traces(run, baseline), _trace_styles()
    for name in TOKEN_TRACES:
        figure.add_trace(
            go.Scatter(name=name, legendgroup=name, **data[name], **styles[name]),
            row=1,
            col=1,
        )
    for name in MESSAGE_TRACES:
        figure.add_trace(
            go.Scatter(name=name, **data[name], **styles[name]), row=1, col=2
        )
    rounds = len(baseline.tokens)
    figure.update_xaxes(title_text="round", range=[-0.5, rounds - 0.5], dtick=1)
    figure.update_yaxes(
        title_text="tokens (estimate)",
        row=1,
        col=1,
        tickformat=",",
        type="log" if log_tokens else "linear",
        range=token_axis_range(run, baseline, log_tokens),
        **token_axis_ticks(log_tokens),
    )
    figure.update_yaxes(
        title_text="messages", row=1, col=2, range=message_axis_range(baseline)
    )
    # A fixed width: inside an ipywidgets box a FigureWidget does not stretch to the
    # output area.
    figure.update_layout(
        title=dict(text=figure_title(run), x=0.01, y=0.97, font=dict(size=15)),
        width=FIGURE_WIDTH,
        height=FIGURE_HEIGHT,
        margin=dict(l=70, r=20, t=70, b=100),
        template="plotly_white",
        legend=dict(orientation="h", yanchor="top", y=-0.16, x=0.0),
    )
    # Wrap only the finished figure: a FigureWidget syncs its traces to the browser as
    # they are at construction (or at its own display), and a page built from that state
    # (Voila, a reload) would otherwise draw an empty chart.
    return go.FigureWidget(figure) if widget else figure


# ---- the lab's figure: the two panels, sized for a projector, and the zoom under them
# -------------------

# 840 px: JupyterLab at 1280 px with the file browser open leaves the notebook 848 px,
# and a FigureWidget there does not follow its box (width=None is for the Voila page).
LAB_WIDTH, LAB_HEIGHT = 840, 720
FONT_SIZE, TITLE_SIZE, LEGEND_SIZE = (
    14,
    16,
    15,
)  # pixels: readable from the back of a classroom
GRID_COLOR, TEXT_COLOR = "#EBF0F8", "#2a3f5f"  # plotly_white's grid and text colours
# Every axis of the lab's figure: what plotly_white set, and labels that are not re-
# measured (see lab_figure).
LAB_AXIS_STYLE = dict(
    ticks="", linecolor=GRID_COLOR, zeroline=False, ticklabeloverflow="allow"
)
# Plain lines in the lab's figure: every marker is styled again on each redraw, and these
# ones mark nothing a round did (the baseline does not depend on the settings; the message
# counts are read from the lines and the table). The compressed tokens keep a marker per
# round.
LAB_LINES_ONLY = ("baseline", "baseline messages", "compressed messages")
ZOOM_TITLE = (
    "Zoom on the threshold: each drop is one round's compression (measured → sent)"
)


def _zoom_styles() -> Dict[str, dict]:
    """Styles of the zoom's traces; each joins the legend group of the trace it repeats,
    so a
    click on "aging" in the legend hides the triangles in both panels."""
    styles = _trace_styles()
    return {
        "window (zoom)": dict(
            mode="lines+markers",
            legendgroup="compressed",
            showlegend=False,
            line=dict(color=COMPRESSED_COLOR, width=2),
            marker=dict(size=7, color=COMPRESSED_COLOR),
            hovertemplate="round %{x}<br>%{y:,} tokens %{customdata}<extra></extra>",
        ),
        "threshold (zoom)": dict(
            styles["threshold"], legendgroup="threshold", showlegend=False
        ),
        "aging (zoom)": dict(styles["aging"], legendgroup="aging", showlegend=False),
        "summary (zoom)": dict(
            styles["summary"], legendgroup="summary", showlegend=False
        ),
        "overflow (zoom)": dict(
            styles["overflow"], legendgroup="overflow", showlegend=False
        ),
        "off the scale (zoom)": dict(
            mode="markers+text",
            legendgroup="compressed",
            showlegend=False,
            marker=dict(symbol="triangle-up", size=11, color=COMPRESSED_COLOR),
            textposition="middle right",
            textfont=dict(size=FONT_SIZE, color=COMPRESSED_COLOR),
            cliponaxis=False,
            hovertemplate="round %{x}: %{text} tokens, above this scale<extra></extra>",
        ),
    }


def lab_figure(
    run: SessionRun,
    baseline: Baseline,
    *,
    widget: bool = True,
    log_tokens: bool = False,
    width: Optional[int] = LAB_WIDTH,
    height: int = LAB_HEIGHT,
):
    """The lab's figure for one run: tokens and messages per round on top, the zoom under
    them.

    No figure title: the status box above the chart already says what the run came to.
    """
    figure = make_subplots(
        rows=2,
        cols=2,
        column_widths=[0.62, 0.38],
        row_heights=[0.5, 0.5],
        horizontal_spacing=0.08,
        vertical_spacing=0.13,
        specs=[[{}, {}], [{"colspan": 2}, None]],
        subplot_titles=(
            "Tokens sent to the model, per round",
            "Messages per round",
            ZOOM_TITLE,
        ),
    )
    data, styles = lab_traces(run, baseline), {**_trace_styles(), **_zoom_styles()}
    cells = {
        **{name: (1, 1) for name in TOKEN_TRACES},
        **{name: (1, 2) for name in MESSAGE_TRACES},
        **{name: (2, 1) for name in ZOOM_TRACES},
    }
    for name in LAB_TRACE_NAMES:
        style = (
            dict(styles[name], legendgroup=name) if name in TOKEN_TRACES else styles[name]
        )
        if (
            name in LAB_LINES_ONLY
        ):  # markers where something happens; the others are plain lines
            style = dict(style, mode="lines")
        row, col = cells[name]
        figure.add_trace(go.Scatter(name=name, **data[name], **style), row=row, col=col)
    rounds = len(baseline.tokens)
    # Every round labelled in the wide zoom, every other one on top: tick labels are much
    # of what plotly redraws per change (about 3 ms of a keypress for the 14 labels
    # saved). plotly redraws every axis on each data change, so the axes carry only what
    # is read:
    # - ticklabeloverflow="allow": the default ("hide past div") measures every tick
    # label's box again for each label drawn, about 6 ms of a keypress; these labels never
    # overflow the figure;
    # - no vertical grid lines or zero lines (the rounds are labelled; a line at round 0
    # says nothing).
    figure.update_xaxes(
        range=[-0.5, rounds - 0.5],
        dtick=2,
        tickfont_size=FONT_SIZE,
        showgrid=False,
        **LAB_AXIS_STYLE,
    )
    figure.update_xaxes(dtick=1, row=2, col=1)
    figure.update_xaxes(title_text="round", row=2, col=1)
    figure.update_yaxes(
        tickfont_size=FONT_SIZE,
        title_font_size=FONT_SIZE,
        gridcolor=GRID_COLOR,
        **LAB_AXIS_STYLE,
    )
    figure.update_yaxes(
        title_text="tokens",
        row=1,
        col=1,
        tickformat=",",
        type="log" if log_tokens else "linear",
        range=token_axis_range(run, baseline, log_tokens),
        **token_axis_ticks(log_tokens),
    )
    figure.update_yaxes(
        title_text="messages", row=1, col=2, range=message_axis_range(baseline)
    )
    figure.update_yaxes(
        title_text="tokens", row=2, col=1, tickformat=",", range=zoom_axis_range(run)
    )
    figure.update_annotations(font_size=TITLE_SIZE)  # the three panel titles
    # A fixed width: inside an ipywidgets box a FigureWidget does not stretch to the
    # output area. uirevision: a legend click or a zoom by hand survives the slider's
    # updates. No template: plotly_white's look (white background, light grid, slate text)
    # set directly, so the browser does not merge a template into every trace and axis on
    # each redraw. Fixed margins (no automargin on the axes, so no margin is recomputed
    # per redraw), with room for the round axis's title above the legend.
    # width=None: the figure follows the page's width (the projector page, any zoom).
    figure.update_layout(
        width=width,
        height=height,
        autosize=width is None,
        margin=dict(l=80, r=30, t=40, b=110),
        template="none",
        paper_bgcolor="white",
        plot_bgcolor="white",
        hoverlabel_align="left",
        font=dict(size=FONT_SIZE, color=TEXT_COLOR),
        uirevision="lab",
        modebar_orientation="v",  # on the right edge, off the right panel's title
        # at the figure's bottom edge, under the round axis's title (a legend placed in
        # plot fractions met that title once the overflow mark joined it)
        legend=dict(
            orientation="h",
            yref="container",
            yanchor="bottom",
            y=0.0,
            x=0.0,
            font=dict(size=LEGEND_SIZE),
        ),
    )
    # Wrap only the finished figure: a FigureWidget syncs its traces to the browser as
    # they are at construction, and a page built from that state (Voila, a reload) would
    # otherwise draw an empty chart.
    return go.FigureWidget(figure) if widget else figure


def update_lab_figure(
    figure, run: SessionRun, baseline: Baseline, *, log_tokens: bool = False
) -> None:
    """Redraw `figure` (built by lab_figure) for another run: one update message to the
    browser.

    Only what changed is sent: an unchanged trace property or axis is left out. The
    changes go
    in one `plotly_update`, which is what a `batch_update` sends on exit, without
    validating
    every value twice on the way (they are plain ints and strings computed here): about a
    third of the figure's time per slider change.
    """
    data = lab_traces(run, baseline)
    shown = figure._data  # the raw trace dicts behind figure.data, in figure order
    restyle, indexes = {}, []
    for index, (name, values) in enumerate(data.items()):
        changed = {
            key: value
            for key, value in values.items()
            if list(shown[index].get(key) or ()) != value
        }
        if changed:
            indexes.append(index)
            for key, value in changed.items():
                restyle.setdefault(key, {})[index] = value
    # Per key, one value per updated trace; Undefined leaves that trace's value as it is.
    restyle = {
        key: [per_trace.get(index, Undefined) for index in indexes]
        for key, per_trace in restyle.items()
    }
    relayout = {}
    yaxis, axis_type = figure.layout.yaxis, "log" if log_tokens else "linear"
    token_range, zoom_range = (
        token_axis_range(run, baseline, log_tokens),
        zoom_axis_range(run),
    )
    if yaxis.type != axis_type or list(yaxis.range) != token_range:
        ticks = token_axis_ticks(log_tokens, switching=yaxis.type != axis_type)
        relayout.update(
            {
                "yaxis.type": axis_type,
                "yaxis.range": token_range,
                **{f"yaxis.{key}": value for key, value in ticks.items()},
            }
        )
    if list(figure.layout.yaxis3.range) != zoom_range:
        relayout["yaxis3.range"] = zoom_range
    if restyle or relayout:
        figure.plotly_update(
            restyle_data=restyle, relayout_data=relayout, trace_indexes=indexes
        )


def trace_data(figure, name: str) -> dict:
    """x and y of one trace of `figure`, as lists (what a test compares with
    figure_traces)."""
    for trace in figure.data:
        if trace.name == name:
            return {"x": list(trace.x or ()), "y": list(trace.y or ())}
    raise KeyError(
        f"no trace named {name!r}; the figure has "
        f"{', '.join(t.name for t in figure.data)}"
    )
