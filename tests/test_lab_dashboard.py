"""The long-session dashboard (notebook 06): what it shows is what run_session computes.

Sliders are driven as a person would, by setting `.value`; every expected number comes
from `run_session` (or the trace) for that setting, never from constants copied here.
"""

import html
import re
from dataclasses import fields, replace

import pytest

from minilib import Settings, run_baseline, run_session
from minilib.lab.dashboard import (
    SLIDERS,
    LongSessionDashboard,
    settings_from_values,
    status_lines,
)
from minilib.lab.figures import (
    lab_figure,
    lab_traces,
    send_lab_update,
    session_figure,
    token_axis_range,
    trace_data,
)
from minilib.lab.style import (
    LAB_TRACE_NAMES,
    MARKER_OFFSET,
    OFF_SCALE_AT,
    OVERFLOW_COLOR,
    SENT,
    TABLE_CSS,
    TOKEN_TRACES,
    TRACE_NAMES,
    ZOOM_FACTOR,
)
from minilib.lab.tables import (
    HtmlTable,
    event_rows,
    messages_table,
    round_rows,
    rounds_table,
    rows_html,
    to_html,
    trace_events_table,
)
from minilib.trace import event_records


@pytest.fixture(scope="module")
def dashboard(session):
    return LongSessionDashboard(session)


@pytest.fixture
def fresh(dashboard):
    """The module's dashboard, back at the article's values (building one costs about a
    second)."""
    dashboard.reset()
    return dashboard


def sawtooth(run):
    """(round, tokens) the zoom draws: per round the window as measured, then (if
    compressed) as sent."""
    points = []
    for r in run.rounds:
        points += [(r.round, r.tokens_before)] + (
            [(r.round, r.tokens_after)] if r.tokens_after != r.tokens_before else []
        )
    return points


def assert_shows(dashboard, expected):
    """The figure, both tables and the status line show `expected` (a SessionRun)."""
    rounds = expected.rounds
    figure = dashboard.figure
    threshold = expected.settings.threshold
    assert trace_data(figure, "compressed") == {
        "x": [r.round for r in rounds],
        "y": [r.tokens_after for r in rounds],
    }
    assert trace_data(figure, "compressed messages")["y"] == [
        r.messages_after for r in rounds
    ]
    # a round that aged and summarized draws its two marks side by side (round 9 here)
    both = {r.round for r in rounds if r.aged and r.summarized}
    aged_x = [r.round - MARKER_OFFSET * (r.round in both) for r in rounds if r.aged]
    summary_x = [
        r.round + MARKER_OFFSET * (r.round in both) for r in rounds if r.summarized
    ]
    assert trace_data(figure, "aging")["x"] == aged_x
    assert trace_data(figure, "summary")["x"] == summary_x
    assert trace_data(figure, "threshold")["y"] == [threshold] * 2
    assert trace_data(figure, "overflow")["y"] == (
        [expected.overflow.tokens] if expected.overflow else []
    )

    # The zoom: the same run in % of the threshold, on an axis that ends at
    # ZOOM_FACTOR x 100%; the hover's tokens ride along in customdata.
    def share(tokens):
        return round(100 * tokens / threshold, 1)

    window = trace_data(figure, "window (zoom)")
    assert list(zip(window["x"], window["y"])) == [
        (x, share(y)) for x, y in sawtooth(expected)
    ]
    zoom_window = next(t for t in figure.data if t.name == "window (zoom)")
    tokens = [row[0] for row in zoom_window.customdata]
    assert tokens == [y for _, y in sawtooth(expected)]
    assert trace_data(figure, "threshold (zoom)")["y"] == [100, 100]
    # a triangle sits where aging itself left the window (before a summary, round 9)
    aged_to = [
        c.after_tokens for c in expected.compressions if c.strategy == "tool_result_aging"
    ]
    assert trace_data(figure, "aging (zoom)") == {
        "x": aged_x,
        "y": [share(tokens) for tokens in aged_to],
    }
    assert trace_data(figure, "summary (zoom)")["x"] == summary_x
    top = 100 * ZOOM_FACTOR
    # an overflow above the zoom's top is pinned at its edge, red and named there
    assert trace_data(figure, "overflow (zoom)")["y"] == (
        [min(share(expected.overflow.tokens), top * OFF_SCALE_AT)]
        if expected.overflow
        else []
    )
    assert tuple(figure.layout.yaxis3.range) == (0, top)
    # the blue marks at the edge are windows the zoom cannot show, never the overflow
    above = [y for _, y in sawtooth(expected) if share(y) > top]
    off_scale = next(
        trace for trace in figure.data if trace.name == "off the scale (zoom)"
    )
    assert list(off_scale.text or ()) == [f"{y:,}" for y in above]
    assert all(0 <= y <= top for y in off_scale.y or ())  # drawn at the edge, not off it
    assert html_rows(dashboard.rounds_html.value) == [
        [
            str(r.round),
            f"{r.baseline_tokens:,}",
            str(r.baseline_messages),
            f"{r.tokens_before:,}",
            f"{r.tokens_after:,}",
            str(r.messages_after),
            "✓" if r.aged else "",
            "✓" if r.summarized else "",
        ]
        for r in rounds
    ]
    compression_seqs = [
        record["seq"]
        for record in event_records(expected.tracer.records)
        if record["event"] in ("context_compression", "context_overflow")
    ]
    assert [
        int(row[0]) for row in html_rows(dashboard.events_html.value)
    ] == compression_seqs
    for line in status_lines(expected):
        assert html.escape(line) in dashboard.status.value
    if expected.overflow is not None:  # the list it stopped on is labelled, not "final"
        assert "final window:" not in dashboard.status.value


