"""Notebook 08's views: the six paths side by side, the trade-off explorer and the
tokenizer table.

Everything shown is computed by `minilib.policies.registry` (runs, fact states, tokenizer
counts); this module only turns it into DataFrames, plotly figures and widgets.
`NumberTable` shows a DataFrame with thousands separators, sized for a notebook at
1280 px with JupyterLab's file browser open (an output area about 848 px wide).
The explorer's display is a pure function of its slider values
(`SixPathsExplorer.render`), so tests set `slider.value` and compare the figure and
the table with `run_path` for those values.
"""

from functools import lru_cache
from typing import Dict, Mapping, Optional, Sequence

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..measure.facts import STATES
from ..policies.registry import (
    ARTICLE,
    PATHS,
    PathRun,
    default_facts,
    run_baseline_probe,
    run_path,
)
from ..reports import GROUNDED_COLUMNS, comparison_rows, tokenizer_rows
from .shown import ShownAsWidget
from .tables import TABLE_CSS, HtmlTable, to_html

# One colour per path, the same in every figure of the chapter.
PATH_COLORS = {
    "truncation": "#7f7f7f",
    "aging": "#ff7f0e",
    "rolling_summary": "#1f77b4",
    "hierarchical": "#9467bd",
    "store": "#2ca02c",
    "budgeting": "#8c564b",
}
# Short names for the legend and the explorer's table (the figures' panels use the title).
SHORT_NAMES = {
    "truncation": "1 truncation",
    "aging": "2 aging",
    "rolling_summary": "3 rolling summary",
    "hierarchical": "4 hierarchical",
    "store": "5 store + recall",
    "budgeting": "6 budgeting",
}
# JupyterLab at 1280 px with the file browser open leaves a notebook output ~848 px wide.
FIGURE_WIDTH, FIGURE_HEIGHT = 820, 460
OVERFLOW_SYMBOL = "x"  # a run that overflowed: its last window, drawn as a cross

# The chapter's tables: thousands separators (tables.to_html), numbers right-aligned,
# and text that may wrap at its spaces, so a wide table narrows before it scrolls. The
# explorer's cells do not wrap (`wrap=False`): its rows keep their height as sliders move.
SIX_PATHS_CSS = """<style>
.ccl-table.ccl-six { font-size: 14px; }
.ccl-table.ccl-six th:nth-child(n), .ccl-table.ccl-six td:nth-child(n) {
  padding: 3px 6px; text-align: right; white-space: normal; vertical-align: bottom; }
.ccl-table.ccl-six tbody th:nth-child(n), .ccl-table.ccl-six thead th:first-child {
  text-align: left; }
.ccl-table.ccl-six.ccl-nowrap tbody th:nth-child(n),
.ccl-table.ccl-six.ccl-nowrap td:nth-child(n) { white-space: nowrap; }
</style>"""
SIX_PATHS_TABLE = "ccl-table ccl-six"


def table_html(table: pd.DataFrame, wrap: bool = True) -> str:
    """A table of this chapter as HTML: thousands separators, an empty cell after an
    overflow."""
    css_class = SIX_PATHS_TABLE if wrap else SIX_PATHS_TABLE + " ccl-nowrap"
    return TABLE_CSS + SIX_PATHS_CSS + to_html(table, css_class=css_class)


class NumberTable(HtmlTable):
    """Shows a DataFrame of this chapter in a cell as `1,085`, not `1085` (HTML and text
    alike); compute with the DataFrame itself, not with this. `wrap=False` keeps every
    cell on one line (for a table already narrow enough, such as the explorer's)."""

    def __init__(self, table: pd.DataFrame, wrap: bool = True):
        super().__init__(table)
        self.html = table_html(table, wrap=wrap)


def completes(run: PathRun) -> str:
    """ "yes", or the round whose window could not be cut below the threshold (the
    registry's tables say the same)."""
    return "yes" if run.completed else f"overflow at round {len(run.rounds)}"


@lru_cache(maxsize=None)
def cached_run(path: str, value: int) -> PathRun:
    """run_path on the bundled session, once per (path, value): a slider step back is
    free."""
    return run_path(path, value)


def default_runs() -> Dict[str, PathRun]:
    return {key: cached_run(key, spec.default) for key, spec in PATHS.items()}


