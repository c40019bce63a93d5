"""Set-up files agree with each other, and data/ is exactly what its script writes."""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_names_the_same_packages_as_the_notebooks_extra():
    tomllib = pytest.importorskip(
        "tomllib", reason="tomllib is in the standard library from Python 3.11"
    )
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extra = {_name(r) for r in project["project"]["optional-dependencies"]["notebooks"]}
    lines = (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines()
    start = lines.index("dependencies:") + 1
    # conda packages, and PyPI-only packages in the pip: section (6-space indent)
    conda = {
        _name(line.strip()[2:])
        for line in lines[start:]
        if re.match(r"^  (?:    )?- [A-Za-z][\w.-]*($|[<>= ])", line)
    }
    assert conda - {"python", "pip"} == extra
    assert "      - -e ." in lines  # the library itself, from this checkout


def test_data_is_reproduced_byte_for_byte_by_its_script(tmp_path):
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(tmp_path / "clone")],
        check=True,
    )
    clone = tmp_path / "clone"
    # the clone has the committed data; regenerate it there and compare with the committed
    # files. The session first, as `make data` does: the other scripts read it.
    scripts = sorted((ROOT / "scripts").glob("make_*.py"))
    scripts.sort(key=lambda script: script.name != "make_session.py")
    for script in scripts:
        subprocess.run(
            [sys.executable, str(clone / "scripts" / script.name)],
            cwd=clone,
            check=True,
            capture_output=True,
        )
    status = subprocess.run(
        ["git", "status", "--porcelain", "--", "data"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status == "", f"data/ differs from what scripts/ write:\n{status}"


def test_fidelity_pages_six_paths_table_is_the_generated_one():
    readme = (ROOT / "docs" / "fidelity.md").read_text(encoding="utf-8")
    generated = (ROOT / "docs" / "six_paths.md").read_text(
        encoding="utf-8"
    )  # checked against the code in test_facts
    block = readme.split("<!-- six-paths table:", 1)[1].split(
        "<!-- end of six-paths table -->", 1
    )[0]
    rows = [line for line in block.splitlines() if line.startswith("| ")]
    assert len(rows) >= 8
    for row in rows:
        assert row in generated.splitlines(), (
            f"docs/fidelity.md row not in docs/six_paths.md: {row}"
        )


def test_every_package_folder_is_listed_for_the_wheel():
    tomllib = pytest.importorskip("tomllib")
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
            "packages"
        ]
    )
    found = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "minilib").rglob("__init__.py")
    }
    assert found | {"minilib.data"} == listed


def test_a_plain_install_runs_the_cli_from_site_packages(tmp_path):
    """pip install . (not editable) into a fresh venv, then the CLI finds its bundled
    data."""
    wheel_dir, venv = tmp_path / "wheel", tmp_path / "venv"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "--wheel-dir",
            str(wheel_dir),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheel_dir.glob("*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert installed.returncode == 0, installed.stderr
    done = subprocess.run(
        [str(python), "-m", "minilib", "run", "--out", str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )  # not the checkout
    assert done.returncode == 0, done.stderr
    assert (
        "round 13: 1,193 tokens sent against 17,991 without compression (93% less)"
        in done.stdout
    )
    where = subprocess.run(
        [str(python), "-c", "import minilib.session as s; print(s.DATA_DIR)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    assert (
        str(venv) in where
        and (Path(where.strip()) / "workspace" / "long_notes.txt").is_file()
    )


def _make_dry_run(target: str) -> str:
    return subprocess.run(
        ["make", "-n", "--always-make", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_make_lab_and_present_start_for_root_too():
    command = _make_dry_run("lab").replace("\\\n", " ")  # the recipe's continued line
    lab = [line for line in command.splitlines() if "jupyter lab" in line]
    assert len(lab) == 1 and "notebooks/00_start_here.ipynb" in lab[0]
    # served from the checkout's top: the chapters' links to ../docs/ resolve
    assert f"--ServerApp.root_dir={ROOT}" in lab[0]
    # JupyterLab exits at once as root without --allow-root (containers, cloud VMs, CI).
    assert ("--allow-root" in lab[0]) == (os.geteuid() == 0)
    present = [
        line
        for line in _make_dry_run("present").replace("\\\n", " ").splitlines()
        if "voila" in line
    ]
    assert len(present) == 1 and "--no-browser" in present[0]
    # the project's template, which fetches nothing from a CDN, found on JUPYTER_PATH
    assert "--template=offline" in present[0]
    assert f"JUPYTER_PATH={ROOT / 'jupyter'}" in present[0]
    template = ROOT / "jupyter" / "voila" / "templates" / "offline" / "index.html.j2"
    assert template.is_file()
    # the project's own settings switch JupyterLab's news pop-up off
    overrides = json.loads((ROOT / "jupyter" / "overrides.json").read_text())
    notification = overrides["@jupyterlab/apputils-extension:notification"]
    assert notification["fetchNews"] == "false"
    assert "overrides.json" in _make_dry_run(".venv/.installed-stamp")


@pytest.mark.skipif(os.geteuid() != 0, reason="checks the root case")
def test_make_lab_serves_jupyterlab_as_root(tmp_path):
    port = 18931
    process = subprocess.Popen(
        [
            "make",
            "lab",
            f"LAB_ARGS=--no-browser --port={port} "
            "--ServerApp.token= --ServerApp.ip=127.0.0.1",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                status = urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/lab", timeout=2
                ).status
                break
            except OSError:
                time.sleep(0.5)
        output = b"" if process.poll() is None else process.stdout.read()
        assert status == 200, output.decode(errors="replace")[-2000:]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


def test_every_make_target_installs_the_checkout_editable():
    """A plain `pip install .` into .venv would shadow the editable install, and then
    `minilib.data` (data/, mapped by the editable finder) no longer imports from the
    checkout: every later `make test` fails. bench-scale did that once."""
    makefile = (ROOT / "Makefile").read_text()
    installs = re.findall(r"pip install[^\n]*", makefile)
    assert installs and all(" -e " in line for line in installs if "'." in line), installs
