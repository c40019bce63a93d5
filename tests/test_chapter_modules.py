"""docs/library_map.md says which lab modules serve which chapter; a chapter's notebook
imports its own views and the shared pieces, so the map stays true and a new chapter
is a new notebook and new modules."""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# what every chapter may use: the prose checks, style, tables, number boxes, the
# widget shell and the self-checks
SHARED = {"prose", "style", "tables", "numbers", "shown", "exercises", "source"}


def mapped_modules() -> dict:
    """{chapter number: the lab modules its row of the map names}."""
    text = (ROOT / "docs" / "library_map.md").read_text(encoding="utf-8")
    table = text.split("| chapter | its views |", 1)[1].split("\n\n", 1)[0]
    mapped = {}
    for row in table.splitlines()[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        numbers = [int(n) for n in re.findall(r"\d+", cells[0])]
        chapters = range(numbers[0], numbers[-1] + 1)
        modules = set(re.findall(r"`lab/([a-z_]+)(?:\.py|/)", " ".join(cells[1:])))
        for chapter in chapters:
            mapped[chapter] = modules
    return mapped


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_a_chapter_imports_the_lab_modules_the_map_gives_it(chapter):
    notebook = nbformat.read(chapter, as_version=4)
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    imported = set(re.findall(r"minilib\.lab\.([a-z_]+)", code))
    number = int(chapter.stem[:2])
    mapped = mapped_modules()
    assert number in mapped, f"{chapter.name} has no row in docs/library_map.md"
    assert imported - SHARED <= mapped[number], (
        f"{chapter.name} imports {sorted(imported - SHARED - mapped[number])}, which "
        "its row of docs/library_map.md does not name"
    )
