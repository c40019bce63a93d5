"""The notebooks in a real browser: JupyterLab (and Voilà) in headless Chromium, driven by
Playwright.

What a person sees is checked against what the library computes in this process:
- 06_long_session_lab: run all cells, move the threshold slider with the keyboard, and
  the chart (plotly's data and the SVG points), the title, the status line and both
  tables show `run_session` at the slider's new value; so do head_chars and, on the log
  axis, a threshold into an overflow and out of it; after each change the chart's SVG is
  what plotly.js draws when it redraws all of it; Reset brings the article back.
- 03_tool_result_aging: on the whole result's scale, End takes head_chars to its end.
- every chapter at 1280x720 with the file browser open: no output scrolls sideways or
  reaches past the output area's edge.
- 05_state_machine: Next/Back step the diagram through the states `ContextWindow.walk`
  passes for the picked round.
- `make present` (Voilà on 06): sliders and chart without code, and the slider works.
- 07_real_transcripts at 1280x720: a log of each shape in data/logs uploaded in turn; each
  report names its file and the threshold chosen from it, and fits; an unreadable file's
  line replaces it.
- 08_six_paths_compared at 1280x720: a number typed beside a slider moves it to the
  nearest value the path offers, the chart and the table follow; Reset restores them.
- Chinese text is drawn with a CJK font, not as empty boxes.

Expected values are never written down here: they come from minilib for whatever values
the widgets show. Screenshots go to artifacts/screenshots/; the lab's dashboard at the
article's settings, the stepper in the middle of a round and the projector page at
1280x720 are copied to docs/screenshots/ (lab.png, state_machine.png, present.png) for the
README when those files are missing or UPDATE_SCREENSHOTS=1.
"""

import dataclasses
import os
import re
import shutil
import time
from contextlib import contextmanager

import labdriver as lab
import pytest

from minilib import Settings, load_session, run_baseline, run_session, window_before_round
from minilib.cli.main import format_summary
from minilib.lab.dashboard import status_lines
from minilib.lab.explore import AgingExplorer, aging_view
from minilib.lab.figures import MARKER_OFFSET
from minilib.lab.style import OFF_SCALE_AT

pytestmark = pytest.mark.browser

LAB_NOTEBOOK = "notebooks/06_long_session_lab.ipynb"
PRESENT_NOTEBOOK = "notebooks/present/long_session_lab.ipynb"
LOGS_NOTEBOOK = "notebooks/07_real_transcripts.ipynb"
STEPPER_NOTEBOOK = "notebooks/05_state_machine.ipynb"
AGING_NOTEBOOK = "notebooks/03_tool_result_aging.ipynb"
DASHBOARD = ".ccl-long-session-dashboard"
STEPPER = ".ccl-state-stepper"
README_SCREENSHOT = lab.REPO / "docs" / "screenshots" / "lab.png"
STEPPER_SCREENSHOT = lab.REPO / "docs" / "screenshots" / "state_machine.png"
PRESENT_SCREENSHOT = lab.REPO / "docs" / "screenshots" / "present.png"
# the zoom under the token panel ends at 150% of the threshold (what a teacher is told)
ZOOM_FACTOR = 1.5
SCREEN = {"width": 1280, "height": 720}  # a classroom's projector
# ArrowLeft presses on the threshold slider: from the article's 1,200 to a tighter budget
THRESHOLD_PRESSES = 6
# Per-round table: header -> Round field (the columns the lab shows; others are ignored).
ROUND_COLUMNS = {
    "round": "round",
    "baseline tokens": "baseline_tokens",
    "baseline msgs": "baseline_messages",
    "tokens before": "tokens_before",
    "tokens sent": "tokens_after",
    "msgs sent": "messages_after",
    "aging": "aged",
    "summary": "summarized",
}


@pytest.fixture(scope="module")
def session():
    return load_session()


def require_notebook(path: str) -> None:
    if not (lab.REPO / path).is_file():
        pytest.fail(f"{path} does not exist")


def settings_from_sliders(page, scope: str) -> Settings:
    """The Settings the dashboard's sliders show (labels are the Settings field names)."""
    shown = {
        re.sub(r"\W+", "_", label.strip().lower()): value
        for label, value in lab.sliders_by_label(page, scope).items()
    }
    # a slider per numeric knob (the multi-turn option has none: the session has one turn)
    fields = [f.name for f in dataclasses.fields(Settings) if f.type is int]
    missing = [name for name in fields if name not in shown]
    assert not missing, f"no slider for {missing}; sliders shown: {shown}"
    return Settings(**{name: shown[name] for name in fields})


def sawtooth(run) -> list:
    """(round, tokens) of the zoom's line: per round the window as measured, then (if
    compressed) as sent."""
    points = []
    for r in run.rounds:
        points += [(r.round, r.tokens_before)] + (
            [(r.round, r.tokens_after)] if r.tokens_after != r.tokens_before else []
        )
    return points


