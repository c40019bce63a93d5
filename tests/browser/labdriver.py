"""Driving JupyterLab and Voilà in headless Chromium: servers, selectors, waits,
measurements.

Shared by the browser tests (tests/browser, fixtures in conftest.py) and
bench/benchmark.py;
it imports neither pytest nor Playwright at module level.

- Servers run on free localhost ports with the token disabled; everything Jupyter, IPython
  and XDG would write under HOME goes into a temporary folder; they are stopped by PID
  after their sessions and kernels are deleted.
- Chromium is Debian's (/usr/bin/chromium), launched headless with CHROMIUM_FLAGS
  (Playwright's own browser download does not work on these machines).
- Widgets are found by what a person sees: an ipywidgets slider by its description label
  (`.widget-slider` with a `.widget-label`), a button by its text, the chart as
  `.js-plotly-plot` (its `_fullData` is what plotly.js drew).
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# 2 cores shared with other jobs: generous, but bounded, waits (milliseconds for
# Playwright).
SERVER_START_TIMEOUT = 60
PAGE_TIMEOUT = 90_000
UPDATE_TIMEOUT = 30_000
VIEWPORT = {"width": 1600, "height": 1000}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def chromium_executable():
    """The Chromium to drive: $CHROMIUM if set (and only that), else /usr/bin/chromium,
    else `chromium` on PATH."""
    if os.environ.get("CHROMIUM"):
        candidates = [os.environ["CHROMIUM"]]
    else:
        candidates = ["/usr/bin/chromium", shutil.which("chromium")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def launch_chromium(playwright, executable: str, home=None):
    """Headless Chromium; with `home`, its config and cache (crash reports...) go there
    instead of under HOME."""
    env = None
    if home is not None:
        env = dict(
            os.environ,
            XDG_CONFIG_HOME=str(Path(home) / "config"),
            XDG_CACHE_HOME=str(Path(home) / "cache"),
        )
    return playwright.chromium.launch(
        executable_path=executable, headless=True, args=CHROMIUM_FLAGS, env=env
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def isolated_env(root: Path) -> dict:
    """os.environ with every Jupyter/IPython/XDG directory moved under `root`."""
    env = dict(os.environ)
    dirs = {
        "JUPYTER_CONFIG_DIR": "jupyter/config",
        "JUPYTER_DATA_DIR": "jupyter/data",
        "JUPYTER_RUNTIME_DIR": "jupyter/runtime",
        "IPYTHONDIR": "ipython",
        "JUPYTERLAB_SETTINGS_DIR": "lab/settings",
        "JUPYTERLAB_WORKSPACES_DIR": "lab/workspaces",
        "XDG_CACHE_HOME": "xdg/cache",
        "XDG_CONFIG_HOME": "xdg/config",
        "XDG_DATA_HOME": "xdg/data",
        "MPLCONFIGDIR": "mpl",
    }
    for name, sub in dirs.items():
        path = Path(root) / sub
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    env.pop("JUPYTER_PATH", None)
    # No news or update toasts over the notebook in a fresh JupyterLab.
    notification = (
        Path(root)
        / "lab/settings/@jupyterlab/apputils-extension/notification.jupyterlab-settings"
    )
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # The servers serve the repository's own notebooks: a walk through them must not
    # save them (JupyterLab autosaves an open notebook every two minutes).
    docmanager = (
        Path(root)
        / "lab/settings/@jupyterlab/docmanager-extension/plugin.jupyterlab-settings"
    )
    docmanager.parent.mkdir(parents=True, exist_ok=True)
    docmanager.write_text(json.dumps({"autosave": False}))
    return env


def http_get(url: str, timeout: float = 5.0):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status, response.read()


def http_json(url: str, method: str = "GET"):
    request = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
        return json.loads(body) if body else None


class Server:
    """A Jupyter or Voilà server process on localhost, with its log file."""

    def __init__(
        self,
        name: str,
        argv,
        env: dict,
        port: int,
        ready_path,
        log_path: Path,
        cwd: Path = REPO,
    ):
        self.name, self.port, self.log_path = name, port, Path(log_path)
        self.url = f"http://127.0.0.1:{port}"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "wb")
        started = time.monotonic()
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        deadline = started + SERVER_START_TIMEOUT
        while not self._ready(ready_path):
            if self.process.poll() is not None:
                self.close()
                raise RuntimeError(
                    f"{name} exited with {self.process.returncode} before answering; "
                    f"see {self.log_path}:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError(
                    f"{name} did not answer within {SERVER_START_TIMEOUT} s; "
                    f"see {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(0.1)
        self.start_seconds = time.monotonic() - started

    def _ready(self, ready_path) -> bool:
        """HTTP 200 on `ready_path`, or (None) the port accepting connections."""
        try:
            if ready_path is None:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2):
                    return True
            status, _ = http_get(self.url + ready_path, timeout=2)
            return status == 200
        except (urllib.error.URLError, ConnectionError, OSError):
            return False

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(
                self.log_path.read_text(errors="replace").splitlines()[-lines:]
            )
        except OSError:
            return ""

    def delete_sessions_and_kernels(self) -> None:
        """Kernels outlive the pages that started them: delete them through the REST
        API."""
        for kind in ("sessions", "kernels"):
            try:
                items = http_json(f"{self.url}/api/{kind}")
            except (urllib.error.URLError, OSError, ValueError):
                continue
            for item in items or []:
                try:
                    http_json(f"{self.url}/api/{kind}/{item['id']}", method="DELETE")
                except (urllib.error.URLError, OSError, ValueError):
                    pass

    def kernel_count(self) -> int:
        try:
            return len(http_json(f"{self.url}/api/kernels") or [])
        except (urllib.error.URLError, OSError, ValueError):
            return -1

    def close(self) -> None:
        """Stop the server by its PID: SIGTERM, then SIGKILL if it has not exited within
        15 s."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if not self._log.closed:
            self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.delete_sessions_and_kernels()
        self.close()