def html_rows(table_html: str) -> list:
    """The body rows of a table rendered by tables.to_html, as lists of cell texts (the
    empty-table row skipped)."""
    body = table_html.split("<tbody>", 1)[1]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body)
    return [
        [html.unescape(cell) for cell in re.findall(r"<t[hd]>(.*?)</t[hd]>", row)]
        for row in rows
        if "colspan" not in row
    ]


def test_opens_at_the_article_values_and_shows_that_run(fresh, session):
    assert fresh.values() == {
        f.name: getattr(Settings(), f.name) for f in fields(Settings) if f.type is int
    }
    assert_shows(fresh, run_session(session, Settings()))
    assert "ccl-status" in fresh.status.value and "Stopped" not in fresh.status.value


@pytest.mark.parametrize(
    "name, value",
    [
        ("threshold", 900),  # the summary has to fire more often
        ("threshold", 5000),  # round 1 needs no compression any more
        ("head_chars", 0),  # aged results keep nothing of their start
        ("tail_chars", 600),  # aged results keep more of their end
        ("min_chars", 2000),  # only results over 2,000 characters are aged
        ("protect_tail", 8),  # a summary may fold less
    ],
)
def test_each_slider_redraws_figure_and_tables_for_its_value(fresh, session, name, value):
    article = run_session(session, Settings())
    expected = run_session(session, Settings(**{name: value}))
    assert expected.rounds != article.rounds, (
        "this value must change the run, or the test proves nothing"
    )
    fresh.sliders[name].value = value
    assert fresh.run.settings == expected.settings
    assert_shows(fresh, expected)


def test_every_trace_is_the_data_lab_traces_computes(fresh, session):
    fresh.sliders["threshold"].value = 700
    expected = lab_traces(
        run_session(session, Settings(threshold=700)), run_baseline(session)
    )
    assert [trace.name for trace in fresh.figure.data] == list(LAB_TRACE_NAMES)
    for name in LAB_TRACE_NAMES:
        assert trace_data(fresh.figure, name) == {
            "x": expected[name]["x"],
            "y": expected[name]["y"],
        }


def test_a_threshold_below_the_protected_head_shows_a_message_not_a_traceback(
    fresh, session
):
    expected = run_session(session, Settings(threshold=100))
    assert expected.overflow is not None and not expected.rounds
    fresh.sliders["threshold"].value = 100
    # the full error on hover, its gist in the box
    assert f'title="{html.escape(str(expected.overflow))}"' in fresh.status.value
    assert "Overflow before the model call of round 0" in fresh.status.value
    assert "Traceback" not in fresh.status.value
    assert trace_data(fresh.figure, "overflow") == {
        "x": [0],
        "y": [expected.overflow.tokens],
    }
    assert trace_data(fresh.figure, "compressed") == {"x": [], "y": []}
    assert "no round was sent" in fresh.rounds_html.value
    assert trace_data(fresh.figure, "overflow (zoom)") == {
        "x": [0],
        "y": [expected.overflow.tokens],
    }
    # The status box says why the run stopped; the chart carries no title repeating it.
    assert not fresh.figure.layout.title.text
    # The baseline does not depend on the settings: it is drawn in full even when nothing
    # was sent.
    assert trace_data(fresh.figure, "baseline")["y"] == list(run_baseline(session).tokens)


def test_an_overflow_later_in_the_session_keeps_the_rounds_before_it(fresh, session):
    expected = run_session(session, Settings(threshold=800))
    assert expected.overflow is not None and expected.rounds
    fresh.sliders["threshold"].value = 800
    assert_shows(fresh, expected)
    assert trace_data(fresh.figure, "overflow")["x"] == [len(expected.rounds)]
    assert status_lines(expected) == [
        f"Overflow before the model call of round {len(expected.rounds)}",
        f"{expected.overflow.tokens:,} tokens after compression, threshold 800",
        f"largest left: #{expected.overflow.largest_index} (user, "
        f"{expected.overflow.largest_tokens:,} tokens, by rolling_summary)",
        f"round {len(expected.rounds) - 1}: {expected.rounds[-1].tokens_after:,} tokens "
        f"sent, {expected.rounds[-1].baseline_tokens:,} uncompressed (96% less)",
        f"before compression (never sent): {len(expected.final_messages)} messages, "
        f"{expected.final_tokens:,} tokens",
    ]


