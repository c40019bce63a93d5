"""What a chapter prints fits one line of a notebook at 1280 x 720 beside the file
browser.

JupyterLab breaks a printed line that is too long for the output area anywhere, in the
middle of a word or of a number ("1,\\n053 tokens"). At 1280 px with the file browser
open the area holds 107 characters of its monospace font (measured in headless
Chromium), so every line a chapter prints (the stored outputs nbval compares) is at
most 106; longer text is wrapped at its spaces by the cell that prints it.
"""

import unicodedata
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WIDEST = 106  # characters, East Asian wide ones counted twice


def columns(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda path: path.stem)
def test_every_printed_line_fits_the_output_area(path):
    notebook = nbformat.read(path, as_version=4)
    too_long = [
        (number, columns(line), line[:60])
        for number, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream"
        for line in output["text"].splitlines()
        if columns(line) > WIDEST
    ]
    assert too_long == [], f"{path.name}: (cell, columns, start) {too_long}"