def expected_traces(run, baseline) -> dict:
    """Each chart trace's data for one run, from the library's rounds (not from the figure
    code)."""
    rounds = run.rounds
    threshold = run.settings.threshold
    top = 100 * ZOOM_FACTOR  # the zoom is in % of the threshold

    def share(tokens):
        return round(100 * tokens / threshold, 1)

    # a round that aged and summarized draws its triangle left and its star right
    both = {r.round for r in rounds if r.aged and r.summarized}
    aged_x = [r.round - MARKER_OFFSET * (r.round in both) for r in rounds if r.aged]
    summary_x = [
        r.round + MARKER_OFFSET * (r.round in both) for r in rounds if r.summarized
    ]
    # windows above the zoom's top get a blue mark at its edge; an overflow keeps its
    # own red cross (pinned at the edge, named there), never a blue mark
    above = [x for x, y in sawtooth(run) if share(y) > top]
    return {
        "baseline": {"y": list(baseline.tokens)},
        "compressed": {
            "x": [r.round for r in rounds],
            "y": [r.tokens_after for r in rounds],
        },
        "threshold": {"y": [run.settings.threshold] * 2},
        "aging": {
            "x": aged_x,
            # where aging itself left the window (before a summary in the same round)
            "y": [
                c.after_tokens
                for c in run.compressions
                if c.strategy == "tool_result_aging"
            ],
        },
        "summary": {
            "x": summary_x,
            "y": [r.tokens_after for r in rounds if r.summarized],
        },
        "overflow": {"x": [len(rounds)] if run.overflow else []},
        "compressed messages": {
            "x": [r.round for r in rounds],
            "y": [r.messages_after for r in rounds],
        },
        "window (zoom)": {
            "x": [x for x, _ in sawtooth(run)],
            "y": [share(y) for _, y in sawtooth(run)],
        },
        "threshold (zoom)": {"y": [100, 100]},
        "aging (zoom)": {"x": aged_x},
        "summary (zoom)": {"x": summary_x},
        "overflow (zoom)": {
            "x": [len(rounds)] if run.overflow else [],
            "y": [min(share(run.overflow.tokens), top * OFF_SCALE_AT)]
            if run.overflow
            else [],
        },
        "off the scale (zoom)": {"x": above},
    }


def cell_text(value) -> str:
    if isinstance(value, bool):
        return "✓" if value else ""
    return f"{value:,}"