@pytest.mark.parametrize("threshold", range(100, 3001, 50))
def test_the_status_fits_its_fixed_box_at_every_threshold(session, threshold):
    """Five lines of at most 64 characters fit the box at its narrowest (480 px at
    14 px), so the box can keep a fixed size and nothing under it moves."""
    for other in (Settings(), Settings(head_chars=0, tail_chars=0, protect_tail=20)):
        lines = status_lines(run_session(session, replace(other, threshold=threshold)))
        assert len(lines) <= 5 and max(len(line) for line in lines) <= 64, lines


def test_reset_restores_the_article_values_and_redraws_once(fresh, session, monkeypatch):
    for name, value in (("threshold", 600), ("head_chars", 400), ("protect_tail", 1)):
        fresh.sliders[name].value = value
    fresh.log_axis.value = fresh.grounded.value = True
    renders = []
    original = fresh.render
    monkeypatch.setattr(fresh, "render", lambda: renders.append(1) or original())
    fresh.reset_button.click()
    assert len(renders) == 1
    assert settings_from_values(fresh.values()) == Settings()
    assert not fresh.log_axis.value and not fresh.grounded.value
    assert_shows(fresh, run_session(session, Settings()))


def test_changes_update_the_same_widgets_in_place(fresh):
    figure, children, traces = (
        fresh.figure,
        fresh.widget.children,
        list(fresh.figure.data),
    )
    for value in (500, 1500, 2500):
        fresh.sliders["threshold"].value = value
    assert fresh.figure is figure and fresh.widget.children is children
    assert all(a is b for a, b in zip(fresh.figure.data, traces))


def test_token_axes_are_fixed_while_aging_knobs_move(fresh):
    """Fixed ranges: autorange would rescale the panels and hide the change."""
    before = (
        tuple(fresh.figure.layout.yaxis.range),
        tuple(fresh.figure.layout.yaxis3.range),
    )
    compressed_before = trace_data(fresh.figure, "compressed")["y"]
    fresh.sliders["head_chars"].value = 800
    assert (
        tuple(fresh.figure.layout.yaxis.range),
        tuple(fresh.figure.layout.yaxis3.range),
    ) == before
    assert trace_data(fresh.figure, "compressed")["y"] != compressed_before
    assert before[0][1] >= max(fresh.baseline.tokens)


def test_the_zooms_axis_stays_put_and_its_sawtooth_follows_the_threshold(fresh, session):
    for threshold in (900, 2000):
        fresh.sliders["threshold"].value = threshold
        assert tuple(fresh.figure.layout.yaxis3.range) == (0, 100 * ZOOM_FACTOR)
        # Every window sent is under the threshold: under 100%, on the zoom's scale.
        sent = [
            r.tokens_after
            for r in run_session(session, Settings(threshold=threshold)).rounds
        ]
        zoom = next(t for t in fresh.figure.data if t.name == "window (zoom)")
        shares = [y for y, (_, kind) in zip(zoom.y, zoom.customdata) if kind == SENT]
        assert max(sent) <= threshold
        assert shares == [round(100 * tokens / threshold, 1) for tokens in sent]
        assert max(shares) <= 100


def captured_updates(figure, monkeypatch) -> list:
    """Record the messages `figure` sends to the browser, as (kind, arguments), instead of
    sending them: "frame" (a zero-length animation frame: styles, layout, trace indexes,
    options), "update", "restyle" and "relayout"."""
    sent = []

    def update(restyle_data, relayout_data, trace_indexes=None, source_view_id=None):
        sent.append(("update", (restyle_data, relayout_data, trace_indexes)))

    def frame(styles_data, relayout_data, trace_indexes, animation_opts):
        frame = (styles_data, relayout_data, trace_indexes, animation_opts)
        sent.append(("frame", frame))

    monkeypatch.setattr(figure, "_send_update_msg", update)
    monkeypatch.setattr(figure, "_send_animate_msg", frame)
    for kind in ("restyle", "relayout"):
        monkeypatch.setattr(
            figure,
            f"_send_{kind}_msg",
            lambda *args, kind=kind, **kwargs: sent.append((kind, args)),
        )
    return sent


def changed_names(figure, frame) -> set:
    """The traces a frame changes (it also names, unchanged, one trace of each panel it
    would otherwise leave out)."""
    styles, _, indexes, _ = frame
    names = [trace.name for trace in figure.data]
    return {names[i] for i, style in zip(indexes, styles) if style}


