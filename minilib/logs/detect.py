"""From text to a parsed document, and from a document to the shape that reads it.

Nothing here looks at a file name. The text is one JSON value, or JSON Lines: the
whole text is not one JSON value but its first non-empty line parses as an object
(then every non-empty line must be an object, and a damaged one is named by its
line number). A single JSON object is also offered to the line shapes, as a
one-line file. A text that does not start like JSON (a Markdown or plain-text
history) is offered as text (`Doc.value` None, `Doc.text` set) to the shapes that
read text. Each shape's `detect` answers None when the document is its shape, or a
few words on what was missing; the first shape that fits reads the file.

JSON that Python cannot hold is a clear error, not a crash: nesting deeper than its
recursion limit, or an integer of more digits than it converts.
"""

import json
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from .base import Builder, LogFileError


@dataclass
class Doc:
    """A parsed log: `value` is the JSON value, or the list of objects of a JSONL file."""

    value: object
    lines: Optional[List[int]] = None  # line numbers of a JSONL file's objects
    text: str = ""  # the file's text; the only content of a text (non-JSON) file
    # (line number, why) of each JSONL line skipped as damaged (see `parse_text`)
    bad_lines: List[Tuple[int, str]] = field(default_factory=list)

    @property
    def is_text(self) -> bool:
        """A text file (Markdown, plain text), not JSON."""
        return self.value is None and not self.lines

    def at(self, index: int, prefix: str) -> str:
        """Where item `index` sits: its line in a JSONL file, else `prefix[index]`."""
        return f"line {self.lines[index]}" if self.lines else f"{prefix}[{index}]"

    def line_objects(self) -> Optional[List[Tuple[int, dict]]]:
        """(line number, object) pairs for the line shapes; a lone object is line 1."""
        if self.is_text:
            return None
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
    reads_text: bool = False  # a text history (Markdown, plain text), not JSON
    # an agent that keeps part of a log in a file beside it (Cline: its usage):
    # beside(log, path, text_of) reads that file into the loaded log; text_of(path)
    # is the file's text, or None where there is none. `companions`: those files'
    # names (an upload of one task's files tells the log from them by name)
    beside: Optional[Callable] = None
    companions: Tuple[str, ...] = ()
    # a file the agent keeps beside its log, which is not a log itself:
    # describe(doc, source) says what it is, or None
    describe: Optional[Callable[[Doc, str], Optional[str]]] = None


def _loads(text: str, where: str):
    """json.loads, with what Python cannot hold said in one line."""
    try:
        return json.loads(text)
    except RecursionError:
        raise LogFileError(f"{where}: JSON nested too deeply to read") from None
    except json.JSONDecodeError:
        raise
    except ValueError as error:  # an integer over Python's digit limit
        raise LogFileError(f"{where}: a value cannot be read ({error})") from None


def damaged_line_limit(lines: int) -> int:
    """How many damaged lines a JSONL log of `lines` non-empty lines may have skipped:
    1% of them, at least one (a run killed mid-write leaves one, a redaction tool may
    break one escape); past it the file is more likely not a log than a damaged one."""
    return max(1, -(-lines // 100))


def parse_text(text: str, source: str, strict: bool = False) -> Doc:
    """The Doc of a file's text, or a one-line LogFileError on where the JSON breaks.

    A JSON Lines file may have a few damaged lines (see `damaged_line_limit`): each is
    skipped and named in `Doc.bad_lines`; `strict` refuses the first."""
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise LogFileError(f"{source}: the file is empty")
    try:
        return Doc(_loads(text, source), text=text)
    except json.JSONDecodeError as whole:
        if text.lstrip()[0] not in "[{":  # not JSON or JSON Lines: a text history
            return Doc(None, text=text)
        numbered = [
            (number, line)
            for number, line in enumerate(text.splitlines(), 1)
            if line.strip()
        ]
        try:
            head = _loads(numbered[0][1], f"{source}: line {numbered[0][0]}")
        except json.JSONDecodeError:
            head = None
        if not isinstance(head, dict):  # not JSON Lines either: the whole-file error
            raise LogFileError(
                f"{source}: not valid JSON ({whole.msg}, line "
                f"{whole.lineno} column {whole.colno})"
            ) from None
    objects, kept, bad = [], [], []
    for number, line in numbered:
        try:
            item = _loads(line, f"{source}: line {number}")
        except json.JSONDecodeError as error:
            bad.append((number, f"is not valid JSON ({error.msg}, column {error.colno})"))
            continue
        if not isinstance(item, dict):
            bad.append((number, "is not a JSON object"))
            continue
        objects.append(item)
        kept.append(number)
    limit = damaged_line_limit(len(numbered))
    if bad and (strict or len(bad) > limit):
        number, why = bad[0]
        over = (
            ""
            if strict
            else f"; {len(bad)} of its {len(numbered)} lines are damaged, and a log is "
            f"read with at most {limit} damaged {'line' if limit == 1 else 'lines'} "
            "skipped (1% of its lines, at least one)"
        )
        raise LogFileError(f"{source}: line {number} {why}{over}")
    return Doc(objects, kept, text, bad)


BINARY_SAMPLE = 4096  # characters looked at
BINARY_MARKS = 8  # NULs or undecodable bytes in them that no text file has


def looks_binary(text: str) -> bool:
    """True when the start of `text` holds NUL characters or bytes that did not decode
    (read with errors="replace"): an image or an archive, not a text log."""
    sample = text[:BINARY_SAMPLE]
    return sample.count("\x00") + sample.count("\ufffd") >= BINARY_MARKS


def find_shape(
    doc: Doc,
    shapes: List[Shape],
    source: str,
    unknown: Optional[Callable[[Doc, str, Dict[str, str]], str]] = None,
) -> Shape:
    """The first shape whose detect accepts `doc`, or an error naming what each lacked.

    A shape's detect answers for the documents it reads (text shapes for text, the
    others for JSON); asked about the other kind, it says so and the next is tried.
    `unknown(doc, source, {shape: what it lacked})` words the error for a JSON file no
    shape claims (by default every shape and what it lacked).
    """
    tried = []
    for shape in shapes:
        if doc.is_text != getattr(shape, "reads_text", False):
            continue
        missing = shape.detect(doc)
        if missing is None:
            return shape
        tried.append(f"{shape.name} ({missing})")
    if doc.is_text:
        if looks_binary(doc.text):
            raise LogFileError(
                f"{source}: a binary file (it holds bytes no text has), not a log"
            )
        first = next((line for line in doc.text.splitlines() if line.strip()), "")
        kind = "Markdown" if first.lstrip().startswith(("#", "-", "*", ">")) else "plain"
        raise LogFileError(
            f"{source}: a {kind} text file, not JSON, and no text log shape the lab "
            "knows" + (": tried " + ", ".join(tried) if tried else "")
        )
    if unknown is not None:
        reasons = {s.name: s.detect(doc) for s in shapes if not s.reads_text}
        raise LogFileError(unknown(doc, source, reasons))
    raise LogFileError(f"{source}: not a known agent log: tried " + ", ".join(tried))