def start_jupyterlab(home: Path, log_path: Path) -> Server:
    """JupyterLab serving the repository, as `make lab` would, but isolated and without a
    token."""
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.token=",
        "--ServerApp.password=",
        "--allow-root",
        f"--ServerApp.root_dir={REPO}",
        # The REST calls that delete kernels come from this process, which holds no _xsrf
        # cookie.
        "--ServerApp.disable_check_xsrf=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    return Server("JupyterLab", argv, isolated_env(home), port, "/api/status", log_path)


def start_voila(notebook: Path, home: Path, log_path: Path) -> Server:
    """`make present`'s command (voila NB --template=offline --no-browser, the
    project's template found on JUPYTER_PATH) on a free port; one kernel per page
    load."""
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "voila",
        str(notebook),
        "--template=offline",
        "--no-browser",
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        "--Voila.port_retries=0",
    ]
    env = dict(isolated_env(home), JUPYTER_PATH=str(REPO / "jupyter"))
    # GET / would already run the notebook in a kernel: wait for the port instead.
    return Server("Voila", argv, env, port, None, log_path)


def shoot(page, name: str, **kwargs) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), **kwargs)
    return path


def scroll_to_top(locator) -> None:
    """Scroll the element to the top of its scrolling container and wait one animation
    frame."""
    locator.evaluate(
        "el => new Promise(done => { el.scrollIntoView({block: 'start'});"
        " requestAnimationFrame(() => requestAnimationFrame(done)); })"
    )


def shoot_widget(
    page,
    locator,
    name: str,
    container: str = ".jp-NotebookPanel:visible .jp-WindowedPanel-outer",
) -> Path:
    """A screenshot of a widget as a person sees it: scrolled to the top, clipped to the
    notebook's
    scrolling area (or the whole viewport when there is no such container, as in Voilà)."""
    scroll_to_top(locator)
    box = locator.bounding_box()
    frame = (
        page.locator(container).first.bounding_box()
        if page.locator(container).count()
        else None
    )
    view = page.viewport_size
    frame = frame or {"x": 0, "y": 0, "width": view["width"], "height": view["height"]}
    left, top = max(box["x"], frame["x"]), max(box["y"], frame["y"])
    right = min(box["x"] + box["width"], frame["x"] + frame["width"])
    bottom = min(box["y"] + box["height"], frame["y"] + frame["height"])
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(
        path=str(path),
        clip={"x": left, "y": top, "width": right - left, "height": bottom - top},
    )
    return path


def collapse_left_sidebar(page) -> None:
    """Give the notebook the whole width: click the open side-bar tab (the file browser)
    to close it."""
    current = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
    if current.count():
        current.first.click()
        page.wait_for_selector("#jp-left-stack", state="hidden")