def test_one_message_per_change_carrying_only_what_changed(fresh, session, monkeypatch):
    sent = captured_updates(fresh.figure, monkeypatch)
    fresh.sliders["head_chars"].value = 400
    assert [kind for kind, _ in sent] == ["frame"]
    touched = changed_names(fresh.figure, sent[0][1])
    assert "compressed" in touched
    assert not touched & {
        "baseline",
        "baseline messages",
        "threshold",
        "threshold (zoom)",
    }
    assert sent[0][1][1] == {}  # no axis depends on head_chars

    sent.clear()
    fresh.sliders["threshold"].value = 1000
    # nor on the threshold: the zoom shows shares of it, on the same axis
    assert [kind for kind, _ in sent] == ["frame"]
    assert sent[0][1][1] == {}

    sent.clear()
    unchanged = next(
        value
        for value in range(fresh.sliders["min_chars"].value + 20, 5000, 20)
        if run_session(
            session, settings_from_values(dict(fresh.values(), min_chars=value))
        ).rounds
        == fresh.run.rounds
    )
    fresh.sliders["min_chars"].value = unchanged
    assert sent == [], "a change that leaves the run as it was sends nothing"


def test_a_frame_names_a_trace_with_points_in_every_panel(fresh, monkeypatch):
    """plotly.js takes a panel of which a frame names no trace with points for an empty
    panel and removes its traces."""
    sent = captured_updates(fresh.figure, monkeypatch)
    for name, value in (("head_chars", 400), ("threshold", 1000), ("protect_tail", 2)):
        sent.clear()
        fresh.sliders[name].value = value
        (kind, (styles, _, indexes, _)), *rest = sent
        assert kind == "frame" and not rest
        panels = {}
        for trace in fresh.figure.data:  # after the change, as the browser draws it
            if trace.x:
                panels.setdefault((trace.xaxis, trace.yaxis), set()).add(trace.name)
        named = {fresh.figure.data[i].name for i in indexes}
        for panel, with_points in panels.items():
            assert named & with_points, f"{name}={value}: no trace of {panel} named"


def test_a_trace_gaining_or_losing_its_points_is_followed_by_a_full_redraw(
    fresh, session, monkeypatch
):
    """The legend lists only the traces with points: an overflow's cross adds an entry."""
    sent = captured_updates(fresh.figure, monkeypatch)
    fresh.sliders["threshold"].value = 1150
    assert sent[-1][1][3]["frame"]["redraw"] is False
    assert run_session(session, Settings(threshold=700)).overflow is not None
    fresh.sliders["threshold"].value = 700
    assert sent[-1][1][3]["frame"]["redraw"] is True
    assert "overflow" in changed_names(fresh.figure, sent[-1][1])
    fresh.sliders["threshold"].value = 1150
    assert sent[-1][1][3]["frame"]["redraw"] is True
    # every frame is drawn, in order, as soon as the previous one is
    assert {frame[3]["mode"] for kind, frame in sent} == {"afterall"}


def test_the_log_axis_goes_as_a_layout_update_without_data(fresh, monkeypatch):
    """A frame still queued in the browser cannot undo a change that carries no data."""
    sent = captured_updates(fresh.figure, monkeypatch)
    fresh.log_axis.value = True
    assert [kind for kind, _ in sent] == ["update"]
    restyle, relayout, _ = sent[0][1]
    assert not restyle and relayout["yaxis.type"] == "log"


def test_without_plotlys_frame_methods_a_change_goes_as_one_update():
    """Another plotly version without the FigureWidget methods send_lab_update uses."""

    class Plain:
        updates = []

        def plotly_update(self, **change):
            self.updates.append(change)

    restyle, relayout = {"y": [[1, 2]]}, {"yaxis.range": [0, 3]}
    send_lab_update(Plain(), restyle, [1], relayout)
    assert Plain.updates == [
        dict(restyle_data=restyle, relayout_data=relayout, trace_indexes=[1])
    ]


def test_the_zoom_reads_in_percent_of_the_threshold_and_hovers_in_tokens(session):
    run = run_session(session)
    figure = lab_figure(run, run_baseline(session), widget=False)
    assert figure.layout.yaxis3.ticksuffix == "%"
    assert figure.layout.yaxis3.title.text == "of the threshold"
    for trace in figure.data:
        if trace.name.endswith("(zoom)") and trace.name != "off the scale (zoom)":
            assert "tokens" in trace.hovertemplate and "customdata" in trace.hovertemplate


def test_table_css_is_on_the_page_once_not_in_every_update(fresh):
    fresh.sliders["threshold"].value = 900
    assert (
        "<style" not in fresh.rounds_html.value
        and "<style" not in fresh.events_html.value
    )
    styles = [
        child
        for child in fresh.widget.children
        if getattr(child, "value", None) == TABLE_CSS
    ]
    assert len(styles) == 1 and styles[0].layout.display == "none"


