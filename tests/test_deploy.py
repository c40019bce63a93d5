"""The classroom's hub configurations, checked without starting a hub.

- classroom/jupyterhub_config.py (`make classroom`), loaded by JupyterHub's own config
  loader: students by name or count, the teacher an admin with a password of its own,
  passwords kept across starts, bad names and short passwords refused in one line.
- deploy/: the Zero to JupyterHub values parse and their hub.config loads into
  JupyterHub's authenticator; hub_snippet.py (TLJH and Z2JH) loads in JupyterHub's
  loader and sends students and the teacher to nbgitpuller links to files that exist;
  the TLJH script is valid bash; deploy/links.py builds nbgitpuller and Binder links
  with their documented parameters, to files that exist; environment.yml, which Binder
  and the Z2JH image are built from, installs this checkout.

JupyterHub is pyproject's classroom extra (`make test` installs it).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "classroom" / "jupyterhub_config.py"
DEPLOY = ROOT / "deploy"

jupyterhub_app = pytest.importorskip(
    "jupyterhub.app", reason="JupyterHub is the classroom extra: make test installs it"
)
yaml = pytest.importorskip("yaml")
sys.path.insert(0, str(DEPLOY))

import links  # noqa: E402

TEACHER_PASSWORD = "t" * 32


def load_hub_config(path: Path):
    """The config JupyterHub itself would load from `path`."""
    app = jupyterhub_app.JupyterHub()
    app.load_config_file(str(path))
    return app.config


@pytest.fixture
def classroom_env(tmp_path, monkeypatch):
    for name in ("STUDENTS", "PASSWORD", "TEACHER", "TEACHER_PASSWORD", "PORT", "IP"):
        monkeypatch.delenv(f"CLASSROOM_{name}", raising=False)
    monkeypatch.setenv("CLASSROOM_DIR", str(tmp_path))
    return monkeypatch


def test_make_classroom_config_names_students_and_a_teacher(classroom_env, tmp_path):
    classroom_env.setenv("CLASSROOM_STUDENTS", "Ana ben,cai")
    classroom_env.setenv("CLASSROOM_PASSWORD", "class-password")
    classroom_env.setenv("CLASSROOM_PORT", "9100")
    config = load_hub_config(CONFIG)
    assert config.JupyterHub.authenticator_class == "shared-password"
    spawner = config.JupyterHub.spawner_class
    from jupyterhub.spawner import SimpleLocalProcessSpawner

    assert issubclass(spawner, SimpleLocalProcessSpawner), spawner
    assert config.Authenticator.allowed_users == {"ana", "ben", "cai"}
    assert config.Authenticator.admin_users == {"teacher"}
    assert config.SharedPasswordAuthenticator.user_password == "class-password"
    teacher_password = config.SharedPasswordAuthenticator.admin_password
    assert len(teacher_password) >= 32 and teacher_password != "class-password"
    assert (config.JupyterHub.port, config.JupyterHub.hub_port) == (9100, 9102)
    assert config.ConfigurableHTTPProxy.api_url == "http://127.0.0.1:9101"
    assert config.JupyterHub.ip == "127.0.0.1"
    assert (
        Path(config.ConfigurableHTTPProxy.command[1]) == ROOT / "classroom" / "proxy.py"
    )
    assert str(tmp_path) in config.JupyterHub.db_url
    assert config.SimpleLocalProcessSpawner.home_dir_template == str(
        tmp_path / "students" / "{username}"
    )
    # the teacher's page through the project's offline Voila template, as make present
    assert "--VoilaConfiguration.template=offline" in config.Spawner.args
    template = Path(config.Spawner.environment["JUPYTER_PATH"]) / "voila" / "templates"
    assert (template / "offline" / "index.html.j2").is_file()
    # JupyterHub's own authenticator accepts the passwords (it checks their lengths).
    from jupyterhub.authenticators.shared import SharedPasswordAuthenticator

    authenticator = SharedPasswordAuthenticator(config=config)
    assert authenticator.user_password == "class-password"
    # The made teacher password is kept for the next start, readable by the hub only.
    kept = tmp_path / "hub" / "passwords.json"
    assert json.loads(kept.read_text()) == {"teacher": teacher_password}
    assert kept.stat().st_mode & 0o077 == 0
    again = load_hub_config(CONFIG)
    assert again.SharedPasswordAuthenticator.admin_password == teacher_password


def test_make_classroom_config_makes_numbered_students(classroom_env):
    classroom_env.setenv("CLASSROOM_STUDENTS", "12")
    config = load_hub_config(CONFIG)
    assert sorted(config.Authenticator.allowed_users) == [
        f"student{i:02d}" for i in range(1, 13)
    ]
    # no PASSWORD given: one is made (and printed), at least JupyterHub's 8 characters
    assert len(config.SharedPasswordAuthenticator.user_password) >= 8


@pytest.mark.parametrize(
    "variables, says",
    [
        ({"CLASSROOM_STUDENTS": "ana b/en"}, "'b/en' is not a usable account name"),
        ({"CLASSROOM_STUDENTS": "ana ana"}, "names someone twice"),
        ({"CLASSROOM_PASSWORD": "short"}, "PASSWORD must have at least 8 characters"),
        ({"CLASSROOM_TEACHER_PASSWORD": "too short"}, "at least 32 characters"),
        ({"CLASSROOM_STUDENTS": "ana teacher"}, "TEACHER='teacher'"),
    ],
)
def test_make_classroom_refuses_in_one_line(classroom_env, capsys, variables, says):
    for name, value in variables.items():
        classroom_env.setenv(name, value)
    with pytest.raises(SystemExit):
        load_hub_config(CONFIG)
    assert says in capsys.readouterr().err


def test_the_copy_hook_copies_once_and_sends_the_teacher_to_the_projector(
    classroom_env, tmp_path
):
    classroom_env.setenv("CLASSROOM_STUDENTS", "ana")
    config = load_hub_config(CONFIG)
    hook = config.Spawner.pre_spawn_hook

    class Spawner:
        def __init__(self, name):
            self.user = type("User", (), {"name": name})()
            self.home_dir = str(tmp_path / "students" / name)
            self.default_url = config.Spawner.default_url

    ana = Spawner("ana")
    hook(ana)
    notebook = Path(ana.home_dir) / "notebooks" / "06_long_session_lab.ipynb"
    assert notebook.read_bytes() == (ROOT / "notebooks" / notebook.name).read_bytes()
    assert (Path(ana.home_dir) / "data" / "session.json").is_file()
    assert ana.default_url == "/lab/tree/notebooks/00_start_here.ipynb"
    notebook.write_text("ana's own")
    hook(ana)  # a second start keeps the student's copy as it is
    assert notebook.read_text() == "ana's own"
    teacher = Spawner("teacher")
    hook(teacher)
    assert teacher.default_url.startswith("/voila/render/notebooks/present/")
    assert (Path(teacher.home_dir) / teacher.default_url.split("/render/")[1]).is_file()


# ------------------------------------------------------------------ deploy/


def repo_path(urlpath: str, folder: str = "") -> Path:
    """The checkout's file a server-relative urlpath (lab/tree/..., voila/render/...)
    opens, with the clone's folder name removed."""
    path = urlpath.split("/", 2)[2]
    if folder:
        assert path.startswith(folder + "/"), (path, folder)
        path = path[len(folder) + 1 :]
    return ROOT / path