# ------------------------------------------------------------------ JupyterLab pages

# The status bar reads "Python 3 (ipykernel) | Idle" (followed by other items without a
# space).
KERNEL_IDLE_JS = "() => /\\| Idle/.test(document.querySelector('#jp-main-statusbar')?.textContent || '')"
# Every code cell has run: no "[*]" prompt and no empty "[ ]" prompt left.
ALL_CELLS_RAN_JS = """() => {
  // the input area's own prompt: a cell whose code is hidden shows a placeholder's
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea .jp-InputPrompt')].map(p => p.textContent.trim());
  return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:?$/.test(p));
}"""


def open_notebook(page, server: Server, path: str) -> None:
    """Open a notebook in its own fresh workspace and wait until its kernel is idle."""
    workspace = re.sub(r"\W+", "-", path)
    page.goto(
        f"{server.url}/lab/workspaces/{workspace}/tree/{path}?reset", timeout=PAGE_TIMEOUT
    )
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=PAGE_TIMEOUT)
    page.wait_for_function(KERNEL_IDLE_JS, timeout=PAGE_TIMEOUT)


def run_all_cells(page) -> None:
    """Run ▸ Run All Cells, then wait until every code cell has an execution count and the
    kernel is idle."""
    page.click("#jp-menu-panel .lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
    page.wait_for_function(ALL_CELLS_RAN_JS, timeout=PAGE_TIMEOUT)
    page.wait_for_function(KERNEL_IDLE_JS, timeout=PAGE_TIMEOUT)


def wait_idle(page, timeout: int = UPDATE_TIMEOUT) -> None:
    page.wait_for_function(KERNEL_IDLE_JS, timeout=timeout)


# ------------------------------------------------------------------ widgets (JupyterLab
# and Voilà)


def slider(page, label_pattern: str, scope: str = ""):
    """The ipywidgets slider whose description matches `label_pattern` (a JS regex,
    case-insensitive)."""
    return (
        page.locator(f"{scope} .widget-slider")
        .filter(
            has=page.locator(".widget-label").filter(
                has_text=re.compile(label_pattern, re.I)
            )
        )
        .first
    )


def slider_readout(slider_locator) -> str:
    # text_content, not inner_text: JupyterLab skips laying out cells scrolled out of
    # view.
    return (slider_locator.locator(".widget-readout").text_content() or "").strip()


def parse_number(text: str):
    cleaned = re.sub(r"[,\s\u00a0\u2009\u202f]", "", text)
    try:
        return int(cleaned)
    except ValueError:
        return float(cleaned)


def slider_value(slider_locator):
    return parse_number(slider_readout(slider_locator))


CHOOSER_TRIES, CHOOSER_WAIT = 3, 10_000  # clicks, and milliseconds each waits


def choose_file(page, upload_button, path) -> None:
    """Click an ipywidgets FileUpload and give its chooser `path` (its file input is not
    in the page). A click that lands while the widget is drawn again opens nothing,
    as it would for a person, who clicks again: so does this, up to `CHOOSER_TRIES`
    times."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(CHOOSER_TRIES):
        try:
            with page.expect_file_chooser(timeout=CHOOSER_WAIT) as chooser:
                upload_button.click()
            break
        except PlaywrightTimeout:
            if attempt == CHOOSER_TRIES - 1:
                raise
    chooser.value.set_files(str(path))


def press_slider(slider_locator, key: str, times: int = 1) -> None:
    """Focus the slider's noUi handle and press `key` (ArrowRight, ArrowLeft,
    PageUp...)."""
    handle = slider_locator.locator(".noUi-handle")
    handle.focus()
    for _ in range(times):
        handle.press(key)


def sliders_by_label(page, scope: str = "") -> dict:
    """{description label: readout value} of every slider on the page."""
    found = page.evaluate(
        """(scope) => [...document.querySelectorAll(scope + ' .widget-slider')].map(s => [
             (s.querySelector('.widget-label')?.textContent || '').trim(),
             (s.querySelector('.widget-readout')?.textContent || s.querySelector('.widget-readout')?.value || '').trim()])""",
        scope,
    )
    return {label: parse_number(value) for label, value in found if label and value}


PLOT_DATA_JS = """(el) => {
  const gd = el.closest('.js-plotly-plot') || el;
  const data = gd._fullData || gd.data || [];
  const arr = v => (v == null ? null : Array.from(v));
  return data.map(t => ({name: t.name ?? null, x: arr(t.x), y: arr(t.y), xaxis: t.xaxis, yaxis: t.yaxis,
                         visible: t.visible, type: t.type}));
}"""


def plot_traces(page, index: int = 0, scope: str = ""):
    """What plotly.js drew: name, x, y and axes of every trace of the `index`-th chart."""
    return page.locator(f"{scope} .js-plotly-plot").nth(index).evaluate(PLOT_DATA_JS)


def plot_layout_text(page, index: int = 0, scope: str = "") -> str:
    """Every SVG text of a chart (titles, tick labels, annotations, legend): text_content,
    not inner_text."""
    return chart_text(page.locator(f"{scope} .js-plotly-plot").nth(index))


def chart_text(plot_locator) -> str:
    """Every SVG text of the chart `plot_locator` finds, one a line."""
    return plot_locator.evaluate(
        "(gd) => [...gd.querySelectorAll('text')].map(t => t.textContent).join('\\n')"
    )


def plot_axis_range(plot_locator, axis: str) -> list:
    """The range plotly.js drew an axis with ("yaxis", "yaxis3"...), from its full
    layout."""
    return plot_locator.evaluate(
        "(gd, axis) => Array.from((gd.closest('.js-plotly-plot') || "
        "gd)._fullLayout[axis].range)",
        axis,
    )


def html_tables(page, scope: str = ""):
    """Every HTML table on the page as {headers: [...], rows: [[cell text...]...]} (text
    as shown)."""
    return page.evaluate(
        """(scope) => [...document.querySelectorAll(scope + ' table')].map(t => {
             const headRows = [...t.querySelectorAll('thead tr')];
             const headers = headRows.length ? [...headRows[headRows.length - 1].children].map(c => c.textContent.trim()) :
               [...(t.querySelector('tr')?.children || [])].filter(c => c.tagName === 'TH').map(c => c.textContent.trim());
             const bodyRows = [...t.querySelectorAll('tr')].filter(r => [...r.children].some(c => c.tagName === 'TD'));
             return {headers, rows: bodyRows.map(r => [...r.children].map(c => c.textContent.trim())),
                     visible: t.offsetParent !== null};
           })""",
        scope,
    )


# ------------------------------------------------------------------ keypress -> redraw
# latency

# Installed once per page. A capture-phase keydown listener on the document notes when a
# key goes down; a MutationObserver on the chart notes, for every batch of mutations after
# it, the time and a signature of what plotly.js holds (every trace's x and y), plus the
# next animation frame. After things settle, the redraw time is the last batch whose
# signature equals the settled one: "the chart shows the final numbers and then stops
# changing", however many partial redraws came before or after the data was final.
LATENCY_PROBE_JS = """(gd) => {
  gd = gd.closest('.js-plotly-plot') || gd;
  const sig = () => JSON.stringify((gd._fullData || []).map(t => [t.x ? Array.from(t.x) : null, t.y ? Array.from(t.y) : null]));
  const probe = window.__latencyProbe = {down: null, batches: [], sig};
  document.addEventListener('keydown', () => { probe.down = performance.now(); probe.batches = []; }, true);
  new MutationObserver(() => {
    if (probe.down === null) return;
    const batch = {t: performance.now(), sig: sig(), paint: null};
    probe.batches.push(batch);
    requestAnimationFrame(() => { batch.paint = performance.now(); });
  }).observe(gd, {subtree: true, childList: true, attributes: true, characterData: true});
  return true;
}"""

LATENCY_READ_JS = """() => {
  const probe = window.__latencyProbe;
  const final = probe.sig();
  const hit = probe.batches.filter(b => b.sig === final).pop();
  return {changed: probe.batches.length > 0, batches: probe.batches.length,
          redraw: hit ? hit.t - probe.down : null, paint: hit && hit.paint ? hit.paint - probe.down : null,
          last: probe.batches.length ? probe.batches[probe.batches.length - 1].t - probe.down : null};
}"""


# Added to a browser context before any page script runs: notes the time of every kernel
# websocket frame sent and received, so a keypress's time can be split into frontend,
# round trip and redraw.
WEBSOCKET_TAP_JS = """(() => {
  const log = window.__wsLog = [];
  const Native = window.WebSocket;
  class Tapped extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => log.push({t: performance.now(), dir: 'in'}));
    }
    send(data) { log.push({t: performance.now(), dir: 'out'}); return super.send(data); }
  }
  window.WebSocket = Tapped;
})();"""

# Per keypress: keydown -> first frame out (frontend), first frame out -> last frame in
# before the redraw (kernel round trip, the callback included), that frame -> redraw
# (rendering).
WEBSOCKET_SPLIT_JS = """() => {
  const probe = window.__latencyProbe, log = window.__wsLog || [];
  const final = probe.sig();
  const hit = probe.batches.filter(b => b.sig === final).pop();
  const out = log.find(m => m.dir === 'out' && m.t >= probe.down);
  if (!hit || !out) return null;
  const before = log.filter(m => m.dir === 'in' && m.t >= out.t && m.t <= hit.t);
  if (!before.length) return null;
  const last = before[before.length - 1];
  return {frontend: out.t - probe.down, roundtrip: last.t - out.t, render: hit.t - last.t, frames_in: before.length};
}"""


def install_latency_probe(page, plot_index: int = 0, scope: str = "") -> None:
    page.locator(f"{scope} .js-plotly-plot").nth(plot_index).evaluate(LATENCY_PROBE_JS)


def measure_keypress(
    page, slider_locator, key: str, settle_ms: int = 400, idle=None
) -> dict:
    """Press `key` once on the slider; wait until the kernel is idle and the chart is
    quiet; read the probe.

    `idle` is a function that waits for the kernel to be idle (JupyterLab: wait_idle); for
    Voilà
    pass None, and the quiet period alone ends the wait.
    """
    handle = slider_locator.locator(".noUi-handle")
    handle.focus()
    before = slider_readout(slider_locator)
    handle.press(key)
    page.wait_for_function(
        "([el, before]) => (el.textContent || el.value || '').trim() !== before",
        arg=[slider_locator.locator(".widget-readout").element_handle(), before],
        timeout=UPDATE_TIMEOUT,
    )
    if idle is not None:
        idle(page)
    # Quiet: no new mutation batch for settle_ms.
    page.wait_for_function(
        """(quiet) => { const p = window.__latencyProbe; const n = p.batches.length;
             const last = n ? p.batches[n - 1].t : p.down;
             return performance.now() - last > quiet; }""",
        arg=settle_ms,
        timeout=UPDATE_TIMEOUT,
        polling=50,
    )
    result = page.evaluate(LATENCY_READ_JS)
    result["split"] = page.evaluate(WEBSOCKET_SPLIT_JS)
    result["value"] = slider_value(slider_locator)
    return result


# ------------------------------------------------------------------ waiting for a chart
# to show given data

TRACES_MATCH_JS = """([gd, expected]) => {
  gd = gd.closest('.js-plotly-plot') || gd;
  const byName = {};
  for (const t of (gd._fullData || [])) byName[t.name] = t;
  const same = (a, b) => JSON.stringify(a == null ? [] : Array.from(a)) === JSON.stringify(b);
  return Object.entries(expected).every(([name, want]) => byName[name] &&
      Object.entries(want).every(([key, values]) => same(byName[name][key], values)));
}"""


def wait_for_traces(
    page, plot_locator, expected: dict, timeout: int = UPDATE_TIMEOUT
) -> bool:
    """Wait until the chart's traces (by name) hold `expected` ({name: {"x": [...], "y":
    [...]}}).

    Returns False on timeout instead of raising, so the caller's assertion shows the
    difference.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            TRACES_MATCH_JS,
            arg=[plot_locator.element_handle(), expected],
            timeout=timeout,
            polling=50,
        )
        return True
    except PlaywrightTimeout:
        return False