def test_log_axis_keeps_every_point_in_range(fresh, session):
    fresh.log_axis.value = True
    low, high = fresh.figure.layout.yaxis.range
    assert fresh.figure.layout.yaxis.type == "log"
    values = [y for name in TOKEN_TRACES for y in trace_data(fresh.figure, name)["y"]]
    assert 10**low <= min(values) and max(values) <= 10**high
    ticks = fresh.figure.layout.yaxis.tickvals
    assert ticks and all(
        10**low <= t <= 10**high for t in ticks[1:-1]
    )  # readable labels, not every minor tick
    fresh.log_axis.value = False
    assert (
        fresh.figure.layout.yaxis.type == "linear"
        and fresh.figure.layout.yaxis.tickvals is None
    )


def test_a_threshold_above_the_baseline_widens_the_axis(session):
    run = run_session(session, Settings(threshold=30_000))
    low, high = token_axis_range(run, run_baseline(session))
    assert low == 0 and high >= 30_000


def test_invalid_values_give_a_message_naming_the_setting(fresh, monkeypatch):
    with pytest.raises(ValueError, match="threshold must be >= 1"):
        settings_from_values(dict(fresh.values(), threshold=0))
    last_run = fresh.run
    monkeypatch.setattr(
        fresh,
        "values",
        lambda: dict(
            threshold=1200, head_chars=-5, tail_chars=120, min_chars=240, protect_tail=4
        ),
    )
    fresh.render()
    assert "Invalid setting: head_chars must be &gt;= 0" in fresh.status.value
    assert fresh.run is last_run  # the figure keeps the last valid run


def test_sliders_are_labelled_by_their_settings_field_and_reach_the_overflow(dashboard):
    """The labels and classes the browser test relies on."""
    # one slider per numeric knob; the multi-turn option does not apply to the bundled
    # session
    assert [slider.description for slider in dashboard.sliders.values()] == [
        f.name for f in fields(Settings) if f.type is int
    ]
    assert "ccl-long-session-dashboard" in dashboard.widget._dom_classes
    assert "ccl-slider-threshold" in dashboard.sliders["threshold"]._dom_classes
    threshold = next(spec for spec in SLIDERS if spec.name == "threshold")
    protected_head = run_session(dashboard.session, Settings()).rounds[0].tokens_before
    assert threshold.minimum < protected_head  # so a student can see the overflow
    assert dashboard.reset_button.description == "Reset to the article's values"


def test_text_form_has_no_random_ids(dashboard):
    """What nbval compares and a viewer without a kernel shows."""
    bundle = dashboard._repr_mimebundle_()
    assert (
        bundle["text/plain"]
        == "Long-session dashboard (run the notebook to use the sliders)"
    )
    assert "application/vnd.jupyter.widget-view+json" in bundle


# ---------------------------------------------------------------- figures and tables on
# their own


def test_static_figure_has_the_same_data_as_the_widget(session):
    run = run_session(session, Settings(protect_tail=2))
    static = lab_figure(run, run_baseline(session), widget=False)
    widget = lab_figure(run, run_baseline(session), widget=True)
    for name in LAB_TRACE_NAMES:
        assert trace_data(static, name) == trace_data(widget, name)


def test_the_articles_figure_has_its_two_panels_and_the_labs_adds_the_zoom(session):
    run, baseline = run_session(session), run_baseline(session)
    article = session_figure(run, baseline, widget=False)
    assert [trace.name for trace in article.data] == list(TRACE_NAMES)
    assert {trace.yaxis for trace in article.data} == {"y", "y2"}
    lab = lab_figure(run, baseline, widget=False)
    assert {trace.yaxis for trace in lab.data if trace.name in TRACE_NAMES} == {"y", "y2"}
    assert {trace.yaxis for trace in lab.data if trace.name not in TRACE_NAMES} == {"y3"}
    for name in TRACE_NAMES:
        assert trace_data(lab, name) == trace_data(article, name)


def test_the_labs_figure_keeps_the_articles_marks_with_less_to_redraw(session):
    """plotly redraws every axis and marker of the figure on each slider change
    (docs/benchmark.md):
    the lab's figure draws what the article's does, minus work that shows nothing."""
    run, baseline = run_session(session), run_baseline(session)
    figure = lab_figure(run, baseline, widget=False)
    traces = {trace.name: trace for trace in figure.data}
    for name in ("aging", "aging (zoom)"):
        assert (
            traces[name].marker.symbol == "triangle-down"
            and "markers" in traces[name].mode
        )
    for name in ("summary", "summary (zoom)"):
        assert traces[name].marker.symbol == "star" and "markers" in traces[name].mode
    for name in (
        "compressed",
        "window (zoom)",
    ):  # a point per round (the zoom: before and sent)
        assert "markers" in traces[name].mode
    assert traces["threshold"].line.dash == traces["threshold (zoom)"].line.dash == "dash"
    assert [
        name for name, trace in traces.items() if trace.showlegend is not False
    ] == list(TOKEN_TRACES)
    layout = figure.to_plotly_json()["layout"]
    axes = [name for name in layout if name.startswith(("xaxis", "yaxis"))]
    assert len(axes) == 6
    # Tick labels are not measured again for every label drawn (plotly's "hide past div"
    # default).
    assert all(layout[name]["ticklabeloverflow"] == "allow" for name in axes)
    assert not layout["template"].get("layout"), (
        "no template for the browser to merge on every redraw"
    )


