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
from ..reports.paths import Listed
from .numbers import NumberBox, note_under
from .shown import ShownAsWidget
from .style import (
    KEEP_FIRST_CSS,
    NO_ANSWER_FILL,
    NO_ANSWER_Y,
    OTHER_PATHS_COLOR,
    OVERFLOW_COLOR,
    OVERFLOW_DRAWN_AT,
    OVERFLOW_LABEL_AT,
    OVERFLOW_SYMBOL,
    PATH_BOX_WIDTH,
    PATH_COLORS,
    PATH_LABEL_WIDTH,
    PATH_SLIDER_WIDTH,
    SIX_PATHS_CSS,
    SIX_PATHS_FIGURE_HEIGHT,
    SIX_PATHS_FIGURE_WIDTH,
    SIX_PATHS_TABLE,
    SYMBOL_KEY_COLOR,
    TABLE_CSS,
    THRESHOLD_COLOR,
)
from .style import PATH_SHORT_NAMES as SHORT_NAMES
from .tables import HtmlTable, to_html


def table_html(
    table: pd.DataFrame,
    wrap: bool = True,
    keep_first: bool = False,
    align: Optional[Mapping[str, str]] = None,
) -> str:
    """A table of this chapter as HTML: thousands separators, an empty cell
    after an overflow. `keep_first` keeps the row names and the first column on one
    line while the rest may wrap; `align` as `to_html`'s (prose left, say)."""
    css_class = SIX_PATHS_TABLE if wrap else SIX_PATHS_TABLE + " ccl-nowrap"
    css = TABLE_CSS + SIX_PATHS_CSS
    if keep_first:
        css_class, css = css_class + " ccl-keep-first", css + KEEP_FIRST_CSS
    return css + to_html(table, css_class=css_class, align=align)


class NumberTable(HtmlTable):
    """Shows a DataFrame of this chapter in a cell as `1,085`, not `1085` (HTML and text
    alike); compute with the DataFrame itself, not with this. `wrap=False` keeps every
    cell on one line (for a table already narrow enough, such as the explorer's);
    `keep_first=True` only the row names and the first column; `align` sets columns
    left or right (`to_html`)."""

    def __init__(
        self,
        table: pd.DataFrame,
        wrap: bool = True,
        keep_first: bool = False,
        align: Optional[Mapping[str, str]] = None,
    ):
        super().__init__(table)
        self.html = table_html(table, wrap=wrap, keep_first=keep_first, align=align)


def completes(run: PathRun) -> str:
    """ "yes", or the round whose window could not be cut below the threshold (the
    registry's tables say the same)."""
    return "yes" if run.completed else f"overflow at round {len(run.rounds)}"


@lru_cache(maxsize=None)
def cached_run(path: str, value: int) -> PathRun:
    """run_path on the bundled session, once per (path, value): a slider step
    back is free."""
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
    table = paths_frame(rows).drop(columns=["pipeline", "total"]).set_index("path")
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


def paths_frame(rows) -> pd.DataFrame:
    """The rows as a DataFrame whose lists of facts stay `Listed` (each fact shown
    unbroken): with pyarrow installed, pandas would store them as plain strings."""
    table = pd.DataFrame(rows)
    for column in table.columns:
        if any(isinstance(row.get(column), Listed) for row in rows):
            table[column] = pd.Series([row[column] for row in rows], dtype=object)
    return table


