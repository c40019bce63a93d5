"""The article's two-panel figure, and the lab's version of it with a zoom on the
threshold.

`session_figure`: the article's figure as a static chart (chapter 7 draws real transcripts
with it). Left: baseline (grey), compressed (blue), the threshold (red dashed), aging
rounds (orange down-triangles), summary rounds (purple stars) and, when a setting cannot
be governed, the round that overflowed (red cross). Right: messages per round, baseline
against compressed.

`lab_figure`: the same two panels on top, sized for a projector, and under them a zoom on
the compressed window, in % of the threshold (0 to 150%): per round the window before
compression (top of a drop) and the window sent (bottom), joined into the sawtooth the
article describes, breathing just under the threshold line at 100%. On the 0-18,000 axis
of the top panel that sawtooth is a flat line near zero. Values above the zoom's top are
labelled at its edge, in tokens.

Both are built panel by panel from plain data: `figure_traces(run, baseline)` (and
`zoom_traces`) compute every trace's data, the styles say how each trace looks, and
`add_panel` puts one panel's traces and axes in place. Building a figure and updating it
both go through the same data, so a slider change draws exactly what a fresh figure for
that setting would show.
"""

import math
from typing import Dict, List, Optional

import plotly.graph_objects as go
from plotly.basedatatypes import Undefined
from plotly.subplots import make_subplots