def test_z2jh_values_load_into_jupyterhubs_authenticator():
    values = yaml.safe_load((DEPLOY / "z2jh" / "config.yaml").read_text())
    assert set(values) <= {
        "hub",
        "singleuser",
        "cull",
        "prePuller",
        "proxy",
        "scheduling",
    }
    from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
    from traitlets.config import Config

    hub_config = Config(values["hub"]["config"])
    # the passwords are given at install time (--set), never kept in the file
    assert "SharedPasswordAuthenticator" not in values["hub"]["config"]
    hub_config.SharedPasswordAuthenticator.user_password = "class-password"
    hub_config.SharedPasswordAuthenticator.admin_password = TEACHER_PASSWORD
    app = jupyterhub_app.JupyterHub(config=hub_config)
    assert app.authenticator_class is SharedPasswordAuthenticator
    authenticator = SharedPasswordAuthenticator(config=hub_config)
    assert authenticator.admin_users == {"teacher"}
    assert {"ana", "ben", "cai"} <= authenticator.allowed_users
    singleuser = values["singleuser"]
    assert {"name", "tag"} <= set(singleuser["image"])
    assert singleuser["memory"]["limit"] and singleuser["memory"]["guarantee"]


def test_hub_snippet_sends_students_and_teacher_through_nbgitpuller():
    config = load_hub_config(DEPLOY / "hub_snippet.py")
    folder = "context-compression-lab"

    def opened(default_url: str) -> Path:
        parts = urlsplit(default_url)
        assert parts.path == "/git-pull", default_url
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        assert set(query) == {"repo", "branch", "urlpath"}, query
        assert query["repo"].endswith("/" + folder)
        return repo_path(query["urlpath"], folder)

    assert opened(config.Spawner.default_url) == ROOT / links.CHAPTER
    hook = config.Spawner.pre_spawn_hook
    for admin, page in ((False, links.CHAPTER), (True, links.PROJECTOR)):
        spawner = type("S", (), {"user": type("U", (), {"admin": admin})()})()
        hook(spawner)
        assert opened(spawner.default_url) == ROOT / page
        assert (ROOT / page).is_file()


