"""Another git revision's code beside this checkout's, for a benchmark that measures
both in one run: `exported(ref, folder, ...)` puts that revision's folders under
`folder/against/<commit>`, once, and returns where (a process run with it first on
PYTHONPATH imports that revision's minilib instead of this checkout's)."""

import subprocess
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent


def exported(ref: str, folder: Path, paths: Sequence[str], data_in_package=False) -> Path:
    """`paths` of revision `ref` under `folder`/against/<commit>; `data_in_package`
    moves data/ into minilib/, as the wheel ships it (minilib.data)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", ref],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    target = folder / "against" / commit
    if not (target / "notebooks").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", commit, *paths],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
        if data_in_package:
            (target / "data").rename(target / "minilib" / "data")
    return target