def test_trace_data_names_the_traces_when_one_is_missing(session):
    figure = session_figure(run_session(session), run_baseline(session), widget=False)
    with pytest.raises(
        KeyError, match="no trace named 'nope'; the figure has baseline, compressed"
    ):
        trace_data(figure, "nope")


def test_trace_events_table_lists_every_record_in_order(session):
    run = run_session(session)
    every = trace_events_table(run, events=None)
    events = list(event_records(run.tracer.records))
    assert list(every.index) == [record["seq"] for record in events]
    assert list(every["event"]) == [record["event"] for record in events]
    compressions = trace_events_table(run)
    for seq, row in compressions.iterrows():
        payload = events[seq - 1]["payload"]
        assert row["what"] == payload["strategy"]
        assert (
            f"{payload['before_tokens']:,} → {payload['after_tokens']:,} tokens"
            in row["detail"]
        )


def test_to_html_escapes_content_and_formats_numbers(session):
    messages = [
        {"role": "system", "content": "<b>not bold</b>"},
        {"role": "user", "content": "x" * 5000},
    ]
    table = messages_table(messages, protect_tail=0)
    rendered = to_html(table, highlight_rows=[1])
    assert "&lt;b&gt;not bold&lt;/b&gt;" in rendered and "<b>not bold</b>" not in rendered
    assert f"<td>{table.loc[1, 'tokens']:,}</td>" in rendered
    assert rendered.count('class="ccl-changed"') == 1


def test_synced_state_holds_every_trace(session):
    """A page built from the widget's synced state (Voila, a reload) must draw the chart,
    not an empty frame."""
    run = run_session(session)
    figure = lab_figure(run, run_baseline(session), widget=True)
    synced = {trace["name"]: trace for trace in figure._widget_data}
    assert list(synced) == list(LAB_TRACE_NAMES)
    assert list(synced["compressed"]["y"]) == [r.tokens_after for r in run.rounds]
    threshold = run.settings.threshold
    assert [
        tuple(p) for p in zip(synced["window (zoom)"]["x"], synced["window (zoom)"]["y"])
    ] == [(x, round(100 * y / threshold, 1)) for x, y in sawtooth(run)]
    assert list(figure._widget_layout["yaxis3"]["range"]) == [0, 100 * ZOOM_FACTOR]


def test_html_table_renders_like_the_dashboard_with_its_css(session):
    run = run_session(session)
    shown = HtmlTable(rounds_table(run), empty="no round was sent")
    assert shown._repr_html_() == TABLE_CSS + to_html(
        rounds_table(run), empty="no round was sent"
    )
    assert html_rows(shown._repr_html_()) == html_rows(to_html(rounds_table(run)))
    aged = [r for r in run.rounds if r.aged]
    assert [row[6] for row in html_rows(shown._repr_html_())].count("✓") == len(aged)
    assert f"{max(r.baseline_tokens for r in run.rounds):,}" in shown._repr_html_()
    # The text form (what nbval compares) reads the same: ✓ marks and separators, not
    # True/False.
    assert "True" not in repr(shown)
    assert repr(shown).count("✓") == len(aged) + sum(r.summarized for r in run.rounds)
    assert f"{max(r.baseline_tokens for r in run.rounds):,}" in repr(shown)


def test_the_grounded_switch_shows_the_answer_at_the_sliders_settings(session):
    from minilib.lab.dashboard import answer_html
    from minilib.measure.grounding import run_grounded

    rounds = len(run_baseline(session).tokens)
    dashboard = LongSessionDashboard(session)
    assert dashboard.answer.value == ""  # off: the article's replay only
    assert dashboard.answer.layout.display == "none"  # no empty box under the chart
    dashboard.grounded.value = True
    assert dashboard.answer.layout.display is None
    assert dashboard.answer.value == answer_html(
        run_grounded(session), run_session(session), rounds
    )
    dashboard.sliders["threshold"].value = 900  # redraws with the sliders
    tight = Settings(threshold=900)
    grounded = run_grounded(session, tight)
    assert dashboard.answer.value == answer_html(
        grounded, run_session(session, tight), rounds
    )
    assert f"{grounded.outcome.facts_right} facts right" in dashboard.answer.value
    # a run that never answered has no answer to lack anything
    assert not grounded.outcome.finished and "lacks" not in dashboard.answer.value
    # at the article's settings the answer is 4/6: the two it lacks are named, apart
    # from the facts replies along the way marked unknown
    answered = run_grounded(session).outcome
    assert answered.finished and len(answered.lost) == 2
    shown = answer_html(run_grounded(session), run_session(session), rounds)
    unbroken = [
        f'<span style="white-space:nowrap">{fact}</span>' for fact in answered.lost
    ]
    # each fact id on one line: `num-1-of-3` broke at its hyphens
    assert f"the answer lacks: {', '.join(unbroken)};" in shown
    assert "marked unknown along the way: " in shown
    # the answer is under the chart, often below the screen: the status says so
    dashboard.sliders["threshold"].value = Settings().threshold
    right = answered.facts_right
    assert (
        f"grounded answer: {right} facts right (under the chart)"
        in dashboard.status.value
    )
    dashboard.grounded.value = False
    assert dashboard.answer.value == "" and dashboard.answer.layout.display == "none"
    assert "grounded answer" not in dashboard.status.value


