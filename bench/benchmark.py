"""How fast one slider change is, from the Python callback to the redrawn chart in a
browser.

    make bench                                   # both parts, printed
    python bench/benchmark.py --python-only    # part A only (no browser needed)
    python bench/benchmark.py --markdown docs/benchmark.md   # also write the results
    page

A. Python: `run_session` (the whole 13-call session replayed at a new setting) and the lab
   dashboard's full callback (`LongSessionDashboard`: run_session, figure update, status
   line, both tables), timed with time.perf_counter over many slider changes; medians.
B. Browser: JupyterLab on a free port, Debian's Chromium driven by Playwright, notebook
   06 run; then ~20 keypresses on the threshold slider. For each, a capture-phase keydown
   listener notes when the key went down and a MutationObserver on the chart notes when
   the chart last changed, holding its final data (labdriver.LATENCY_PROBE_JS); the
   kernel is let go idle between keypresses so they do not overlap. The same is done on
   notebook 06 with every change sent as one plotly_update (plotly.js then redraws the
   whole figure, as it does for a FigureWidget updated the usual way), on the
   lab's figure alone with a trivial callback (sent the usual way, a batch_update: also
   a full redraw) and on a notebook with a trivial callback (one FigureWidget trace, y
   set from the slider value) as the floor of the stack.

C. Waits a student sees: chapter 07 at 1280x720, run in full, then a generated log of
   about 2 MB (written as a user's OpenAI chat JSON file) uploaded through the page's
   file dialog `--runs` times (default 5), each a copy under a new name, timed from the
   file chosen to its report on screen (header, chart and both tables), and a JSON file
   of no known shape to its one-line refusal; explore_file on the same log (after a
   small log's report, as in the chapter), twice in each of `--runs` fresh processes,
   for the kernel's share. Then `make present`'s page
   at 1280x720, from the address opened to the chart drawn, `--runs` loads. Medians; the
   upload's against its 2 s target, PASS or FAIL. `--against REV` measures the same on
   that git revision's minilib side by side (its export on the servers' PYTHONPATH, runs
   taking turns), e.g. `make bench BENCH_ARGS="--against HEAD~5"`. `--presses 0` runs A
   and C only.

Targets: A <= 5 ms per slider change, B <= 60 ms keypress -> redraw, C: an upload's
report within 2 s. This is a
measurement, not a test: it prints numbers and never fails on them.
"""

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after PYTHONPATH: --against puts another minilib there
sys.path.insert(0, str(ROOT / "tests" / "browser"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from revisions import exported  # noqa: E402

from minilib import Settings, load_session, run_session  # noqa: E402

LAB_NOTEBOOK = "notebooks/06_long_session_lab.ipynb"
BENCH_DIR = (
    ROOT / "build" / "bench"
)  # gitignored; the trivial-callback notebook is written here
TARGET_PYTHON_MS = 5.0
TARGET_BROWSER_MS = 60.0


def percentile(values, fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def summary(values) -> dict:
    return {
        "n": len(values),
        "median": statistics.median(values),
        "p90": percentile(values, 0.9),
        "min": min(values),
        "max": max(values),
    }


def timed(function, repeats: int) -> list:
    """Milliseconds of `repeats` single calls (after one warm-up call)."""
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return times


# ------------------------------------------------------------------ A: Python


def python_benchmarks(repeats: int) -> dict:
    session = load_session()
    results = {}
    # Alternate between two thresholds, as a slider moving one step back and forth does.
    values = [1200, 1150]
    flip = iter(range(10**9))
    results["run_session"] = summary(
        timed(
            lambda: run_session(session, Settings(threshold=values[next(flip) % 2])),
            repeats,
        )
    )

    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from minilib.lab import dashboard as dashboard_module
    except ImportError as error:  # the presentation layer needs the notebooks extra
        results["dashboard_error"] = f"minilib.lab.dashboard not importable: {error}"
        return results
    dashboard = dashboard_module.LongSessionDashboard(session)
    slider = dashboard.sliders["threshold"]
    start = slider.value
    step = slider.step
    count = iter(range(10**9))

    def move_slider():
        slider.value = start - step if next(count) % 2 == 0 else start

    results["dashboard_callback"] = summary(timed(move_slider, repeats))
    results["dashboard_callback_note"] = (
        "slider.value = v with no frontend attached: the observer runs render() in full "
        "(run_session, "
        "figure update, status, both tables); sending the comm messages is not included"
    )
    # Where the callback's time goes (same alternation, each part alone).
    from minilib.lab.figures import update_lab_figure
    from minilib.lab.tables import event_rows, round_rows, rows_html

    runs = [run_session(session, Settings(threshold=v)) for v in values]
    parts_flip = iter(range(10**9))
    results["part_figure_update"] = summary(
        timed(
            lambda: update_lab_figure(
                dashboard.figure, runs[next(parts_flip) % 2], dashboard.baseline
            ),
            repeats,
        )
    )
    results["part_tables_html"] = summary(
        timed(
            lambda: (
                rows_html(*round_rows(runs[0])),
                rows_html(*event_rows(runs[0])),
            ),
            repeats,
        )
    )
    return results


# ------------------------------------------------------------------ B: browser

TRIVIAL_NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": [
                "# Benchmark floor: the cheapest possible slider -> FigureWidget "
                "callback.\n",
                "import ipywidgets as widgets\n",
                "import plotly.graph_objects as go\n",
                "figure = go.FigureWidget(go.Figure(go.Scatter(name='trivial', "
                "x=list(range(14)), y=[0] * 14),\n",
                "                                   layout=dict(height=440, "
                "yaxis=dict(range=[0, 8100]))))\n",
                "slider = widgets.IntSlider(value=1200, min=100, max=8000, step=50, "
                "description='threshold')\n",
                "def redraw(change):\n",
                "    with figure.batch_update():\n",
                "        figure.data[0].y = [change['new']] * 14\n",
                "slider.observe(redraw, names='value')\n",
                "widgets.VBox([slider, figure], "
                "layout=widgets.Layout(width='900px')).add_class('ccl-long-session-dashboard')\n",
            ],
        }
    ],
    "metadata": {
        "kernelspec": {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}


# The lab's own figure (three panels, fourteen traces), built once; the callback only
# moves the token panel's threshold line, sent the usual way (a batch_update, one
# plotly_update): plotly.js redraws the whole figure.
SAME_FIGURE_NOTEBOOK = json.loads(json.dumps(TRIVIAL_NOTEBOOK))
SAME_FIGURE_NOTEBOOK["cells"][0]["source"] = [
    "# Benchmark: the lab's figure with a trivial callback (no replay, no tables).\n",
    "import ipywidgets as widgets\n",
    "from minilib import Settings, load_session, run_baseline, run_session\n",
    "from minilib.lab.figures import lab_figure\n",
    "session = load_session()\n",
    "figure = lab_figure(run_session(session, Settings()), run_baseline(session), "
    "widget=True)\n",
    "line = next(t for t in figure.data if t.name == 'threshold')\n",
    "slider = widgets.IntSlider(value=1200, min=100, max=8000, step=50, "
    "description='threshold')\n",
    "def redraw(change):\n",
    "    with figure.batch_update():\n",
    "        line.y = [change['new']] * 2\n",
    "slider.observe(redraw, names='value')\n",
    "widgets.VBox([slider, figure]).add_class('ccl-long-session-dashboard')\n",
]


def lab_in_full_notebook() -> dict:
    """Notebook 06 with a first cell that sends every change of the lab's figure as one
    plotly_update: plotly.js redraws all of the figure each time, where the lab sends a
    frame that redraws only what changed (minilib.lab.figures.send_lab_update)."""
    notebook = json.loads((ROOT / LAB_NOTEBOOK).read_text(encoding="utf-8"))
    first = json.loads(json.dumps(TRIVIAL_NOTEBOOK["cells"][0]))
    first["source"] = [
        "# Benchmark: every change of the lab's figure redrawn in full.\n",
        "from minilib.lab import figures\n",
        "def send_in_full(figure, restyle, indexes, relayout):\n",
        "    if restyle or relayout:\n",
        "        figure.plotly_update(restyle_data=restyle, relayout_data=relayout,\n",
        "                             trace_indexes=indexes)\n",
        "figures.send_lab_update = send_in_full\n",
    ]
    notebook["cells"].insert(0, first)
    return notebook


VARIANTS = (
    ("lab", "notebook 06 (the lab)", None),
    ("lab_in_full", "notebook 06, redrawn in full", lab_in_full_notebook),
    ("same_figure", "lab figure in full, trivial callback", SAME_FIGURE_NOTEBOOK),
    ("trivial", "trivial callback (floor)", TRIVIAL_NOTEBOOK),
)
# Rows of the report: the JupyterLab variants, then notebook 06 served by Voilà (make
# present).
REPORT_ROWS = tuple((name, label) for name, label, _ in VARIANTS) + (
    ("voila", "notebook 06 in Voilà"),
)


def keypress_latencies(page, server, notebook: str, presses: int) -> dict:
    import labdriver as lab

    lab.open_notebook(page, server, notebook)
    lab.run_all_cells(page)
    page.wait_for_selector(
        ".ccl-long-session-dashboard .js-plotly-plot .scatterlayer .trace",
        timeout=lab.PAGE_TIMEOUT,
    )
    dashboard = page.locator(".ccl-long-session-dashboard").first
    lab.scroll_to_top(dashboard)
    slider = lab.slider(page, "^threshold$", ".ccl-long-session-dashboard")
    lab.install_latency_probe(page, scope=".ccl-long-session-dashboard")
    half = presses // 2
    keys = ["ArrowLeft"] * half + ["ArrowRight"] * (presses - half)
    # Chromium's own counters (CDP Performance domain): where the main thread's time went.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    before = {
        m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]
    }
    samples = [
        lab.measure_keypress(page, slider, key, idle=lab.wait_idle) for key in keys
    ]
    after = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    main_thread = {
        name: (after[name] - before[name]) * 1000 / presses
        for name in (
            "ScriptDuration",
            "LayoutDuration",
            "RecalcStyleDuration",
            "TaskDuration",
        )
        if name in after and name in before
    }
    main_thread["Nodes"] = after.get("Nodes")
    splits = [s["split"] for s in samples if s.get("split")]
    split = (
        {
            part: statistics.median(x[part] for x in splits)
            for part in ("frontend", "roundtrip", "render")
        }
        if splits
        else None
    )
    redraw = [s["redraw"] for s in samples if s["redraw"] is not None]
    paint = [s["paint"] for s in samples if s["paint"] is not None]
    result = {
        "keypresses": presses,
        "redrawn": len(redraw),
        "redraw": summary(redraw) if redraw else None,
        "paint": summary(paint) if paint else None,
        "split": split,
        "main_thread": main_thread,
        "values": [s["value"] for s in samples],
    }
    server.delete_sessions_and_kernels()
    return result


