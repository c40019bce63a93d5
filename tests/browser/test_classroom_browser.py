"""`make classroom` in a real browser: a JupyterHub, three students at once, a teacher.

One hub for the module, started as a teacher starts it (`make classroom STUDENTS=...
PASSWORD=...`), in a folder of its own:
- three students log in at once, each in a browser context of their own; each opens
  chapter 06 in their own server, runs it, moves the threshold slider by a different
  amount, and sees `run_session` at their own value, while the others' charts stay on
  theirs;
- a student's edit is saved in their copy only (not in the checkout, not in another's),
  and is still there after the hub's API stopped and started their server;
- the teacher's log-in opens the projector page (Voila) with its working chart;
- Ctrl-C (SIGINT to make's process group) stops the hub, and no process is left.

Waits are generous and end on the kernel going idle: the machine has 2 cores.
"""

import dataclasses
import re
import secrets
from urllib.parse import urlsplit

import hubdriver as hub
import labdriver as lab
import pytest

from minilib import Settings, load_session, run_session
from minilib.lab.dashboard import status_lines

pytestmark = pytest.mark.browser

LAB_NOTEBOOK = "notebooks/06_long_session_lab.ipynb"
DASHBOARD = ".ccl-long-session-dashboard"
STUDENTS = ["ana", "ben", "cai"]
PRESSES = {"ana": 2, "ben": 5, "cai": 8}  # ArrowLeft presses on each one's threshold
PASSWORD = "a-class-" + secrets.token_hex(4)
SPAWN_MS = hub.SPAWN_TIMEOUT * 1000


@pytest.fixture(scope="module")
def classroom(chromium, tmp_path_factory):
    room = hub.Classroom(
        tmp_path_factory.mktemp("classroom"),
        STUDENTS,
        PASSWORD,
        lab.ARTIFACTS / "logs" / "classroom-hub.log",
    )
    try:
        yield room
    finally:
        room.stop()


@pytest.fixture(scope="module")
def session():
    return load_session()


def new_page(browser):
    context = browser.new_context(viewport=lab.VIEWPORT, device_scale_factor=1)
    page = context.new_page()
    page.set_default_timeout(lab.PAGE_TIMEOUT)
    page.page_errors = []
    page.on("pageerror", lambda error: page.page_errors.append(str(error)))
    # [url, frames sent, frames received] of each kernel websocket opened
    page.kernel_sockets = []
    page.on("websocket", lambda socket: watch_kernel_socket(page, socket))
    return context, page


def watch_kernel_socket(page, socket) -> None:
    if "/api/kernels/" not in socket.url:
        return
    seen = [socket.url, 0, 0]
    page.kernel_sockets.append(seen)
    socket.on("framesent", lambda frame: seen.__setitem__(1, seen[1] + 1))
    socket.on("framereceived", lambda frame: seen.__setitem__(2, seen[2] + 1))


def assert_no_failed_handshake(page, name: str) -> None:
    """Every kernel websocket through the hub's proxy opened: one the proxy answers
    without the subprotocol the browser offered fails its handshake at once, so
    nothing is ever sent on it (JupyterLab then opens another without it). A socket
    that sent a request and closed before its reply (JupyterLab reconnecting on a
    loaded machine) did open."""
    assert page.kernel_sockets, f"{name}: no kernel websocket seen"
    failed = [url for url, sent, received in page.kernel_sockets if sent == received == 0]
    assert not failed, f"{name}: kernel websockets that never opened: {failed}"


def shown_settings(page) -> Settings:
    """The Settings the dashboard's sliders show (their labels are the field names)."""
    shown = {
        re.sub(r"\W+", "_", label.strip().lower()): value
        for label, value in lab.sliders_by_label(page, DASHBOARD).items()
    }
    fields = [f.name for f in dataclasses.fields(Settings) if f.type is int]
    return Settings(**{name: shown[name] for name in fields if name in shown})