from ..reports.rounds import saved_percent
from ..session import Baseline, SessionRun
from .style import (
    AGING_COLOR,
    BASELINE_COLOR,
    BEFORE,
    COMPRESSED_COLOR,
    DEFAULT_TICK_SIZE,
    FONT_SIZE,
    GRID_COLOR,
    HEADROOM,
    LAB_AXIS_STYLE,
    LAB_HEIGHT,
    LAB_LINES_ONLY,
    LAB_MARGIN,
    LAB_WIDTH,
    LEGEND_SIZE,
    LOG_AXIS_FLOOR,
    LOG_TICKS,
    MARKER_OFFSET,
    MESSAGE_TRACES,
    MESSAGES_PANEL_TITLE,
    OFF_SCALE_AT,
    OVERFLOW_COLOR,
    OVERFLOW_SYMBOL,
    ROUND_MARKER_SPACING,
    ROUND_PANEL_WIDTH,
    SENT,
    SESSION_FIGURE_HEIGHT,
    SESSION_FIGURE_WIDTH,
    SESSION_TITLE_SIZE,
    SUMMARY_COLOR,
    TEXT_COLOR,
    THRESHOLD_COLOR,
    TITLE_SIZE,
    TOKEN_TRACES,
    TOKENS_PANEL_TITLE,
    ZOOM_FACTOR,
    ZOOM_GAP,
    ZOOM_PANEL_TITLE,
    ZOOM_PANEL_WIDTH,
    ZOOM_TITLE_LIFT,
    ZOOM_TRACES,
)


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

    A round that compressed nothing has one point; one that did drops straight down
    at its round.
    """
    points = []
    for r in run.rounds:
        if r.tokens_before != r.tokens_after:
            points.append((r.round, r.tokens_before, BEFORE))
        points.append((r.round, r.tokens_after, SENT))
    return points


def zoom_axis_range() -> list:
    """The same at every setting: the zoom shows each window as a share of the
    threshold, so the sawtooth moves against a still axis and a slider change redraws
    no axis, only traces."""
    return [0, 100 * ZOOM_FACTOR]


def zoom_traces(run: SessionRun, baseline: Baseline) -> Dict[str, dict]:
    """The data of the zoom's traces (see `figure_traces` for the panels above it):
    each window in % of the threshold, its tokens in customdata for the hover text."""
    threshold = run.settings.threshold

    def share(tokens: int) -> float:
        return round(100 * tokens / threshold, 1)

    def in_shares(marks: dict) -> dict:
        """Marks of the panel above, in shares; the tokens join their hover data."""
        tokens = marks["y"]
        return dict(
            marks,
            y=[share(y) for y in tokens],
            customdata=[[more, y] for more, y in zip(marks["customdata"], tokens)],
        )

    rounds = run.rounds
    top = zoom_axis_range()[1]
    points = zoom_points(run)
    aging = aging_marks([r for r in rounds if r.aged], run.compressions)
    summary = summary_marks([r for r in rounds if r.summarized])
    # Windows above the zoom's top: drawn at its edge, with the number written beside
    # them. An overflow is not one of them: it has its own red mark (zoom_overflow).
    off_scale = [(x, y) for x, y, _ in points if share(y) > top]
    last_round = len(baseline.tokens) - 1
    return {
        "window (zoom)": {
            "x": [x for x, _, _ in points],
            "y": [share(y) for _, y, _ in points],
            "customdata": [[y, kind] for _, y, kind in points],
        },
        "threshold (zoom)": {
            "x": [0, last_round],
            "y": [100, 100],
            "customdata": [threshold] * 2,
        },
        "aging (zoom)": in_shares(aging),
        "summary (zoom)": in_shares(summary),
        "overflow (zoom)": zoom_overflow(run, last_round),
        "off the scale (zoom)": {
            "x": [x for x, _ in off_scale],
            "y": [top * OFF_SCALE_AT] * len(off_scale),
            "text": [f"{y:,}" for _, y in off_scale],
            "textposition": off_scale_sides(
                [x for x, _ in off_scale], [f"{y:,}" for _, y in off_scale], last_round
            ),
        },
    }


def label_width(text: str) -> float:
    """About how many px a label of the zoom takes: ~0.6 em a character, and its mark."""
    return len(text) * FONT_SIZE * 0.6 + 12


def off_scale_sides(xs: List[float], texts: List[str], last_round: int) -> List[str]:
    """Where each off-scale number goes, left to right: right of its arrow when that
    leaves room before the next arrow in the narrowest zoom (ZOOM_PANEL_WIDTH px); else
    left of it, when that clears the number before; else under it, to the left (off the
    line that drops from the arrow). Two rounds in a row above the scale (10,322 then
    1,265 at a threshold of 800) wrote their numbers over each other."""
    per_round = ZOOM_PANEL_WIDTH / (last_round + 1)
    sides, taken_to = [], float("-inf")  # where the last number beside an arrow ended
    for index, (x, text) in enumerate(zip(xs, texts)):
        at, width = x * per_round, label_width(text)
        following = xs[index + 1] * per_round if index + 1 < len(xs) else float("inf")
        if at + width <= following:
            sides.append("middle right")
            taken_to = at + width
        elif at - width >= taken_to:
            sides.append("middle left")
            taken_to = at
        else:
            sides.append("bottom left")
    return sides


def zoom_overflow(run: SessionRun, last_round: int) -> dict:
    """The overflow's red cross in the zoom. Above the zoom's top it is pinned at the
    edge (never clipped away while the legend lists it) and named there: "overflow:
    282 tokens" in red, on the side of the panel with room for it. customdata: its
    tokens and its true share of the threshold, for the hover."""
    overflow = run.overflow
    if overflow is None:
        return {"x": [], "y": [], "customdata": [], "text": [], "textposition": []}
    top = zoom_axis_range()[1]
    share = round(100 * overflow.tokens / run.settings.threshold, 1)
    at = len(run.rounds)
    pinned = share > top
    text = f"overflow: {overflow.tokens:,} tokens" if pinned else "overflow"
    side = label_side(at, last_round, text)
    if not pinned:  # a cross over the threshold: its name above it, off the dashed
        # line; in the zoom's upper half under it, off the panel's title (threshold 100:
        # 135%, and "overflow" above it stood on the title)
        side = side.replace("middle", "top" if share <= (100 + top) / 2 else "bottom")
    return {
        "x": [at],
        "y": [top * OFF_SCALE_AT if pinned else share],
        "customdata": [[overflow.tokens, share]],
        "text": [text],
        "textposition": [side],
    }


def label_side(at: int, last_round: int, text: str) -> str:
    """Where the overflow's label goes: right of its cross, over the rounds the run never
    reached (nothing is drawn there), when they are wide enough for it in the
    narrowest zoom (the notebook's, ZOOM_PANEL_WIDTH px); else left of it. Placed left
    by default, "overflow" at round 11 of 13 sat on round 10's marks."""
    room = (last_round - at) * ZOOM_PANEL_WIDTH / (last_round + 1)
    return "middle right" if room >= label_width(text) else "middle left"


def lab_traces(run: SessionRun, baseline: Baseline) -> Dict[str, dict]:
    """Every trace of `lab_figure`, by name, in figure order."""
    return {**figure_traces(run, baseline), **zoom_traces(run, baseline)}


def figure_title(run: SessionRun) -> str:
    """One line under which a change of setting is readable at a glance."""
    if run.overflow is not None:
        return (
            f"Stopped at round {len(run.rounds)}: {run.overflow.tokens:,} tokens "
            "after compression, "
            f"threshold {run.settings.threshold:,}"
        )
    last = run.rounds[-1]
    title = (
        f"Round {last.round}: {last.tokens_after:,} tokens sent against "
        f"{last.baseline_tokens:,} without compression"
    )
    if not last.baseline_tokens:  # a log that opens with its only model call: nothing
        return title
    saved = 1 - last.tokens_after / last.baseline_tokens
    return title + f" ({saved_percent(saved)} less)"


def token_axis_range(run: SessionRun, baseline: Baseline, log: bool = False) -> list:
    """A fixed y-range for the token panel: autorange would rescale and hide a change.

    It depends only on the baseline and the threshold, so moving any other slider
    keeps the axis still and the compressed line visibly moves against it.
    """
    top = max(max(baseline.tokens), run.settings.threshold) * HEADROOM
    if log:  # plotly takes a log axis range in powers of ten
        return [math.log10(min(LOG_AXIS_FLOOR, run.settings.threshold)), math.log10(top)]
    return [0, top]


def token_axis_ticks(log: bool, token_range: list, switching: bool = False) -> dict:
    """A log axis labels every minor tick by default (50, 60, 70...): list readable ones
    instead, those within `token_range` (in powers of ten, as plotly takes it).

    `switching`: the axis was log before, so its tick list must be cleared (a new axis
    needs nothing).
    """
    if log:
        low, high = (10**end for end in token_range)
        return dict(
            tickmode="array", tickvals=[tick for tick in LOG_TICKS if low <= tick <= high]
        )
    return dict(tickmode="auto", tickvals=None) if switching else {}


def message_axis_range(baseline: Baseline) -> list:
    """Compressed windows never hold more messages than the baseline, so its maximum
    bounds the panel."""
    return [0, max(baseline.messages) * HEADROOM + 1]


# ---- the axes and panels both figures are built from -----------------------------------


def readable_dtick(rounds: int, width: int, font_size: int, at_least: int = 1) -> int:
    """The smallest step of 1, 2, 5, 10, 20, 50... (at least `at_least`) at which the
    labels of `rounds` rounds fit side by side in `width` pixels of a panel: every round
    labelled on a short session, every 20th at 146 rounds, never a smear."""
    digits = len(str(max(rounds - 1, 0)))
    label = digits * font_size * 0.55 + 3  # a digit is about 0.55 em wide; a gap
    step, scale = at_least, 1
    while True:
        for nice in (1, 2, 5):
            candidate = nice * scale
            if candidate >= step and (rounds // candidate + 1) * label <= width:
                return candidate
        scale *= 10


def round_axis(
    baseline: Baseline, dtick: int, width: int = ROUND_PANEL_WIDTH, **settings
) -> dict:
    """An x axis: every round of the session in view, a tick every `dtick` rounds or
    more, as many as fit the narrowest panel (`width` px) that uses the axis."""
    rounds = len(baseline.tokens)
    font = settings.get("tickfont_size", DEFAULT_TICK_SIZE)
    step = readable_dtick(rounds, width, font, at_least=dtick)
    return dict(range=[-0.5, rounds - 0.5], dtick=step, **settings)


def token_axis(
    run: SessionRun, baseline: Baseline, log: bool, title: str, **settings
) -> dict:
    """The token panel's y axis: a fixed range (see token_axis_range), log or linear."""
    token_range = token_axis_range(run, baseline, log)
    return dict(
        title_text=title,
        tickformat=",",
        type="log" if log else "linear",
        range=token_range,
        **token_axis_ticks(log, token_range),
        **settings,
    )


def message_axis(baseline: Baseline, **settings) -> dict:
    """The message panel's y axis."""
    return dict(title_text="messages", range=message_axis_range(baseline), **settings)


def panel_traces(names, data: Dict[str, dict], styles: Dict[str, dict]) -> dict:
    """The named traces, in that order, each its data with its style."""
    return {name: {**data[name], **styles[name]} for name in names}


def add_panel(figure, cell, traces: Dict[str, dict], xaxis: dict, yaxis: dict) -> None:
    """One panel from plain data: its traces (name -> go.Scatter properties) in `cell`
    (row, column) of `figure`, and the settings of its x and y axes."""
    row, col = cell
    for name, properties in traces.items():
        figure.add_trace(go.Scatter(name=name, **properties), row=row, col=col)
    figure.update_xaxes(xaxis, row=row, col=col)
    figure.update_yaxes(yaxis, row=row, col=col)


def add_session_panels(
    figure,
    run: SessionRun,
    baseline: Baseline,
    styles: Dict[str, dict],
    *,
    log_tokens: bool,
    token_title: str,
    xaxis: dict,
    yaxis: Optional[dict] = None,
) -> None:
    """The article's two panels in the top row: tokens (left) and messages (right) per
    round. `xaxis` goes on both; `yaxis` is added to each panel's own y axis."""
    data, yaxis = figure_traces(run, baseline), yaxis or {}
    tokens = token_axis(run, baseline, log_tokens, token_title, **yaxis)
    add_panel(figure, (1, 1), panel_traces(TOKEN_TRACES, data, styles), xaxis, tokens)
    messages = message_axis(baseline, **yaxis)
    add_panel(figure, (1, 2), panel_traces(MESSAGE_TRACES, data, styles), xaxis, messages)


# ---- the traces' look -----------------------------------------------------------------


def _line_style(color: str, width: int, marker_size: int, hover: str, **more) -> dict:
    """A line with a marker per round."""
    return dict(
        mode="lines+markers",
        line=dict(color=color, width=width),
        marker=dict(size=marker_size),
        hovertemplate=hover,
        **more,
    )


def _mark_style(symbol: str, size: int, color: str, hover: str, outline=True) -> dict:
    """Markers alone; a white outline keeps markers that touch apart."""
    marker = dict(symbol=symbol, size=size, color=color)
    if outline:
        marker["line"] = dict(color="white", width=1)
    return dict(mode="markers", marker=marker, hovertemplate=hover)


def _token_styles() -> Dict[str, dict]:
    """The token panel's traces; each is its own legend group, which in the lab's figure
    its copy in the zoom joins."""
    styles = {
        "baseline": _line_style(
            BASELINE_COLOR,
            2,
            5,
            "round %{x}<br>%{y:,} tokens without compression<extra></extra>",
        ),
        "compressed": _line_style(
            COMPRESSED_COLOR,
            3,
            6,
            "round %{x}<br>%{y:,} tokens sent<br>%{customdata:,} before compression"
            "<extra></extra>",
        ),
        "threshold": dict(
            mode="lines",
            line=dict(color=THRESHOLD_COLOR, width=2, dash="dash"),
            hovertemplate="threshold %{y:,} tokens<extra></extra>",
        ),
        "aging": _mark_style(
            "triangle-down",
            13,
            AGING_COLOR,
            "round %{text}: aging<br>%{customdata:,} → %{y:,} tokens<extra></extra>",
        ),
        "summary": _mark_style(
            "star",
            18,
            SUMMARY_COLOR,
            "round %{text}: rolling summary<br>%{customdata} messages before, %{y:,} "
            "tokens after<extra></extra>",
        ),
        "overflow": _mark_style(
            OVERFLOW_SYMBOL,
            16,
            OVERFLOW_COLOR,
            "round %{x}: overflow<br>%{y:,} tokens after compression, nothing more may "
            "be cut<extra></extra>",
            outline=False,
        ),
    }
    return {name: dict(style, legendgroup=name) for name, style in styles.items()}


def _trace_styles() -> Dict[str, dict]:
    """Mode, colour, marker, hover text and legend group of every trace of session_figure,
    by name; the message panel's lines share the legend entries of the token panel's."""
    message_styles = {
        "baseline messages": _line_style(
            BASELINE_COLOR,
            2,
            5,
            "round %{x}<br>%{y} messages without compression<extra></extra>",
            legendgroup="baseline",
            showlegend=False,
        ),
        "compressed messages": _line_style(
            COMPRESSED_COLOR,
            3,
            6,
            "round %{x}<br>%{y} messages sent<extra></extra>",
            legendgroup="compressed",
            showlegend=False,
        ),
    }
    return {**_token_styles(), **message_styles}


def _session_layout(run: SessionRun) -> dict:
    # A fixed width: inside an ipywidgets box a FigureWidget does not stretch to the
    # output area.
    return dict(
        title=dict(
            text=figure_title(run), x=0.01, y=0.97, font=dict(size=SESSION_TITLE_SIZE)
        ),
        width=SESSION_FIGURE_WIDTH,
        height=SESSION_FIGURE_HEIGHT,
        margin=dict(l=70, r=20, t=70, b=100),
        template="plotly_white",
        legend=dict(orientation="h", yanchor="top", y=-0.16, x=0.0),
    )


def per_round_markers(rounds: int, width: int = ROUND_PANEL_WIDTH) -> bool:
    """Whether the lines get a marker per round: while the rounds are at least a
    marker and a gap apart in the narrowest panel (`width` px: 32 rounds). Past
    that the markers merge into a thicker line, which the browser still styles point
    by point (a 360-round log: most of the time it took to draw its figure)."""
    return rounds * ROUND_MARKER_SPACING <= width


def session_figure(
    run: SessionRun,
    baseline: Baseline,
    *,
    widget: bool = True,
    log_tokens: bool = False,
    token_title: str = "tokens (estimate)",
):
    """The article's two-panel figure for one run, as a static go.Figure
    (or a FigureWidget); a long run's lines without a marker per round."""
    styles = _trace_styles()
    if not per_round_markers(len(baseline.tokens)):
        styles = {
            name: dict(style, mode="lines") if style["mode"] == "lines+markers" else style
            for name, style in styles.items()
        }
    figure = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.62, 0.38],
        horizontal_spacing=0.09,
        subplot_titles=(TOKENS_PANEL_TITLE, MESSAGES_PANEL_TITLE),
    )
    add_session_panels(
        figure,
        run,
        baseline,
        styles,
        log_tokens=log_tokens,
        token_title=token_title,
        xaxis=round_axis(baseline, 1, title_text="round"),
    )
    figure.update_layout(_session_layout(run))
    # Wrap only the finished figure: a FigureWidget syncs its traces to the browser as
    # they are at construction (or at its own display), and a page built from that state
    # (Voila, a reload) would otherwise draw an empty chart.
    return go.FigureWidget(figure) if widget else figure


