"""Every solutions notebook runs from top to bottom, and its asserts hold.

The solutions end with asserts against values computed by minilib, so running them
is what checks that the answers are right. Discovered, not listed: a new chapter's
solutions are covered as soon as they are added.
"""

import re
from pathlib import Path

import ipykernel.kernelspec
import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SOLUTIONS = sorted((NOTEBOOKS / "solutions").glob("*.ipynb"))
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
THIS_PYTHON = "this-python"


class ThisPythonKernelSpecs(KernelSpecManager):
    """The kernel of the Python running the tests (the project's .venv), whatever
    kernelspecs are installed."""

    def get_kernel_spec(self, kernel_name):
        if kernel_name == THIS_PYTHON:
            return self.kernel_spec_class(
                resource_dir=ipykernel.kernelspec.RESOURCES,
                **ipykernel.kernelspec.get_kernel_dict(),
            )
        return super().get_kernel_spec(kernel_name)


def code_of(notebook) -> str:
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")


def test_solutions_are_found():
    assert SOLUTIONS, f"no solutions notebooks in {NOTEBOOKS / 'solutions'}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_every_chapter_with_exercises_has_solutions(chapter):
    notebook = nbformat.read(chapter, as_version=4)
    has_exercises = any(
        cell.cell_type == "markdown" and re.search(r"^#+ .*Exercises", cell.source, re.M)
        for cell in notebook.cells
    )
    if not has_exercises:
        pytest.skip("no exercises")
    assert (NOTEBOOKS / "solutions" / f"{chapter.stem}_solutions.ipynb").exists()


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda path: path.stem)
def test_solutions_notebook_runs_and_its_asserts_hold(path):
    notebook = nbformat.read(path, as_version=4)
    # A solutions notebook without asserts could not fail: it would check nothing.
    assert re.search(r"^\s*assert\b", code_of(notebook), re.M), (
        f"{path.name} asserts nothing"
    )
    kernel = KernelManager(
        kernel_name=THIS_PYTHON, kernel_spec_manager=ThisPythonKernelSpecs()
    )
    client = NotebookClient(
        notebook,
        km=kernel,
        timeout=300,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, when an assert fails