def eventually(check, timeout: float = lab.UPDATE_TIMEOUT / 1000, interval: float = 0.1):
    """Retry `check` until it stops raising AssertionError (the widgets update one comm
    message at a time)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(interval)


def assert_dashboard_shows(page, scope: str, run, baseline) -> None:
    eventually(lambda: check_dashboard(page, scope, run, baseline))


def check_dashboard(page, scope: str, run, baseline) -> None:
    """Chart, title, status line and both tables of the dashboard in `scope` show
    `run`."""
    plot = page.locator(f"{scope} .js-plotly-plot").first
    expected = expected_traces(run, baseline)
    lab.wait_for_traces(page, plot, expected)
    shown = lab.traces_by_name(plot)
    for name, data in expected.items():
        assert name in shown, f"no trace {name!r} in the chart; traces: {list(shown)}"
        for key, values in data.items():
            assert (shown[name][key] or []) == values, (
                f"trace {name!r} {key} at {run.settings}"
            )
    # The SVG itself: one marker drawn per aging / summary round, in the token panel and
    # in the zoom.
    # (a trace without points has no group in the SVG: None, drawn as nothing)
    drawn = {name: count or 0 for name, count in lab.points_drawn(plot).items()}
    for name in ("aging", "summary"):
        assert drawn[name] == drawn[f"{name} (zoom)"] == len(expected[name]["x"]), (
            f"{name} markers drawn: {drawn}"
        )
    # The zoom's axis is the same at every setting: shares of the threshold.
    assert lab.plot_axis_range(plot, "yaxis3") == [0, 100 * ZOOM_FACTOR]

    status = page.locator(
        f"{scope} .ccl-status"
    ).text_content()  # text_content: off-screen cells are not laid out
    for line in status_lines(run):
        assert line in status, f"status line lacks {line!r}: {status!r}"
    # Said once, in the status box: no chart title repeats it.
    chart_text = lab.chart_text(plot)
    assert not any(line in chart_text for line in format_summary(run).splitlines()), (
        chart_text
    )
    # The legend names the article's marks (the zoom's traces join their groups instead of
    # repeating them).
    legend = plot.evaluate(
        "(gd) => [...gd.querySelectorAll('.legend .legendtext')].map(t => t.textContent)"
    )
    # (plotly lists a trace only while it has points: a run without a summary has no ★)
    # (nor a compressed line when the run stopped before its first round)
    marks = [n for n in ("compressed", "aging", "summary") if expected[n]["x"]]
    assert {"baseline", "threshold", *marks} <= set(legend), legend
    assert not any("zoom" in name for name in legend), legend

    tables = [t for t in lab.html_tables(page, scope) if t["headers"]]
    assert len(tables) >= 2, (
        f"expected the per-round and trace-event tables, found {len(tables)}"
    )
    rounds_table, events_table = tables[0], tables[1]
    columns = {
        header: ROUND_COLUMNS[header]
        for header in rounds_table["headers"]
        if header in ROUND_COLUMNS
    }
    assert {"tokens sent", "msgs sent"} <= set(columns), (
        f"per-round table headers: {rounds_table['headers']}"
    )
    want_rows = [
        [cell_text(getattr(r, field)) for field in columns.values()] for r in run.rounds
    ]
    # a table with no rows says so in its one cell ("no round was sent")
    empty = ("no round was sent", "no compression")
    for table in (rounds_table, events_table):
        table["rows"] = [
            row for row in table["rows"] if row[:1] != [] and row[0] not in empty
        ]
    index = [rounds_table["headers"].index(header) for header in columns]
    got_rows = [
        [row[i] if i < len(row) else None for i in index] for row in rounds_table["rows"]
    ]
    assert got_rows == want_rows, f"per-round table at {run.settings}"
    # Trace-event table: one row per compression (plus the overflow event), in order.
    strategies = [c.strategy for c in run.compressions] + (
        ["ContextOverflowError"] if run.overflow else []
    )
    what = events_table["headers"].index("what")
    assert [row[what] for row in events_table["rows"]] == strategies, "trace-event table"


def test_long_session_lab_threshold_slider(page, lab_server, session):
    require_notebook(LAB_NOTEBOOK)
    baseline = run_baseline(session)
    lab.open_notebook(page, lab_server, LAB_NOTEBOOK)
    lab.run_all_cells(page)
    page.wait_for_selector(
        f"{DASHBOARD} .js-plotly-plot .scatterlayer .trace", timeout=lab.PAGE_TIMEOUT
    )
    assert not page.locator(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
    ).count(), "a cell wrote to stderr"

    dashboard = page.locator(DASHBOARD)
    lab.scroll_to_top(dashboard)
    start = settings_from_sliders(page, DASHBOARD)
    assert_dashboard_shows(page, DASHBOARD, run_session(session, start), baseline)
    lab.scroll_to_top(dashboard)
    lab.shoot(page, "lab-01-after-run-all")
    # The README's picture: the article's settings, as the notebook opens, on a
    # 1280x720 screen with the file browser open, as a student first sees it.
    assert start == Settings(), (
        f"notebook 06 should open at the article's settings, not {start}"
    )
    page.set_viewport_size(SCREEN)
    lab.scroll_to_top(dashboard)
    page.wait_for_timeout(300)
    update_docs_screenshot(lab.shoot(page, "lab-1280x720"), README_SCREENSHOT)
    page.set_viewport_size(lab.VIEWPORT)
    lab.collapse_left_sidebar(page)
    lab.shoot_widget(page, dashboard, "lab-dashboard-article-settings")

    threshold = lab.slider(page, "^threshold$", DASHBOARD)
    lab.press_slider(threshold, "ArrowLeft", THRESHOLD_PRESSES)
    page.wait_for_function(
        "([el, old]) => (el.textContent || el.value || '')"
        ".trim().replace(/,/g, '') !== old",  # readouts print 1,200
        arg=[threshold.locator(".widget-readout").element_handle(), str(start.threshold)],
    )
    lab.wait_idle(page)
    moved = settings_from_sliders(page, DASHBOARD)
    assert moved.threshold < start.threshold and moved == Settings(
        **{**start.__dict__, "threshold": moved.threshold}
    )
    moved_run = run_session(session, moved)
    assert [r.tokens_after for r in moved_run.rounds] != [
        r.tokens_after for r in run_session(session, start).rounds
    ], "pick a slider move that changes the run, or the test proves nothing"
    assert_dashboard_shows(page, DASHBOARD, moved_run, baseline)
    assert_drawn_as_in_full(page.locator(f"{DASHBOARD} .js-plotly-plot").first)

    lab.scroll_to_top(dashboard)
    lab.shoot(page, f"lab-02-threshold-{moved.threshold}")
    lab.shoot_widget(page, dashboard, f"lab-dashboard-threshold-{moved.threshold}")

    # Another knob: only the traces that changed redraw.
    head = lab.slider(page, "^head_chars$", DASHBOARD)
    lab.press_slider(head, "ArrowRight", 20)
    page.wait_for_function(
        "([el, old]) => (el.textContent || el.value || '')"
        ".trim().replace(/,/g, '') !== old",
        arg=[head.locator(".widget-readout").element_handle(), str(moved.head_chars)],
    )
    lab.wait_idle(page)
    longer = settings_from_sliders(page, DASHBOARD)
    assert longer.head_chars > moved.head_chars
    assert_dashboard_shows(page, DASHBOARD, run_session(session, longer), baseline)
    assert_drawn_as_in_full(page.locator(f"{DASHBOARD} .js-plotly-plot").first)
    # On the log axis, into an overflow (a legend entry appears) and back out of it.
    page.locator(f"{DASHBOARD} .widget-checkbox").filter(
        has_text=re.compile("log token axis")
    ).locator("input").check()
    lab.wait_idle(page)
    for key, presses, overflows in (("ArrowLeft", 4, True), ("ArrowRight", 5, False)):
        before = settings_from_sliders(page, DASHBOARD).threshold
        lab.press_slider(threshold, key, presses)
        page.wait_for_function(
            "([el, old]) => (el.textContent || el.value || '')"
            ".trim().replace(/,/g, '') !== old",
            arg=[threshold.locator(".widget-readout").element_handle(), str(before)],
        )
        lab.wait_idle(page)
        run = run_session(session, settings_from_sliders(page, DASHBOARD))
        assert (run.overflow is not None) == overflows, run.settings
        assert_dashboard_shows(page, DASHBOARD, run, baseline)
        assert_drawn_as_in_full(page.locator(f"{DASHBOARD} .js-plotly-plot").first)

    page.locator(f"{DASHBOARD} .widget-button").filter(
        has_text=re.compile("reset", re.I)
    ).click()
    page.wait_for_function(
        "([el, want]) => (el.textContent || el.value || '')"
        ".trim().replace(/,/g, '') === want",
        arg=[
            threshold.locator(".widget-readout").element_handle(),
            str(Settings().threshold),
        ],
    )
    lab.wait_idle(page)
    assert settings_from_sliders(page, DASHBOARD) == Settings()
    assert_dashboard_shows(page, DASHBOARD, run_session(session, Settings()), baseline)
    assert_drawn_as_in_full(page.locator(f"{DASHBOARD} .js-plotly-plot").first)
    assert not page.page_errors, page.page_errors


def assert_drawn_as_in_full(plot) -> None:
    """A slider change redraws only what changed (minilib.lab.figures.send_lab_update):
    the chart must show exactly what plotly.js draws when it redraws all of it."""
    drawn = lab.chart_drawing(plot)
    lab.redraw_in_full(plot)
    in_full = lab.chart_drawing(plot)
    only_drawn = sorted(set(drawn) - set(in_full))
    only_in_full = sorted(set(in_full) - set(drawn))
    assert drawn == in_full, (
        f"drawn after the change but not by a full redraw: {only_drawn[:5]}; "
        f"drawn by a full redraw only: {only_in_full[:5]}"
    )


def update_docs_screenshot(shot, target) -> None:
    """The README's pictures are committed: refresh one only when asked (or when it is
    missing),
    so an ordinary run leaves the working tree clean."""
    if os.environ.get("UPDATE_SCREENSHOTS") == "1" or not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, target)


def assert_has_traces(plot) -> None:
    shown = lab.traces_by_name(plot)
    assert shown, (
        "the chart has no traces: the FigureWidget's synced state (_widget_data) was "
        "sent empty, "
        "so a page built from widget state (Voilà, a reload) draws nothing"
    )


def current_state(page) -> str:
    return page.locator(f"{STEPPER} .ccl-state.ccl-current").get_attribute("data-state")


def round_walk(session, round_number: int):
    """The states ContextWindow.walk passes before the model call of `round_number`
    (article settings,
    as notebook 05 builds its stepper)."""
    messages, window = window_before_round(session, Settings(), round_number)
    return window.walk(messages, step=round_number)


def wait_for_step(page, state: str, title: str) -> None:
    page.wait_for_function(
        "([want, title]) => { const node = document.querySelector('.ccl-state-stepper "
        ".ccl-state.ccl-current');"
        " return node && node.dataset.state === want &&"
        " document.querySelector('.ccl-state-stepper').textContent.includes(title); }",
        arg=[state, title],
        timeout=lab.UPDATE_TIMEOUT,
    )


def check_message_table(page, state, where: str) -> None:
    table = [t for t in lab.html_tables(page, STEPPER) if t["headers"]][0]
    assert len(table["rows"]) == len(state.messages), where


def step_through(
    page, next_button, round_number: int, walk, screenshots: bool = False
) -> None:
    """From the first state, press Next through the walk: the lit state and the message
    table follow it.

    With `screenshots`, the stepper is also shot at its second state and at the rolling
    summary
    (the most telling step of a round: the folded range and where each message moved)."""
    seen = []
    for position, state in enumerate(walk):
        if position:
            next_button.click()
        wait_for_step(
            page, state.state, f"Round {round_number}, step {position + 1} of {len(walk)}"
        )
        seen.append(current_state(page))
        # The table is its own widget, updated by its own comm message after the title:
        # wait for it too.
        eventually(
            lambda: check_message_table(
                page, state, f"round {round_number}: message table at step {position + 1}"
            )
        )
        if screenshots and position == 1:
            lab.shoot(page, f"stepper-round-{round_number}-step-2")
        if screenshots and state.state == "rolling_summary":
            shot = lab.shoot_widget(
                page,
                page.locator(STEPPER).first,
                f"stepper-round-{round_number}-step-{position + 1}-rolling-summary",
            )
            update_docs_screenshot(shot, STEPPER_SCREENSHOT)
    assert seen == [state.state for state in walk]
    assert next_button.is_disabled(), "Next should be disabled on the last state"


def test_state_machine_next_back(page, lab_server, session):
    require_notebook(STEPPER_NOTEBOOK)
    lab.open_notebook(page, lab_server, STEPPER_NOTEBOOK)
    lab.run_all_cells(page)
    page.wait_for_selector(f"{STEPPER} .ccl-state.ccl-current", timeout=lab.PAGE_TIMEOUT)
    lab.collapse_left_sidebar(page)
    stepper = page.locator(STEPPER).first
    lab.scroll_to_top(stepper)
    round_slider = lab.slider(page, "^round$", STEPPER)
    round_number = lab.slider_value(round_slider)
    walk = round_walk(session, round_number)
    assert "rolling_summary" in [s.state for s in walk], (
        f"round {round_number} walks only {[s.state for s in walk]}: pick a round with "
        "a summary to show"
    )

    next_button = stepper.locator(".widget-button").filter(
        has_text=re.compile(r"^\s*Next\s*$")
    )
    back_button = stepper.locator(".widget-button").filter(
        has_text=re.compile(r"^\s*Back\s*$")
    )
    assert back_button.is_disabled(), "Back should be disabled on the first state"
    step_through(page, next_button, round_number, walk, screenshots=True)
    lab.shoot(page, f"stepper-round-{round_number}-last")
    back_button.click()
    wait_for_step(page, walk[-2].state, f"step {len(walk) - 1} of {len(walk)}")
    assert not next_button.is_disabled()

    # Pick another round with the keyboard: the stepper starts again at that round's first
    # state.
    lab.press_slider(round_slider, "ArrowLeft")
    other = round_number - 1
    other_walk = round_walk(session, other)
    wait_for_step(
        page, other_walk[0].state, f"Round {other}, step 1 of {len(other_walk)}"
    )
    assert lab.slider_value(round_slider) == other
    step_through(page, next_button, other, other_walk)
    assert not page.page_errors, page.page_errors


def test_aging_sliders_reach_the_whole_result_with_the_keyboard(
    browser, lab_server, session
):
    """03 at 1280x720: on the "whole result" scale, End takes head_chars to the length of
    long_notes.txt (a slider given a new max kept its first range for End), and the
    verdict follows."""
    require_notebook(AGING_NOTEBOOK)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(lab.UPDATE_TIMEOUT)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def head_reads(value):
        def check():
            assert lab.slider_value(head) == value

        eventually(check)

    try:
        lab.open_notebook(page, lab_server, AGING_NOTEBOOK)
        lab.run_all_cells(page)
        explorer = page.locator(".ccl-aging-explorer").first
        explorer.wait_for(timeout=lab.PAGE_TIMEOUT)
        lab.scroll_to_top(explorer)
        long_notes = run_baseline(session).final_messages[3]
        longest = AgingExplorer(long_notes).longest
        explorer.locator(".widget-toggle-button", has_text="whole result").click()
        head = lab.slider(page, "^head_chars$", ".ccl-aging-explorer")
        head_reads(160)
        lab.press_slider(head, "End")
        head_reads(longest)
        verdict = aging_view(long_notes, longest, 120, 240).verdict
        explorer.get_by_text(verdict).wait_for()
        lab.shoot(page, "aging-explorer-whole-result-1280x720")
        assert not errors, errors
    finally:
        context.close()


CHAPTERS = sorted(
    path.name for path in (lab.REPO / "notebooks").glob("[0-9][0-9]_*.ipynb")
)


@contextmanager
def chapter_after_run_all(browser, lab_server, chapter: str, width=1280, height=720):
    """A page at `width` x `height` with `chapter` open beside the file browser and run
    (Run All); its context closed and the server's kernels shut afterwards."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(lab.UPDATE_TIMEOUT)
    try:
        lab.open_notebook(page, lab_server, f"notebooks/{chapter}")
        lab.run_all_cells(page)
        yield page
    finally:
        context.close()
        lab_server.delete_sessions_and_kernels()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_output_of_a_chapter_fits_beside_the_file_browser(
    browser, lab_server, chapter
):
    """A projector at 1280x720 with JupyterLab's file browser open leaves a notebook's
    outputs ~848 px: after Run All, no output of the chapter scrolls sideways or reaches
    past that edge (a figure or table cut on the right is what a student cannot read)."""
    with chapter_after_run_all(browser, lab_server, chapter) as page:
        assert page.locator("#filebrowser").is_visible()  # as a student first sees it
        assert lab.outputs_past_the_edge(page) == []


