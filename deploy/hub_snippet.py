"""The classroom's part of a JupyterHub configuration on a hub of its own (The Littlest
JupyterHub, Zero to JupyterHub): each student's own copy of the chapters through
nbgitpuller, and the teacher (an admin) on the projector page.

- TLJH: deploy/tljh/setup-classroom.sh installs it as
  /opt/tljh/config/jupyterhub_config.d/classroom.py (TLJH loads every .py there).
- Z2JH: `helm upgrade ... --set-file hub.extraConfig.classroom=deploy/hub_snippet.py`.

Who may log in is set beside it, in each system's own terms (tljh-config, config.yaml):
the same shared-password authenticator, student names and teacher as `make classroom`.

Every server starts at an nbgitpuller link: the first time it clones the repository into
the student's home, later it merges the teacher's new commits without touching what the
student changed (nbgitpuller's automatic merging), then opens the page. REPO_URL and
BRANCH are this project's address; the setup script and the deploy README say where to
set them.
"""

from urllib.parse import urlencode

REPO_URL = "https://github.com/OWNER/context-compression-lab"
BRANCH = "main"
FOLDER = REPO_URL.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
STUDENT_PAGE = f"lab/tree/{FOLDER}/notebooks/00_start_here.ipynb"
TEACHER_PAGE = f"voila/render/{FOLDER}/notebooks/present/long_session_lab.ipynb"


def git_pull(urlpath: str) -> str:
    """A server-relative nbgitpuller URL (its documented repo, branch, urlpath)."""
    return "/git-pull?" + urlencode(
        {"repo": REPO_URL, "branch": BRANCH, "urlpath": urlpath}
    )


def open_the_right_page(spawner):
    """Students land in chapter 00 of their copy; an admin (the teacher) on the
    projector page of theirs."""
    spawner.default_url = git_pull(TEACHER_PAGE if spawner.user.admin else STUDENT_PAGE)


c = get_config()  # noqa: F821 (JupyterHub's config loader provides it)
c.Spawner.default_url = git_pull(STUDENT_PAGE)
c.Spawner.pre_spawn_hook = open_the_right_page
