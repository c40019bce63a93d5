"""JupyterHub for a classroom on one machine: `make classroom` (docs/classroom.md).

    make classroom STUDENTS="ana ben cai" PASSWORD=a-class-password
    make classroom STUDENTS=30            # student01 ... student30

Read by `jupyterhub -f classroom/jupyterhub_config.py`, run from the project's venv, with
its settings in CLASSROOM_* variables (the Makefile maps STUDENTS=, PASSWORD=... to them):

- CLASSROOM_STUDENTS  names, separated by spaces or commas, or a count N for student01..
                      studentNN (default 30)
- CLASSROOM_PASSWORD  the students' shared password (at least 8 characters); unset, one is
                      made once and kept in <dir>/hub/passwords.json
- CLASSROOM_TEACHER   the teacher's account (default "teacher"): an admin whose server
                      opens the Voila projector page; CLASSROOM_TEACHER_PASSWORD (at
                      least 32 characters, JupyterHub's rule for admins) or made once, too
- CLASSROOM_PORT      the port students open (default 8000), on CLASSROOM_IP (default
                      127.0.0.1; 0.0.0.0 lets the room in); the proxy's API listens on
                      PORT+1 and the hub on PORT+2, both on 127.0.0.1 only
- CLASSROOM_DIR       where the hub keeps its database and the students' copies
                      (default build/classroom in the checkout)
- CLASSROOM_API_TOKEN optional: a service token allowed to start, stop and reach every
                      server (the browser test and bench/bench_classroom.py use it)

Who runs what. The hub, the proxy and every student server run as the hub's own user,
each student in a folder of their own, <dir>/students/<name> (HOME and the server's root):
a pre-spawn hook copies notebooks/, data/ and docs/ there the first time, so a student's
edits never touch the checkout or another student's copy, and survive a server restart.
Separate system users were the other choice; they were not taken because the students'
servers must run this checkout's venv, whose interpreter need not be readable by other
accounts (here it lives under /root, mode 700), and because `make classroom` should not
create accounts on the teacher's machine. So this is one trusted class, not isolation:
with a shared password anyone in the class can log in as anyone else, and a kernel can
do what the hub's user can. Run as root, the servers run as root too (--allow-root); the
chapters need no terminal, so terminals are off. For separate users use The Littlest
JupyterHub, for containers Zero to JupyterHub (deploy/README.md).

The proxy is the pure-Python `configurable-http-proxy` from PyPI (classroom/proxy.py), so
a machine with only Python needs no Node.js. Ctrl-C stops the hub, the proxy and every
server, each server shutting its kernels down first.
"""

import json
import os
import re
import secrets
import shutil
import socket
import sys
from pathlib import Path

from jupyterhub.spawner import SimpleLocalProcessSpawner

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # the project's venv: hub, proxy, servers, kernels
COPIED = ("notebooks", "data", "docs")  # what a student's chapters open or link to
START_PAGE = "/lab/tree/notebooks/00_start_here.ipynb"
TEACHER_PAGE = "/voila/render/notebooks/present/long_session_lab.ipynb"
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")

c = get_config()  # noqa: F821 (JupyterHub provides it)


def stop(message: str):
    """Refuse to start, with one line instead of a traceback."""
    print(f"make classroom: {message}", file=sys.stderr)
    raise SystemExit(2)


def students_from(text: str) -> list:
    """`ana ben,cai` -> the names; `30` -> student01 ... student30."""
    text = text.strip() or "30"
    if text.isdigit():
        count = int(text)
        if not 1 <= count <= 500:
            stop(f"STUDENTS={text}: give between 1 and 500 students")
        width = max(2, len(str(count)))
        return [f"student{i:0{width}d}" for i in range(1, count + 1)]
    names = [name.lower() for name in re.split(r"[\s,]+", text) if name]
    for name in names:
        if not NAME.match(name):
            stop(
                f"STUDENTS: {name!r} is not a usable account name (a letter, then up to "
                "31 lower-case letters, digits, '-' or '_')"
            )
    if len(set(names)) != len(names):
        stop("STUDENTS names someone twice")
    return names


def remembered_passwords(path: Path, student: str, teacher: str) -> dict:
    """The passwords given; for one not given, the one made on an earlier start, or a new
    random one (kept in `path`, readable by the hub's user only)."""
    kept = json.loads(path.read_text()) if path.is_file() else {}
    made = {}
    chosen = {
        "student": student
        or kept.get("student")
        or made.setdefault("student", secrets.token_urlsafe(9)),
        "teacher": teacher
        or kept.get("teacher")
        or made.setdefault("teacher", secrets.token_urlsafe(30)),
    }
    if len(chosen["student"]) < 8:
        stop("PASSWORD must have at least 8 characters (JupyterHub's rule)")
    if len(chosen["teacher"]) < 32:
        stop("TEACHER_PASSWORD must have at least 32 characters (JupyterHub's rule)")
    if chosen["student"] == chosen["teacher"]:
        stop("PASSWORD and TEACHER_PASSWORD must differ")
    chosen["made"] = sorted(made)
    if made:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump({**kept, **made}, file)
    return chosen


