"""Notebook 08's views: the six paths side by side, the trade-off explorer and the tokenizer table.

Everything shown is computed by `minilib.compare` (runs, fact states, tokenizer
counts); this module only turns it into DataFrames, plotly figures and widgets.
The explorer's display is a pure function of its slider values
(`SixPathsExplorer.render`), so tests set `slider.value` and compare the figure and
the table with `run_path` for those values.
"""

from functools import lru_cache
from typing import Dict, Mapping, Optional, Sequence

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from ..compare import (ARTICLE, PATHS, PathRun, comparison_rows, default_facts, run_baseline_probe, run_path,
                       tokenizer_rows)
from ..facts import STATES
from .tables import TABLE_CSS, to_html

# One colour per path, the same in every figure of the chapter.
PATH_COLORS = {"truncation": "#7f7f7f", "aging": "#ff7f0e", "rolling_summary": "#1f77b4",
               "hierarchical": "#9467bd", "store": "#2ca02c", "budgeting": "#8c564b"}
FIGURE_WIDTH, FIGURE_HEIGHT = 900, 460


@lru_cache(maxsize=None)
def cached_run(path: str, value: int) -> PathRun:
    """run_path on the bundled session, once per (path, value): a slider step back is free."""
    return run_path(path, value)


def default_runs() -> Dict[str, PathRun]:
    return {key: cached_run(key, spec.default) for key, spec in PATHS.items()}


def paths_table() -> pd.DataFrame:
    """The six pipelines and the parameter each slider moves."""
    return pd.DataFrame([{"path": spec.title, "pipeline": spec.pipeline, "main parameter": spec.parameter,
                          "default": spec.default, "slider values": ", ".join(map(str, spec.choices))}
                         for spec in PATHS.values()]).set_index("path")


def facts_table() -> pd.DataFrame:
    return pd.DataFrame([{"id": f.id, "kind": f.kind, "text": f.text, "first in": f.first_call}
                         for f in default_facts()]).set_index("id")


def tokens_per_round(runs: Mapping[str, PathRun]) -> pd.DataFrame:
    """Tokens sent in each round, one column per path (empty after an overflow)."""
    columns = {key: pd.Series({r.round: r.tokens for r in run.rounds}, dtype="Int64") for key, run in runs.items()}
    table = pd.DataFrame(columns)
    table.index.name = "round"
    return table


def comparison_table(runs: Mapping[str, PathRun], baseline: Optional[PathRun] = None) -> pd.DataFrame:
    """The README table as a DataFrame."""
    rows = comparison_rows(runs, baseline or run_baseline_probe())
    table = pd.DataFrame(rows).drop(columns=["pipeline", "total"]).set_index("path")
    return table.rename(columns={"last_window": "tokens last round", "tokens_sent": "tokens sent (all rounds)",
                                 "extra_calls": "extra calls", "setting": "main parameter"})


def fact_states_table(runs: Mapping[str, PathRun]) -> pd.DataFrame:
    """Each fact's state at the last round, one column per run."""
    return pd.DataFrame([{"fact": f.text, **{key: run.final_states.get(f.id, "-") for key, run in runs.items()}}
                         for f in default_facts()]).set_index("fact")


def tokens_figure(runs: Mapping[str, PathRun], threshold: int = ARTICLE["threshold"]) -> go.Figure:
    """Tokens per round for each path, against the threshold (a static figure: deterministic output)."""
    figure = go.Figure()
    for key, run in runs.items():
        figure.add_trace(go.Scatter(x=[r.round for r in run.rounds], y=[r.tokens for r in run.rounds],
                                    mode="lines+markers", name=PATHS[key].title,
                                    line={"color": PATH_COLORS[key]}))
    last_round = max(r.round for run in runs.values() for r in run.rounds)
    figure.add_trace(go.Scatter(x=[0, last_round], y=[threshold, threshold], mode="lines", name="threshold",
                                line={"color": "#d62728", "dash": "dash"}))
    figure.update_layout(width=FIGURE_WIDTH, height=FIGURE_HEIGHT, template="plotly_white",
                         title="Tokens sent per round, each path at its default setting",
                         xaxis_title="round", yaxis_title="tokens sent (estimate)", yaxis_range=[0, 1300])
    return figure


# --- the trade-off explorer -------------------------------------------------------------------------

def point(run: PathRun) -> dict:
    """Where a run sits in the trade-off chart: tokens of its last window, facts it still shows."""
    counts = {state: run.final_count(state) for state in STATES}
    return {"x": run.final_tokens, "y": counts["kept"], "completed": run.completed, **counts,
            "extra_calls": run.extra_model_calls + run.recall_calls}


def tradeoff_data(values: Mapping[str, int]) -> Dict[str, dict]:
    """Every trace of the trade-off chart for slider `values`: a sweep line and a current point per path."""
    data = {}
    for key, spec in PATHS.items():
        sweep = [point(cached_run(key, value)) for value in spec.choices]
        data[f"{key} sweep"] = {"x": [p["x"] for p in sweep], "y": [p["y"] for p in sweep],
                                "text": [f"{spec.parameter}={v}" for v in spec.choices]}
        now = point(cached_run(key, values[key]))
        data[key] = {"x": [now["x"]], "y": [now["y"]],
                     "text": [f"{spec.parameter}={values[key]}" + ("" if now["completed"] else " (overflow)")]}
    return data