def traces_by_name(plot_locator) -> dict:
    return {trace["name"]: trace for trace in plot_locator.evaluate(PLOT_DATA_JS)}


POINTS_DRAWN_JS = """(gd) => {
  gd = gd.closest('.js-plotly-plot') || gd;
  const drawn = {};
  for (const t of (gd._fullData || [])) {
    const group = gd.querySelector('.trace' + t.uid);
    drawn[t.name] = group ? group.querySelectorAll('.points path.point').length : null;
  }
  return drawn;
}"""


def points_drawn(plot_locator) -> dict:
    """{trace name: marker points drawn in the SVG}: what is on screen, not just in
    plotly's data."""
    return plot_locator.evaluate(POINTS_DRAWN_JS)


# Every element the chart draws, as text (tag, attributes in name order, text), sorted:
# hover, drag and zoom layers and plotly's element ids left out, and identity scales
# (plotly leaves `scale(1,1)` after a zero-length axis transition) dropped.
CHART_DRAWING_JS = """(gd) => {
  gd = gd.closest('.js-plotly-plot') || gd;
  const skip = '.hoverlayer, .draglayer, .zoomlayer, .modebar-container, defs';
  const lines = [];
  gd.querySelectorAll('.main-svg *').forEach(el => {
    if (el.closest(skip)) return;
    const attrs = [...el.attributes]
      .filter(a => !['id', 'clip-path'].includes(a.name))
      .map(a => a.name + '=' + a.value.replace(/\\s*scale\\(1,\\s*1\\)/g, ''))
      .filter(a => a !== 'transform=')
      .sort();
    lines.push(el.tagName + ' ' + attrs.join(' ') + (el.childElementCount ? '' : ' ' + el.textContent));
  });
  return lines.sort();
}"""

