"""How many students one machine holds: `make classroom`'s hub with N students at once.

    make bench-classroom                               # N = 1, 5, 10, 20, 30, written to
                                                       # docs/benchmark_classroom.md
    python bench/bench_classroom.py --students 1 5 --presses 10   # a quick look
    make bench-classroom BENCH_ARGS="--chapter 10 --students 1 30"  # chapter 10's lab

For each N, a fresh hub (classroom/jupyterhub_config.py, as `make classroom` runs it) in
build/bench/classroom/, then:

1. Start. The hub's REST API starts all N student servers at once (as N students logging
   in at the bell); then every student runs chapter 06 at once (Run All).
2. A class at work. One student is a real browser: headless Chromium logs in, opens
   chapter 06 in JupyterLab, runs it and presses arrow keys on the threshold slider,
   timing keypress -> chart redrawn as bench/benchmark.py does (labdriver's probe). The
   other N-1 students are driven through their server's REST and kernel websocket API,
   as their browsers would: a session for chapter 06, its code cells executed, then the
   threshold slider's widget sent `update` messages at a student's pace (bursts of 1-4
   presses 0.12-0.3 s apart, then 2-6 s of reading), at most one in flight as
   ipywidgets' own frontend does (presses made meanwhile are merged into the next one).
   Each press is timed from the moment it was made to the kernel going idle after its
   update (the callback ran and every figure and table update was sent).
3. Everyone at once: five times, every student (the browser too) presses at the same
   moment, as when a teacher says "now move the threshold".
4. Memory: RSS and PSS of each student's server and kernel (psutil), taken while they
   are all running; the machine's used memory; CPU the students' processes used.
5. Ctrl-C: SIGINT to the hub's process group; the seconds it took and what was left.

Why only one real browser: in a classroom each browser runs on its student's laptop, not
on the hub's machine; thirty Chromiums on these 2 cores would measure Chromium. The
websocket students make the server-side load a browser makes (the same REST calls, kernel
messages and widget updates), and the one browser measures what a student sees under it.
N = 1 is that browser alone. This is a measurement, not a test: it never fails on numbers.

`--chapter 10` runs the same class on chapter 10 (the production policies): every
student runs it all at once, and the slider is the policy lab's SWE-agent `n` (each
move replays that policy on the lab's log), the chart its trade-off bars. Its results
go to their own block of the page.
"""

import argparse
import asyncio
import datetime
import json
import os
import random
import re
import shutil
import statistics
import struct
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import hubdriver as hub  # noqa: E402
import labdriver as lab  # noqa: E402

from bench.benchmark import machine, percentile, versions  # noqa: E402

WORK = ROOT / "build" / "bench" / "classroom"
PASSWORD = "bench-classroom-password"


@dataclass(frozen=True)
class Chapter:
    """The chapter a class runs and the slider its students move."""

    number: str
    notebook: str
    scope: str  # the CSS class of the widget that holds the slider and the chart
    label: str  # the slider's description
    drawn: str  # the chart's traces, once drawn (under `scope`)
    low: int
    high: int
    start: int
    step: int


def chapter_10() -> Chapter:
    """Chapter 10's lab: SWE-agent's `n`, over the values its slider offers on the
    lab's first log and window (its own library says which)."""
    from minilib.lab.policies_view import slider_for

    slider = slider_for("swe-agent-last-n", 32_000)
    return Chapter(
        "10",
        "notebooks/10_production_policies.ipynb",
        ".ccl-policy-lab",
        "swe-agent-last-n: n",
        ".js-plotly-plot .barlayer .trace",
        slider.min,
        slider.max,
        slider.value,
        slider.step,
    )


CHAPTERS = {
    # the threshold slider of minilib.lab.dashboard.SLIDERS, its step and range
    "06": lambda: Chapter(
        "06",
        "notebooks/06_long_session_lab.ipynb",
        ".ccl-long-session-dashboard",
        "threshold",
        ".js-plotly-plot .scatterlayer .trace",
        600,
        1800,
        1200,
        50,
    ),
    "10": chapter_10,
}
CHAPTER = CHAPTERS["06"]()  # main() sets the one asked for
SYNC_ROUNDS, SYNC_GAP = 5, 5.0
# Where a class stops being usable, for the report's "where it breaks" line.
BREAK_P90_MS = 250  # a redraw slower than this feels like lag
BREAK_START_S = 120  # two minutes from the bell to a running chapter
LONG = 600_000  # ms: Playwright waits while thirty kernels import pandas and plotly


# ------------------------------------------------------------------ kernel messages


def message(msg_type: str, content: dict, session: str, channel: str = "shell") -> dict:
    return {
        "header": {
            "msg_id": uuid.uuid4().hex,
            "username": "bench",
            "session": session,
            "msg_type": msg_type,
            "version": "5.3",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        },
        "parent_header": {},
        "metadata": {},
        "content": content,
        "channel": channel,
        "buffers": [],
    }