def tradeoff_figure(values: Mapping[str, int], widget: bool = False):
    """Final tokens against facts kept: faint sweep lines, bold current points (hollow = the run overflowed)."""
    data = tradeoff_data(values)
    figure = go.FigureWidget() if widget else go.Figure()
    for key, spec in PATHS.items():
        color = PATH_COLORS[key]
        figure.add_trace(go.Scatter(name=f"{key} sweep", mode="lines", showlegend=False, hoverinfo="skip",
                                    line={"color": color, "width": 1, "dash": "dot"}, opacity=0.5,
                                    **{k: data[f"{key} sweep"][k] for k in ("x", "y")}))
        figure.add_trace(go.Scatter(name=spec.title, mode="markers+text", textposition="top center",
                                    marker={"color": color, "size": 13}, **data[key]))
    _style_points(figure, values)
    figure.update_layout(width=FIGURE_WIDTH, height=FIGURE_HEIGHT, template="plotly_white",
                         title="Tokens in the last window against facts still in it (of %d)" % len(default_facts()),
                         xaxis={"title": "tokens in the last window sent", "range": [0, 1300]},
                         yaxis={"title": "facts kept verbatim", "range": [-0.5, len(default_facts()) + 0.5]})
    return figure


def _style_points(figure, values: Mapping[str, int]) -> None:
    for key in PATHS:
        trace = next(t for t in figure.data if t.name == PATHS[key].title)
        # A hollow marker: the loop died at that setting, the point is its last window.
        trace.marker.symbol = "circle" if cached_run(key, values[key]).completed else "circle-open"


def update_tradeoff_figure(figure, values: Mapping[str, int]) -> None:
    data = tradeoff_data(values)
    with figure.batch_update():
        for key, spec in PATHS.items():
            trace = next(t for t in figure.data if t.name == spec.title)
            trace.x, trace.y, trace.text = data[key]["x"], data[key]["y"], data[key]["text"]
        _style_points(figure, values)


def explorer_table(values: Mapping[str, int]) -> pd.DataFrame:
    rows = []
    for key, spec in PATHS.items():
        p = point(cached_run(key, values[key]))
        rows.append({"path": spec.title, "setting": f"{spec.parameter}={values[key]}",
                     "completes": "yes" if p["completed"] else "overflow", "tokens last round": p["x"],
                     "extra calls": p["extra_calls"], **{state: p[state] for state in STATES}})
    return pd.DataFrame(rows).set_index("path")


class SixPathsExplorer:
    """One slider per path's main parameter → the trade-off chart and a table, redrawn in place."""

    def __init__(self):
        self.sliders = {
            key: widgets.SelectionSlider(options=list(spec.choices), value=spec.default,
                                         description=f"{key}: {spec.parameter}", continuous_update=True,
                                         style={"description_width": "220px"}, layout=widgets.Layout(width="520px"))
            for key, spec in PATHS.items()
        }
        for key, slider in self.sliders.items():
            slider.add_class(f"ccl-slider-{key}")
            slider.observe(self._on_change, names="value")
        self.table_html = widgets.HTML()
        self.figure = tradeoff_figure(self.values(), widget=True)
        self.widget = widgets.VBox(list(self.sliders.values()) + [self.figure, self.table_html])
        self.widget.add_class("ccl-six-paths-explorer")
        self.render()

    def values(self) -> Dict[str, int]:
        return {key: slider.value for key, slider in self.sliders.items()}

    def render(self) -> None:
        """Show the runs for the current slider values: the only place the display changes."""
        values = self.values()
        update_tradeoff_figure(self.figure, values)
        self.table_html.value = TABLE_CSS + to_html(explorer_table(values))

    def _on_change(self, change) -> None:
        self.render()

    def _repr_mimebundle_(self, **kwargs):
        # A fixed text form instead of the widget tree's repr (which holds the figure's random uids).
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = "Six-paths explorer (run the notebook to use the sliders)"
        return bundle


def tokenizer_table(rows: Optional[Sequence[Mapping]] = None) -> pd.DataFrame:
    """The estimate against o200k_base and cl100k_base (needs bpe-openai)."""
    table = pd.DataFrame(rows if rows is not None else tokenizer_rows()).set_index("text")
    return table.rename(columns={"o200k_base_error": "error vs o200k", "cl100k_base_error": "error vs cl100k"})


def facts_per_round(runs: Mapping[str, PathRun], state: str = "kept") -> pd.DataFrame:
    """How many facts are in `state` at each round, one column per path (empty after an overflow)."""
    if state not in STATES + ("not_yet",):
        raise ValueError(f"state must be one of {', '.join(STATES)}, not_yet; got {state!r}")
    columns = {key: pd.Series({r.round: r.facts[state] for r in run.rounds}, dtype="Int64")
               for key, run in runs.items()}
    table = pd.DataFrame(columns)
    table.index.name = "round"
    return table