@pytest.mark.parametrize("threshold", [100, 600, 800, 850, 1000, 1200])
def test_the_grounded_tokens_say_against_what_and_why_fewer_is_no_saving(
    session, threshold
):
    """Grounded mode's token difference is against the same settings without grounding;
    where it is negative the grounded run stopped sooner, and the panel says so
    instead of leaving a bare "-772 tokens sent" that reads like a saving."""
    from minilib.lab.dashboard import tokens_against_plain
    from minilib.measure.grounding import run_grounded

    settings = Settings(threshold=threshold)
    grounded, plain = run_grounded(session, settings), run_session(session, settings)
    outcome = grounded.outcome
    line = tokens_against_plain(grounded, plain, len(run_baseline(session).tokens))
    if (
        not plain.rounds and not outcome.tokens_sent
    ):  # nothing sent: no difference to name
        assert line.startswith("tokens sent: none; the run stopped before its first")
        return
    assert f"{outcome.tokens_sent:,}, against {outcome.plain_tokens_sent:,} " in line
    assert "without grounding" in line and f"({outcome.extra_tokens:+,}" in line
    own = sum(1 for step in grounded.steps if not step.is_lookup)
    if outcome.extra_tokens < 0:
        # fewer tokens only because it stopped sooner than the run it is measured against
        assert not outcome.finished and own < len(plain.rounds)
        assert "no saving" in line and f"stopped after {own} of the session's" in line
    if outcome.finished and plain.overflow is None:
        assert line.endswith(": what the look-ups cost)")
    else:
        assert "what the look-ups cost" not in line


@pytest.mark.parametrize("threshold", [300, 700, 900, 1200, 50_000])
def test_the_dashboards_tables_are_what_to_html_renders_from_the_dataframes(
    session, threshold
):
    """The dashboard renders its tables from plain rows (no DataFrame on every slider
    change): the same HTML, overflows and empty tables included."""
    run = run_session(session, Settings(threshold=threshold))
    assert rows_html(*round_rows(run), empty="none") == to_html(
        rounds_table(run), empty="none"
    )
    assert rows_html(*event_rows(run), empty="none") == to_html(
        trace_events_table(run), empty="none"
    )
    every_event = event_rows(run, None)
    assert rows_html(*every_event) == to_html(trace_events_table(run, None))


@pytest.mark.parametrize(
    "settings",
    [Settings(threshold=150), Settings(min_chars=40_000)],
    ids=["threshold 150", "min_chars 40,000"],
)
def test_an_overflow_in_the_zoom_is_red_named_and_never_clipped(session, settings):
    run = run_session(session, settings)
    assert run.overflow is not None
    figure = lab_figure(run, run_baseline(session), widget=False)
    traces = {trace.name: trace for trace in figure.data}
    top = 100 * ZOOM_FACTOR
    share = round(100 * run.overflow.tokens / settings.threshold, 1)
    mark = traces["overflow (zoom)"]
    assert list(mark.x) == [len(run.rounds)]
    assert mark.marker.color == OVERFLOW_COLOR and mark.textfont.color == OVERFLOW_COLOR
    assert 0 <= mark.y[0] <= top  # on the axis, as the legend that lists it promises
    assert "overflow" in mark.text[0] and "overflow" in mark.hovertemplate
    if share > top:
        assert mark.y[0] == top * OFF_SCALE_AT
        assert mark.text[0] == f"overflow: {run.overflow.tokens:,} tokens"
    assert list(mark.customdata[0]) == [run.overflow.tokens, share]
    # and not a blue "above this scale" mark as an ordinary window would get
    assert f"{run.overflow.tokens:,}" not in list(
        traces["off the scale (zoom)"].text or ()
    )


def test_each_slider_has_a_number_box_instead_of_its_own_readout(fresh):
    """A slider's own readout, typed into, is read up to its first non-digit ("1,500"
    would be 1): it is hidden, and the box beside it reads numbers as every box does."""
    for name, slider in fresh.sliders.items():
        assert not slider.readout, name
        box = fresh.boxes[name]
        assert box.text.value == f"{slider.value:,}"
        box.accept(f"{slider.max:,}")
        assert slider.value == slider.max, name