# An explorer whose chart sits below its controls: the chart must be in view while a
# student works the controls.
EXPLORERS = {
    "08_six_paths_compared.ipynb": ".ccl-six-paths-explorer",
    "09_production_scale.ipynb": ".ccl-scale-explorer",
}


@pytest.mark.parametrize("chapter", sorted(EXPLORERS))
def test_an_explorers_controls_and_chart_fit_one_screen(browser, lab_server, chapter):
    """At 1280x720 beside the file browser, from the explorer's first control to the
    bottom of the chart it drives (its legend included) is no taller than the notebook's
    visible height: a student moving a slider sees the chart move."""
    with chapter_after_run_all(browser, lab_server, chapter) as page:
        explorer = page.locator(EXPLORERS[chapter]).first
        lab.scroll_to_top(explorer)
        plot = explorer.locator(".js-plotly-plot").first
        plot.wait_for()
        top = explorer.bounding_box()["y"]
        chart = plot.bounding_box()
        visible = page.locator(".jp-NotebookPanel:visible .jp-WindowedPanel-outer")
        height = visible.first.bounding_box()["height"]
        lab.shoot(page, f"explorer-{chapter[:2]}-1280x720")
        assert chart["y"] + chart["height"] - top <= height, (chart, top, height)


def test_chapter_10s_chart_stands_beside_its_sliders_on_a_wide_screen(
    browser, lab_server
):
    """At 1920x1080 beside the file browser the policy lab's chart stands to the
    right of its sliders, its top level with theirs and wholly in view with them; at
    1280x720 it is under them (the table between)."""
    chapter = "10_production_policies.ipynb"
    for width, height, beside in ((1920, 1080, True), (1280, 720, False)):
        with chapter_after_run_all(browser, lab_server, chapter, width, height) as page:
            policy_lab = page.locator(".ccl-policy-lab").first
            lab.scroll_to_top(policy_lab)
            sliders = policy_lab.locator(".ccl-policy-sliders").first.bounding_box()
            chart = policy_lab.locator(".js-plotly-plot").first.bounding_box()
            if beside:
                assert chart["x"] >= sliders["x"] + sliders["width"], (chart, sliders)
                assert abs(chart["y"] - sliders["y"]) < 40
                assert chart["y"] + chart["height"] <= height
                lab.shoot(page, "policy-lab-1920x1080")
            else:
                assert chart["y"] > sliders["y"] + sliders["height"]


