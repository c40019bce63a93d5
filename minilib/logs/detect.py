"""From text to a parsed document, and from a document to the shape that reads it.

Nothing here looks at a file name. The text is one JSON value, or JSON Lines: the
whole text is not one JSON value but its first non-empty line parses as an object
(then every non-empty line must be an object, and a damaged one is named by its
line number). A single JSON object is also offered to the line shapes, as a
one-line file. Each shape's `detect` answers None when the document is its shape,
or a few words on what was missing; the first shape that fits reads the file.
"""

import json
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from .base import Builder, LogFileError


@dataclass
class Doc:
    """A parsed log: `value` is the JSON value, or the list of objects of a JSONL file."""

    value: object
    lines: Optional[List[int]] = None  # line numbers of a JSONL file's objects

    def at(self, index: int, prefix: str) -> str:
        """Where item `index` sits: its line in a JSONL file, else `prefix[index]`."""
        return f"line {self.lines[index]}" if self.lines else f"{prefix}[{index}]"

    def line_objects(self) -> Optional[List[Tuple[int, dict]]]:
        """(line number, object) pairs for the line shapes; a lone object is line 1."""
        if self.lines:
            return list(zip(self.lines, self.value))
        if isinstance(self.value, dict):
            return [(1, self.value)]
        return None


@dataclass
class Shape:
    name: str
    detect: Callable[[Doc], Optional[str]]
    read: Callable[[Doc, Builder], None]


def parse_text(text: str, source: str) -> Doc:
    """The Doc of a file's text, or a one-line LogFileError on where the JSON breaks."""
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise LogFileError(f"{source}: the file is empty")
    try:
        return Doc(json.loads(text))
    except json.JSONDecodeError as whole:
        numbered = [
            (number, line)
            for number, line in enumerate(text.splitlines(), 1)
            if line.strip()
        ]
        try:
            head = json.loads(numbered[0][1])
        except json.JSONDecodeError:
            head = None
        if not isinstance(head, dict):  # not JSON Lines either: the whole-file error
            raise LogFileError(
                f"{source}: not valid JSON ({whole.msg}, line "
                f"{whole.lineno} column {whole.colno})"
            ) from None
    objects = []
    for number, line in numbered:
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise LogFileError(
                f"{source}: line {number} is not valid JSON "
                f"({error.msg}, column {error.colno})"
            ) from None
        if not isinstance(item, dict):
            raise LogFileError(f"{source}: line {number} is not a JSON object")
        objects.append(item)
    return Doc(objects, [number for number, _ in numbered])


def find_shape(doc: Doc, shapes: List[Shape], source: str) -> Shape:
    """The first shape whose detect accepts `doc`, or an error naming what each lacked."""
    tried = []
    for shape in shapes:
        missing = shape.detect(doc)
        if missing is None:
            return shape
        tried.append(f"{shape.name} ({missing})")
    raise LogFileError(f"{source}: not a known agent log: tried " + ", ".join(tried))