def test_the_controls_come_before_the_chart_and_the_readouts_after_it(session):
    """What a slider change shows first sits above the chart (the sliders, the status
    box, Reset and the switches), so they share one screen; the grounded answer and the
    tables are under it. In a notebook the controls are no wider than the figure; on
    the projector page both follow the page."""
    from minilib.lab.style import CONTROLS_MAX_WIDTH, DASHBOARD_HEIGHT, PRESENT_HEIGHT

    def contains(widget, part) -> bool:
        return widget is part or any(
            contains(child, part) for child in getattr(widget, "children", ())
        )

    for present in (False, True):
        dashboard = LongSessionDashboard(session, present=present)
        order = list(dashboard.widget.children)
        chart = order.index(dashboard.figure)
        above = order[:chart]
        for part in [*dashboard.sliders.values(), dashboard.status]:
            assert any(contains(box, part) for box in above), part
        for part in (dashboard.reset_button, dashboard.log_axis, dashboard.grounded):
            assert any(contains(box, part) for box in above), part
        for part in (dashboard.answer, dashboard.rounds_html, dashboard.events_html):
            assert any(contains(box, part) for box in order[chart + 1 :]), part
        widths = {box.layout.max_width for box in above if box.layout.max_width}
        height = dashboard.figure.layout.height
        if present:
            assert not widths and height == PRESENT_HEIGHT
            assert dashboard.figure.layout.width is None
        else:
            assert widths == {CONTROLS_MAX_WIDTH} and height == DASHBOARD_HEIGHT


def test_the_overflow_label_sits_where_the_run_never_reached_when_it_fits(session):
    """The zoom's "overflow" label goes right of its cross, over rounds the run never
    reached, when they are wide enough for it; at threshold 800 (round 11 of 13) it
    sat left, on round 10's marks."""
    from minilib.lab.figures import label_side, zoom_traces
    from minilib.lab.style import FONT_SIZE, ZOOM_PANEL_WIDTH

    baseline = run_baseline(session)
    last = len(baseline.tokens) - 1
    # pinned at the zoom's top edge (282 tokens at 150): beside the cross; a cross just
    # over the threshold (819 tokens at 800): above it, off the red dashed line; one
    # near the zoom's top (135 tokens at 100, 282 at 200): under it, off the title
    cases = (
        (150, "middle right"),
        (800, "top right"),
        (100, "bottom right"),
        (200, "bottom right"),
    )
    for threshold, side in cases:
        run = run_session(session, Settings(threshold=threshold))
        mark = zoom_traces(run, baseline)["overflow (zoom)"]
        assert mark["x"] == [len(run.rounds)]
        assert mark["textposition"] == [side], threshold
    per_round = ZOOM_PANEL_WIDTH / (last + 1)
    text = "overflow: 4,276 tokens"
    # no room right of the last round: left; room for the label: right
    assert label_side(last, last, text) == "middle left"
    rounds_needed = (len(text) * FONT_SIZE * 0.6 + 12) / per_round
    assert label_side(last - int(rounds_needed) - 1, last, text) == "middle right"
    assert label_side(last - int(rounds_needed) + 1, last, text) == "middle left"


def test_numbers_above_the_zoom_never_write_over_each_other(session):
    """An off-scale number goes right of its arrow, or left when the next arrow is too
    close, or under it when neither side has room: at threshold 800, rounds 1, 3 and 4
    are above the scale and their numbers (4,276, 10,322, 1,265) wrote over each other."""
    from minilib.lab.figures import label_width, off_scale_sides, zoom_traces
    from minilib.lab.style import ZOOM_PANEL_WIDTH

    baseline = run_baseline(session)
    last = len(baseline.tokens) - 1
    per_round = ZOOM_PANEL_WIDTH / (last + 1)
    for threshold in range(150, 2001, 50):
        marks = zoom_traces(run_session(session, Settings(threshold=threshold)), baseline)
        off = marks["off the scale (zoom)"]
        arrows = [x * per_round for x in off["x"]]
        beside, under = [], []  # each number's [from, to] in px along the round axis
        for at, text, side in zip(arrows, off["text"], off["textposition"]):
            width = label_width(text)
            if side == "bottom left":
                under.append((at - width, at))
                continue
            start = at - width if side == "middle left" else at
            beside.append((start, start + width))
            # no other arrow inside the number
            assert not [a for a in arrows if a != at and start < a < start + width], (
                threshold,
                off,
            )
        for row in (beside, under):
            for (_, end), (start, _) in zip(row, row[1:]):
                assert end <= start, (threshold, off)
    at_800 = zoom_traces(run_session(session, Settings(threshold=800)), baseline)
    assert at_800["off the scale (zoom)"]["textposition"][:3] != ["middle right"] * 3
    assert off_scale_sides([1], ["4,276"], last) == ["middle right"]