# ---- the lab's figure: the two panels, sized for a projector, and the zoom under them --


def _zoom_styles(styles: Dict[str, dict]) -> Dict[str, dict]:
    """Styles of the zoom's traces; each joins the legend group of the trace it repeats,
    so a click on "aging" in the legend hides the triangles in both panels. The hover
    texts give tokens (customdata) and the share of the threshold (y)."""
    # %{y} is written with the zoom axis's tick suffix: "90%", no "%" after it
    share = "%{y} of the threshold"
    hovers = {
        "threshold": "threshold %{customdata:,} tokens (100%)",
        "aging": f"round %{{text}}: aging<br>%{{customdata[0]:,}} → %{{customdata[1]:,}} "
        f"tokens<br>{share}",
        "summary": "round %{text}: rolling summary<br>%{customdata[0]} messages before, "
        f"%{{customdata[1]:,}} tokens after<br>{share}",
    }
    return {
        "window (zoom)": dict(
            mode="lines+markers",
            legendgroup="compressed",
            showlegend=False,
            line=dict(color=COMPRESSED_COLOR, width=2),
            marker=dict(size=7, color=COMPRESSED_COLOR),
            hovertemplate="round %{x}<br>%{customdata[0]:,} tokens %{customdata[1]}<br>"
            f"{share}<extra></extra>",
        ),
        **{
            f"{name} (zoom)": dict(
                styles[name], showlegend=False, hovertemplate=f"{hover}<extra></extra>"
            )
            for name, hover in hovers.items()
        },
        # red and named, at the edge when it is above the zoom's top (zoom_overflow)
        "overflow (zoom)": dict(
            styles["overflow"],
            mode="markers+text",
            showlegend=False,
            textfont=dict(size=FONT_SIZE, color=OVERFLOW_COLOR),
            cliponaxis=False,
            hovertemplate="round %{x}: overflow<br>%{customdata[0]:,} tokens after "
            "compression, nothing more may be cut<br>%{customdata[1]:,}% of the "
            "threshold<extra></extra>",
        ),
        "off the scale (zoom)": dict(
            mode="markers+text",
            legendgroup="compressed",
            showlegend=False,
            marker=dict(symbol="triangle-up", size=11, color=COMPRESSED_COLOR),
            textfont=dict(size=FONT_SIZE, color=COMPRESSED_COLOR),
            cliponaxis=False,
            hovertemplate="round %{x}: %{text} tokens, above this scale (over "
            f"{100 * ZOOM_FACTOR:.0f}% of the threshold)<extra></extra>",
        ),
    }


