"""Driving `make classroom`'s JupyterHub: start it, log students in, start and stop their
servers through the hub's REST API, and check that nothing outlives it.

Shared by tests/browser/test_classroom_browser.py and bench/bench_classroom.py; like
labdriver.py it imports neither pytest nor Playwright at module level.

- The hub runs either as `make classroom` (what a teacher types; the test does this) or
  as the jupyterhub command that target runs (the benchmark), in a session of its own, so
  that SIGINT to its process group is exactly a Ctrl-C in the teacher's terminal.
- A service token (CLASSROOM_API_TOKEN) may start, stop and reach every server: the REST
  calls here use it, the browsers log in with the students' password like students do.
- Every process the hub started is found by psutil: its descendants, and anything whose
  working folder or command line is inside the classroom's folder.
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "classroom" / "jupyterhub_config.py"
HUB_START_TIMEOUT = 300  # make may have to install JupyterHub first
SPAWN_TIMEOUT = 300  # a student's server, on a loaded 2-core machine
STOP_TIMEOUT = 60


def free_port_block(size: int = 3) -> int:
    """A port p with p .. p+size-1 all free on 127.0.0.1 (the proxy, its API, the hub)."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + size > 65535:
            continue
        sockets = []
        try:
            for port in range(base, base + size):
                sock = socket.socket()
                sockets.append(sock)
                sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    raise RuntimeError("no block of free ports found")