state = Path(os.environ.get("CLASSROOM_DIR") or REPO / "build" / "classroom").resolve()
hub_dir, students_dir = state / "hub", state / "students"
hub_dir.mkdir(parents=True, exist_ok=True)
students = students_from(os.environ.get("CLASSROOM_STUDENTS", ""))
teacher = (os.environ.get("CLASSROOM_TEACHER") or "teacher").lower()
if not NAME.match(teacher) or teacher in students:
    stop(f"TEACHER={teacher!r}: an account name that is not a student's")
passwords = remembered_passwords(
    hub_dir / "passwords.json",
    os.environ.get("CLASSROOM_PASSWORD", ""),
    os.environ.get("CLASSROOM_TEACHER_PASSWORD", ""),
)
port = int(os.environ.get("CLASSROOM_PORT") or 8000)
ip = os.environ.get("CLASSROOM_IP") or "127.0.0.1"

# ------------------------------------------------------------------ the hub and its proxy
c.JupyterHub.ip = ip
c.JupyterHub.port = port
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = port + 2
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{port + 1}"
# The pure-Python proxy with a pool for a class (classroom/proxy.py says why); a student's
# "server starting" page waits on one long request, as long as the start itself.
c.ConfigurableHTTPProxy.command = [
    sys.executable,
    str(REPO / "classroom" / "proxy.py"),
    "--proxy-timeout",
    str(600 * 1000),
]
c.ConfigurableHTTPProxy.pid_file = str(hub_dir / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{hub_dir / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(hub_dir / "jupyterhub_cookie_secret")
# Ctrl-C (or SIGTERM) stops every student server and the proxy before the hub exits.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

# ------------------------------------------------------------------ who may log in
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = passwords["student"]
c.SharedPasswordAuthenticator.admin_password = passwords["teacher"]
c.Authenticator.allowed_users = set(students)
c.Authenticator.admin_users = {teacher}
# Only today's list: a name from an earlier class kept in the database may not log in.
c.Authenticator.allow_existing_users = False

token = os.environ.get("CLASSROOM_API_TOKEN")
if token:
    c.JupyterHub.services = [{"name": "classroom-driver", "api_token": token}]
    c.JupyterHub.load_roles = [
        {
            "name": "classroom-driver",
            "scopes": ["admin:users", "admin:servers", "access:servers"],
            "services": ["classroom-driver"],
        }
    ]

# ------------------------------------------------------------------ the students' servers


class ClassroomSpawner(SimpleLocalProcessSpawner):
    """Local processes as the hub's user, stopped with SIGTERM first: on SIGTERM a
    Jupyter server shuts its kernels down before it exits, on SIGINT (what the hub sends
    first otherwise) it exits at once and leaves each kernel to notice on its own."""

    async def stop(self, now=False):
        await super().stop(now=True)


c.JupyterHub.spawner_class = ClassroomSpawner
c.SimpleLocalProcessSpawner.home_dir_template = str(students_dir / "{username}")
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.args = ["--ServerApp.terminals_enabled=False"] + (
    ["--allow-root"] if os.geteuid() == 0 else []
)
# The teacher's projector page through the project's Voila template, as `make present`
# serves it: Voila's lab template without its CDN links, so an offline class loads it.
c.Spawner.args += ["--VoilaConfiguration.template=offline"]
# Voila's server extension loads MathJax 2 from cdnjs unless the server's settings name
# no MathJax at all (both null, as standalone `make present` leaves them): then its page
# typesets with the MathJax JupyterLab bundles. server_config/ holds those two settings.
c.Spawner.environment = {
    "JUPYTER_PATH": str(REPO / "jupyter"),
    "JUPYTER_CONFIG_PATH": str(REPO / "classroom" / "server_config"),
}
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = START_PAGE
# A loaded 2-core machine starting thirty servers at once needs time.
c.Spawner.start_timeout = 300
c.Spawner.http_timeout = 300
c.Spawner.term_timeout = 30  # thirty servers shutting their kernels down at once
c.JupyterHub.init_spawners_timeout = 60


def copy_chapters(spawner):
    """First log-in: the student's own copy of the chapters (a folder already there,
    edited or not, is left alone). The teacher's server opens the projector page."""
    home = Path(spawner.home_dir)
    home.mkdir(parents=True, exist_ok=True)
    for folder in COPIED:
        if not (home / folder).exists():
            shutil.copytree(
                REPO / folder,
                home / folder,
                ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
            )
    if spawner.user.name == teacher:
        spawner.default_url = TEACHER_PAGE


c.Spawner.pre_spawn_hook = copy_chapters

host = socket.gethostname() if ip in ("0.0.0.0", "") else ip
# A terminal on the projector shows the students' password, which they need; the
# teacher's is shown only on the start that made it.
teacher_says = (
    passwords["teacher"]
    if "teacher" in passwords["made"]
    else f"as given, or kept in {hub_dir / 'passwords.json'}"
)
print(
    f"""
Classroom at http://{host}:{port}/ (IP={ip or "0.0.0.0"}; IP=0.0.0.0 lets the room in)
  {len(students)} students: {", ".join(students[:6])}{" ..." if len(students) > 6 else ""}
  students' password: {passwords["student"]}
  teacher: {teacher}, password: {teacher_says} (opens the projector page)
  the students' copies of the chapters: {students_dir}/<name>/
  Ctrl-C stops the hub, the proxy and every student's server.
""",
    file=sys.stderr,
    flush=True,
)
