"""Strip per-run noise from executed notebooks: execution timestamps in cell metadata.

`make notebooks` runs this after executing them, so a re-run that changes no output
changes no file (nbval compares outputs; timestamps would only make diffs noisy).
"""

import sys
from pathlib import Path

import nbformat


def clean(path: Path) -> bool:
    """Remove cell execution timestamps from one notebook; True if the file changed."""
    text = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(text, as_version=4)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    cleaned = nbformat.writes(notebook) + "\n"
    if cleaned != text:
        path.write_text(cleaned, encoding="utf-8")
        return True
    return False


if __name__ == "__main__":
    paths = [Path(arg) for arg in sys.argv[1:]] or sorted(
        Path("notebooks").rglob("*.ipynb")
    )
    changed = [str(path) for path in paths if clean(path)]
    print(f"cleaned {len(changed)} of {len(paths)} notebooks")
