"""Every relative link in a chapter's text opens a file of the checkout.

`make lab` serves the checkout's top, so a link like ../docs/references.md from
notebooks/02_token_estimator.ipynb resolves the way it does on disk.
"""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(
    path
    for path in (ROOT / "notebooks").rglob("*.ipynb")
    if ".ipynb_checkpoints" not in path.parts  # JupyterLab's autosave copies
)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def relative_links(path: Path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        for target in LINK.findall(cell.source):
            if not re.match(r"[a-z]+:|#", target):  # http:, mailto:, #anchors
                yield target.split("#", 1)[0]


def test_the_chapters_have_links_to_check():
    assert any(list(relative_links(path)) for path in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_relative_link_opens_a_file(path):
    missing = [
        target
        for target in relative_links(path)
        if not (path.parent / target).resolve().exists()
    ]
    assert not missing, f"{path.relative_to(ROOT)} links to missing {missing}"