def test_present_serves_the_lab_with_voila(page, session, chromium, tmp_path):
    """`make present`: Voilà shows the lab's widgets without code, and the threshold
    slider works."""
    require_notebook(PRESENT_NOTEBOOK)
    baseline = run_baseline(session)
    with lab.start_voila(
        lab.REPO / PRESENT_NOTEBOOK, tmp_path, lab.ARTIFACTS / "logs" / "voila.log"
    ) as server:
        page.goto(server.url + "/", timeout=lab.PAGE_TIMEOUT)
        page.wait_for_selector(
            f"{DASHBOARD} .js-plotly-plot .main-svg", timeout=lab.PAGE_TIMEOUT
        )
        code = page.locator(
            ".jp-CodeCell .jp-InputArea:visible, .cm-editor:visible, "
            ".jp-InputPrompt:visible"
        )
        assert code.count() == 0, "Voilà shows code cells"
        start = settings_from_sliders(page, DASHBOARD)
        # Voilà builds the page from the widgets' synced state after the notebook ran: a
        # FigureWidget whose traces were added after it was created (and not displayed on
        # its own) arrives empty.
        eventually(
            lambda: assert_has_traces(page.locator(f"{DASHBOARD} .js-plotly-plot").first),
            timeout=20,
        )
        assert_dashboard_shows(page, DASHBOARD, run_session(session, start), baseline)
        threshold = lab.slider(page, "^threshold$", DASHBOARD)
        lab.press_slider(threshold, "ArrowLeft", THRESHOLD_PRESSES)
        page.wait_for_function(
            "([el, old]) => (el.textContent || el.value || '')"
            ".trim().replace(/,/g, '') !== old",  # readouts print 1,200
            arg=[
                threshold.locator(".widget-readout").element_handle(),
                str(start.threshold),
            ],
        )
        moved = settings_from_sliders(page, DASHBOARD)
        assert moved.threshold < start.threshold
        assert_dashboard_shows(page, DASHBOARD, run_session(session, moved), baseline)
        lab.scroll_to_top(page.locator(DASHBOARD))
        lab.shoot(page, f"voila-threshold-{moved.threshold}")
        assert not page.page_errors, page.page_errors