def paths_table() -> pd.DataFrame:
    """The six pipelines and the parameter each slider moves."""
    return pd.DataFrame(
        [
            {
                "path": spec.title,
                "pipeline": spec.pipeline,
                "main parameter": spec.parameter,
                "default": spec.default,
                "slider values": ", ".join(map(str, spec.choices)),
            }
            for spec in PATHS.values()
        ]
    ).set_index("path")


def facts_table() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"id": f.id, "kind": f.kind, "text": f.text, "first in": f.first_call}
            for f in default_facts()
        ]
    ).set_index("id")


def tokens_per_round(runs: Mapping[str, PathRun]) -> pd.DataFrame:
    """Tokens sent in each round, one column per path (empty after an overflow)."""
    columns = {
        key: pd.Series({r.round: r.tokens for r in run.rounds}, dtype="Int64")
        for key, run in runs.items()
    }
    table = pd.DataFrame(columns)
    table.index.name = "round"
    return table


def comparison_table(
    runs: Mapping[str, PathRun], baseline: Optional[PathRun] = None
) -> pd.DataFrame:
    """The README table as a DataFrame."""
    rows = comparison_rows(runs, baseline or run_baseline_probe())
    table = pd.DataFrame(rows).drop(columns=["pipeline", "total"]).set_index("path")
    return table.rename(
        columns={
            "last_window": "tokens last round",
            "tokens_sent": "tokens sent (all rounds)",
            "extra_calls": "extra calls",
            "setting": "main parameter",
        }
    )


NOT_REACHED = "not reached"  # the run died before the fact arrived


def fact_states_table(runs: Mapping[str, PathRun]) -> pd.DataFrame:
    """Each fact's state at the last round, one column per run (headed by its short
    name, which wraps: the table fits a notebook beside the file browser)."""
    return pd.DataFrame(
        [
            {
                "fact": f.text,
                **{
                    SHORT_NAMES.get(key, key): run.final_states.get(f.id, NOT_REACHED)
                    for key, run in runs.items()
                },
            }
            for f in default_facts()
        ]
    ).set_index("fact")


def grounded_table(
    runs: Mapping[str, PathRun], baseline: Optional[PathRun] = None
) -> pd.DataFrame:
    """Grounded runs (`run_path(key, grounded=True)`): what the final answer got right and
    what the look-ups cost, against no compression grounded. The registry's grounded
    columns without the setting (8.4's table has it), so the table fits a notebook."""
    rows = comparison_rows(runs, baseline or run_baseline_probe(grounded=True))
    columns = [(key, title) for key, title in GROUNDED_COLUMNS if key != "setting"]
    table = pd.DataFrame(rows)[[key for key, _ in columns]]
    table.columns = [title for _, title in columns]
    return table.set_index("path")


