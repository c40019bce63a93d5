"""Every slider of chapters 06, 08, 09 and 10, moved to both ends in JupyterLab at
1280x720 with the file browser open, as a student would.

After each move the test waits for what the slider drives and checks it against what
the library computes here for the value the slider shows: chapter 06's chart, status and
tables (`run_session`); chapter 08's point and table row (`run_path`); chapter 09's status
(`scale_run`); chapter 10's row of that policy (`LogRuns.row`), a refused setting
included. A slider whose output stops following it fails the test, and so does any error
the page shows or hides: an uncaught page error, a message in the browser console at
error level, an entry in JupyterLab's log console (where a widget callback's traceback
goes when no output area takes it) or an error or stderr output in a cell.

Screenshots of the chapters at interesting ends go to artifacts/screenshots/, and the
README's ones (docs/screenshots/) are refreshed when missing or UPDATE_SCREENSHOTS=1.
"""

import re

import labdriver as lab
import pytest
from test_lab_browser import (
    DASHBOARD,
    assert_dashboard_shows,
    eventually,
    settings_from_sliders,
    update_docs_screenshot,
)

from minilib import load_session, run_baseline, run_session

pytestmark = pytest.mark.browser

SHOTS = lab.REPO / "docs" / "screenshots"
SCREEN = {"width": 1280, "height": 720}
# Console messages at error level that say nothing about the lab: none so far. Add a
# pattern here only with the reason it is harmless.
HARMLESS_CONSOLE_ERRORS: tuple = ()

# What JupyterLab shows when something went wrong where the student may not look: the
# log console's status item appears (it is hidden while the log is empty), and error or
# stderr outputs in cells.
HIDDEN_ERRORS_JS = """() => {
  const found = [];
  const log = document.querySelector('.jp-LogConsoleStatusItem');
  if (log && !log.classList.contains('lm-mod-hidden'))
    found.push('log console: ' +
      (log.querySelector('[title]')?.title || log.textContent));
  document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output'
  ).forEach(out => {
    const mime = out.getAttribute('data-mime-type') || '';
    if (mime.includes('stderr') || mime.includes('error'))
      found.push('output: ' + (out.textContent || '').slice(0, 300));
  });
  return found;
}"""


class ErrorWatch:
    """Everything wrong a page shows or hides, collected while the test drives it."""

    def __init__(self, page):
        self.page, self.page_errors, self.console = page, [], []
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        page.on("console", self._console)

    def _console(self, message) -> None:
        if message.type != "error":
            return
        if not any(re.search(p, message.text) for p in HARMLESS_CONSOLE_ERRORS):
            self.console.append(message.text[:300])

    def problems(self) -> list:
        hidden = self.page.evaluate(HIDDEN_ERRORS_JS)
        if any(item.startswith("log console") for item in hidden):
            hidden.append("log console says: " + self.log_console_text())
        return (
            [f"page error: {e}" for e in self.page_errors]
            + [f"console error: {e}" for e in self.console]
            + hidden
        )

    def log_console_text(self) -> str:
        """Open the log console (a click on its status item) and read it."""
        try:
            self.page.locator(".jp-LogConsoleStatusItem").click()
            panel = self.page.locator(".jp-LogConsolePanel").first
            panel.wait_for(timeout=5_000)
            return " ".join((panel.text_content() or "").split())[:1000]
        except Exception as error:  # the failure is the entry itself; this is detail
            return f"(could not open it: {error})"

    def assert_none(self, where: str) -> None:
        problems = self.problems()
        assert not problems, f"{where}: " + "\n".join(problems)


def handle(slider) -> dict:
    """noUiSlider's own account of a slider: its position and ends (values for an
    IntSlider, indexes for a SelectionSlider)."""
    knob = slider.locator(".noUi-handle")
    return {
        key: float(knob.get_attribute(f"aria-value{key}"))
        for key in ("now", "min", "max")
    }


def move_to(slider, end: str) -> None:
    """Press Home or End on the slider and wait until its handle is there."""
    lab.press_slider(slider, end)
    where = "min" if end == "Home" else "max"

    def there():
        state = handle(slider)
        assert state["now"] == state[where], (end, state)

    eventually(there)