def voila_latencies(browser, notebook: str, presses: int) -> dict:
    """The same keypresses on `make present`'s page (Voilà: no kernel status bar, so a
    quiet period ends each)."""
    import labdriver as lab

    with (
        tempfile.TemporaryDirectory() as home,
        lab.start_voila(
            ROOT / notebook, Path(home), lab.ARTIFACTS / "logs" / "benchmark-voila.log"
        ) as server,
    ):
        context = browser.new_context(viewport=lab.VIEWPORT)
        context.add_init_script(lab.WEBSOCKET_TAP_JS)
        page = context.new_page()
        page.set_default_timeout(lab.UPDATE_TIMEOUT)
        try:
            page.goto(server.url + "/", timeout=lab.PAGE_TIMEOUT)
            page.wait_for_selector(
                ".ccl-long-session-dashboard .js-plotly-plot .main-svg",
                timeout=lab.PAGE_TIMEOUT,
            )
            plot = page.locator(".ccl-long-session-dashboard .js-plotly-plot").first
            try:
                page.wait_for_function(
                    "(gd) => (gd._fullData || []).length > 0",
                    arg=plot.element_handle(),
                    timeout=15_000,
                )
            except Exception:
                return {
                    "error": "not measured: the chart has no traces in Voilà "
                    "(the FigureWidget's synced state is empty)"
                }
            lab.scroll_to_top(page.locator(".ccl-long-session-dashboard").first)
            slider = lab.slider(page, "^threshold$", ".ccl-long-session-dashboard")
            lab.install_latency_probe(page, scope=".ccl-long-session-dashboard")
            half = presses // 2
            keys = ["ArrowLeft"] * half + ["ArrowRight"] * (presses - half)
            samples = [
                lab.measure_keypress(page, slider, key, settle_ms=600) for key in keys
            ]
        finally:
            context.close()
    splits = [s["split"] for s in samples if s.get("split")]
    redraw = [s["redraw"] for s in samples if s["redraw"] is not None]
    paint = [s["paint"] for s in samples if s["paint"] is not None]
    return {
        "keypresses": presses,
        "redrawn": len(redraw),
        "redraw": summary(redraw) if redraw else None,
        "paint": summary(paint) if paint else None,
        "split": {
            part: statistics.median(x[part] for x in splits)
            for part in ("frontend", "roundtrip", "render")
        }
        if splits
        else None,
    }