def tokens_figure(
    runs: Mapping[str, PathRun], threshold: int = ARTICLE.threshold
) -> go.Figure:
    """Tokens per round, one small panel per path, against the threshold (a static figure:
    deterministic output).

    Until round 8 several paths send the same window, so on one chart their lines hide
    each other. Each panel draws its path in colour over the other paths in faint grey,
    and marks an overflow with a cross and, low in the panel, "overflow at round N".
    """
    keys = list(runs)
    columns = 3
    rows = -(-len(keys) // columns)
    figure = make_subplots(
        rows=rows,
        cols=columns,
        shared_xaxes=True,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        vertical_spacing=0.12,
        subplot_titles=[PATHS[key].title for key in keys],
    )
    last_round = max(r.round for run in runs.values() for r in run.rounds)
    for index, key in enumerate(keys):
        row, col = index // columns + 1, index % columns + 1
        for other in keys:
            if other != key:
                figure.add_trace(
                    go.Scatter(
                        x=[r.round for r in runs[other].rounds],
                        y=[r.tokens for r in runs[other].rounds],
                        mode="lines",
                        name="other paths",
                        legendgroup="other paths",
                        showlegend=index == 0 and other == keys[1],
                        hoverinfo="skip",
                        line={"color": "#d0d0d0", "width": 1},
                    ),
                    row=row,
                    col=col,
                )
        figure.add_trace(
            go.Scatter(
                threshold_line(last_round, threshold),
                mode="lines",
                name="threshold",
                legendgroup="threshold",
                showlegend=index == 0,
                line={"color": "#d62728", "dash": "dash", "width": 1},
            ),
            row=row,
            col=col,
        )
        run = runs[key]
        figure.add_trace(
            go.Scatter(
                x=[r.round for r in run.rounds],
                y=[r.tokens for r in run.rounds],
                mode="lines+markers",
                name=PATHS[key].title,
                showlegend=False,
                line={"color": PATH_COLORS[key], "width": 3},
                marker={"size": 5},
                hovertemplate="round %{x}: %{y:,} tokens sent<extra>" + key + "</extra>",
            ),
            row=row,
            col=col,
        )
        if run.overflow is not None:
            at = len(run.rounds)
            figure.add_trace(
                go.Scatter(
                    x=[at],
                    y=[min(run.overflow.tokens, OVERFLOW_DRAWN_AT)],
                    mode="markers",
                    name="overflow",
                    legendgroup="overflow",
                    showlegend=not any(t.name == "overflow" for t in figure.data),
                    cliponaxis=False,
                    marker={"symbol": OVERFLOW_SYMBOL, "size": 12, "color": "#d62728"},
                    hovertemplate=f"round %{{x}}: {run.overflow.tokens:,} tokens after "
                    "compression, nothing more may be cut<extra></extra>",
                ),
                row=row,
                col=col,
            )
            # Low in the panel, under every line, not on the threshold or the cross.
            figure.add_annotation(
                x=at,
                y=OVERFLOW_LABEL_AT,
                text=completes(run),
                showarrow=False,
                font={"color": "#d62728", "size": 12},
                row=row,
                col=col,
            )
    figure.update_xaxes(range=[-0.5, last_round + 0.5], dtick=2)
    figure.update_xaxes(title_text="round", row=rows)
    figure.update_yaxes(range=[0, 1400], dtick=400, tickformat=",")
    figure.update_yaxes(title_text="tokens sent", col=1)
    figure.update_layout(
        width=FIGURE_WIDTH,
        height=FIGURE_HEIGHT + 60,
        template="plotly_white",
        title="Tokens sent per round, each path at its default setting (grey: the other "
        "paths)",
        margin={"t": 80, "b": 110, "l": 70, "r": 20},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
    )
    return figure


# an overflow's tokens can be far above the axis; its cross is drawn at most this high
# (clear of the panel's title above and of the threshold line below)
OVERFLOW_DRAWN_AT = 1330
OVERFLOW_LABEL_AT = 150  # below every path's line from round 9 on (the lowest: 434)


def threshold_line(last_round: int, threshold: int) -> dict:
    return {"x": [0, last_round], "y": [threshold, threshold]}


# --- the trade-off explorer
# -------------------------------------------------------------------------


def point(run: PathRun) -> dict:
    """Where a run sits in the trade-off chart: tokens of its last window, facts it still
    shows."""
    counts = {state: run.final_count(state) for state in STATES}
    return {
        "x": run.final_tokens,
        "y": counts["kept"],
        "completed": run.completed,
        **counts,
        "extra_calls": run.extra_model_calls + run.recall_calls,
    }


def tradeoff_data(values: Mapping[str, int]) -> Dict[str, dict]:
    """Every trace of the trade-off chart for slider `values`, by name.

    Per path: its sweep (facts kept at every slider value, faint marks), its current
    point (facts kept verbatim) and, above that point, a bar up to the facts kept or
    recallable (one `recall` away): only the store has any, so the other paths draw no
    bar. A run that overflowed is marked with a cross (`symbol`), in the
    sweep and at the point.
    """
    data = {}
    for key, spec in PATHS.items():
        runs = [cached_run(key, value) for value in spec.choices]
        sweep = [point(run) for run in runs]
        data[f"{key} sweep"] = {
            "x": [p["x"] for p in sweep],
            "y": [p["y"] for p in sweep],
            "text": [
                f"{spec.parameter}={v}, {completes(run)}"
                for v, run in zip(spec.choices, runs)
            ],
            "symbol": [_symbol(run) for run in runs],
        }
        run = cached_run(key, values[key])
        now = point(run)
        setting = f"{spec.parameter}={values[key]}, {completes(run)}"
        data[key] = {
            "x": [now["x"]],
            "y": [now["y"]],
            "text": [setting],
            "symbol": _symbol(run),
        }
        # a bar up to kept + recallable, only where something is recallable (the store):
        # a diamond on every path would hide its filled circle
        recallable = now["recallable"] > 0
        data[f"{key} recallable"] = {
            "x": [now["x"], now["x"]] if recallable else [],
            "y": [now["y"], now["y"] + now["recallable"]] if recallable else [],
            "text": [setting, setting] if recallable else [],
        }
    return data


def _symbol(run: PathRun) -> str:
    """A filled circle for a run that finishes, a cross for one that overflowed."""
    return "circle" if run.completed else OVERFLOW_SYMBOL


def tradeoff_x_range(threshold: int = ARTICLE.threshold) -> list:
    """Fixed, so the points move against a still axis: every slider value of every path,
    and the threshold."""
    xs = [
        cached_run(key, value).final_tokens
        for key, spec in PATHS.items()
        for value in spec.choices
    ]
    return [(min(xs) - 60) // 50 * 50, max(max(xs), threshold) + 50]


def _marks(data: Mapping) -> dict:
    """A trace's x, y and hover text (its symbol goes on the marker)."""
    return {name: data[name] for name in ("x", "y", "text")}


def tradeoff_figure(values: Mapping[str, int], widget: bool = False):
    """Final tokens against facts: faint marks for every slider value, a bold point per
    path (facts kept verbatim; a cross if the run overflowed) and a diamond on a bar above
    it for the facts kept or recallable. One legend entry per path, below the chart,
    instead of text labels: at these settings the points sit close together."""
    data = tradeoff_data(values)
    threshold = ARTICLE.threshold
    figure = go.FigureWidget() if widget else go.Figure()
    for key, spec in PATHS.items():
        color = PATH_COLORS[key]
        figure.add_trace(
            go.Scatter(
                name=f"{key} sweep",
                mode="markers",
                showlegend=False,
                opacity=0.35,
                marker={
                    "color": color,
                    "size": 8,
                    "symbol": data[f"{key} sweep"]["symbol"],
                },
                legendgroup=key,
                hovertemplate="%{text}: %{x:,} tokens, %{y} kept<extra>"
                + spec.title
                + "</extra>",
                **_marks(data[f"{key} sweep"]),
            )
        )
        figure.add_trace(
            go.Scatter(
                name=f"{key} recallable",
                mode="lines+markers",
                showlegend=False,
                legendgroup=key,
                line={"color": color, "width": 3},
                marker={"color": color, "size": [0, 14], "symbol": "diamond"},
                hovertemplate="%{text}<br>kept or recallable: %{y}<extra>"
                + spec.title
                + "</extra>",
                **data[f"{key} recallable"],
            )
        )
        figure.add_trace(
            go.Scatter(
                name=SHORT_NAMES[key],
                mode="markers",
                legendgroup=key,
                marker={"color": color, "size": 14, "symbol": data[key]["symbol"]},
                hovertemplate="%{text}<br>%{x:,} tokens, %{y} facts kept verbatim<extra>"
                + spec.title
                + "</extra>",
                **_marks(data[key]),
            )
        )
    for name, symbol in (
        ("kept + recallable", "diamond"),
        ("run overflowed", OVERFLOW_SYMBOL),
    ):
        figure.add_trace(  # legend entries only: what a diamond and a cross mean
            go.Scatter(
                name=name,
                mode="markers",
                x=[None],
                y=[None],
                marker={"color": "#444", "size": 12, "symbol": symbol},
                hoverinfo="skip",
            )
        )
    figure.add_vline(
        x=threshold,
        line={"color": "#d62728", "dash": "dash", "width": 1},
        annotation_text=f"threshold {threshold:,}",
        annotation_position="bottom left",
    )
    figure.update_layout(
        width=FIGURE_WIDTH,
        height=FIGURE_HEIGHT + 80,
        template="plotly_white",
        title="Last window: tokens against facts the model can still reach (of %d)"
        % len(default_facts()),
        xaxis={
            "title": "tokens in the last window sent",
            "range": tradeoff_x_range(threshold),
            "tickformat": ",",
        },
        yaxis={
            "title": "facts: ● kept, ◆ kept + recallable",
            "range": [-0.5, len(default_facts()) + 1],
            "dtick": 2,
        },
        legend={
            "orientation": "h",
            "yanchor": "top",
            "y": -0.16,
            "x": 0,
            "font": {"size": 13},
        },
        margin={"l": 70, "r": 20, "t": 60, "b": 120},
    )
    return figure


def update_tradeoff_figure(figure, values: Mapping[str, int]) -> None:
    data = tradeoff_data(values)
    with figure.batch_update():
        for key in PATHS:
            for name, trace_name in (
                (key, SHORT_NAMES[key]),
                (f"{key} recallable", f"{key} recallable"),
            ):
                trace = next(t for t in figure.data if t.name == trace_name)
                trace.x, trace.y, trace.text = (
                    data[name]["x"],
                    data[name]["y"],
                    data[name]["text"],
                )
                if name == key:
                    trace.marker.symbol = data[key]["symbol"]


EXPLORER_COLUMNS = (
    "completes",
    "kept",
    "recallable",
    "traceable",
    "lost",
    "tokens, last round",
    "extra calls",
    "value",
)


def explorer_table(values: Mapping[str, int]) -> pd.DataFrame:
    """One row per path at its slider value: whether it finishes, its facts by state
    (first: what the sliders move), then tokens, calls and the value (the slider's, of
    `run_path(path, value)`; the slider's label names the parameter)."""
    rows = []
    for key in PATHS:
        run = cached_run(key, values[key])
        p = point(run)
        rows.append(
            {
                "path": SHORT_NAMES[key],
                "completes": completes(run),
                **{state: p[state] for state in STATES},
                "tokens, last round": p["x"],
                "extra calls": p["extra_calls"],
                "value": values[key],
            }
        )
    return pd.DataFrame(rows, columns=("path",) + EXPLORER_COLUMNS).set_index("path")


class SixPathsExplorer(ShownAsWidget):
    """One slider per path's main parameter → the trade-off chart and a table, redrawn in
    place."""

    def __init__(self):
        self.sliders = {
            key: widgets.SelectionSlider(
                options=list(spec.choices),
                value=spec.default,
                description=f"{key}: {spec.parameter}",
                continuous_update=True,
                style={"description_width": "220px"},
                layout=widgets.Layout(width="520px"),
            )
            for key, spec in PATHS.items()
        }
        for key, slider in self.sliders.items():
            slider.add_class(f"ccl-slider-{key}")
            slider.observe(self._on_change, names="value")
        self.table_html = widgets.HTML()
        self.figure = tradeoff_figure(self.values(), widget=True)
        self.widget = widgets.VBox(
            list(self.sliders.values()) + [self.figure, self.table_html]
        )
        self.widget.add_class("ccl-six-paths-explorer")
        self.render()

    def values(self) -> Dict[str, int]:
        return {key: slider.value for key, slider in self.sliders.items()}

    def render(self) -> None:
        """Show the runs for the current slider values: the only place the display
        changes."""
        values = self.values()
        update_tradeoff_figure(self.figure, values)
        self.table_html.value = table_html(explorer_table(values), wrap=False)

    def _on_change(self, change) -> None:
        self.render()

    def text_form(self) -> str:
        return "Six-paths explorer (run the notebook to use the sliders)"


def tokenizer_table(rows: Optional[Sequence[Mapping]] = None) -> pd.DataFrame:
    """The estimate against o200k_base and cl100k_base (needs bpe-openai)."""
    table = pd.DataFrame(rows if rows is not None else tokenizer_rows()).set_index("text")
    return table.rename(
        columns={
            "o200k_base_error": "error vs o200k",
            "cl100k_base_error": "error vs cl100k",
        }
    )


def facts_per_round(runs: Mapping[str, PathRun], state: str = "kept") -> pd.DataFrame:
    """How many facts are in `state` at each round, one column per path (empty after an
    overflow)."""
    if state not in STATES + ("not_yet",):
        raise ValueError(
            f"state must be one of {', '.join(STATES)}, not_yet; got {state!r}"
        )
    columns = {
        key: pd.Series({r.round: r.facts[state] for r in run.rounds}, dtype="Int64")
        for key, run in runs.items()
    }
    table = pd.DataFrame(columns)
    table.index.name = "round"
    return table