def decode(frame) -> dict:
    """A kernel websocket frame: JSON text, or jupyter_server's binary framing (a count,
    offsets, the JSON message, then its buffers)."""
    if isinstance(frame, str):
        return json.loads(frame)
    count = struct.unpack("!I", frame[:4])[0]
    offsets = struct.unpack("!" + "I" * count, frame[4 : 4 + 4 * count])
    end = offsets[1] if count > 1 else len(frame)
    return json.loads(frame[offsets[0] : end])


def code_cells(path: Path) -> list:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


class KernelStudent:
    """A student whose browser is replaced by the kernel websocket API."""

    def __init__(self, classroom, name: str, seed: int):
        self.classroom, self.name = classroom, name
        self.rng = random.Random(seed)
        self.session = uuid.uuid4().hex
        self.waiting = {}  # msg_id -> future resolved at the kernel's idle
        self.errors = []
        self.slider = None
        self.value = CHAPTER.start
        self.pending = []  # perf_counter of presses not yet sent
        self.latencies = {}  # phase -> [ms]
        self.phase = "paced"
        self.sent = 0
        self.failed = 0
        self.ran_seconds = None
        self.page_seconds, self.page_requests, self.page_failed = None, 0, 0

    async def load_page(self, requests) -> None:
        """What a browser fetches to open chapter 06 in JupyterLab and run it (recorded
        from the plain JupyterLab run), fetched through the proxy six at a time, as a
        browser does. A request that answered below 400 there and fails here with a 5xx
        (599: no answer) counts; 4xx are not the proxy's (terminals are off here)."""
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest

        headers = {"Authorization": f"token {self.classroom.token}"}
        base = f"{self.classroom.url}/user/{self.name}/"
        client, slots = AsyncHTTPClient(), asyncio.Semaphore(6)

        async def fetch(path):
            async with slots:
                try:
                    response = await client.fetch(
                        HTTPRequest(
                            base + path,
                            headers=headers,
                            follow_redirects=False,
                            connect_timeout=600,
                            request_timeout=600,
                        ),
                        raise_error=False,
                    )
                    return response.code
                except Exception:
                    return 599

        started = time.perf_counter()
        codes = await asyncio.gather(*(fetch(path) for path, _ in requests))
        self.page_seconds = time.perf_counter() - started
        self.page_requests = len(requests)
        failures = [
            f"{got} {path[:80]}"
            for (path, want), got in zip(requests, codes)
            if want < 400 and got >= 500
        ]
        self.page_failed, self.page_failures = len(failures), failures[:5]

    async def open(self) -> None:
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest
        from tornado.websocket import websocket_connect

        headers = {"Authorization": f"token {self.classroom.token}"}
        base = f"{self.classroom.url}/user/{self.name}"
        body = {
            "path": CHAPTER.notebook,
            "type": "notebook",
            "name": "",
            "kernel": {"name": "python3"},
        }
        response = await AsyncHTTPClient().fetch(
            HTTPRequest(
                f"{base}/api/sessions",
                method="POST",
                headers=headers,
                body=json.dumps(body),
                connect_timeout=600,
                request_timeout=600,
            )
        )
        kernel = json.loads(response.body)["kernel"]["id"]
        url = base.replace("http", "ws", 1) + (
            f"/api/kernels/{kernel}/channels?session_id={self.session}"
        )
        self.ws = await websocket_connect(
            HTTPRequest(url, headers=headers, connect_timeout=600, request_timeout=600),
            max_message_size=256 * 1024 * 1024,
        )
        self.reader = asyncio.ensure_future(self.read())
        self.wake = asyncio.Event()
        self.sender = asyncio.ensure_future(self.send_updates())

    async def read(self) -> None:
        while True:
            frame = await self.ws.read_message()
            if frame is None:  # the server closed it (its kernel died): no reply comes
                for future in self.waiting.values():
                    if not future.done():
                        future.set_exception(ConnectionError("kernel websocket closed"))
                self.waiting.clear()
                return
            msg = decode(frame)
            kind, content = msg["header"]["msg_type"], msg.get("content", {})
            parent = (msg.get("parent_header") or {}).get("msg_id")
            if kind == "status" and content.get("execution_state") == "idle":
                future = self.waiting.pop(parent, None)
                if future is not None and not future.done():
                    future.set_result(time.perf_counter())
            elif kind == "execute_reply" and content.get("status") == "error":
                self.errors.append(f"{content.get('ename')}: {content.get('evalue')}")
            elif kind == "error":
                self.errors.append(f"{content.get('ename')}: {content.get('evalue')}")
            elif kind == "comm_open" and content.get("target_name") == "jupyter.widget":
                state = (content.get("data") or {}).get("state") or {}
                if (
                    self.slider is None
                    and state.get("_model_name") == "IntSliderModel"
                    and state.get("description") == CHAPTER.label
                ):
                    self.slider = content["comm_id"]
                    self.value = state.get("value", CHAPTER.start)

    async def request(self, msg_type: str, content: dict, timeout: float) -> float:
        """Send a shell message; the perf_counter when the kernel went idle after it."""
        msg = message(msg_type, content, self.session)
        future = asyncio.get_running_loop().create_future()
        self.waiting[msg["header"]["msg_id"]] = future
        await self.ws.write_message(json.dumps(msg))
        return await asyncio.wait_for(future, timeout)

    async def run_notebook(self, cells) -> None:
        started = time.perf_counter()
        for code in cells:
            await self.request(
                "execute_request",
                {
                    "code": code,
                    "silent": False,
                    "store_history": True,
                    "user_expressions": {},
                    "allow_stdin": False,
                    "stop_on_error": True,
                },
                timeout=900,
            )
        self.ran_seconds = time.perf_counter() - started
        if self.slider is None:
            self.errors.append(f"no {CHAPTER.label} slider among the widgets opened")

    def press(self) -> None:
        """One arrow key: the value moves a step; sent now, or merged into the next
        message if one is in flight."""
        direction = self.rng.choice((-1, 1))
        step = CHAPTER.step
        if not CHAPTER.low <= self.value + direction * step <= CHAPTER.high:
            direction = -direction
        self.value += direction * step
        self.pending.append(time.perf_counter())
        self.wake.set()

    async def send_updates(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            if not self.pending or self.slider is None:
                continue
            batch, self.pending = self.pending, []
            phase = self.phase
            content = {
                "comm_id": self.slider,
                "data": {
                    "method": "update",
                    "state": {"value": self.value},
                    "buffer_paths": [],
                },
            }
            try:
                done = await self.request("comm_msg", content, timeout=120)
            except asyncio.TimeoutError:
                self.failed += len(batch)
                continue
            self.sent += 1
            self.latencies.setdefault(phase, []).extend((done - t) * 1000 for t in batch)
            if self.pending:
                self.wake.set()

    async def paced(self, stop: threading.Event) -> None:
        while not stop.is_set():
            for _ in range(self.rng.randint(1, 4)):
                self.press()
                await asyncio.sleep(self.rng.uniform(0.12, 0.3))
            await asyncio.sleep(self.rng.uniform(2.0, 6.0))

    async def settle(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while (self.pending or self.waiting) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)


class KernelClass:
    """The N-1 websocket students, on an asyncio loop in a thread of their own (the main
    thread drives the browser with Playwright's synchronous API)."""

    def __init__(self, classroom, names, page_load=()):
        self.students = [KernelStudent(classroom, n, i) for i, n in enumerate(names)]
        self.page_load = list(page_load)
        self.ready = threading.Event()
        self.paced_stop = threading.Event()
        self.schedule_ready = threading.Event()
        self.finished = threading.Event()
        self.schedule = []
        self.ran_at_once = None
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as error:  # reported, never hidden
            self.error = f"{type(error).__name__}: {error}"
            self.ready.set()
            self.schedule_ready.set()
        finally:
            self.finished.set()

    async def _main(self) -> None:
        from tornado.httpclient import AsyncHTTPClient

        # Thirty students at once: no queue behind tornado's default 10 connections,
        # whose waiting requests give up after 20 s (HTTP 599).
        AsyncHTTPClient.configure(None, max_clients=1000)
        cells = code_cells(ROOT / CHAPTER.notebook)
        started = time.perf_counter()

        async def begin(student):
            if self.page_load:
                await student.load_page(self.page_load)
            await student.open()
            await student.run_notebook(cells)

        await asyncio.gather(*(begin(s) for s in self.students))
        self.ran_at_once = time.perf_counter() - started
        self.ready.set()
        await asyncio.gather(*(s.paced(self.paced_stop) for s in self.students))
        await asyncio.gather(*(s.settle() for s in self.students))
        for student in self.students:
            student.phase = "at once"
        first = time.monotonic() + 3
        self.schedule = [first + k * SYNC_GAP for k in range(SYNC_ROUNDS)]
        self.schedule_ready.set()
        for moment in self.schedule:
            await asyncio.sleep(max(0.0, moment - time.monotonic()))
            for student in self.students:
                student.press()
        await asyncio.sleep(1)
        await asyncio.gather(*(s.settle() for s in self.students))
        for student in self.students:
            student.ws.close()


# ------------------------------------------------------------------ the browser student


def browser_student(browser, classroom, name: str, presses: int, kernels: KernelClass):
    """The real student: log in, open and run chapter 06, then time keypresses at a
    student's pace, and at the moments everyone presses."""
    rng = random.Random(99)
    context = browser.new_context(viewport=lab.VIEWPORT, device_scale_factor=1)
    context.add_init_script(lab.WEBSOCKET_TAP_JS)  # splits a keypress's time
    page = context.new_page()
    page.set_default_timeout(LONG)
    result = {"paced": [], "at once": [], "failed": 0, "split": []}
    try:
        started = time.perf_counter()
        hub.log_in(page, classroom, name, PASSWORD)
        hub.wait_for_lab(page, name)
        lab.open_notebook(page, hub.UserServer(classroom, name), CHAPTER.notebook)
        page.click("#jp-menu-panel .lm-MenuBar-itemLabel:text-is('Run')")
        page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
        page.wait_for_function(lab.ALL_CELLS_RAN_JS, timeout=LONG)
        page.wait_for_function(lab.KERNEL_IDLE_JS, timeout=LONG)
        page.wait_for_selector(f"{CHAPTER.scope} {CHAPTER.drawn}")
        result["ran_seconds"] = time.perf_counter() - started
        kernels.ready.wait(timeout=LONG / 1000)
        lab.scroll_to_top(page.locator(CHAPTER.scope).first)
        slider = lab.slider(page, f"^{re.escape(CHAPTER.label)}$", CHAPTER.scope)
        lab.install_latency_probe(page, scope=CHAPTER.scope)

        def idle(p):
            lab.wait_idle(p, timeout=120_000)

        def one(key):
            try:
                sample = lab.measure_keypress(page, slider, key, idle=idle)
            except Exception as error:  # a keypress with no redraw is a result too
                result["failed"] += 1
                result.setdefault("errors", []).append(str(error).splitlines()[0])
                return None
            if sample.get("split"):
                result["split"].append(sample["split"])
            return sample["redraw"]

        value, step = CHAPTER.start, CHAPTER.step
        marks = cpu_marks(classroom)
        for _ in range(presses):
            key = rng.choice(("ArrowLeft", "ArrowRight"))
            moved = step if key == "ArrowRight" else -step
            if not CHAPTER.low <= value + moved <= CHAPTER.high:
                key = "ArrowLeft" if key == "ArrowRight" else "ArrowRight"
            value += step if key == "ArrowRight" else -step
            redraw = one(key)
            if redraw is not None:
                result["paced"].append(redraw)
            time.sleep(rng.uniform(1.0, 3.0))
        result["memory"] = memory_snapshot(classroom)
        result["cpu"] = cpu_busy(marks, cpu_marks(classroom))
        kernels.paced_stop.set()
        kernels.schedule_ready.wait(timeout=600)
        for k, moment in enumerate(kernels.schedule):
            time.sleep(max(0.0, moment - time.monotonic()))
            redraw = one("ArrowLeft" if k % 2 == 0 else "ArrowRight")
            if redraw is not None:
                result["at once"].append(redraw)
    finally:
        kernels.paced_stop.set()
        context.close()
    return result


def plain_lab(browser, presses: int) -> dict:
    """The same keypresses in `make lab`'s JupyterLab, no hub: what the hub adds."""
    import tempfile

    rng = random.Random(99)
    with tempfile.TemporaryDirectory() as home:
        server = lab.start_jupyterlab(
            Path(home), ROOT / "artifacts" / "logs" / "bench-classroom-plain-lab.log"
        )
        context = browser.new_context(viewport=lab.VIEWPORT, device_scale_factor=1)
        context.add_init_script(lab.WEBSOCKET_TAP_JS)
        page = context.new_page()
        page.set_default_timeout(LONG)
        redraws, splits, loaded = [], [], {}

        def note(response):
            request = response.request
            if request.method == "GET" and response.url.startswith(server.url + "/"):
                loaded.setdefault(response.url[len(server.url) + 1 :], response.status)

        page.on("response", note)
        try:
            lab.open_notebook(page, server, CHAPTER.notebook)
            lab.run_all_cells(page)
            page.remove_listener("response", note)
            page.wait_for_selector(f"{CHAPTER.scope} {CHAPTER.drawn}")
            lab.scroll_to_top(page.locator(CHAPTER.scope).first)
            slider = lab.slider(page, f"^{re.escape(CHAPTER.label)}$", CHAPTER.scope)
            lab.install_latency_probe(page, scope=CHAPTER.scope)
            for k in range(presses):
                key = "ArrowLeft" if k % 2 == 0 else "ArrowRight"
                sample = lab.measure_keypress(page, slider, key, idle=lab.wait_idle)
                if sample["redraw"] is not None:
                    redraws.append(sample["redraw"])
                if sample.get("split"):
                    splits.append(sample["split"])
                time.sleep(rng.uniform(1.0, 3.0))
        finally:
            context.close()
            server.delete_sessions_and_kernels()
            server.close()
    return {
        "page_load": list(loaded.items()),
        "paced": stats(redraws),
        "split": {
            part: statistics.median(x[part] for x in splits)
            for part in ("frontend", "roundtrip", "render")
        }
        if splits
        else None,
    }


# ------------------------------------------------------------------ memory and CPU


def cpu_marks(classroom) -> tuple:
    """(when, CPU seconds the machine was busy, CPU seconds of the classroom's processes
    (hub, proxy, servers, kernels), CPU seconds of this benchmark with its browser)."""
    import psutil

    times = psutil.cpu_times()
    busy = sum(times) - times.idle - getattr(times, "iowait", 0.0)
    classroom_pids = set()
    used = {"classroom": 0.0, "bench": 0.0}
    for process in classroom.processes():
        try:
            t = process.cpu_times()
        except psutil.Error:
            continue
        classroom_pids.add(process.pid)
        used["classroom"] += t.user + t.system
    me = psutil.Process()
    for process in [me] + me.children(recursive=True):
        if process.pid in classroom_pids:
            continue
        try:
            t = process.cpu_times()
        except psutil.Error:
            continue
        used["bench"] += t.user + t.system
    return time.monotonic(), busy, used["classroom"], used["bench"]


def cpu_busy(before: tuple, after: tuple) -> dict:
    """Cores kept busy between two marks: the whole machine, the classroom, this
    benchmark and its browser, and everything else (other people's work)."""
    seconds = max(after[0] - before[0], 1e-9)
    machine, classroom, bench = (
        max(0.0, after[i] - before[i]) / seconds for i in (1, 2, 3)
    )
    return {
        "machine_cores": machine,
        "classroom_cores": classroom,
        "bench_cores": bench,
        "other_cores": max(0.0, machine - classroom - bench),
        "seconds": seconds,
    }


def memory_snapshot(classroom) -> dict:
    """RSS and PSS (MB) of each student's server and kernels, the hub and the proxy."""
    import psutil

    mb = 1024 * 1024
    per_student = {}
    for name in classroom.students:
        server = kernel = {"rss": 0.0, "pss": 0.0}
        cpu = 0.0
        for process in classroom.server_processes(name):
            try:
                info = process.memory_full_info()
                cmdline = " ".join(process.cmdline())
                times = process.cpu_times()
            except psutil.Error:
                continue
            sizes = {"rss": info.rss / mb, "pss": getattr(info, "pss", info.rss) / mb}
            cpu += times.user + times.system
            if "ipykernel" in cmdline:
                kernel = {k: kernel[k] + sizes[k] for k in sizes}
            else:
                server = {k: server[k] + sizes[k] for k in sizes}
        per_student[name] = {"server": server, "kernel": kernel, "cpu_seconds": cpu}
    hub_processes = {}
    for process in classroom.processes():
        try:
            cmdline = " ".join(process.cmdline())
            rss = process.memory_info().rss / mb
        except psutil.Error:
            continue
        if "configurable-http-proxy" in cmdline or "classroom/proxy.py" in cmdline:
            hub_processes["proxy"] = rss
        elif "jupyterhub -f" in cmdline or cmdline.endswith("jupyterhub_config.py"):
            hub_processes["hub"] = rss
    memory = psutil.virtual_memory()
    return {
        "students": per_student,
        "hub": hub_processes,
        "machine_used_mb": (memory.total - memory.available) / mb,
        "machine_total_mb": memory.total / mb,
        "load": os.getloadavg(),
    }


# ------------------------------------------------------------------ one class of N


def stats(values) -> dict | None:
    if not values:
        return None
    return {
        "n": len(values),
        "median": statistics.median(values),
        "p90": percentile(values, 0.9),
        "max": max(values),
    }


def run_class(browser, count: int, presses: int, page_load=()) -> dict:
    import psutil

    names = ["browser"] + [f"student{i:02d}" for i in range(1, count)]
    root = WORK / f"n{count:02d}"
    shutil.rmtree(root, ignore_errors=True)
    used_before = psutil.virtual_memory()
    used_before = (used_before.total - used_before.available) / (1024 * 1024)
    load_before = os.getloadavg()
    print(f"[{count} students] starting the hub", flush=True)
    classroom = hub.Classroom(
        root,
        names,
        PASSWORD,
        ROOT / "artifacts" / "logs" / f"bench-classroom-{count:02d}.log",
        via_make=False,
    )
    result = {"students": count, "hub_start_s": classroom.start_seconds}
    try:
        started = time.monotonic()
        for name in names:
            classroom.start_server(name)
        ready, deadline = {}, started + hub.SPAWN_TIMEOUT * 2
        while len(ready) < count and time.monotonic() < deadline:
            users = classroom.api("GET", "/users")
            for user in users:
                server = (user.get("servers") or {}).get("", {})
                if user["name"] in names and server.get("ready"):
                    ready.setdefault(user["name"], time.monotonic() - started)
            time.sleep(0.5)
        result["servers_ready"] = len(ready)
        result["server_start_s"] = stats(list(ready.values()))
        print(
            f"[{count} students] {len(ready)}/{count} servers ready in "
            f"{max(ready.values(), default=float('nan')):.1f} s; running chapter "
            f"{CHAPTER.number}",
            flush=True,
        )
        kernels = KernelClass(classroom, names[1:], page_load)
        kernels.start()
        student = browser_student(browser, classroom, names[0], presses, kernels)
        kernels.finished.wait(timeout=900)
        if kernels.error:
            result["error"] = kernels.error
        result["browser"] = {
            "ran_s": student.get("ran_seconds"),
            "paced": stats(student["paced"]),
            "at_once": stats(student["at once"]),
            "failed": student["failed"],
            "errors": student.get("errors", [])[:3],
            "split": {
                part: statistics.median(x[part] for x in student["split"])
                for part in ("frontend", "roundtrip", "render")
            }
            if student["split"]
            else None,
        }
        result["cpu"] = student.get("cpu")
        socket_students = kernels.students
        result["kernels"] = {
            "ran_s": stats([s.ran_seconds for s in socket_students if s.ran_seconds]),
            "ran_at_once_s": kernels.ran_at_once,
            "paced": stats(
                [ms for s in socket_students for ms in s.latencies.get("paced", [])]
            ),
            "at_once": stats(
                [ms for s in socket_students for ms in s.latencies.get("at once", [])]
            ),
            "page_load_s": stats(
                [s.page_seconds for s in socket_students if s.page_seconds is not None]
            ),
            "page_requests": sum(s.page_requests for s in socket_students),
            "page_failed": sum(s.page_failed for s in socket_students),
            "page_failures": sorted(
                {f for s in socket_students for f in getattr(s, "page_failures", [])}
            )[:10],
            "messages": sum(s.sent for s in socket_students),
            "failed": sum(s.failed for s in socket_students),
            "errors": sorted({e for s in socket_students for e in s.errors})[:3],
        }
        memory = student.get("memory")
        if memory:
            rows = list(memory["students"].values())
            result["memory"] = {
                "server_rss": stats([r["server"]["rss"] for r in rows]),
                "kernel_rss": stats([r["kernel"]["rss"] for r in rows]),
                "student_rss": stats(
                    [r["server"]["rss"] + r["kernel"]["rss"] for r in rows]
                ),
                "student_pss": stats(
                    [r["server"]["pss"] + r["kernel"]["pss"] for r in rows]
                ),
                "hub": memory["hub"],
                "machine_used_mb": memory["machine_used_mb"],
                "machine_used_before_mb": used_before,
                "machine_total_mb": memory["machine_total_mb"],
                "load": memory["load"],
            }
        result["load_before"] = load_before
    finally:
        stopping = time.monotonic()
        alive = classroom.stop()
        result["stop_s"] = time.monotonic() - stopping
        result["left_behind"] = hub.describe(alive)
    print(f"[{count} students] {summary_line(result)}", flush=True)
    return result


# ------------------------------------------------------------------ report


def fmt(s, key="median", unit=" ms", digits=0) -> str:
    if not s:
        return "–"
    return f"{s[key]:,.{digits}f}{unit}"


def summary_line(r: dict) -> str:
    b, k, m = r.get("browser", {}), r.get("kernels", {}), r.get("memory", {})
    return (
        f"servers {r.get('servers_ready')}/{r['students']} ready "
        f"(last {fmt(r.get('server_start_s'), 'max', ' s', 1)}); "
        f"chapter {CHAPTER.number} run {fmt(k.get('ran_s'), 'max', ' s', 1)} "
        f"(browser {b.get('ran_s') or 0:.1f} s); "
        f"per student RSS {fmt(m.get('student_rss'), unit=' MB')} "
        f"PSS {fmt(m.get('student_pss'), unit=' MB')}; "
        f"keypress->redraw {fmt(b.get('paced'))} / p90 {fmt(b.get('paced'), 'p90')}; "
        f"kernel round trip {fmt(k.get('paced'))} / p90 {fmt(k.get('paced'), 'p90')}; "
        f"everyone at once: browser p90 {fmt(b.get('at_once'), 'p90')}, "
        f"kernels p90 {fmt(k.get('at_once'), 'p90')}; stop {r.get('stop_s', 0):.1f} s, "
        f"left {len(r.get('left_behind', []))}"
    )


def breaks(r: dict) -> list:
    """What made this class unusable, if anything."""
    found = []
    if r.get("error"):
        found.append(r["error"])
    if r.get("servers_ready", 0) < r["students"]:
        found.append(f"only {r.get('servers_ready')} of {r['students']} servers started")
    b, k = r.get("browser", {}), r.get("kernels", {})
    for label, s in (
        ("browser at pace", b.get("paced")),
        ("kernels at pace", k.get("paced")),
        ("browser, all at once,", b.get("at_once")),
        ("kernels, all at once,", k.get("at_once")),
    ):
        if s and s["p90"] > BREAK_P90_MS:
            found.append(f"{label} p90 {s['p90']:.0f} ms > {BREAK_P90_MS} ms")
    # from the first log-in to the last student's chapter run: servers, pages, kernels
    start = (r.get("server_start_s") or {}).get("max", 0) + max(
        b.get("ran_s") or 0, k.get("ran_at_once_s") or 0
    )
    if start > BREAK_START_S:
        found.append(f"{start:.0f} s from the bell to a running chapter")
    if k.get("page_failed"):
        found.append(f"{k['page_failed']} page requests failed through the proxy")
    if b.get("failed") or k.get("failed"):
        never = b.get("failed", 0) + k.get("failed", 0)
        found.append(f"{never} {'press' if never == 1 else 'presses'} never redrawn")
    if r.get("left_behind"):
        found.append(f"{len(r['left_behind'])} processes left after Ctrl-C")
    return found


def markers(chapter: str) -> tuple:
    """The lines around a chapter's measured block (chapter 06's are the plain ones)."""
    mode = "" if chapter == "06" else f" --chapter {chapter}"
    return (
        f"<!-- measured by bench/bench_classroom.py{mode}: begin -->",
        f"<!-- measured by bench/bench_classroom.py{mode}: end -->",
    )


def markdown(results: list, info: dict, when: str, plain: dict | None = None) -> str:
    begin, end = markers(CHAPTER.number)
    out = [
        begin,
        "",
        f"Measured on {when} in one run of `make bench-classroom`: {info['machine']} "
        f"before the run; {info['memory']}. Versions: "
        + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
        + ".",
        "",
        "### Start: the bell",
        "",
        "| students | hub up | servers ready (median / last) | JupyterLab page loads, "
        "all at once (median / last; requests failed) | chapter "
        f"{CHAPTER.number} run, all at "
        "once (median / last) | the browser's log-in → chapter run | Ctrl-C: hub "
        "gone | left behind |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        k, b = r.get("kernels", {}), r.get("browser", {})
        out.append(
            f"| {r['students']} | {r['hub_start_s']:.1f} s | "
            f"{fmt(r.get('server_start_s'), unit=' s', digits=1)} / "
            f"{fmt(r.get('server_start_s'), 'max', ' s', 1)} | "
            f"{fmt(k.get('page_load_s'), unit=' s', digits=1)} / "
            f"{fmt(k.get('page_load_s'), 'max', ' s', 1)}; "
            f"{k.get('page_failed', 0)} of {k.get('page_requests', 0)} | "
            f"{fmt(k.get('ran_s'), unit=' s', digits=1)} / "
            f"{fmt(k.get('ran_s'), 'max', ' s', 1)} | "
            f"{b.get('ran_s') or 0:.1f} s | {r.get('stop_s', 0):.1f} s | "
            f"{len(r.get('left_behind', []))} |"
        )
    out += [
        "",
        "### Memory per student, all of them running",
        "",
        "| students | server RSS | kernel RSS | student RSS (median / max) | student PSS "
        "| hub + proxy RSS | machine's used memory (before → during) | cores busy at "
        "pace: classroom / browser + driver / others | load average |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        m = r.get("memory")
        if not m:
            out.append(f"| {r['students']} | – | – | – | – | – | – | – | – |")
            continue
        hub_mb = sum(m["hub"].values())
        out.append(
            f"| {r['students']} | {fmt(m['server_rss'], unit=' MB')} | "
            f"{fmt(m['kernel_rss'], unit=' MB')} | "
            f"{fmt(m['student_rss'], unit=' MB')} / "
            f"{fmt(m['student_rss'], 'max', ' MB')} | "
            f"{fmt(m['student_pss'], unit=' MB')} | {hub_mb:.0f} MB | "
            f"{m['machine_used_before_mb'] / 1024:.1f} → "
            f"{m['machine_used_mb'] / 1024:.1f} GB | "
            + (
                f"{r['cpu']['classroom_cores']:.2f} / {r['cpu']['bench_cores']:.2f} / "
                f"{r['cpu']['other_cores']:.2f} | "
                if r.get("cpu")
                else "– | "
            )
            + ", ".join(f"{x:.1f}" for x in m["load"])
            + " |"
        )
    out += [
        "",
        "### The slider: keypress → redraw",
        "",
        "*browser*: the real student in Chromium, keypress → chart holds the new data; "
        "*kernels*: the other students' presses, press → kernel idle after its update. "
        "*at pace*: everyone at a student's pace; *at once*: everyone presses at the "
        "same moment (five rounds).",
        "",
        "*plain JupyterLab*: the browser's presses in `make lab`'s JupyterLab, no hub, "
        "in the same run.",
        "",
        "| students | browser at pace: median / p90 | kernels at pace: median / p90 "
        "| browser, all at once: median / p90 | kernels, all at once: median / p90 / "
        "max | browser at pace, split: keydown → out / round trip / render "
        "| widget updates sent | where it breaks |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        b, k = r.get("browser", {}), r.get("kernels", {})
        out.append(
            f"| {r['students']} | {fmt(b.get('paced'))} / {fmt(b.get('paced'), 'p90')} "
            f"| {fmt(k.get('paced'))} / {fmt(k.get('paced'), 'p90')} | "
            f"{fmt(b.get('at_once'))} / {fmt(b.get('at_once'), 'p90')} | "
            f"{fmt(k.get('at_once'))} / {fmt(k.get('at_once'), 'p90')} / "
            f"{fmt(k.get('at_once'), 'max')} | "
            + (
                " / ".join(
                    f"{b['split'][p]:.0f} ms" for p in ("frontend", "roundtrip", "render")
                )
                if b.get("split")
                else "–"
            )
            + f" | {k.get('messages', 0)} | "
            + ("; ".join(breaks(r)) or "holds")
            + " |"
        )
    if plain and plain.get("paced"):
        split = plain.get("split")
        out.append(
            f"| plain JupyterLab, no hub | {fmt(plain['paced'])} / "
            f"{fmt(plain['paced'], 'p90')} | – | – | – | "
            + (
                " / ".join(
                    f"{split[p]:.0f} ms" for p in ("frontend", "roundtrip", "render")
                )
                if split
                else "–"
            )
            + " | – | |"
        )
    out += ["", end]
    return "\n".join(out) + "\n"


def write_markdown(path: Path, measured: str) -> None:
    """Replace the measured block of `path`, keeping the hand-written text around it."""
    begin, end = markers(CHAPTER.number)
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            tail = rest.split(end, 1)[1]
            path.write_text(head + measured.rstrip("\n") + tail, encoding="utf-8")
            return
        if text.strip():  # a chapter measured for the first time: after the rest
            path.write_text(text.rstrip("\n") + "\n\n" + measured, encoding="utf-8")
            return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# Benchmark: how many students one machine holds\n\n" + measured,
        encoding="utf-8",
    )


def main(argv=None) -> int:
    import psutil

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--students",
        type=int,
        nargs="+",
        default=[1, 5, 10, 20, 30],
        help="class sizes to run, one hub each (default 1 5 10 20 30)",
    )
    parser.add_argument(
        "--presses",
        type=int,
        default=20,
        help="keypresses the browser student times at pace (default 20)",
    )
    parser.add_argument(
        "--no-plain",
        action="store_true",
        help="skip the reference run in plain JupyterLab (no hub)",
    )
    parser.add_argument(
        "--chapter",
        choices=sorted(CHAPTERS),
        default="06",
        help="the chapter the students run and whose slider they move (default 06: "
        "the threshold; 10: SWE-agent's n in the policy lab)",
    )
    parser.add_argument("--markdown", type=Path, help="write the results' page here")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument(
        "--from-json",
        type=Path,
        help="measure nothing: write the page again from a run's --json file",
    )
    args = parser.parse_args(argv)
    global CHAPTER
    CHAPTER = CHAPTERS[args.chapter]()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        when = time.strftime("%Y-%m-%d", time.gmtime(args.from_json.stat().st_mtime))
        measured = markdown(saved["results"], saved["info"], when, saved.get("plain"))
        print(measured)
        if args.markdown:
            write_markdown(args.markdown, measured)
        return 0

    chromium = lab.chromium_executable()
    if chromium is None:
        print("Chromium not found: apt-get install -y chromium", file=sys.stderr)
        return 2
    memory = psutil.virtual_memory()
    info = {
        "machine": machine(),
        "memory": f"{memory.total / 1024**3:.0f} GB of memory, "
        f"{memory.available / 1024**3:.1f} GB available",
        "versions": {
            **versions(),
            **{
                name: _version(name)
                for name in ("jupyterhub", "configurable-http-proxy", "jupyter_server")
            },
        },
    }
    from playwright.sync_api import sync_playwright

    results, plain = [], None
    with sync_playwright() as playwright:
        browser = lab.launch_chromium(playwright, chromium, WORK / "chromium-home")
        try:
            if not args.no_plain:
                print(
                    "[plain JupyterLab] the same keypresses without the hub", flush=True
                )
                plain = plain_lab(browser, args.presses)
            for count in args.students:
                results.append(
                    run_class(
                        browser, count, args.presses, (plain or {}).get("page_load", ())
                    )
                )
        finally:
            browser.close()
    when = time.strftime("%Y-%m-%d", time.gmtime())
    measured = markdown(results, info, when, plain)
    print(measured)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"info": info, "results": results, "plain": plain}, indent=1)
        )
    if args.markdown:
        write_markdown(args.markdown, measured)
    return 0


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
