"""Strip per-run noise from executed notebooks: execution timestamps in cell metadata,
and a cell's printed text split into several outputs where the kernel flushed between
two prints (one output per stream, as the cell printed it).

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
        if cell.cell_type == "code":
            cell.outputs = _joined_streams(cell.outputs)
    cleaned = nbformat.writes(notebook) + "\n"
    if cleaned != text:
        path.write_text(cleaned, encoding="utf-8")
        return True
    return False


def _joined_streams(outputs: list) -> list:
    """Consecutive outputs of one stream (stdout, stderr) as one."""
    joined: list = []
    for output in outputs:
        last = joined[-1] if joined else None
        if (
            output.output_type == "stream"
            and last is not None
            and last.output_type == "stream"
            and last.name == output.name
        ):
            last.text += output.text
        else:
            joined.append(output)
    return joined


if __name__ == "__main__":
    paths = [Path(arg) for arg in sys.argv[1:]] or sorted(
        Path("notebooks").rglob("*.ipynb")
    )
    changed = [str(path) for path in paths if clean(path)]
    print(f"cleaned {len(changed)} of {len(paths)} notebooks")