def test_present_asks_nothing_of_the_internet(browser, session, tmp_path):
    """`make present` in a classroom without internet: every request the page makes,
    stylesheets, fonts and scripts included, goes to the Voila server on localhost
    (Voila's own lab template linked FontAwesome from a CDN). Requests elsewhere are
    recorded and refused, and the page still draws the chart."""
    from urllib.parse import urlsplit

    require_notebook(PRESENT_NOTEBOOK)
    outside = []

    def local_only(route):
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in (
            "127.0.0.1",
            "localhost",
        ):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    with lab.start_voila(
        lab.REPO / PRESENT_NOTEBOOK,
        tmp_path,
        lab.ARTIFACTS / "logs" / "voila-offline.log",
    ) as server:
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        context.route("**/*", local_only)
        page = context.new_page()
        page.set_default_timeout(lab.UPDATE_TIMEOUT)
        try:
            page.goto(server.url + "/", timeout=lab.PAGE_TIMEOUT)
            plot = page.locator(f"{DASHBOARD} .js-plotly-plot").first
            plot.locator(".main-svg").first.wait_for(timeout=lab.PAGE_TIMEOUT)
            eventually(lambda: assert_has_traces(plot), timeout=20)
            page.wait_for_load_state("networkidle", timeout=lab.PAGE_TIMEOUT)
        finally:
            context.close()
    assert outside == [], f"the projector page asked outside localhost for {outside}"


PROJECTOR_SIZES = [(1280, 720, 1), (1920, 1080, 1), (853, 480, 1.5)]  # last: 1280 at 150%


def test_present_fits_a_projector_and_stays_still(browser, session, tmp_path):
    """`make present` at 1280x720, 1920x1080 and 150% zoom: no sideways scrolling, all
    of the figure (legend, round axis) on the first screen; nothing moves on overflow."""
    require_notebook(PRESENT_NOTEBOOK)
    with lab.start_voila(
        lab.REPO / PRESENT_NOTEBOOK,
        tmp_path,
        lab.ARTIFACTS / "logs" / "voila-present.log",
    ) as server:
        for width, height, scale in PROJECTOR_SIZES:
            context = browser.new_context(
                viewport={"width": width, "height": height}, device_scale_factor=scale
            )
            page = context.new_page()
            page.set_default_timeout(lab.UPDATE_TIMEOUT)
            try:
                page.goto(server.url + "/", timeout=lab.PAGE_TIMEOUT)
                plot = page.locator(f"{DASHBOARD} .js-plotly-plot").first
                page.wait_for_selector(
                    f"{DASHBOARD} .js-plotly-plot .main-svg", timeout=lab.PAGE_TIMEOUT
                )
                eventually(lambda: assert_has_traces(plot), timeout=20)
                scroll_width = page.evaluate("document.documentElement.scrollWidth")
                assert scroll_width <= width, f"{width}x{height}: scrolls sideways"
                box = plot.bounding_box()
                assert box["x"] >= 0 and box["x"] + box["width"] <= width
                if scale == 1:  # at 150% a page may scroll down, never sideways
                    assert box["y"] + box["height"] <= height, (
                        f"{width}x{height}: the figure ends at {box['y'] + box['height']}"
                    )
                legend = page.locator(f"{DASHBOARD} .legend").first.bounding_box()
                assert legend["y"] + legend["height"] <= box["y"] + box["height"]
                shot = lab.shoot(page, f"present-{width}x{height}")
                if (width, height, scale) == (1280, 720, 1):
                    update_docs_screenshot(shot, PRESENT_SCREENSHOT)
                if (width, height) == (1280, 720):
                    # push the threshold into an overflow: the layout must not move
                    before = plot.bounding_box()
                    threshold = lab.slider(page, "^threshold$", DASHBOARD)
                    lab.press_slider(threshold, "ArrowLeft", 8)  # 1,200 -> 800: overflows
                    # the status box's HTML is replaced on every change: wait by text
                    page.locator(
                        f"{DASHBOARD} .ccl-status", has_text="Overflow before"
                    ).wait_for()
                    after = plot.bounding_box()
                    assert (after["x"], after["y"]) == (before["x"], before["y"])
                    assert after["height"] == before["height"]
                    lab.shoot(page, "present-1280x720-overflow")
            finally:
                context.close()


