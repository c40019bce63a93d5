"""The links that bring the chapters to a student without `make`: an nbgitpuller link
into a JupyterHub that already exists, and a Binder link built from environment.yml.

    python deploy/links.py --hub https://hub.example.edu \
        --repo https://github.com/OWNER/context-compression-lab --branch main

nbgitpuller (installed in the hub's user environment) clones the repository into the
student's home on the first click and merges later commits without overwriting the
student's edits; its link is <hub>/hub/user-redirect/git-pull with the documented
parameters repo, branch and urlpath (urlpath is relative to the server and starts with
the clone's folder, named after the repository). Binder builds an image from
environment.yml (repo2docker installs its `-e .` after copying the repository) and opens
urlpath in it, relative to the repository's top.
"""

import argparse
import sys
from urllib.parse import urlencode, urlsplit

CHAPTER = "notebooks/00_start_here.ipynb"
LAB = "notebooks/06_long_session_lab.ipynb"
PROJECTOR = "notebooks/present/long_session_lab.ipynb"


def folder_of(repo: str) -> str:
    """The folder nbgitpuller clones into: the repository's name."""
    return urlsplit(repo).path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")


def nbgitpuller_link(
    hub: str, repo: str, branch: str, path: str, app: str = "lab"
) -> str:
    """<hub>/hub/user-redirect/git-pull?repo=...&branch=...&urlpath=... for the file
    `path` of the repository, opened in JupyterLab (app "lab") or Voila ("voila")."""
    prefix = {"lab": "lab/tree", "voila": "voila/render"}[app]
    query = {
        "repo": repo,
        "branch": branch,
        "urlpath": f"{prefix}/{folder_of(repo)}/{path}",
    }
    return hub.rstrip("/") + "/hub/user-redirect/git-pull?" + urlencode(query)


def binder_link(
    repo: str,
    branch: str,
    path: str,
    app: str = "lab",
    binder: str = "https://mybinder.org",
) -> str:
    """<binder>/v2/gh/<owner>/<name>/<branch>?urlpath=... (a GitHub repository)."""
    parts = urlsplit(repo)
    if parts.netloc != "github.com":
        raise ValueError(f"{repo}: the Binder link is built for a GitHub repository")
    owner, name = parts.path.strip("/").removesuffix(".git").split("/")[:2]
    prefix = {"lab": "lab/tree", "voila": "voila/render"}[app]
    return f"{binder.rstrip('/')}/v2/gh/{owner}/{name}/{branch}?" + urlencode(
        {"urlpath": f"{prefix}/{path}"}
    )


def links(hub: str, repo: str, branch: str) -> dict:
    return {
        "students (nbgitpuller, chapter 00)": nbgitpuller_link(
            hub, repo, branch, CHAPTER
        ),
        "students (nbgitpuller, the long-session lab)": nbgitpuller_link(
            hub, repo, branch, LAB
        ),
        "teacher (nbgitpuller, the projector page)": nbgitpuller_link(
            hub, repo, branch, PROJECTOR, app="voila"
        ),
        "Binder (chapter 00)": binder_link(repo, branch, CHAPTER),
        "Binder (the projector page)": binder_link(repo, branch, PROJECTOR, app="voila"),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hub", required=True, help="the JupyterHub's address")
    parser.add_argument("--repo", required=True, help="this repository's git address")
    parser.add_argument("--branch", default="main")
    args = parser.parse_args(argv)
    for label, link in links(args.hub, args.repo, args.branch).items():
        print(f"{label}:\n  {link}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