def assert_shows_run(page, run) -> None:
    """The chart's compressed line and threshold, and the status box, show `run`."""
    plot = page.locator(f"{DASHBOARD} .js-plotly-plot").first
    expected = {
        "compressed": {
            "x": [r.round for r in run.rounds],
            "y": [r.tokens_after for r in run.rounds],
        },
        "threshold": {"y": [run.settings.threshold] * 2},
    }
    assert lab.wait_for_traces(page, plot, expected), (
        f"the chart does not show the run at {run.settings}: "
        f"{ {k: v for k, v in lab.traces_by_name(plot).items() if k in expected} }"
    )
    status = page.locator(f"{DASHBOARD} .ccl-status").text_content()
    for line in status_lines(run):
        assert line in status, f"status lacks {line!r}: {status!r}"


def start_run_all(page) -> None:
    page.click("#jp-menu-panel .lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")


def wait_ran(page) -> None:
    page.wait_for_function(lab.ALL_CELLS_RAN_JS, timeout=SPAWN_MS)
    page.wait_for_function(lab.KERNEL_IDLE_JS, timeout=SPAWN_MS)
    page.wait_for_selector(
        f"{DASHBOARD} .js-plotly-plot .scatterlayer .trace", timeout=lab.PAGE_TIMEOUT
    )


def test_three_students_each_move_their_own_chart(browser, classroom, session):
    runs_by_threshold = {}
    pages = {}
    contexts = []
    try:
        # All three log in before any waits: their servers start side by side.
        for name in STUDENTS:
            context, page = new_page(browser)
            contexts.append(context)
            pages[name] = page
            hub.log_in(page, classroom, name, PASSWORD)
        for name, page in pages.items():
            hub.wait_for_lab(page, name)
        # Each in their own server, their own folder.
        for name in STUDENTS:
            assert classroom.server(name).get("ready"), name
            assert (classroom.home(name) / LAB_NOTEBOOK).is_file(), name
        for name, page in pages.items():
            lab.open_notebook(page, hub.UserServer(classroom, name), LAB_NOTEBOOK)
            assert f"/user/{name}/" in page.url
        for page in pages.values():
            start_run_all(page)
        for name, page in pages.items():
            wait_ran(page)
            assert shown_settings(page) == Settings(), name
            assert_shows_run(page, run_session(session, Settings()))

        # One after another, each moves their threshold; the others' charts stay put.
        moved = {}
        for name, page in pages.items():
            threshold = lab.slider(page, "^threshold$", DASHBOARD)
            lab.press_slider(threshold, "ArrowLeft", PRESSES[name])
            page.wait_for_function(
                "([el, old]) => (el.textContent || el.value || '')"
                ".trim().replace(/,/g, '') !== old",
                arg=[
                    threshold.locator(".widget-readout").element_handle(),
                    str(Settings().threshold),
                ],
            )
            lab.wait_idle(page, timeout=lab.PAGE_TIMEOUT)
            moved[name] = shown_settings(page)
            run = run_session(session, moved[name])
            runs_by_threshold[moved[name].threshold] = run
            assert_shows_run(page, run)
            for other, other_page in pages.items():
                if other == name:
                    continue
                settings = moved.get(other, Settings())
                assert shown_settings(other_page) == settings, (
                    f"{name}'s slider moved {other}'s"
                )
                assert_shows_run(other_page, run_session(session, settings))
        thresholds = [moved[name].threshold for name in STUDENTS]
        assert len(set(thresholds)) == 3, thresholds
        tokens = {
            tuple(r.tokens_after for r in run.rounds)
            for run in runs_by_threshold.values()
        }
        assert len(tokens) == 3, "pick presses that give three different runs"
        for name, page in pages.items():
            lab.shoot(page, f"classroom-{name}-threshold-{moved[name].threshold}")
            assert not page.page_errors, (name, page.page_errors)
            assert_no_failed_handshake(page, name)
    finally:
        for context in contexts:
            context.close()


MARK = "edited by ana " + secrets.token_hex(4)