def _lab_styles() -> Dict[str, dict]:
    """Every trace of lab_figure: markers where something happens, plain lines
    elsewhere (LAB_LINES_ONLY), and the zoom's."""
    styles = _trace_styles()
    lab = {
        name: dict(style, mode="lines") if name in LAB_LINES_ONLY else style
        for name, style in styles.items()
    }
    return {**lab, **_zoom_styles(styles)}


def _lab_round_axis(
    baseline: Baseline, dtick: int, width: int = ROUND_PANEL_WIDTH, **settings
) -> dict:
    """An x axis of the lab's figure. plotly redraws every axis on each data change, so
    the axes carry only what is read:
    - every round labelled in the wide zoom, every other one on top: tick labels are much
      of what plotly redraws per change (about 3 ms of a keypress for the 14 saved);
    - ticklabeloverflow="allow" (LAB_AXIS_STYLE): the default ("hide past div") measures
      every tick label's box again for each label drawn, about 6 ms of a keypress; these
      labels never overflow the figure;
    - no vertical grid lines or zero lines (the rounds are labelled; a line at round 0
      says nothing)."""
    return round_axis(
        baseline,
        dtick,
        width,
        tickfont_size=FONT_SIZE,
        showgrid=False,
        **LAB_AXIS_STYLE,
        **settings,
    )