# Every table, figure and text block of the log explorer whose right edge is past its
# output area's: [width, the first words of it].
EXPLORER_PAST_THE_EDGE_JS = """(explorer) => {
  const found = [];
  explorer.querySelectorAll('.jp-OutputArea-output').forEach(area => {
    const edge = area.getBoundingClientRect().right;
    if (area.scrollWidth > area.clientWidth + 2)
      found.push([area.scrollWidth, (area.innerText || '').slice(0, 60)]);
    area.querySelectorAll('table, .js-plotly-plot, pre').forEach(part => {
      const box = part.getBoundingClientRect();
      if (box.width > 0 && box.right > edge + 2)
        found.push([Math.round(box.width),
                    (part.innerText || part.tagName).slice(0, 60)]);
    });
  });
  return found;
}"""


def one_log_of_each_shape() -> dict:
    """{shape: the first log in data/logs of that shape}, of the logs the readers take."""
    from minilib.logs import LogFileError, load_transcript

    shapes = {}
    for path in sorted((lab.REPO / "data" / "logs").iterdir()):
        try:
            shapes.setdefault(load_transcript(path).shape, path)
        except LogFileError:
            continue
    return shapes


def test_notebook_07_takes_an_uploaded_log_of_every_shape(browser, lab_server, tmp_path):
    """Chapter 7.9 at 1280x720 beside the file browser: upload a log of each shape in
    data/logs; each report names its file and its chosen threshold, and fits the
    notebook. Then a file that is not UTF-8: its one line replaces the report."""
    from minilib.lab.log_explorer import explore_file

    require_notebook(LOGS_NOTEBOOK)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(lab.UPDATE_TIMEOUT)
    try:
        lab.open_notebook(page, lab_server, LOGS_NOTEBOOK)
        lab.run_all_cells(page)
        assert page.locator("#filebrowser").is_visible()
        explorer = page.locator(".ccl-log-explorer")
        explorer.wait_for(timeout=lab.PAGE_TIMEOUT)
        button = explorer.locator(".widget-upload")

        def upload(path):
            lab.choose_file(page, button, path)

        shapes = one_log_of_each_shape()
        assert len(shapes) >= 10, shapes
        for shape, path in shapes.items():
            upload(path)
            report = explorer.locator(".ccl-log-report", has_text=f"file: {path.name}")
            report.wait_for(timeout=lab.PAGE_TIMEOUT)
            threshold = explore_file(path).choice.threshold
            head = f"threshold: {threshold:,} tokens, chosen from this log"
            assert head in report.text_content()
            # the file and threshold lines, the curve under them, then what was read
            assert f"shape: {shape}" in explorer.text_content()
            assert explorer.locator(".ccl-log-report", has_text="file: ").count() == 1
            explorer.locator(".js-plotly-plot").first.wait_for()
            assert explorer.locator("table").count() == 2
            field = explorer.locator("input[type=number]")
            assert lab.parse_number(field.input_value()) == threshold
            assert explorer.evaluate(EXPLORER_PAST_THE_EDGE_JS) == [], path.name
            if shape == "codex-rollout":
                lab.scroll_to_top(explorer)
                lab.shoot(page, "notebook-07-upload")
                lab.scroll_to_top(explorer.locator("table").first)
                lab.shoot(page, "notebook-07-upload-tables")
        # a file it cannot read: its one line, in place of the report
        unreadable = tmp_path / "latin1.json"
        unreadable.write_bytes('[{"role": "user", "content": "café"}]'.encode("latin-1"))
        upload(unreadable)
        explorer.locator(
            ".ccl-log-report", has_text="latin1.json: not UTF-8 text"
        ).wait_for()
        assert explorer.locator(".ccl-log-report").count() == 1
        assert explorer.locator(".js-plotly-plot, table").count() == 0
        assert "Traceback" not in explorer.text_content()
        lab.shoot(page, "notebook-07-unreadable")
    finally:
        context.close()
        lab_server.delete_sessions_and_kernels()


POLICIES_NOTEBOOK = "notebooks/10_production_policies.ipynb"
POLICY_LAB = ".ccl-policy-lab"