def test_a_students_copy_survives_a_server_restart(browser, classroom):
    name = "ana"
    context, page = new_page(browser)
    try:
        hub.log_in(page, classroom, name, PASSWORD)
        hub.wait_for_lab(page, name)
        server = hub.UserServer(classroom, name)
        lab.open_notebook(page, server, LAB_NOTEBOOK)
        # A new first cell, typed and saved as a student would.
        page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-InputPrompt").click()
        page.keyboard.press("Escape")
        page.keyboard.press("a")
        page.keyboard.press("Enter")
        page.keyboard.type(f"# {MARK}")
        page.keyboard.press("Escape")
        page.keyboard.press("Control+s")
        copy = classroom.home(name) / LAB_NOTEBOOK
        lab_notebook = hub.REPO / LAB_NOTEBOOK
        page.wait_for_function(
            "() => !document.querySelector('.jp-mod-dirty')", timeout=lab.PAGE_TIMEOUT
        )
        assert MARK in copy.read_text(encoding="utf-8")
        assert MARK not in lab_notebook.read_text(encoding="utf-8"), (
            "the checkout changed"
        )
        for other in STUDENTS[1:]:
            theirs = classroom.home(other) / LAB_NOTEBOOK
            assert MARK not in theirs.read_text(encoding="utf-8"), (
                f"{other}'s copy changed"
            )

        before = classroom.server_processes(name)
        assert before, "no process found in ana's folder"
        classroom.stop_server(name)
        import psutil

        _, alive = psutil.wait_procs(before, timeout=30)
        assert not alive, hub.describe(alive)
        classroom.start_server(name)
        classroom.wait_ready(name)

        assert MARK in copy.read_text(encoding="utf-8")
        saved = classroom.request(
            "GET", f"/user/{name}/api/contents/{LAB_NOTEBOOK}?content=1"
        )
        first = "".join(saved["content"]["cells"][0]["source"])
        assert MARK in first, first
        lab.open_notebook(page, server, LAB_NOTEBOOK)
        shown = page.locator(".jp-Notebook .jp-Cell").first.text_content()
        assert MARK in shown, shown
        lab.shoot(page, "classroom-ana-after-restart")
    finally:
        context.close()


def test_the_teacher_opens_the_projector_page(browser, classroom, session):
    context, page = new_page(browser)
    outside = []  # what the page through the hub asks of the internet
    page.on(
        "request",
        lambda request: (
            outside.append(request.url)
            if urlsplit(request.url).hostname not in ("127.0.0.1", "localhost")
            and not request.url.startswith(("data:", "blob:"))
            else None
        ),
    )
    try:
        hub.log_in(page, classroom, classroom.teacher, classroom.teacher_password)
        page.wait_for_url(
            f"**/user/{classroom.teacher}/voila/render/**", timeout=SPAWN_MS
        )
        page.wait_for_selector(
            f"{DASHBOARD} .js-plotly-plot .scatterlayer .trace", timeout=SPAWN_MS
        )
        code = page.locator(".jp-CodeCell .jp-InputArea:visible, .cm-editor:visible")
        assert code.count() == 0, "the projector page shows code"
        assert_shows_run(page, run_session(session, shown_settings(page)))
        assert classroom.api("GET", f"/users/{classroom.teacher}")["admin"]
        lab.shoot(page, "classroom-teacher-present")
        # an offline class: no font, style or MathJax from a CDN
        assert outside == [], f"the teacher's page asked outside localhost for {outside}"
    finally:
        context.close()


def test_ctrl_c_stops_the_hub_and_leaves_no_process(classroom):
    running = classroom.processes()
    assert len(running) >= 4, hub.describe(running)  # make, hub, proxy, a server at least
    alive = classroom.stop()
    assert classroom.process.returncode is not None, "make classroom still running"
    assert not alive, f"left behind after Ctrl-C: {hub.describe(alive)}"
    assert "Cleaning up single-user servers" in classroom.log_path.read_text(
        errors="replace"
    )
