"""Notebook 08's views, headless: the explorer redraws exactly what run_path computes for
its slider values."""

import pandas as pd
import pytest

from minilib import PATHS, run_path
from minilib.lab.six_paths import (
    SixPathsExplorer,
    comparison_table,
    explorer_table,
    fact_states_table,
    tokens_figure,
    tokens_per_round,
    tradeoff_data,
)


@pytest.fixture(scope="module")
def explorer():
    return SixPathsExplorer()


def point_of(figure, key):
    trace = next(t for t in figure.data if t.name == PATHS[key].title)
    return trace.x[0], trace.y[0], trace.marker.symbol


@pytest.mark.parametrize(
    "key, value",
    [
        ("truncation", 10),
        ("hierarchical", 0),
        ("aging", 0),
        ("budgeting", 600),
        ("store", 0),
    ],
)
def test_moving_a_slider_moves_that_point_to_run_paths_result(explorer, key, value):
    explorer.sliders[key].value = value
    run = run_path(key, value)
    x, y, symbol = point_of(explorer.figure, key)
    assert (x, y) == (run.final_tokens, run.final_count("kept"))
    assert symbol == ("circle" if run.completed else "circle-open")
    row = explorer_table(explorer.values()).loc[PATHS[key].title]
    assert row["tokens last round"] == run.final_tokens and row[
        "lost"
    ] == run.final_count("lost")
    assert f"{PATHS[key].parameter}={value}" in explorer.table_html.value
    explorer.sliders[key].value = PATHS[key].default
    assert point_of(explorer.figure, key)[:2] == (
        run_path(key).final_tokens,
        run_path(key).final_count("kept"),
    )


def test_other_points_stay_when_one_slider_moves(explorer):
    before = {key: point_of(explorer.figure, key) for key in PATHS}
    explorer.sliders["truncation"].value = 0
    after = {key: point_of(explorer.figure, key) for key in PATHS}
    assert {k: v for k, v in after.items() if k != "truncation"} == {
        k: v for k, v in before.items() if k != "truncation"
    }
    assert after["truncation"] != before["truncation"]
    explorer.sliders["truncation"].value = PATHS["truncation"].default


def test_sweep_lines_cover_every_slider_value():
    data = tradeoff_data({key: spec.default for key, spec in PATHS.items()})
    for key, spec in PATHS.items():
        assert data[f"{key} sweep"]["y"] == [
            run_path(key, v).final_count("kept") for v in spec.choices
        ]


def test_tables_and_figure_hold_the_computed_numbers():
    runs = {key: run_path(key) for key in PATHS}
    per_round = tokens_per_round(runs)
    assert per_round.loc[13, "rolling_summary"] == 1193 and pd.isna(
        per_round.loc[9, "aging"]
    )
    table = comparison_table(runs)
    assert table.loc["0 no compression", "kept"] == 19
    assert table.loc["4 hierarchical summary", "kept"] == runs[
        "hierarchical"
    ].final_count("kept")
    assert (
        fact_states_table(runs).loc["E2BIG fix (#58) still in review", "store"]
        == "recallable"
    )
    figure = tokens_figure(runs)
    line = next(t for t in figure.data if t.name == PATHS["truncation"].title)
    assert list(line.y) == [r.tokens for r in runs["truncation"].rounds]


def test_explorer_text_form_is_fixed(explorer):
    assert (
        explorer._repr_mimebundle_()["text/plain"]
        == "Six-paths explorer (run the notebook to use the sliders)"
    )


def test_facts_per_round_counts_each_state_and_rejects_unknown_ones():
    from minilib.lab.six_paths import facts_per_round

    runs = {key: run_path(key) for key in ("rolling_summary", "store")}
    kept = facts_per_round(runs)
    assert kept.loc[13, "rolling_summary"] == runs["rolling_summary"].final_count("kept")
    assert list(kept.loc[1]) == [
        0,
        0,
    ]  # the notes' facts are cut in the round they arrive
    assert facts_per_round(runs, "not_yet").loc[0, "store"] == 19
    with pytest.raises(ValueError, match="state must be one of kept"):
        facts_per_round(runs, "forgotten")


def test_recallable_bar_reaches_kept_plus_recallable_and_follows_the_slider(explorer):
    def bar(key):
        trace = next(t for t in explorer.figure.data if t.name == f"{key} recallable")
        return list(trace.x), list(trace.y)

    for value in (0, PATHS["store"].default):
        explorer.sliders["store"].value = value
        run = run_path("store", value)
        kept, recallable = run.final_count("kept"), run.final_count("recallable")
        assert recallable > 0
        assert bar("store") == ([run.final_tokens] * 2, [kept, kept + recallable])
    truncation = run_path("truncation")
    assert (
        bar("truncation")[1] == [truncation.final_count("kept")] * 2
    )  # nothing recallable: no height


def test_tradeoff_axis_holds_every_slider_value_and_the_threshold():
    from minilib.lab.six_paths import tradeoff_figure, tradeoff_x_range
    from minilib.paths.registry import ARTICLE

    low, high = tradeoff_x_range()
    xs = [
        run_path(key, v).final_tokens for key, spec in PATHS.items() for v in spec.choices
    ]
    assert low < min(xs) and max(max(xs), ARTICLE.threshold) < high
    assert high - low < 1000  # not from 0: the points are not squeezed into a corner
    figure = tradeoff_figure({key: spec.default for key, spec in PATHS.items()})
    assert list(figure.layout.xaxis.range) == [low, high]
    assert all(
        t.mode in ("markers", "lines+markers") for t in figure.data
    )  # no text labels piling up


def test_every_path_has_its_own_panel_in_the_tokens_figure():
    runs = {key: run_path(key) for key in PATHS}
    figure = tokens_figure(runs)
    axes = set()
    for key, run in runs.items():
        line = next(t for t in figure.data if t.name == PATHS[key].title)
        assert list(line.x) == [r.round for r in run.rounds] and list(line.y) == [
            r.tokens for r in run.rounds
        ]
        axes.add(line.xaxis)
    assert len(axes) == len(PATHS)  # one panel each: no line can hide another
    crosses = [t for t in figure.data if t.name == "overflow"]
    assert [list(t.x) for t in crosses] == [[len(runs["aging"].rounds)]]
