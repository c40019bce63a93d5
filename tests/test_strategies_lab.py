"""Notebook 08's views, headless: the explorer redraws what run_path computes."""

import pandas as pd
import pytest

from minilib.lab.six_paths import (
    EXPLORER_COLUMNS,
    SHORT_NAMES,
    NumberTable,
    SixPathsExplorer,
    comparison_table,
    explorer_table,
    fact_states_table,
    grounded_table,
    tokens_figure,
    tokens_per_round,
    tradeoff_data,
)
from minilib.lab.style import NO_ANSWER_Y
from minilib.measure.facts import STATES
from minilib.policies import PATHS, run_path


@pytest.fixture(scope="module")
def explorer():
    return SixPathsExplorer()


def point_of(figure, key):
    trace = next(t for t in figure.data if t.name == SHORT_NAMES[key])
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
    # a run that overflowed answers nothing: on the no-answer row, as a cross
    assert (x, y) == (
        run.final_tokens,
        run.final_count("kept") if run.completed else NO_ANSWER_Y,
    )
    assert symbol == ("circle" if run.completed else "x")
    assert explorer.typed[key].value == value  # the box beside the slider shows it
    row = explorer_table(explorer.values()).loc[SHORT_NAMES[key]]
    assert row["tokens, last round"] == run.final_tokens and row[
        "lost"
    ] == run.final_count("lost")
    completes = "yes" if run.completed else f"overflow at round {len(run.rounds)}"
    assert row["completes"] == completes and completes in explorer.table_html.value
    assert row["value"] == value and f"<td>{value:,}</td>" in explorer.table_html.value
    explorer.sliders[key].value = PATHS[key].default
    default = run_path(key)
    assert point_of(explorer.figure, key)[:2] == (
        default.final_tokens,
        default.final_count("kept") if default.completed else NO_ANSWER_Y,
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
        runs = [run_path(key, v) for v in spec.choices]
        assert data[f"{key} sweep"]["y"] == [
            run.final_count("kept") if run.completed else NO_ANSWER_Y for run in runs
        ]


def test_an_overflowed_run_sits_below_every_run_that_answers():
    """At head_chars=0 aging's last window holds more facts (11) than the article's
    pipeline keeps (9), but it never answers: its cross must not stand above the
    pipeline's point (it would read as "0 is best"). It sits on the no-answer row,
    under 0, and its hover says what its last window held."""
    from minilib.lab.six_paths import tradeoff_figure

    values = {key: spec.default for key, spec in PATHS.items()}
    values["aging"] = 0
    aging, article = run_path("aging", 0), run_path("rolling_summary")
    assert not aging.completed and aging.final_count("kept") > article.final_count(
        "kept"
    )  # the case that invited the misreading
    figure = tradeoff_figure(values)
    x, y, symbol = point_of(figure, "aging")
    assert symbol == "x" and y == NO_ANSWER_Y < 0
    assert y < point_of(figure, "rolling_summary")[1]
    answered = [t for t in figure.data if t.name in SHORT_NAMES.values()]
    assert all(
        t.y[0] >= 0 for t in answered if t.marker.symbol == "circle"
    )  # a run that answers is never on that row
    hover = next(t for t in figure.data if t.name == SHORT_NAMES["aging"]).text[0]
    assert "no answer" in hover and f"held {aging.final_count('kept')} facts" in hover
    ticks = dict(zip(figure.layout.yaxis.tickvals, figure.layout.yaxis.ticktext))
    assert ticks[NO_ANSWER_Y] == "no answer"
    assert figure.layout.yaxis.range[0] < NO_ANSWER_Y


def test_a_typed_value_goes_to_the_nearest_choice_and_moves_the_slider():
    """The box beside each slider takes a typed number: the slider goes to the nearest
    value the path offers, and the chart and table follow."""
    explorer = SixPathsExplorer()
    choices = PATHS["truncation"].choices  # 0, 1, 2, 4, 6, 8, 10
    explorer.typed["truncation"].accept("9")  # between 8 and 10: the lower
    assert explorer.sliders["truncation"].value == 8
    assert explorer.typed["truncation"].value == 8 and 8 in choices
    run = run_path("truncation", 8)
    assert point_of(explorer.figure, "truncation")[:2] == (
        run.final_tokens,
        run.final_count("kept"),
    )
    explorer.typed["budgeting"].accept("10,000")  # past the end: the last choice
    assert explorer.sliders["budgeting"].value == PATHS["budgeting"].choices[-1]
    explorer.typed["aging"].accept("160")  # on the grid: taken as it is
    assert explorer.sliders["aging"].value == 160
    assert not any(s.readout for s in explorer.sliders.values())  # one readout: the box


def test_reset_brings_back_every_default_and_redraws_once():
    explorer = SixPathsExplorer()
    fresh = {key: point_of(explorer.figure, key) for key in PATHS}
    explorer.sliders["truncation"].value = 10
    explorer.typed["aging"].value = 0
    explorer.sliders["budgeting"].value = 600
    redraws = []
    explorer.table_html.observe(lambda change: redraws.append(change), names="value")
    explorer.reset_button.click()
    assert explorer.values() == {key: spec.default for key, spec in PATHS.items()}
    assert {key: explorer.typed[key].value for key in PATHS} == explorer.values()
    assert {key: point_of(explorer.figure, key) for key in PATHS} == fresh
    assert len(redraws) == 1


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
        fact_states_table(runs).loc["E2BIG fix (#58) still in review", "5 store + recall"]
        == "recallable"
    )
    # aging dies in round 9: a fact that arrives later was never in its window
    assert "not reached" in set(fact_states_table(runs)["2 aging"])
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
    assert run_path("truncation").final_count("recallable") == 0
    assert bar("truncation") == ([], [])  # nothing recallable: no bar, no diamond


