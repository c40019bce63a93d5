"""Set-up files agree with each other, and data/ is exactly what its script writes."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement.strip(), maxsplit=1)[0].lower()


def test_environment_yml_names_the_same_packages_as_the_notebooks_extra():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extra = {_name(r) for r in project["project"]["optional-dependencies"]["notebooks"]}
    lines = (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines()
    start = lines.index("dependencies:") + 1
    # conda packages, and PyPI-only packages in the pip: section (6-space indent)
    conda = {_name(line.strip()[2:]) for line in lines[start:]
             if re.match(r"^  (?:    )?- [A-Za-z][\w.-]*($|[<>= ])", line)}
    assert conda - {"python", "pip"} == extra
    assert "      - -e ." in lines  # the library itself, from this checkout


def test_core_modules_use_the_standard_library_only():
    allowed = set(sys.stdlib_module_names) | {"minilib"}
    for path in (ROOT / "minilib").glob("*.py"):
        for match in re.finditer(r"^(?:from|import) ([a-zA-Z_]\w*)", path.read_text(encoding="utf-8"), re.M):
            assert match.group(1) in allowed, f"{path.name} imports {match.group(1)}"


def test_data_is_reproduced_byte_for_byte_by_its_script(tmp_path):
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(tmp_path / "clone")], check=True)
    clone = tmp_path / "clone"
    # the clone has the committed data; regenerate it there and compare with the committed files
    for script in sorted((ROOT / "scripts").glob("make_*.py")):
        subprocess.run([sys.executable, str(clone / "scripts" / script.name)], cwd=clone, check=True,
                       capture_output=True)
    status = subprocess.run(["git", "status", "--porcelain", "--", "data"], cwd=clone, capture_output=True,
                            text=True, check=True).stdout
    assert status == "", f"data/ differs from what scripts/ write:\n{status}"


def test_readme_six_paths_table_is_the_generated_one():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    generated = (ROOT / "docs" / "six_paths.md").read_text(encoding="utf-8")  # checked against the code in test_facts
    block = readme.split("<!-- six-paths table:", 1)[1].split("<!-- end of six-paths table -->", 1)[0]
    rows = [line for line in block.splitlines() if line.startswith("| ")]
    assert len(rows) >= 8
    for row in rows:
        assert row in generated.splitlines(), f"README row not in docs/six_paths.md: {row}"