REDRAW_IN_FULL_JS = """async (gd) => {
  gd = gd.closest('.js-plotly-plot') || gd;
  await window.Plotly.redraw(gd);
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""


# Resolves once the chart has not changed for `quiet` ms (plotly may finish a change in a
# later animation frame or timer).
CHART_QUIET_JS = """(gd, quiet) => new Promise(done => {
  gd = gd.closest('.js-plotly-plot') || gd;
  let timer = setTimeout(finish, quiet);
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(finish, quiet); });
  function finish() { observer.disconnect(); done(true); }
  observer.observe(gd, {subtree: true, childList: true, attributes: true, characterData: true});
})"""


def chart_drawing(plot_locator, quiet_ms: int = 300) -> list:
    """What the chart draws once it has stopped changing, one element a line
    (CHART_DRAWING_JS)."""
    plot_locator.evaluate(CHART_QUIET_JS, quiet_ms)
    return plot_locator.evaluate(CHART_DRAWING_JS)


def redraw_in_full(plot_locator) -> None:
    """Have plotly.js redraw the chart from scratch (Plotly.redraw: every axis, title,
    legend entry and trace), as it does for a figure update sent the usual way."""
    plot_locator.evaluate(REDRAW_IN_FULL_JS)


# ------------------------------------------------------------------ fitting a projector

# Every output wider than its output area (it would scroll sideways) and every table,
# figure, text block or widget box whose right edge is past the area's: [width it needs,
# width it has, the first words of it].
OUTPUTS_PAST_THE_EDGE_JS = """() => {
  const found = [];
  const notebook = '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output';
  document.querySelectorAll(notebook).forEach(area => {
    const edge = area.getBoundingClientRect().right;
    if (area.scrollWidth > area.clientWidth + 2)
      found.push([area.scrollWidth, area.clientWidth, (area.innerText || '').slice(0, 60)]);
    area.querySelectorAll('table, .js-plotly-plot, svg, pre, .widget-box').forEach(part => {
      const box = part.getBoundingClientRect();
      if (box.width > 0 && box.right > edge + 2)
        found.push([Math.round(box.width), Math.round(edge - box.left),
                    (part.innerText || part.tagName).slice(0, 60)]);
    });
  });
  return found;
}"""


def outputs_past_the_edge(page, step: int = 450) -> list:
    """Scroll the open notebook from top to bottom (JupyterLab lays out only the cells in
    view) and collect OUTPUTS_PAST_THE_EDGE_JS's findings, each once."""
    scroller = page.locator(".jp-NotebookPanel:visible .jp-WindowedPanel-outer").first
    found, top = {}, 0
    while top < scroller.evaluate("el => el.scrollHeight"):
        scroller.evaluate(f"el => el.scrollTo(0, {top})")
        page.wait_for_timeout(250)
        for item in page.evaluate(OUTPUTS_PAST_THE_EDGE_JS):
            found[str(item)] = item
        top += step
    return list(found.values())