def test_tradeoff_axis_holds_every_slider_value_and_the_threshold():
    from minilib.lab.six_paths import tradeoff_figure, tradeoff_x_range
    from minilib.policies.registry import ARTICLE

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
    # the tool bar plotly shows on hover stands in the right margin, not on the title
    assert figure.layout.modebar.orientation == "v" and figure.layout.margin.r >= 40


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


def test_explorer_table_puts_the_facts_first_and_names_the_overflow_round():
    values = {key: spec.default for key, spec in PATHS.items()}
    values.update(aging=0, budgeting=600)
    table = explorer_table(values)
    # what the sliders move comes first: the rest may scroll, these may not
    assert list(table.columns[:5]) == ["completes", *STATES]
    assert tuple(table.columns) == EXPLORER_COLUMNS
    assert list(table.index) == [SHORT_NAMES[key] for key in PATHS]
    for key in ("aging", "budgeting", "truncation"):
        run = run_path(key, values[key])
        row = table.loc[SHORT_NAMES[key]]
        assert [row[state] for state in STATES] == [
            run.final_count(state) for state in STATES
        ]
        expected = "yes" if run.completed else f"overflow at round {len(run.rounds)}"
        assert row["completes"] == expected
    assert not run_path("aging", 0).completed  # the case the chapter's prose quotes

    # 8.6: at 600 the whole prompt fits, so budgeting cuts nothing and the run stops;
    # at its smallest choice it cuts the prompt and the run completes
    def budgeting_cuts(value):
        return [
            record
            for record in run_path("budgeting", value).tracer.records
            if record.get("event") == "context_compression"
            and record["payload"]["strategy"] == "input_budgeting"
        ]

    assert budgeting_cuts(600) == [] and not run_path("budgeting", 600).completed
    smallest = PATHS["budgeting"].choices[0]
    assert budgeting_cuts(smallest) and run_path("budgeting", smallest).completed


def test_explorer_says_the_same_overflow_round_as_the_registrys_table():
    values = {key: spec.default for key, spec in PATHS.items()}
    runs = {key: run_path(key, value) for key, value in values.items()}
    registry = comparison_table(runs)["completes"].drop("0 no compression")
    explorer = explorer_table(values)["completes"]
    assert list(explorer) == list(registry)
    assert any(value.startswith("overflow at round ") for value in explorer)