def test_a_policy_slider_reruns_its_policy_in_the_table(browser, lab_server):
    """10 at 1280x720: moving SWE-agent's `n` with the keyboard changes that policy's row
    in the table to what the library computes at the slider's new value."""
    from minilib.lab.policies_view import PolicyLab

    require_notebook(POLICIES_NOTEBOOK)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(lab.UPDATE_TIMEOUT)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    expected_lab = PolicyLab()  # the notebook's own defaults, computed here

    def row_text(key):
        row = page.locator(f"{POLICY_LAB} tr", has=page.locator(f"th:text-is('{key}')"))
        return " ".join((row.first.text_content() or "").split())

    try:
        lab.open_notebook(page, lab_server, POLICIES_NOTEBOOK)
        lab.run_all_cells(page)
        page.locator(POLICY_LAB).first.wait_for(timeout=lab.PAGE_TIMEOUT)
        slider = lab.slider(page, "^swe-agent-last-n: n$", POLICY_LAB)
        start = lab.slider_value(slider)
        lab.press_slider(slider, "ArrowLeft", times=2)

        def moved():
            assert lab.slider_value(slider) == start - 2

        eventually(moved)
        expected_lab.sliders["swe-agent-last-n"].value = start - 2
        frame = expected_lab.rows
        row = next(r for r in frame if r["policy"] == "swe-agent-last-n")

        def shows():
            assert f"{row['tokens_sent']:,}" in row_text("swe-agent-last-n")

        eventually(shows, timeout=lab.PAGE_TIMEOUT / 1000)
        lab.scroll_to_top(page.locator(POLICY_LAB).first)
        lab.shoot(page, "policy-lab-1280x720")
        assert not errors, errors
    finally:
        context.close()
        lab_server.delete_sessions_and_kernels()


SIX_PATHS_NOTEBOOK = "notebooks/08_six_paths_compared.ipynb"
SIX_PATHS = ".ccl-six-paths-explorer"


def test_six_paths_explorer_takes_a_typed_value_and_resets(browser, lab_server):
    """08 at 1280x720: a slider has no readout to type into (a SelectionSlider's ignores
    what is typed); the box beside it takes a number, the slider goes to the nearest
    value the path offers, and the chart's point and the table follow. Reset brings
    back the article's values."""
    from minilib.lab.six_paths import SHORT_NAMES
    from minilib.lab.style import NO_ANSWER_Y
    from minilib.policies import PATHS, run_path

    require_notebook(SIX_PATHS_NOTEBOOK)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(lab.UPDATE_TIMEOUT)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def point(key, value):
        run = run_path(key, value)
        y = run.final_count("kept") if run.completed else NO_ANSWER_Y
        return {SHORT_NAMES[key]: {"x": [run.final_tokens], "y": [y]}}

    def typed(key, text):
        box = page.locator(f"{SIX_PATHS} .ccl-typed-{key} input")
        box.fill(text)
        box.press("Enter")

    def box_value(key):
        return page.locator(f"{SIX_PATHS} .ccl-typed-{key} input").input_value()

    try:
        lab.open_notebook(page, lab_server, SIX_PATHS_NOTEBOOK)
        lab.run_all_cells(page)
        explorer = page.locator(SIX_PATHS).first
        explorer.wait_for(timeout=lab.PAGE_TIMEOUT)
        plot = explorer.locator(".js-plotly-plot").first
        assert explorer.locator(".widget-slider .widget-readout:visible").count() == 0
        typed("truncation", "9")  # between 8 and 10: the nearer lower one, 8
        assert lab.wait_for_traces(page, plot, point("truncation", 8))

        def box_shows_8():
            assert box_value("truncation") == "8"

        eventually(box_shows_8)
        handle = explorer.locator(".ccl-slider-truncation .noUi-handle")
        index = PATHS["truncation"].choices.index(8)
        assert float(handle.get_attribute("aria-valuenow")) == index
        row = explorer.locator("tr", has=page.locator("th:text-is('1 truncation')"))
        assert row.locator("td").last.text_content().strip() == "8"
        typed("aging", "0")  # overflows: its cross goes to the no-answer row
        assert lab.wait_for_traces(page, plot, point("aging", 0))
        lab.shoot_widget(page, explorer, "six-paths-explorer-aging-0-1280x720")
        explorer.locator("button", has_text="Reset to the article's values").click()
        defaults = {}
        for key, spec in PATHS.items():
            defaults.update(point(key, spec.default))
        assert lab.wait_for_traces(page, plot, defaults)

        def boxes_back():
            assert {k: box_value(k) for k in PATHS} == {
                k: str(spec.default) for k, spec in PATHS.items()
            }

        eventually(boxes_back)
        assert not errors, errors
    finally:
        context.close()
        lab_server.delete_sessions_and_kernels()


# Five different CJK characters against one of them five times: with no font that has
# them, Chromium draws each as the same empty box, and the two drawings are the same.
CJK_DRAWN_JS = """([text, same]) => {
  const draw = (s) => {
    const c = document.createElement('canvas'); c.width = 240; c.height = 40;
    const x = c.getContext('2d'); x.font = '24px sans-serif'; x.fillText(s, 4, 30);
    return c.toDataURL(); };
  return draw(text) !== draw(same);
}"""


def test_chinese_text_is_drawn_with_a_cjk_font(page):
    """The chapters quote the session in Chinese (01's previews, 03's aged header, 05's
    table): without a CJK font the browser draws it, and the README's screenshots, as
    empty boxes. .ci/run installs Debian's fonts-noto-cjk when fontconfig has none."""
    page.set_content("<html><body></body></html>")
    # the check itself: two unassigned code points (no font has them) look the same
    assert not page.evaluate(CJK_DRAWN_JS, ["\u0378\u0379", "\u0378" * 2])
    if not page.evaluate(CJK_DRAWN_JS, ["上下文窗口", "口" * 5]):
        message = (
            "Chinese text is drawn as empty boxes: no CJK font; install one with "
            "`apt-get install -y fonts-noto-cjk` (.ci/run does)"
        )
        if lab.in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