def grounded_table(
    runs: Mapping[str, PathRun], baseline: Optional[PathRun] = None
) -> pd.DataFrame:
    """Grounded runs (`run_path(key, grounded=True)`): what the final answer got right and
    what the look-ups cost, against no compression grounded. The registry's grounded
    columns without the setting (8.4's table has it), so the table fits a notebook."""
    rows = comparison_rows(runs, baseline or run_baseline_probe(grounded=True))
    columns = [(key, title) for key, title in GROUNDED_COLUMNS if key != "setting"]
    table = paths_frame(rows)[[key for key, _ in columns]]
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
    # one legend entry for the crosses: the first path that overflowed has it
    first_overflow = next((key for key in keys if runs[key].overflow is not None), None)
    for index, key in enumerate(keys):
        cell = dict(row=index // columns + 1, col=index % columns + 1)
        panel = path_panel(runs, key, threshold, last_round, legend=index == 0)
        for trace in panel:
            figure.add_trace(trace, **cell)
        if runs[key].overflow is not None:
            figure.add_trace(overflow_mark(runs[key], key == first_overflow), **cell)
            # Low in the panel, under every line, not on the threshold or the cross.
            figure.add_annotation(overflow_label(runs[key]), **cell)
    figure.update_xaxes(range=[-0.5, last_round + 0.5], dtick=2)
    figure.update_xaxes(title_text="round", row=rows)
    figure.update_yaxes(range=[0, 1400], dtick=400, tickformat=",")
    figure.update_yaxes(title_text="tokens sent", col=1)
    figure.update_layout(
        width=SIX_PATHS_FIGURE_WIDTH,
        height=SIX_PATHS_FIGURE_HEIGHT + 60,
        template="plotly_white",
        title="Tokens sent per round, each path at its default setting (grey: the other "
        "paths)",
        margin={"t": 80, "b": 110, "l": 70, "r": 20},
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
    )
    return figure


def path_panel(
    runs: Mapping[str, PathRun], key: str, threshold: int, last_round: int, legend: bool
) -> list:
    """The traces of path `key`'s panel, back to front: the other paths in faint grey,
    the threshold, and the path itself in its colour. `legend`: the panel that puts the
    grey lines and the threshold in the legend (once for all panels)."""
    others = [
        go.Scatter(
            x=[r.round for r in runs[other].rounds],
            y=[r.tokens for r in runs[other].rounds],
            mode="lines",
            name="other paths",
            legendgroup="other paths",
            showlegend=legend and number == 0,
            hoverinfo="skip",
            line={"color": OTHER_PATHS_COLOR, "width": 1},
        )
        for number, other in enumerate(other for other in runs if other != key)
    ]
    threshold_trace = go.Scatter(
        threshold_line(last_round, threshold),
        mode="lines",
        name="threshold",
        legendgroup="threshold",
        showlegend=legend,
        line={"color": THRESHOLD_COLOR, "dash": "dash", "width": 1},
    )
    run = runs[key]
    path = go.Scatter(
        x=[r.round for r in run.rounds],
        y=[r.tokens for r in run.rounds],
        mode="lines+markers",
        name=PATHS[key].title,
        showlegend=False,
        line={"color": PATH_COLORS[key], "width": 3},
        marker={"size": 5},
        hovertemplate="round %{x}: %{y:,} tokens sent<extra>" + key + "</extra>",
    )
    return [*others, threshold_trace, path]


def overflow_mark(run: PathRun, legend: bool) -> go.Scatter:
    """A cross at the round that overflowed, drawn no higher than OVERFLOW_DRAWN_AT."""
    return go.Scatter(
        x=[len(run.rounds)],
        y=[min(run.overflow.tokens, OVERFLOW_DRAWN_AT)],
        mode="markers",
        name="overflow",
        legendgroup="overflow",
        showlegend=legend,
        cliponaxis=False,
        marker={"symbol": OVERFLOW_SYMBOL, "size": 12, "color": OVERFLOW_COLOR},
        hovertemplate=f"round %{{x}}: {run.overflow.tokens:,} tokens after "
        "compression, nothing more may be cut<extra></extra>",
    )


def overflow_label(run: PathRun) -> dict:
    """ "overflow at round N", under the cross at OVERFLOW_LABEL_AT."""
    return dict(
        x=len(run.rounds),
        y=OVERFLOW_LABEL_AT,
        text=completes(run),
        showarrow=False,
        font={"color": OVERFLOW_COLOR, "size": 12},
    )


def threshold_line(last_round: int, threshold: int) -> dict:
    return {"x": [0, last_round], "y": [threshold, threshold]}


# ---- the trade-off explorer -----------------------------------------------------------


def point(run: PathRun) -> dict:
    """Where a run sits in the trade-off chart: tokens of its last window, facts it
    still shows; a run that overflowed gives no answer, so it sits on the no-answer row
    below 0 (its facts are in the table), never above a path that finished."""
    counts = {state: run.final_count(state) for state in STATES}
    return {
        "x": run.final_tokens,
        "y": counts["kept"] if run.completed else NO_ANSWER_Y,
        "completed": run.completed,
        **counts,
        "extra_calls": run.extra_model_calls + run.recall_calls,
    }


def _setting(parameter: str, value: int, run: PathRun) -> str:
    """A mark's hover text: the slider's value and how the run ended; for a run that
    overflowed, what its last window held (the chart puts it on the no-answer row)."""
    if run.completed:
        return f"{parameter}={value}, {completes(run)}"
    return (
        f"{parameter}={value}, {completes(run)}: no answer "
        f"(its last window held {run.final_count('kept')} facts verbatim)"
    )


def tradeoff_data(values: Mapping[str, int]) -> Dict[str, dict]:
    """Every trace of the trade-off chart for slider `values`, by name.

    Per path: its sweep (facts kept at every slider value, faint marks), its current
    point (facts kept verbatim) and, above that point, a bar up to the facts kept or
    recallable (one `recall` away): only the store has any, so the other paths draw no
    bar. A run that overflowed is marked with a cross (`symbol`), in the sweep and at
    the point, on the no-answer row (`NO_ANSWER_Y`): it answers nothing, whatever its
    last window held.
    """
    data = {}
    for key, spec in PATHS.items():
        runs = [cached_run(key, value) for value in spec.choices]
        sweep = [point(run) for run in runs]
        data[f"{key} sweep"] = {
            "x": [p["x"] for p in sweep],
            "y": [p["y"] for p in sweep],
            "text": [
                _setting(spec.parameter, v, run) for v, run in zip(spec.choices, runs)
            ],
            "symbol": [_symbol(run) for run in runs],
        }
        run = cached_run(key, values[key])
        now = point(run)
        setting = _setting(spec.parameter, values[key], run)
        data[key] = {
            "x": [now["x"]],
            "y": [now["y"]],
            "text": [setting],
            "symbol": _symbol(run),
        }
        # a bar up to kept + recallable, only where something is recallable (the store):
        # a diamond on every path would hide its filled circle
        recallable = now["recallable"] > 0 and now["completed"]
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
    for key in PATHS:
        figure.add_traces(tradeoff_path_traces(key, data))
    figure.add_traces(symbol_keys())
    figure.add_vline(
        x=threshold,
        line={"color": THRESHOLD_COLOR, "dash": "dash", "width": 1},
        annotation_text=f"threshold {threshold:,}",
        annotation_position="top left",
    )
    # A run that overflowed answers nothing: its own row under 0, not a height among the
    # runs that finished, so the facts its last window held cannot read as a score.
    figure.add_hrect(
        y0=NO_ANSWER_Y - 1,
        y1=NO_ANSWER_Y + 1,
        fillcolor=NO_ANSWER_FILL,
        line_width=0,
        layer="below",
        annotation_text="✕ the run overflowed (its last window's facts: the table)",
        annotation_position="inside left",
        annotation_font={"color": OVERFLOW_COLOR, "size": 12},
    )
    facts = len(default_facts())
    figure.update_layout(
        width=SIX_PATHS_FIGURE_WIDTH,
        height=SIX_PATHS_FIGURE_HEIGHT,
        template="plotly_white",
        title="Last window: tokens against facts the model can still reach (of %d)"
        % facts,
        xaxis={
            "title": "tokens in the last window sent",
            "range": tradeoff_x_range(threshold),
            "tickformat": ",",
        },
        yaxis={
            "title": "facts: ● kept, ◆ kept + recallable",
            # room above the top fact for the threshold's label
            "range": [NO_ANSWER_Y - 1.3, facts + 2.5],
            "tickvals": [NO_ANSWER_Y, *range(0, facts + 1, 2)],
            "ticktext": ["no answer", *map(str, range(0, facts + 1, 2))],
        },
        legend={
            "orientation": "h",
            "yanchor": "top",
            "y": -0.16,
            "x": 0,
            "font": {"size": 13},
        },
        margin={"l": 70, "r": 45, "t": 50, "b": 120},
        modebar_orientation="v",  # in the right margin, off the end of the title
    )
    return figure


def tradeoff_path_traces(key: str, data: Mapping[str, dict]) -> list:
    """One path's traces in the trade-off chart (see `tradeoff_data`): its sweep, the bar
    up to kept + recallable, and its current point, all in one legend group."""
    color, title = PATH_COLORS[key], PATHS[key].title
    sweep = go.Scatter(
        name=f"{key} sweep",
        mode="markers",
        showlegend=False,
        opacity=0.35,
        marker={"color": color, "size": 8, "symbol": data[f"{key} sweep"]["symbol"]},
        legendgroup=key,
        hovertemplate="%{text}: %{x:,} tokens, %{y} kept<extra>" + title + "</extra>",
        **_marks(data[f"{key} sweep"]),
    )
    recallable = go.Scatter(
        name=f"{key} recallable",
        mode="lines+markers",
        showlegend=False,
        legendgroup=key,
        line={"color": color, "width": 3},
        marker={"color": color, "size": [0, 14], "symbol": "diamond"},
        hovertemplate="%{text}<br>kept or recallable: %{y}<extra>" + title + "</extra>",
        **data[f"{key} recallable"],
    )
    now = go.Scatter(
        name=SHORT_NAMES[key],
        mode="markers",
        legendgroup=key,
        marker={"color": color, "size": 14, "symbol": data[key]["symbol"]},
        hovertemplate="%{text}<br>%{x:,} tokens, %{y} facts kept verbatim<extra>"
        + title
        + "</extra>",
        **_marks(data[key]),
    )
    return [sweep, recallable, now]


def symbol_keys() -> list:
    """Legend entries only: what a diamond and a cross mean."""
    return [
        go.Scatter(
            name=name,
            mode="markers",
            x=[None],
            y=[None],
            marker={"color": SYMBOL_KEY_COLOR, "size": 12, "symbol": symbol},
            hoverinfo="skip",
        )
        for name, symbol in (
            ("kept + recallable", "diamond"),
            ("run overflowed", OVERFLOW_SYMBOL),
        )
    ]


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


def nearest_choice(choices: Sequence[int], typed: int) -> int:
    """The slider value a typed number goes to: the nearest one the path offers (the
    lower of two as near)."""
    return min(choices, key=lambda choice: (abs(choice - typed), choice))


class SixPathsExplorer(ShownAsWidget):
    """One slider per path's main parameter → the trade-off chart and a table,
    redrawn in place. Beside each slider a box shows its value and takes a typed one
    (it goes to the nearest value the path offers); Reset brings back the defaults."""

    def __init__(self):
        self.sliders = {
            key: widgets.SelectionSlider(
                options=list(spec.choices),
                value=spec.default,
                description=f"{key}: {spec.parameter}",
                continuous_update=True,
                # the box beside it is the readout: a SelectionSlider's own readout can
                # be typed into, and ignores what is typed
                readout=False,
                style={"description_width": PATH_LABEL_WIDTH},
                layout=widgets.Layout(width=PATH_SLIDER_WIDTH),
            )
            for key, spec in PATHS.items()
        }
        self.typed = {
            key: NumberBox(
                spec.default,
                minimum=min(spec.choices),
                maximum=max(spec.choices),
                snap=lambda typed, spec=spec: nearest_choice(spec.choices, typed),
                on_value=lambda value, key=key: self.type_value(key, value),
                tooltip=f"type a {spec.parameter}: it goes to the nearest of "
                + ", ".join(map(str, spec.choices)),
                width=PATH_BOX_WIDTH,
            )
            for key, spec in PATHS.items()
        }
        self.number_boxes = list(self.typed.values())
        self._holding = False
        for key, slider in self.sliders.items():
            slider.add_class(f"ccl-slider-{key}")
            self.typed[key].text.add_class(f"ccl-typed-{key}")
            slider.observe(self._on_change, names="value")
        self.reset_button = widgets.Button(
            description="Reset to the article's values",
            icon="undo",
            layout=widgets.Layout(width="230px"),
        )
        self.reset_button.on_click(lambda _: self.reset())
        self.table_html = widgets.HTML()
        self.figure = tradeoff_figure(self.values(), widget=True)
        pairs = [note_under([self.sliders[key], self.typed[key]]) for key in PATHS]
        grid = widgets.GridBox(
            pairs,
            layout=widgets.Layout(
                grid_template_columns="repeat(2, max-content)", grid_gap="0 16px"
            ),
        )
        self.widget = widgets.VBox(
            [grid, self.reset_button, self.figure, self.table_html]
        )
        self.widget.add_class("ccl-six-paths-explorer")
        self.render()

    def values(self) -> Dict[str, int]:
        return {key: slider.value for key, slider in self.sliders.items()}

    def render(self) -> None:
        """Show the runs for the current slider values: the only place
        the display changes."""
        values = self.values()
        for key, value in values.items():
            if self.typed[key].value != value:  # a slider moved: the box follows
                self.typed[key].show(value)
        update_tradeoff_figure(self.figure, values)
        self.table_html.value = table_html(explorer_table(values), wrap=False)

    def type_value(self, key: str, typed: int) -> None:
        """A number typed beside a slider: the slider goes to the nearest value the path
        offers (which redraws), and the box shows that value."""
        value = nearest_choice(PATHS[key].choices, typed)
        if value != self.sliders[key].value:
            self.sliders[key].value = value
        self.typed[key].value = value  # what the box holds (its note says where it went)

    def reset(self) -> None:
        """Every slider back to its default (the article's value), redrawn once."""
        self._holding = True
        try:
            for key, spec in PATHS.items():
                self.sliders[key].value = spec.default
        finally:
            self._holding = False
        self.render()

    def _on_change(self, change) -> None:
        # a note under one box is about what was typed there: another slider moved
        # makes it old news
        for key, box in self.typed.items():
            if self.sliders[key] is not change.get("owner") and box.note.value:
                box.show(box.value)
        if not self._holding:
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
    """How many facts are in `state` at each round, one column per path (empty
    after an overflow)."""
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