def label_of(slider) -> str:
    return (slider.locator(".widget-label").text_content() or "").strip()


def open_chapter(page, server, notebook: str) -> None:
    lab.open_notebook(page, server, f"notebooks/{notebook}")
    lab.run_all_cells(page)
    assert page.locator("#filebrowser").is_visible()  # as a student first sees it


def every_end(page, scope: str, watch: ErrorWatch, follows, shoot=None) -> int:
    """Move each slider in `scope` to its end, then to its start; after each move
    `follows(slider, label)` checks what it drives, and no error may have appeared.
    `shoot(label, end)` may take a screenshot. Returns how many sliders it moved."""
    sliders = page.locator(f"{scope} .widget-slider")
    count = sliders.count()
    assert count, f"no slider in {scope}"
    for index in range(count):
        slider = sliders.nth(index)
        label = label_of(slider)
        for end in ("End", "Home"):
            move_to(slider, end)
            lab.wait_idle(page)
            eventually(lambda: follows(slider, label), timeout=lab.PAGE_TIMEOUT / 1000)
            watch.assert_none(f"{label} at its {end}")
            if shoot is not None:
                shoot(label, end)
    return count


@pytest.fixture
def screen(browser, lab_server):
    context = browser.new_context(viewport=SCREEN, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(lab.UPDATE_TIMEOUT)
    try:
        yield page, ErrorWatch(page)
    finally:
        context.close()
        lab_server.delete_sessions_and_kernels()


def on_one_screen(page, scope: str, parts) -> None:
    """With `scope` scrolled to the top of the notebook, every element matched by a
    selector in `parts` lies inside the notebook's visible area: a control and what it
    drives are seen together, without scrolling."""
    frame = page.locator(".jp-NotebookPanel:visible .jp-WindowedPanel-outer").first
    view = frame.bounding_box()
    widget = page.locator(scope).first

    def at_the_top():
        # the notebook renders its cells lazily, and a cell drawn after the scroll moves
        # what was scrolled to: scroll again until it stays
        lab.scroll_to_top(widget)
        page.wait_for_timeout(200)
        assert abs(widget.bounding_box()["y"] - view["y"]) <= 2, widget.bounding_box()

    eventually(at_the_top, timeout=10)
    for selector in parts:
        found = page.locator(f"{scope} {selector}")
        assert found.count(), f"nothing matches {selector} in {scope}"
        for index in range(found.count()):
            box = found.nth(index).bounding_box()
            assert view["y"] <= box["y"] and (
                box["y"] + box["height"] <= view["y"] + view["height"] + 1
            ), (
                f"{selector} #{index} spans {box['y']:.0f}-"
                f"{box['y'] + box['height']:.0f} px, the notebook shows "
                f"{view['y']:.0f}-{view['y'] + view['height']:.0f} px"
            )


def test_chapter_06_every_slider_to_both_ends(screen, lab_server):
    page, watch = screen
    session = load_session()
    baseline = run_baseline(session)
    open_chapter(page, lab_server, "06_long_session_lab.ipynb")
    watch.assert_none("after Run All")
    # the sliders, the status box and the whole chart on one 1280x720 screen
    page.locator(f"{DASHBOARD} .js-plotly-plot .main-svg").first.wait_for()
    on_one_screen(page, DASHBOARD, [".widget-slider", ".ccl-status", ".js-plotly-plot"])

    def follows(slider, label):
        settings = settings_from_sliders(page, DASHBOARD)
        assert_dashboard_shows(page, DASHBOARD, run_session(session, settings), baseline)

    def shoot(label, end):
        if label == "threshold" and end == "Home":  # an overflow before round 0
            threshold = lab.slider(page, "^threshold$", DASHBOARD)
            lab.press_slider(threshold, "ArrowRight")  # 150: the zoom's overflow mark
            eventually(lambda: follows(threshold, "threshold"))
            # the sliders, the red status box and the zoom's red mark, on one screen
            lab.scroll_to_top(page.locator(DASHBOARD))
            page.wait_for_timeout(300)
            shot = lab.shoot(page, "chapter-06-threshold-150-1280x720")
            update_docs_screenshot(shot, SHOTS / "chapter06_threshold_150.png")
            move_to(threshold, "Home")
            eventually(lambda: follows(threshold, "threshold"))

    assert every_end(page, DASHBOARD, watch, follows, shoot) == 5


def test_chapter_08_every_slider_to_both_ends(screen, lab_server):
    from minilib.lab.six_paths import SHORT_NAMES
    from minilib.lab.style import NO_ANSWER_Y
    from minilib.policies import PATHS, run_path

    page, watch = screen
    scope = ".ccl-six-paths-explorer"
    open_chapter(page, lab_server, "08_six_paths_compared.ipynb")
    watch.assert_none("after Run All")
    plot = page.locator(f"{scope} .js-plotly-plot").first

    def follows(slider, label):
        key = next(k for k in PATHS if label.startswith(f"{k}: "))
        value = PATHS[key].choices[int(handle(slider)["now"])]
        run = run_path(key, value)
        y = run.final_count("kept") if run.completed else NO_ANSWER_Y
        want = {SHORT_NAMES[key]: {"x": [run.final_tokens], "y": [y]}}
        assert lab.wait_for_traces(page, plot, want, timeout=2_000), (label, value)
        box = page.locator(f"{scope} .ccl-typed-{key} input").input_value()
        assert box == str(value), (label, box, value)
        row = page.locator(
            f"{scope} tr", has=page.locator(f"th:text-is('{SHORT_NAMES[key]}')")
        )
        assert row.locator("td").last.text_content().strip() == f"{value:,}"

    assert every_end(page, scope, watch, follows) == len(PATHS)


def test_chapter_09_every_slider_to_both_ends(screen, lab_server):
    from minilib.lab.scale_view import scale_run

    page, watch = screen
    scope = ".ccl-scale-explorer"
    open_chapter(page, lab_server, "09_production_scale.ipynb")
    watch.assert_none("after Run All")

    def status_text() -> str:
        text = page.locator(f"{scope} .ccl-scale-status").text_content() or ""
        return " ".join(text.split())

    def follows(slider, label):
        budget = lab.slider_value(slider)
        run = scale_run(1000, 32_000, budget)
        assert status_text() == " ".join(run.status().split()), (budget, status_text())

    def shoot(label, end):
        status = page.locator(f"{scope} .ccl-scale-status")
        if "stopped before round" in status_text():  # an overflow: all its lines shown
            box, lines = status.bounding_box(), status.locator("br").count() + 1
            text_height = status.evaluate("el => el.scrollHeight")
            assert text_height <= box["height"] + 1, (
                f"the status box shows {box['height']} px of {text_height} px "
                f"({lines} lines)"
            )
            lab.scroll_to_top(page.locator(scope))
            shot = lab.shoot(page, "chapter-09-overflow-1280x720")
            update_docs_screenshot(shot, SHOTS / "chapter09_overflow.png")

    assert every_end(page, scope, watch, follows, shoot) == 1


def test_chapter_10_every_slider_to_both_ends(screen, lab_server):
    from minilib.lab.log_runs import LogRuns, log_messages
    from minilib.lab.policies_view import POLICIES, PolicyLab, short_problems
    from minilib.lab.policy_rows import rounds_cell, row_problems, saved_percent

    page, watch = screen
    scope = ".ccl-policy-lab"
    defaults = PolicyLab.__init__.__defaults__  # (log, window) the chapter opens with
    log, window = defaults
    runs = LogRuns(log_messages(log))
    open_chapter(page, lab_server, "10_production_policies.ipynb")
    watch.assert_none("after Run All")
    # every slider and its policy's line beside it on one 1280x720 screen
    page.locator(f"{scope} .ccl-policy-readout").first.wait_for()
    on_one_screen(page, scope, [".widget-slider", ".ccl-policy-readout"])

    def row_text(key: str) -> str:
        row = page.locator(f"{scope} tr", has=page.locator(f"th:text-is('{key}')"))
        return " ".join((row.first.text_content() or "").split())

    def follows(slider, label):
        key = label.split(": ")[0]
        assert key in POLICIES, label
        value = lab.slider_value(slider)
        if isinstance(value, float):
            value = round(value, 2)
        row = runs.row(key, window, value)
        shown = row_text(key)
        assert rounds_cell(row) in shown, (label, value, shown)
        if "error" not in row:
            assert f"{row['tokens_sent']:,}" in shown, (label, value, shown)
        beside = page.locator(f"{scope} .ccl-policy-readout-{key}").text_content()
        # the line beside the slider leads with the run's problems (a stop, broken
        # windows, lost facts), else with what it saved (a narrow column cuts its end)
        problems = row_problems(row)
        saved = f"{saved_percent(row)} saved"
        first = short_problems(problems[:1]) if problems else saved
        assert beside.startswith(first), (label, value, beside)

    def shoot(label, end):
        if label.startswith("article: "):  # the first slider and the table's first row
            lab.scroll_to_top(page.locator(scope).first)
            shot = lab.shoot(page, f"chapter-10-article-{end}-1280x720")
            update_docs_screenshot(shot, SHOTS / f"chapter10_slider_{end.lower()}.png")

    moved = every_end(page, scope, watch, follows, shoot)
    assert moved == len(runs_keys())
    # a typed value's note goes under its box: every row's line keeps its width
    readouts = page.locator(f"{scope} .ccl-policy-readout")
    widths = [readouts.nth(i).bounding_box()["width"] for i in range(readouts.count())]
    box = page.locator(f"{scope} .ccl-number-box input").first
    box.fill("0")
    box.press("Enter")
    note = page.locator(f"{scope} .ccl-number-note").first
    eventually(lambda: "below the least" in note.text_content())
    after = [readouts.nth(i).bounding_box()["width"] for i in range(readouts.count())]
    assert all(abs(a - b) <= 1 for a, b in zip(after, widths)), (widths, after)
    lab.shoot(page, "chapter-10-typed-0-1280x720")


def runs_keys():
    from minilib.lab.policy_rows import available_policies

    return available_policies()


def test_chapter_07_a_long_log_has_a_readable_round_axis(screen, lab_server, tmp_path):
    """A generated session of about 146 rounds (minilib.scale.histories), uploaded to
    7.9 as a user's OpenAI chat JSON file: each panel's round axis carries few enough
    labels to read (every round labelled was a grey smear), and none overlaps the
    next."""
    import json

    from minilib.scale.histories import generate_history

    page, watch = screen
    history = generate_history(182)
    log = tmp_path / f"generated_{history.stats().rounds}_rounds.json"
    log.write_text(json.dumps(list(history.messages)), encoding="utf-8")
    open_chapter(page, lab_server, "07_real_transcripts.ipynb")
    explorer = page.locator(".ccl-log-explorer")
    explorer.wait_for(timeout=lab.PAGE_TIMEOUT)
    lab.choose_file(page, explorer.locator(".widget-upload"), log)
    explorer.locator(".ccl-log-report", has_text=f"file: {log.name}").wait_for(
        timeout=lab.PAGE_TIMEOUT
    )
    plot = explorer.locator(".js-plotly-plot").first
    plot.locator(".main-svg").first.wait_for()
    boxes = plot.evaluate(
        """(gd) => [...gd.querySelectorAll('.xtick text, .x2tick text')].map(t => {
             const b = t.getBoundingClientRect();
             return [t.parentNode.getAttribute('class'),
                     b.left, b.right]; })"""
    )
    assert 0 < len(boxes) <= 2 * 20, f"{len(boxes)} round labels"
    for axis in {box[0] for box in boxes}:
        spans = sorted((left, right) for name, left, right in boxes if name == axis)
        for (_, right), (left, _) in zip(spans, spans[1:]):
            assert right <= left, f"round labels overlap on {axis}: {spans}"
    # the compressed line is not flat against the baseline: the panel is on a log scale
    assert "log scale" in plot.locator("text.ytitle").first.text_content()
    lab.scroll_to_top(plot)
    shot = lab.shoot(page, "chapter-07-long-log-1280x720")
    update_docs_screenshot(shot, SHOTS / "chapter07_long_log.png")
    watch.assert_none("after the upload")