def _lab_value_axis() -> dict:
    """What every y axis of the lab's figure adds to its own settings."""
    return dict(
        tickfont_size=FONT_SIZE,
        title_font_size=FONT_SIZE,
        gridcolor=GRID_COLOR,
        **LAB_AXIS_STYLE,
    )


def _lab_layout(width: Optional[int], height: int) -> dict:
    """A fixed width: inside an ipywidgets box a FigureWidget does not stretch to the
    output area (width=None: the figure follows the page's width, for the projector page
    or any zoom). uirevision: a legend click or a zoom by hand survives the slider's
    updates. No template: plotly_white's look (white background, light grid, slate text)
    set directly, so the browser does not merge a template into every trace and axis on
    each redraw. Fixed margins (no automargin on the axes, so no margin is recomputed per
    redraw), with room for the round axis's title above the legend."""
    return dict(
        width=width,
        height=height,
        autosize=width is None,
        margin=LAB_MARGIN,
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
    plot_height = height - LAB_MARGIN["t"] - LAB_MARGIN["b"]
    figure = make_subplots(
        rows=2,
        cols=2,
        column_widths=[0.62, 0.38],
        row_heights=[0.5, 0.5],
        horizontal_spacing=0.08,
        # the same pixels at every height: the top panels' round labels, then the
        # zoom's title
        vertical_spacing=ZOOM_GAP / plot_height,
        specs=[[{}, {}], [{"colspan": 2}, None]],
        subplot_titles=(TOKENS_PANEL_TITLE, MESSAGES_PANEL_TITLE, ZOOM_PANEL_TITLE),
    )
    styles = _lab_styles()
    add_session_panels(
        figure,
        run,
        baseline,
        styles,
        log_tokens=log_tokens,
        token_title="tokens",
        xaxis=_lab_round_axis(baseline, 2),
        yaxis=_lab_value_axis(),
    )
    add_panel(
        figure,
        (2, 1),
        panel_traces(ZOOM_TRACES, zoom_traces(run, baseline), styles),
        _lab_round_axis(
            baseline, 1, ZOOM_PANEL_WIDTH, title_text="round", title_standoff=4
        ),
        dict(
            ticksuffix="%",
            range=zoom_axis_range(),
            title_text="of the threshold",
            **_lab_value_axis(),
        ),
    )
    figure.update_annotations(font_size=TITLE_SIZE)  # the three panel titles
    # the zoom's title above the lines that run off its scale to the panel's top edge
    figure.layout.annotations[2].yshift = ZOOM_TITLE_LIFT
    figure.update_layout(_lab_layout(width, height))
    # Wrap only the finished figure: a FigureWidget syncs its traces to the browser as
    # they are at construction, and a page built from that state (Voila, a reload) would
    # otherwise draw an empty chart.
    return go.FigureWidget(figure) if widget else figure


def update_lab_figure(
    figure, run: SessionRun, baseline: Baseline, *, log_tokens: bool = False
) -> None:
    """Redraw `figure` (built by lab_figure) for another run, sending only what changed
    (an unchanged trace property or axis is left out; a change that leaves the run as it
    was sends nothing). See send_lab_update for how the browser redraws it."""
    restyle, indexes = _changed_traces(figure, lab_traces(run, baseline))
    relayout = _changed_axes(figure, run, baseline, log_tokens)
    send_lab_update(figure, restyle, indexes, relayout)


def send_lab_update(figure, restyle: dict, indexes: list, relayout: dict) -> None:
    """Apply a change to `figure` (built by lab_figure) and send it to the browser, so
    that the browser redraws only what changed.

    plotly.js redraws the whole figure on any change of a trace's data sent the usual way
    (`plotly_update`, which is what a `batch_update` sends): every axis and tick label,
    the legend, the panel titles and all fourteen traces (docs/benchmark.md). The same
    change sent as a zero-length animation frame
    (Plotly.animate, no transition, no redraw) makes plotly.js recompute the data and
    redraw only the traces it names, and no axis: the zoom's axis is the same at every
    setting (it shows shares of the threshold), and redrawing an axis, its ticks and
    labels, cost more than the traces. What a frame draws is what a full redraw draws (a
    browser test compares the two). Frames are queued in order, none dropped: each
    carries only what changed since the one before.

    A full redraw follows the frame when a trace gains its first point or loses its last
    (the legend lists only traces with points). A change of the token axis (log or
    linear, or a threshold above the baseline in another session) is sent as a layout
    update of its own, before the frame: it never carries data, so a frame still queued
    cannot undo it. Without plotly's widget methods for this (another plotly version),
    the change goes as one `plotly_update`."""
    if not (restyle or relayout):
        return
    frame_methods = (  # plotly's FigureWidget methods a frame needs
        "_perform_plotly_update",
        "_send_animate_msg",
        "_dispatch_trace_change_callbacks",
    )
    if not all(hasattr(figure, method) for method in frame_methods):
        figure.plotly_update(
            restyle_data=restyle, relayout_data=relayout, trace_indexes=indexes
        )
        return
    if relayout:
        figure.plotly_update(relayout_data=relayout)
    if not restyle:
        return
    styles, traces, gains_or_loses_points = _frame_traces(figure._data, restyle, indexes)
    # sent first: the browser starts drawing while the figure here takes the change
    figure._send_animate_msg(
        styles_data=styles,
        relayout_data={},
        trace_indexes=traces,
        animation_opts=_frame_options(redraw=gains_or_loses_points),
    )
    restyled, _, _ = figure._perform_plotly_update(
        restyle_data=restyle, trace_indexes=indexes
    )
    if restyled:
        figure._dispatch_trace_change_callbacks(restyled, indexes)


def _frame_traces(shown: list, restyle: dict, indexes: list):
    """(styles, trace indexes, whether a trace gains its first point or loses its last)
    of the frame for a change of the traces `indexes` of a figure whose raw traces are
    `shown`.

    plotly.js redraws, panel by panel, only the traces a frame names, and takes a panel
    of which it names none (or only traces left without points) for a panel with nothing
    to draw: it removes every trace of it. So the frame also names, unchanged, one trace
    with points of each panel it would otherwise leave out."""
    new_x = dict(zip(indexes, restyle.get("x", ())))

    def has_points(index):
        x = new_x.get(index, Undefined)
        return bool(shown[index].get("x") if x is Undefined else x)

    def panel(index):
        return shown[index].get("xaxis", "x"), shown[index].get("yaxis", "y")

    styles = [
        {key: values[i] for key, values in restyle.items() if values[i] is not Undefined}
        for i in range(len(indexes))
    ]
    gains_or_loses = any(bool(shown[i].get("x")) != has_points(i) for i in indexes)
    drawn = {panel(i) for i in indexes if has_points(i)}
    kept = {}
    for index in range(len(shown)):
        if panel(index) not in drawn and has_points(index):
            kept.setdefault(panel(index), index)
    return styles + [{}] * len(kept), list(indexes) + list(kept.values()), gains_or_loses


def _frame_options(redraw: bool) -> dict:
    """Plotly.animate's options for one lab update: no transition, no frame time, queued
    after any frame not yet drawn (none is dropped: each carries only what changed since
    the previous one); `redraw`: a full redraw once it is drawn."""
    return {
        "transition": {"duration": 0},
        "frame": {"duration": 0, "redraw": redraw},
        "mode": "afterall",
    }


def _changed_traces(figure, data: Dict[str, dict]):
    """(restyle data, indexes of the traces it changes): per key, one value per updated
    trace; Undefined leaves that trace's value as it is."""
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
    restyle = {
        key: [per_trace.get(index, Undefined) for index in indexes]
        for key, per_trace in restyle.items()
    }
    return restyle, indexes


def _changed_axes(figure, run: SessionRun, baseline: Baseline, log_tokens: bool) -> dict:
    """The relayout data for the token axis, when it changes (the zoom's never does)."""
    relayout = {}
    yaxis, axis_type = figure.layout.yaxis, "log" if log_tokens else "linear"
    token_range = token_axis_range(run, baseline, log_tokens)
    if yaxis.type != axis_type or list(yaxis.range) != token_range:
        ticks = token_axis_ticks(
            log_tokens, token_range, switching=yaxis.type != axis_type
        )
        relayout.update(
            {
                "yaxis.type": axis_type,
                "yaxis.range": token_range,
                **{f"yaxis.{key}": value for key, value in ticks.items()},
            }
        )
    return relayout


def trace_data(figure, name: str) -> dict:
    """x and y of one trace of `figure`, as lists (what a test
    compares with figure_traces)."""
    for trace in figure.data:
        if trace.name == name:
            return {"x": list(trace.x or ()), "y": list(trace.y or ())}
    raise KeyError(
        f"no trace named {name!r}; the figure has "
        f"{', '.join(t.name for t in figure.data)}"
    )