LOGS_NOTEBOOK = "notebooks/07_real_transcripts.ipynb"
PRESENT_NOTEBOOK = "notebooks/present/long_session_lab.ipynb"
TARGET_UPLOAD_S = 2.0  # chapter 07: a 2 MB log uploaded -> its report on screen
UPLOAD_MEGABYTES = 2.0


def generated_log(megabytes: float = UPLOAD_MEGABYTES) -> Path:
    """A generated coding session (minilib.scale.histories, not recorded) written as a
    user's OpenAI chat JSON file of about `megabytes`: the smallest number of tool calls
    (in steps of 10) that reaches the size."""
    from minilib.scale.histories import generate_history

    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    calls = 10
    while True:
        text = json.dumps(list(generate_history(calls).messages), ensure_ascii=False)
        if len(text.encode()) >= megabytes * 1e6:
            path = BENCH_DIR / f"generated_{calls}_calls.json"
            path.write_text(text, encoding="utf-8")
            return path
        calls += 10


def unknown_shape_log(size: int) -> Path:
    """A JSON file of about `size` bytes that no reader takes (objects of no known
    shape): what the upload must refuse in one line."""
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    row = {"timestamp": "2026-01-01T00:00:00Z", "metric": "latency", "value": 1.5}
    rows = [dict(row, id=i) for i in range(size // len(json.dumps(row)))]
    path = BENCH_DIR / "unknown_shape.json"
    path.write_text(json.dumps({"samples": rows}), encoding="utf-8")
    return path


def explore_seconds(path: Path, repeats: int = 3) -> float:
    """explore_file in this process (what the upload's kernel work is, without the
    widget and the browser), median of `repeats`, the caches of the file's text
    cleared; after one report of a small bundled log, as chapter 07 shows before its
    upload box (a first call's imports are not an upload's)."""
    from minilib.lab.log_explorer import _threshold_choice, explore_file, parsed

    explore_file(ROOT / "data" / "logs" / "claude_code_session.jsonl")
    times = []
    for _ in range(repeats):
        _threshold_choice.cache_clear()
        parsed.cache_clear()
        start = time.perf_counter()
        explore_file(path)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def explore_seconds_of(code: Optional[Path], path: Path) -> float:
    """explore_seconds (median of two) in a fresh process running the minilib in
    `code` (None: this checkout's)."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    done = subprocess.run(
        [sys.executable, __file__, "--explore-only", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return float(done.stdout.split()[-1])


def against_code(ref: str) -> Path:
    """The minilib and the notebooks of git revision `ref`, exported under build/bench
    (a kernel run with it on PYTHONPATH imports it instead of this checkout's; its
    pages are that revision's own chapters, which may use what its minilib lacks)."""
    return exported(ref, BENCH_DIR, ["minilib", "notebooks"])


@contextlib.contextmanager
def python_path(code: Optional[Path]):
    """os.environ with PYTHONPATH set to `code` while a server starts (its kernels
    inherit it)."""
    saved = os.environ.get("PYTHONPATH")
    if code is not None:
        os.environ["PYTHONPATH"] = str(code)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


class UploadPage:
    """Chapter 07 at 1280x720, run in full, its upload box ready. The page runs a copy
    of the chapter under build/bench named `name`: JupyterLab saves the notebooks it
    runs, which must not rewrite the chapter, nor one server's file under another's
    page."""

    def __init__(self, browser, server, name: str, code: Optional[Path] = None):
        import labdriver as lab

        self.server, self.lab = server, lab
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        notebook = BENCH_DIR / f"chapter07_{name}.ipynb"
        notebook.write_bytes(((code or ROOT) / LOGS_NOTEBOOK).read_bytes())
        self.context = browser.new_context(viewport={"width": 1280, "height": 720})
        self.page = self.context.new_page()
        self.page.set_default_timeout(lab.PAGE_TIMEOUT)
        lab.open_notebook(self.page, server, str(notebook.relative_to(ROOT)))
        lab.run_all_cells(self.page)
        self.explorer = self.page.locator(".ccl-log-explorer")
        self.explorer.wait_for(timeout=lab.PAGE_TIMEOUT)

    def upload(self, path: Path, shown: str) -> float:
        """Seconds from `path` chosen in the file dialog to its report on screen (a
        `.ccl-log-report` holding `shown`; for a report, also the chart drawn and both
        tables), then the kernel let go idle."""
        with self.page.expect_file_chooser() as chooser:
            self.explorer.locator(".widget-upload").click()
        start = time.perf_counter()
        chooser.value.set_files(str(path))
        self.explorer.locator(".ccl-log-report", has_text=shown).wait_for()
        if shown.startswith("file: "):
            self.explorer.locator(".js-plotly-plot .main-svg").first.wait_for()
            self.page.wait_for_function(
                "(el) => el.querySelectorAll('table').length >= 2",
                arg=self.explorer.element_handle(),
            )
        seconds = time.perf_counter() - start
        self.lab.wait_idle(self.page)
        return seconds

    def close(self):
        self.context.close()
        self.server.delete_sessions_and_kernels()


def upload_timings(
    browser, servers: dict, codes: dict, log: Path, junk: Path, uploads: int
) -> dict:
    """Chapter 07 at 1280x720 on each server (this checkout's code, and the one
    compared with), uploads taking turns: seconds from the file chosen in the upload
    dialog to its report on screen (the header naming it, the chart drawn, both
    tables), each upload a copy under a new name (nothing of an earlier one is reused),
    and to the one-line refusal of a file of no known shape. The notebook has drawn
    its own figures first, as a student's has."""
    pages = {
        name: UploadPage(browser, server, name, codes[name])
        for name, server in servers.items()
    }
    seconds = {name: [] for name in pages}
    refusals = {name: [] for name in pages}
    try:
        for number in range(uploads):
            for name, page in pages.items():
                copy = BENCH_DIR / f"upload_{name}_{number}_{log.name}"
                copy.write_bytes(log.read_bytes())
                seconds[name].append(page.upload(copy, f"file: {copy.name}"))
                # its line, not "junk.json (2 MB): reading it..."
                refusals[name].append(page.upload(junk, f"{junk.name}: "))
    finally:
        for page in pages.values():
            page.close()
    return {
        name: {
            "megabytes": log.stat().st_size / 1e6,
            "uploads": seconds[name],
            "median": statistics.median(seconds[name]),
            "refusal": statistics.median(refusals[name]),
        }
        for name in pages
    }


def present_load_seconds(browser, servers: dict, loads: int) -> dict:
    """`make present`'s page at 1280x720 on each Voilà server, loads taking turns:
    seconds from the address opened to the chart drawn with its traces (Voilà runs
    the notebook in a new kernel on every load)."""
    import labdriver as lab

    times = {name: [] for name in servers}
    for _ in range(loads):
        for name, server in servers.items():
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            page = context.new_page()
            page.set_default_timeout(lab.PAGE_TIMEOUT)
            try:
                start = time.perf_counter()
                page.goto(server.url + "/", timeout=lab.PAGE_TIMEOUT)
                plot = page.locator(".ccl-long-session-dashboard .js-plotly-plot").first
                plot.wait_for()
                page.wait_for_function(
                    "(gd) => (gd._fullData || []).length > 0", arg=plot.element_handle()
                )
                times[name].append(time.perf_counter() - start)
            finally:
                context.close()
    return {
        name: {"loads": loads, "median": statistics.median(t), "all": t}
        for name, t in times.items()
    }


def page_waits(browser, home: Path, against: Optional[str], runs: int) -> dict:
    """Part C: the upload and the projector page, on this checkout's code and, with
    `against`, on that revision's minilib side by side (servers started with its
    export on PYTHONPATH)."""
    import labdriver as lab

    codes = {"now": None}
    if against:
        codes[against] = against_code(against)
    log = generated_log()
    junk = unknown_shape_log(log.stat().st_size)
    results = {"against": against, "log": log.name}
    with contextlib.ExitStack() as stack:
        labs, voilas = {}, {}
        for name, code in codes.items():
            with python_path(code):
                labs[name] = stack.enter_context(
                    lab.start_jupyterlab(
                        home / f"lab-{name}",
                        lab.ARTIFACTS / "logs" / f"benchmark-upload-{name}.log",
                    )
                )
                voilas[name] = stack.enter_context(
                    lab.start_voila(
                        (code or ROOT) / PRESENT_NOTEBOOK,
                        home / f"voila-{name}",
                        lab.ARTIFACTS / "logs" / f"benchmark-voila-load-{name}.log",
                    )
                )
        results["upload"] = upload_timings(browser, labs, codes, log, junk, runs)
        results["present_load"] = present_load_seconds(browser, voilas, runs)
    explore = {name: [] for name in codes}
    for _ in range(runs):  # a fresh process each, taking turns
        for name, code in codes.items():
            explore[name].append(explore_seconds_of(code, log))
    for name, times in explore.items():
        results["upload"][name]["explore_file"] = statistics.median(times)
    return results


def browser_benchmarks(
    presses: int, against: Optional[str] = None, runs: int = 5
) -> dict:
    import labdriver as lab
    from playwright.sync_api import sync_playwright

    chromium = lab.chromium_executable()
    if chromium is None:
        return {
            "error": "Chromium not found (apt-get install -y chromium); browser part "
            "skipped"
        }
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    notebooks = {}
    for name, _, content in VARIANTS:
        # a copy, under build/bench: JupyterLab saves what it runs, never the chapter
        path = BENCH_DIR / f"{name}_slider.ipynb"
        if content is None:
            path.write_bytes((ROOT / LAB_NOTEBOOK).read_bytes())
        else:
            content = content() if callable(content) else content
            path.write_text(json.dumps(content, indent=1))
        notebooks[name] = str(path.relative_to(ROOT))
    results = {}
    with (
        tempfile.TemporaryDirectory() as home,
        lab.start_jupyterlab(
            Path(home), lab.ARTIFACTS / "logs" / "benchmark-jupyterlab.log"
        ) as server,
        sync_playwright() as playwright,
    ):
        browser = lab.launch_chromium(playwright, chromium, Path(home) / "chromium")
        try:
            for name, notebook in notebooks.items() if presses else ():
                context = browser.new_context(viewport=lab.VIEWPORT)
                context.add_init_script(lab.WEBSOCKET_TAP_JS)
                page = context.new_page()
                page.set_default_timeout(lab.UPDATE_TIMEOUT)
                try:
                    results[name] = keypress_latencies(page, server, notebook, presses)
                finally:
                    context.close()
            if presses:  # --presses 0: only the waits of part C
                results["voila"] = voila_latencies(browser, LAB_NOTEBOOK, presses)
            server.delete_sessions_and_kernels()
            results["waits"] = page_waits(browser, Path(home), against, runs)
        finally:
            browser.close()
    return results


# ------------------------------------------------------------------ report


def versions() -> dict:
    found = {"python": platform.python_version()}
    for package in ("jupyterlab", "ipywidgets", "plotly", "anywidget", "playwright"):
        try:
            from importlib.metadata import version

            found[package] = version(package)
        except Exception:
            found[package] = "?"
    try:
        found["chromium"] = (
            subprocess.run(
                ["/usr/bin/chromium", "--version"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
    except Exception:
        found["chromium"] = "?"
    return found


def machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = "load average %.1f, %.1f, %.1f" % os.getloadavg()
    except OSError:
        load = ""
    return f"{os.cpu_count()} cores ({model or platform.machine()}), {load}"


def ms(value) -> str:
    return f"{value:.2f} ms" if value < 10 else f"{value:.0f} ms"


def report(python: dict, browser: dict) -> str:
    lines = []
    lines.append("A. One slider change in Python (median of many changes)")
    for key, label in (
        ("run_session", "run_session (the whole 13-call session)"),
        ("dashboard_callback", "dashboard callback (render)"),
        ("part_figure_update", "  of which: figure update"),
        ("part_tables_html", "  of which: both tables to HTML"),
    ):
        if key in python:
            s = python[key]
            lines.append(
                f"  {label:<42} median {ms(s['median']):>9}  p90 {ms(s['p90']):>9}  "
                f"(n={s['n']})"
            )
    if "dashboard_error" in python:
        lines.append("  " + python["dashboard_error"])
    if "run_session" in python:
        lines.append(
            f"  target <= {TARGET_PYTHON_MS:g} ms: run_session at "
            f"{python['run_session']['median'] / TARGET_PYTHON_MS:.0%} of it"
            + (
                ", dashboard callback at "
                f"{python['dashboard_callback']['median'] / TARGET_PYTHON_MS:.0%}"
                if "dashboard_callback" in python
                else ""
            )
        )
    if browser:
        lines.append(
            "B. Keypress on the threshold slider -> chart shows the new data (browser)"
        )
        if "error" in browser:
            lines.append("  " + browser["error"])
        for name, label in REPORT_ROWS:
            if browser.get(name, {}).get("error"):
                lines.append(f"  {label:<28} {browser[name]['error']}")
            if browser.get(name, {}).get("redraw"):
                r, p = browser[name]["redraw"], browser[name]["paint"]
                lines.append(
                    f"  {label:<28} median {ms(r['median']):>7}  p90 {ms(r['p90']):>7}  "
                    f"(next frame: median {ms(p['median'])}, p90 {ms(p['p90'])}; "
                    f"{browser[name]['redrawn']}/{browser[name]['keypresses']} "
                    "keypresses)"
                )
                split = browser[name].get("split")
                main = browser[name].get("main_thread") or {}
                if main:
                    lines.append(
                        f"    main thread per keypress (incl. the 400 ms settle): script "
                        f"{ms(main.get('ScriptDuration', 0))}, layout "
                        f"{ms(main.get('LayoutDuration', 0))}, "
                        f"style {ms(main.get('RecalcStyleDuration', 0))}; DOM nodes "
                        f"{main.get('Nodes'):.0f}"
                    )
                if split:
                    lines.append(
                        "    split (medians): keydown -> message out "
                        f"{ms(split['frontend'])}, "
                        f"-> last kernel message in {ms(split['roundtrip'])}, -> "
                        f"redrawn {ms(split['render'])}"
                    )
        if browser.get("lab", {}).get("redraw") and browser.get("trivial", {}).get(
            "redraw"
        ):
            lab_median, floor = (
                browser["lab"]["redraw"]["median"],
                browser["trivial"]["redraw"]["median"],
            )
            lines.append(
                f"  lab / trivial: {lab_median / floor:.2f}x; target <= "
                f"{TARGET_BROWSER_MS:g} ms: "
                f"lab median at {lab_median / TARGET_BROWSER_MS:.0%} of it"
            )
    lines += page_lines(browser)
    return "\n".join(lines)


def verdict(seconds: float, target: float) -> str:
    return "PASS" if seconds <= target else "FAIL"


def page_lines(browser: dict) -> list:
    """C. What a student waits for: chapter 07's upload, the projector page's load;
    beside each, the same measured on the revision compared with, in the same run."""
    waits = browser.get("waits")
    if not waits:
        return []
    upload, present, against = waits["upload"], waits["present_load"], waits["against"]
    now = upload["now"]
    uploads = len(now["uploads"])
    lines = [
        "C. Waits a student sees (medians; "
        + (f"this checkout beside {against}, " if against else "")
        + "runs taking turns)",
        f"  chapter 07, a {now['megabytes']:.1f} MB generated log uploaded -> report, "
        f"median of {uploads}: {now['median']:.2f} s (target <= {TARGET_UPLOAD_S:g} s: "
        f"{verdict(now['median'], TARGET_UPLOAD_S)}); each: "
        + ", ".join(f"{t:.2f}" for t in now["uploads"])
        + f"; explore_file alone {now['explore_file']:.2f} s; a JSON file of no known "
        f"shape -> its one line: {now['refusal']:.2f} s",
    ]
    if against:
        then = upload[against]
        lines.append(
            f"    {against}: {then['median']:.2f} s (each: "
            + ", ".join(f"{t:.2f}" for t in then["uploads"])
            + f"); explore_file alone {then['explore_file']:.2f} s; refusal "
            f"{then['refusal']:.2f} s; this checkout's upload takes "
            f"{now['median'] / then['median']:.2f}x its time"
        )
    lines.append(
        f"  make present's page at 1280x720, address -> chart drawn, median of "
        f"{present['now']['loads']} loads: {present['now']['median']:.2f} s (each: "
        + ", ".join(f"{t:.2f}" for t in present["now"]["all"])
        + ")"
    )
    if against:
        then = present[against]
        lines.append(
            f"    {against}: {then['median']:.2f} s (each: "
            + ", ".join(f"{t:.2f}" for t in then["all"])
            + f"); this checkout's page takes "
            f"{present['now']['median'] / then['median']:.2f}x its time"
        )
    return lines


BEGIN, END = (
    "<!-- measured by bench/benchmark.py: begin -->",
    "<!-- measured by bench/benchmark.py: end -->",
)


def markdown(python: dict, browser: dict, info: dict, when: str) -> str:
    """The measured part of docs/benchmark.md (between the BEGIN and END markers)."""

    def row(label, s):
        cells = [label, ms(s["median"]), ms(s["p90"]), ms(s["min"]), str(s["n"])]
        return "| " + " | ".join(cells) + " |"

    out = [
        BEGIN,
        "",
        f"Measured on {when}: {info['machine']}. "
        "Versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()) + ".",
        "",
        "### A. One slider change in Python (target: at most 5 ms)",
        "",
        "| what | median | p90 | min | changes |",
        "|---|---|---|---|---|",
    ]
    labels = {
        "run_session": "`run_session`: the whole 13-call session replayed",
        "dashboard_callback": "the dashboard's full callback (`render`)",
        "part_figure_update": "of which: `update_lab_figure`",
        "part_tables_html": "of which: both tables to HTML",
    }
    for key, label in labels.items():
        if key in python:
            out.append(row(label, python[key]))
    if browser:
        out += [
            "",
            "### B. Keypress to redrawn chart in the browser (target: at most 60 ms)",
            "",
            "| page | keypresses | redraw median | redraw p90 | next frame median | "
            "next frame p90 | "
            "split: kernel round trip / render |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, label in REPORT_ROWS:
            result = browser.get(name, {})
            if result.get("error"):
                out.append(f"| {label} | {result['error']} | | | | | |")
            if result.get("redraw"):
                r, p, split = result["redraw"], result["paint"], result.get("split")
                split_text = (
                    f"{ms(split['roundtrip'])} / {ms(split['render'])}" if split else ""
                )
                out.append(
                    f"| {label} | {result['redrawn']}/{result['keypresses']} | "
                    f"{ms(r['median'])} | "
                    f"{ms(r['p90'])} | {ms(p['median'])} | {ms(p['p90'])} | "
                    f"{split_text} |"
                )
        floor = (browser.get("trivial", {}).get("redraw") or {}).get("median")
        ratios = [
            f"{label} {browser[name]['redraw']['median'] / floor:.2f}×"
            for name, label in REPORT_ROWS
            if floor and name != "trivial" and (browser.get(name) or {}).get("redraw")
        ]
        if ratios:
            ratio_line = "Redraw median ÷ the floor's, same run: " + "; ".join(ratios)
            out += ["", ratio_line + "."]
        mains = [
            (label, browser[name]["main_thread"])
            for name, label in REPORT_ROWS
            if browser.get(name, {}).get("main_thread")
        ]
        if mains:
            out += [
                "",
                "Chromium's main thread per keypress (CDP Performance counters, the 400 "
                "ms settle included):",
                "",
                "| page | script | layout | style recalc | DOM nodes |",
                "|---|---|---|---|---|",
            ]
            for label, main in mains:
                out.append(
                    f"| {label} | {ms(main.get('ScriptDuration', 0))} | "
                    f"{ms(main.get('LayoutDuration', 0))} | "
                    f"{ms(main.get('RecalcStyleDuration', 0))} | "
                    f"{main.get('Nodes') or 0:,.0f} |"
                )
    out += waits_markdown(browser.get("waits"))
    out += ["", END]
    return "\n".join(out) + "\n"


def waits_markdown(waits: Optional[dict]) -> list:
    """Part C as a table: this checkout's medians, and beside them the revision
    compared with, measured in the same run, runs taking turns."""
    if not waits:
        return []
    against = waits["against"]
    upload, present = waits["upload"], waits["present_load"]
    now = upload["now"]
    head = "| wait | this checkout | " + (f"{against} | ratio | " if against else "")
    rows = [
        (
            f"chapter 07: a {now['megabytes']:.1f} MB generated log uploaded → its "
            f"report on screen (median of {len(now['uploads'])})",
            upload,
            "median",
            f"≤ {TARGET_UPLOAD_S:g} s: {verdict(now['median'], TARGET_UPLOAD_S)}",
        ),
        ("of which the kernel: `explore_file` alone", upload, "explore_file", ""),
        ("a JSON file of no known shape → its one line", upload, "refusal", ""),
        (
            f"`make present`'s page → chart drawn (median of "
            f"{present['now']['loads']} loads)",
            present,
            "median",
            "",
        ),
    ]
    out = [
        "",
        "### C. Waits a student sees (target: an upload within 2 s)",
        "",
        head + "target |",
        "|---" * (head.count("|") - 1) + "|---|",
    ]
    for label, results, key, target in rows:
        cells = [label, f"{results['now'][key]:.2f} s"]
        if against:
            then = results[against][key]
            cells += [f"{then:.2f} s", f"{results['now'][key] / then:.2f}×"]
        out.append("| " + " | ".join(cells + [target]) + " |")
    each = ", ".join(f"{t:.2f}" for t in now["uploads"])
    out += ["", f"Each upload, this checkout: {each} s."]
    if against:
        each = ", ".join(f"{t:.2f}" for t in upload[against]["uploads"])
        out.append(f"Each upload, {against}: {each} s.")
    return out


def write_markdown(path: Path, measured: str) -> None:
    """Replace the measured block of `path`, keeping the hand-written text around it."""
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            tail = rest.split(END, 1)[1]
            path.write_text(head + measured.rstrip("\n") + tail, encoding="utf-8")
            return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# Benchmark: how fast one slider change is\n\n" + measured, encoding="utf-8"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--python-only", action="store_true", help="skip the browser part"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=200,
        help="slider changes timed in Python (default 200)",
    )
    parser.add_argument(
        "--presses",
        type=int,
        default=20,
        help="keypresses timed in the browser (default 20; 0: only part C)",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=5,
        help="uploads and page loads timed in part C, each (default 5)",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="part C also on this git revision's minilib, side by side (e.g. HEAD~3)",
    )
    parser.add_argument("--explore-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--markdown", type=Path, help="also write the results as a markdown page here"
    )
    parser.add_argument(
        "--json", type=Path, help="also write the raw results as JSON here"
    )
    args = parser.parse_args(argv)
    if args.explore_only:  # a child of explore_seconds_of: the minilib it imported
        print(explore_seconds(args.explore_only, repeats=2))
        return 0

    info = {
        "machine": machine(),
        "versions": versions(),
    }  # the load average before the runs
    python = python_benchmarks(args.repeats)
    browser = (
        {}
        if args.python_only
        else browser_benchmarks(args.presses, args.against, args.runs)
    )
    print(report(python, browser))
    when = time.strftime("%Y-%m-%d", time.gmtime())
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"python": python, "browser": browser, **info}, indent=1) + "\n"
        )
    if args.markdown:
        write_markdown(args.markdown, markdown(python, browser, info, when))
        print(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