def test_tljh_setup_script_is_valid_bash_and_installs_the_snippet():
    script = DEPLOY / "tljh" / "setup-classroom.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text()
    for key in (
        "auth.type shared-password",
        "auth.SharedPasswordAuthenticator.user_password",
        "auth.SharedPasswordAuthenticator.admin_password",
        "users.allowed",
        "users.admin",
        "jupyterhub_config.d/classroom.py",
        "deploy/hub_snippet.py",
    ):
        assert key in text, key


def test_tljh_setup_script_writes_the_snippet_with_the_repository(tmp_path):
    """The script's sed, run on the snippet: it sets REPO_URL and BRANCH, and the result
    still loads in JupyterHub's loader."""
    if shutil.which("sed") is None:
        pytest.skip("no sed")
    out = tmp_path / "classroom.py"
    with out.open("w") as file:
        subprocess.run(
            [
                "sed",
                "-e",
                's|^REPO_URL = .*|REPO_URL = "https://example.org/me/lab.git"|',
                "-e",
                's|^BRANCH = .*|BRANCH = "spring"|',
                str(DEPLOY / "hub_snippet.py"),
            ],
            stdout=file,
            check=True,
        )
    query = parse_qs(urlsplit(load_hub_config(out).Spawner.default_url).query)
    assert query["repo"] == ["https://example.org/me/lab.git"]
    assert query["branch"] == ["spring"]
    assert query["urlpath"][0].startswith("lab/tree/lab/notebooks/")


def test_links_follow_nbgitpuller_and_binder_and_open_files_that_exist():
    repo = "https://github.com/owner/context-compression-lab"
    built = links.links("https://hub.example.edu/", repo, "main")
    for label, link in built.items():
        parts = urlsplit(link)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if label.startswith("Binder"):
            assert (parts.netloc, parts.path) == (
                "mybinder.org",
                "/v2/gh/owner/context-compression-lab/main",
            )
            assert set(query) == {"urlpath"}
            assert repo_path(query["urlpath"]).is_file(), link
        else:
            assert (parts.netloc, parts.path) == (
                "hub.example.edu",
                "/hub/user-redirect/git-pull",
            )
            assert query["repo"] == repo and query["branch"] == "main"
            assert repo_path(query["urlpath"], "context-compression-lab").is_file(), link
    assert "voila/render/" in built["teacher (nbgitpuller, the projector page)"].replace(
        "%2F", "/"
    )
    with pytest.raises(ValueError):
        links.binder_link("https://gitlab.com/owner/lab", "main", links.CHAPTER)


def test_environment_yml_builds_this_checkout_for_binder_and_the_image():
    environment = yaml.safe_load((ROOT / "environment.yml").read_text())
    dependencies = environment["dependencies"]
    assert "pip" in dependencies
    pip = next(d["pip"] for d in dependencies if isinstance(d, dict))
    assert "-e ." in pip  # the lab itself; repo2docker installs it after copying the repo
    assert any(str(d).startswith("python>=3.10") for d in dependencies)
    assert "environment.yml" in (DEPLOY / "z2jh" / "Dockerfile").read_text()
    # Binder reads a binder/ folder first: there is none, so it reads environment.yml.
    assert not (ROOT / "binder").exists() and not (ROOT / ".binder").exists()