class Classroom:
    """A running classroom hub in `root` (its CLASSROOM_DIR)."""

    def __init__(
        self,
        root: Path,
        students,
        password: str,
        log_path: Path,
        teacher: str = "teacher",
        teacher_password: str = "",
        via_make: bool = True,
        extra_env: dict | None = None,
    ):
        self.root = Path(root).resolve()
        self.students, self.password = list(students), password
        self.teacher = teacher
        self.teacher_password = teacher_password or secrets.token_urlsafe(30)
        self.token = secrets.token_hex(24)
        self.port = free_port_block()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log_path)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")
        }
        env.update(extra_env or {})
        settings = {
            "STUDENTS": " ".join(self.students),
            "PASSWORD": password,
            "TEACHER": teacher,
            "TEACHER_PASSWORD": self.teacher_password,
            "PORT": str(self.port),
            "IP": "127.0.0.1",
            "DIR": str(self.root),
            "API_TOKEN": self.token,
        }
        env.update({f"CLASSROOM_{key}": value for key, value in settings.items()})
        if via_make:
            # make maps its variables onto CLASSROOM_*; give them as a teacher would.
            names = ["STUDENTS", "PASSWORD", "TEACHER", "TEACHER_PASSWORD", "PORT", "IP"]
            argv = ["make", "--no-print-directory", "classroom"]
            argv += [f"{name}={settings[name]}" for name in names]
            argv.append(f"CLASSROOM_DIR={self.root}")
        else:
            argv = [str(Path(sys.executable).parent / "jupyterhub"), "-f", str(CONFIG)]
        self._log = open(self.log_path, "wb")
        started = time.monotonic()
        self.process = subprocess.Popen(
            argv,
            cwd=REPO,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = started + HUB_START_TIMEOUT
        while not self._answers():
            if self.process.poll() is not None:
                self._log.close()
                raise RuntimeError(
                    f"the hub exited with {self.process.returncode}; "
                    f"see {self.log_path}:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"the hub did not answer within {HUB_START_TIMEOUT} s; "
                    f"see {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(0.25)
        self.start_seconds = time.monotonic() - started

    # ------------------------------------------------------------------ REST
    def _answers(self) -> bool:
        try:
            return self.api("GET", "/users", timeout=3) is not None
        except (urllib.error.URLError, ConnectionError, OSError, ValueError):
            return False

    def api(self, method: str, path: str, body=None, timeout: float = 30):
        """The hub's REST API (/hub/api + path) with the service token."""
        return self.request(method, f"/hub/api{path}", body, timeout)

    def request(self, method: str, path: str, body=None, timeout: float = 30):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
            return json.loads(text) if text else {}

    def server(self, name: str) -> dict:
        """The user's default server as the hub reports it ({} when there is none)."""
        return self.api("GET", f"/users/{name}").get("servers", {}).get("", {})

    def start_server(self, name: str) -> None:
        try:
            self.api("POST", f"/users/{name}/server")
        except urllib.error.HTTPError as error:
            if error.code != 400:  # 400: already running
                raise

    def wait_ready(self, name: str, timeout: float = SPAWN_TIMEOUT) -> float:
        """Seconds until the hub calls the user's server ready."""
        started = time.monotonic()
        while not self.server(name).get("ready"):
            if time.monotonic() - started > timeout:
                raise TimeoutError(f"{name}'s server not ready after {timeout} s")
            time.sleep(0.25)
        return time.monotonic() - started

    def stop_server(self, name: str, timeout: float = STOP_TIMEOUT) -> None:
        self.api("DELETE", f"/users/{name}/server")
        deadline = time.monotonic() + timeout
        while self.server(name):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name}'s server still there after {timeout} s")
            time.sleep(0.25)

    def home(self, name: str) -> Path:
        return self.root / "students" / name

    # ------------------------------------------------------------------ processes
    def processes(self) -> list:
        """The hub's process tree (make, the hub, the proxy, servers, kernels) and
        anything else working in, or naming, the classroom's folder."""
        import psutil

        found = {}
        try:
            top = psutil.Process(self.process.pid)
            for process in [top] + top.children(recursive=True):
                found[process.pid] = process
        except psutil.NoSuchProcess:
            pass
        root = str(self.root)
        for process in psutil.process_iter(["cmdline", "cwd"]):
            try:
                cmdline = " ".join(process.info["cmdline"] or [])
                cwd = process.info["cwd"] or ""
            except (psutil.Error, TypeError):
                continue
            if root in cmdline or cwd == root or cwd.startswith(root + os.sep):
                found[process.pid] = process
        found.pop(os.getpid(), None)
        return list(found.values())

    def server_processes(self, name: str) -> list:
        """The processes working in a student's folder: their server and its kernels."""
        import psutil

        home = str(self.home(name))
        mine = []
        for process in self.processes():
            try:
                cwd = process.cwd()
                cmdline = " ".join(process.cmdline())
            except psutil.Error:
                continue
            if cwd == home or cwd.startswith(home + os.sep) or home + os.sep in cmdline:
                mine.append(process)
        return mine

    def stop(self, timeout: float = STOP_TIMEOUT) -> list:
        """Ctrl-C: SIGINT to the hub's process group, as a terminal sends it. Returns the
        processes still alive `timeout` seconds later (killed then, so nothing leaks)."""
        import psutil

        watched = self.processes()
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        watched += [p for p in self.processes() if p.pid not in {w.pid for w in watched}]
        _, alive = psutil.wait_procs(watched, timeout=15)
        alive = [p for p in alive if p.is_running()]
        for process in alive:
            try:
                process.kill()
            except psutil.Error:
                pass
        if not self._log.closed:
            self._log.close()
        return alive

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def describe(processes) -> list:
    """pid and command line of each process, for an assertion message."""
    import psutil

    described = []
    for process in processes:
        try:
            described.append(f"{process.pid}: {' '.join(process.cmdline())[:160]}")
        except psutil.Error:
            described.append(f"{process.pid}: (gone)")
    return described


# ------------------------------------------------------------------ in the browser


def log_in(page, classroom: Classroom, name: str, password: str) -> None:
    """The hub's login form, as a student fills it; returns once the form is sent."""
    page.goto(f"{classroom.url}/hub/login", timeout=90_000)
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", password)
    page.click("input[type=submit], button[type=submit]")


def wait_for_lab(page, name: str, timeout: int = SPAWN_TIMEOUT * 1000) -> None:
    """After logging in: the hub's spawn page, then the student's own JupyterLab."""
    page.wait_for_url(f"**/user/{name}/lab/**", timeout=timeout)
    page.wait_for_selector("#jp-main-statusbar", timeout=timeout)


class UserServer:
    """What labdriver's notebook helpers need of a server: its URL (through the hub)."""

    def __init__(self, classroom: Classroom, name: str):
        self.url = f"{classroom.url}/user/{name}"
