"""scripts/clean_notebooks.py: what it strips from an executed notebook, and what it
keeps."""

import importlib.util
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def _clean():
    spec = importlib.util.spec_from_file_location(
        "clean_notebooks", ROOT / "scripts" / "clean_notebooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.clean


def test_a_cells_printed_text_is_one_output_per_stream_and_timestamps_go(tmp_path):
    stream = nbformat.v4.new_output
    cell = nbformat.v4.new_code_cell("print(1); print(2)")
    cell.metadata["execution"] = {"iopub.status.busy": "2026-12-07T06:00:00Z"}
    cell.outputs = [
        stream("stream", name="stdout", text="1\n"),
        stream("stream", name="stdout", text="2\n"),  # the kernel flushed between
        stream("stream", name="stderr", text="warning\n"),
        stream("stream", name="stdout", text="3\n"),
        stream("execute_result", data={"text/plain": "4"}, execution_count=1),
    ]
    path = tmp_path / "run.ipynb"
    path.write_text(nbformat.writes(nbformat.v4.new_notebook(cells=[cell])))
    assert _clean()(path) is True
    cleaned = nbformat.read(path, as_version=4).cells[0]
    assert "execution" not in cleaned.metadata
    shown = [(o.output_type, o.get("name"), o.get("text")) for o in cleaned.outputs]
    assert shown == [
        ("stream", "stdout", "1\n2\n"),
        ("stream", "stderr", "warning\n"),
        ("stream", "stdout", "3\n"),  # after another stream: its own, in order
        ("execute_result", None, None),
    ]
    assert _clean()(path) is False  # cleaned once, nothing left to change