def test_explorer_table_is_narrow_enough_for_a_notebook_beside_the_file_browser():
    # ~848 px of output: short names and headers, no cell longer than these
    table = explorer_table({key: spec.default for key, spec in PATHS.items()})
    assert max(len(name) for name in table.index) <= len("3 rolling summary")
    assert all(len(header) <= len("tokens, last round") for header in table.columns)


def test_number_table_shows_thousands_separators_and_blank_gaps():
    runs = {key: run_path(key) for key in ("truncation", "aging")}
    per_round = tokens_per_round(runs)
    shown = NumberTable(per_round)
    last = int(per_round["truncation"].dropna().iloc[-1])
    assert last >= 1000 and f"<td>{last:,}</td>" in shown.html
    assert f"{last:,}" in repr(shown) and "<NA>" not in repr(shown) + shown.html
    assert shown.table["truncation"].tolist() == per_round["truncation"].tolist()
    assert '<table class="ccl-table ccl-six">' in shown.html  # its text may wrap
    unwrapped = NumberTable(per_round, wrap=False).html
    assert '<table class="ccl-table ccl-six ccl-nowrap">' in unwrapped


def test_tradeoff_marks_an_overflowed_run_with_a_cross_everywhere():
    values = {key: spec.default for key, spec in PATHS.items()}
    data = tradeoff_data(values)
    for key, spec in PATHS.items():
        runs = [run_path(key, v) for v in spec.choices]
        assert data[f"{key} sweep"]["symbol"] == [
            "circle" if run.completed else "x" for run in runs
        ]
    from minilib.lab.six_paths import tradeoff_figure

    figure = tradeoff_figure(values)
    legend = [t.name for t in figure.data if t.showlegend is not False]
    assert "run overflowed" in legend and "kept + recallable" in legend
    assert figure.layout.legend.orientation == "h"  # below the chart, not beside it
    assert figure.layout.width <= 840


def test_tokens_figure_labels_the_overflow_away_from_the_threshold():
    from minilib.policies.registry import ARTICLE

    runs = {key: run_path(key) for key in PATHS}
    figure = tokens_figure(runs)
    dead = [run for run in runs.values() if not run.completed]
    labels = [a for a in figure.layout.annotations if a.text.startswith("overflow")]
    assert [a.text for a in labels] == [
        f"overflow at round {len(run.rounds)}" for run in dead
    ]
    lowest = min(r.tokens for run in runs.values() for r in run.rounds if r.round >= 9)
    assert all(a.y < min(lowest, ARTICLE.threshold) for a in labels)
    crosses = [t for t in figure.data if t.name == "overflow"]
    assert [t.showlegend for t in crosses][:1] == [True]  # the legend explains ✕
    assert figure.layout.width <= 840


def test_grounded_table_is_the_registrys_grounded_columns():
    from minilib.reports import GROUNDED_COLUMNS

    runs = {key: run_path(key, grounded=True) for key in ("hierarchical", "store")}
    table = grounded_table(runs)
    assert list(table.columns) == [
        title for key, title in GROUNDED_COLUMNS if key not in ("path", "setting")
    ]
    row = table.loc[PATHS["hierarchical"].title]
    outcome = runs["hierarchical"].grounded
    assert row["look-up calls"] == outcome.lookup_calls
    assert row["extra tokens (vs not grounded)"] == outcome.extra_tokens


def test_the_facts_a_path_lost_each_stay_on_one_line_in_the_browser():
    runs = {key: run_path(key, grounded=True) for key in ("truncation",)}
    table = grounded_table(runs)
    lost = runs["truncation"].grounded.lost
    cell = table.loc[PATHS["truncation"].title, "facts it lost"]
    assert len(lost) > 1 and any("-" in fact for fact in lost)
    assert cell == ", ".join(lost)  # the text and markdown show the list
    html = NumberTable(table)._repr_html_()
    for fact in lost:  # an id breaks at its hyphens unless its span says not to
        assert f'<span style="white-space:nowrap">{fact}</span>' in html
    assert table.loc["0 no compression", "facts it lost"] == "-"
