"""The article's two-panel figure: tokens per round (left) and messages per round (right).

Left: baseline (grey), compressed (blue), the threshold (red dashed), aging rounds
(orange down-triangles), summary rounds (purple stars) and, when a setting cannot
be governed, the round that overflowed (red cross). Right: messages per round,
baseline against compressed.

`figure_traces(run, baseline)` computes every trace's data; building the figure and
updating it both go through it, so a slider change draws exactly what a fresh figure
for that setting would show.
"""

import math
from typing import Dict

import plotly.graph_objects as go
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
TRACE_NAMES = TOKEN_TRACES + MESSAGE_TRACES

HEADROOM = 1.06  # room above the highest point, so markers are not clipped
FIGURE_WIDTH, FIGURE_HEIGHT = 900, 500
LOG_AXIS_FLOOR = 50  # tokens; below the smallest window (the protected head alone is 135)


def figure_traces(run: SessionRun, baseline: Baseline) -> Dict[str, dict]:
    """The data of every trace, by trace name, for one run (and the session's uncompressed baseline).

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
        "compressed": {"x": [r.round for r in rounds], "y": [r.tokens_after for r in rounds],
                       "customdata": [r.tokens_before for r in rounds]},
        "threshold": {"x": [all_rounds[0], all_rounds[-1]], "y": [run.settings.threshold] * 2},
        "aging": {"x": [r.round for r in aged], "y": [r.tokens_after for r in aged],
                  "customdata": [r.tokens_before for r in aged]},
        "summary": {"x": [r.round for r in summarized], "y": [r.tokens_after for r in summarized],
                    "customdata": [r.messages_before for r in summarized]},
        # The round that could not be governed: the first one missing from run.rounds.
        "overflow": {"x": [len(rounds)] if overflow else [], "y": [overflow.tokens] if overflow else []},
        "baseline messages": {"x": all_rounds, "y": list(baseline.messages)},
        "compressed messages": {"x": [r.round for r in rounds], "y": [r.messages_after for r in rounds]},
    }


def figure_title(run: SessionRun) -> str:
    """One line under which a change of setting is readable at a glance."""
    if run.overflow is not None:
        return (f"Stopped at round {len(run.rounds)}: {run.overflow.tokens:,} tokens left after compression, "
                f"threshold {run.settings.threshold:,}")
    last = run.rounds[-1]
    saved = 1 - last.tokens_after / last.baseline_tokens
    return (f"Round {last.round}: {last.tokens_after:,} tokens sent against {last.baseline_tokens:,} "
            f"without compression ({saved:.0%} less)")


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


def token_axis_ticks(log: bool) -> dict:
    """A log axis labels every minor tick by default (50, 60, 70...): list readable ones instead."""
    return dict(tickmode="array", tickvals=LOG_TICKS) if log else dict(tickmode="auto", tickvals=None)


def message_axis_range(baseline: Baseline) -> list:
    """Compressed windows never hold more messages than the baseline, so its maximum bounds the panel."""
    return [0, max(baseline.messages) * HEADROOM + 1]


def session_figure(run: SessionRun, baseline: Baseline, *, widget: bool = True, log_tokens: bool = False):
    """The two-panel figure for one run: a FigureWidget (for sliders) or a static go.Figure."""
    figure = make_subplots(rows=1, cols=2, column_widths=[0.62, 0.38], horizontal_spacing=0.09,
                           subplot_titles=("Tokens sent to the model, per round", "Messages per round"))
    token_styles = {
        "baseline": dict(mode="lines+markers", line=dict(color=BASELINE_COLOR, width=2), marker=dict(size=5),
                         hovertemplate="round %{x}<br>%{y:,} tokens without compression<extra></extra>"),
        "compressed": dict(mode="lines+markers", line=dict(color=COMPRESSED_COLOR, width=3), marker=dict(size=6),
                           hovertemplate="round %{x}<br>%{y:,} tokens sent<br>%{customdata:,} before compression"
                                         "<extra></extra>"),
        "threshold": dict(mode="lines", line=dict(color=THRESHOLD_COLOR, width=2, dash="dash"),
                          hovertemplate="threshold %{y:,} tokens<extra></extra>"),
        "aging": dict(mode="markers", marker=dict(symbol="triangle-down", size=13, color=AGING_COLOR,
                                                  line=dict(color="white", width=1)),
                      hovertemplate="round %{x}: aging<br>%{customdata:,} → %{y:,} tokens<extra></extra>"),
        "summary": dict(mode="markers", marker=dict(symbol="star", size=18, color=SUMMARY_COLOR,
                                                    line=dict(color="white", width=1)),
                        hovertemplate="round %{x}: rolling summary<br>%{customdata} messages before, "
                                      "%{y:,} tokens after<extra></extra>"),
        "overflow": dict(mode="markers", marker=dict(symbol="x", size=16, color=OVERFLOW_COLOR),
                         hovertemplate="round %{x}: overflow<br>%{y:,} tokens left, nothing more may be cut"
                                       "<extra></extra>"),
    }
    message_styles = {
        "baseline messages": dict(mode="lines+markers", line=dict(color=BASELINE_COLOR, width=2),
                                  marker=dict(size=5), legendgroup="baseline", showlegend=False,
                                  hovertemplate="round %{x}<br>%{y} messages without compression<extra></extra>"),
        "compressed messages": dict(mode="lines+markers", line=dict(color=COMPRESSED_COLOR, width=3),
                                    marker=dict(size=6), legendgroup="compressed", showlegend=False,
                                    hovertemplate="round %{x}<br>%{y} messages sent<extra></extra>"),
    }
    data = figure_traces(run, baseline)
    for name in TOKEN_TRACES:
        figure.add_trace(go.Scatter(name=name, legendgroup=name, **data[name], **token_styles[name]), row=1, col=1)
    for name in MESSAGE_TRACES:
        figure.add_trace(go.Scatter(name=name, **data[name], **message_styles[name]), row=1, col=2)
    rounds = len(baseline.tokens)
    figure.update_xaxes(title_text="round", range=[-0.5, rounds - 0.5], dtick=1)
    figure.update_yaxes(title_text="tokens (estimate)", row=1, col=1, tickformat=",",
                        type="log" if log_tokens else "linear", range=token_axis_range(run, baseline, log_tokens),
                        **token_axis_ticks(log_tokens))
    figure.update_yaxes(title_text="messages", row=1, col=2, range=message_axis_range(baseline))
    # A fixed width: inside an ipywidgets box a FigureWidget does not stretch to the output area.
    figure.update_layout(title=dict(text=figure_title(run), x=0.01, y=0.97, font=dict(size=15)),
                         width=FIGURE_WIDTH, height=FIGURE_HEIGHT, margin=dict(l=70, r=20, t=70, b=100),
                         template="plotly_white",
                         legend=dict(orientation="h", yanchor="top", y=-0.16, x=0.0))
    # Wrap only the finished figure: a FigureWidget syncs its traces to the browser as they are at
    # construction (or at its own display), and a page built from that state (Voila, a reload) would
    # otherwise draw an empty chart.
    return go.FigureWidget(figure) if widget else figure


def update_session_figure(figure, run: SessionRun, baseline: Baseline, *, log_tokens: bool = False) -> None:
    """Redraw `figure` (built by session_figure) for another run, in one batch: one message to the browser."""
    data = figure_traces(run, baseline)
    traces = {trace.name: trace for trace in figure.data}
    axis_type = "log" if log_tokens else "linear"
    axis_range = token_axis_range(run, baseline, log_tokens)
    with figure.batch_update():
        for name, values in data.items():
            # Only what changed: the baseline never does, and each update is validated and sent.
            changed = {key: value for key, value in values.items()
                       if tuple(getattr(traces[name], key) or ()) != tuple(value)}
            if changed:
                traces[name].update(changed)
        figure.layout.title.text = figure_title(run)
        if figure.layout.yaxis.type != axis_type or tuple(figure.layout.yaxis.range) != tuple(axis_range):
            figure.layout.yaxis.update(type=axis_type, range=axis_range, **token_axis_ticks(log_tokens))


def trace_data(figure, name: str) -> dict:
    """x and y of one trace of `figure`, as lists (what a test compares with figure_traces)."""
    for trace in figure.data:
        if trace.name == name:
            return {"x": list(trace.x or ()), "y": list(trace.y or ())}
    raise KeyError(f"no trace named {name!r}; the figure has {', '.join(t.name for t in figure.data)}")
