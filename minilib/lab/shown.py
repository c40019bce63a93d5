"""One display rule for every interactive view of the lab."""

import datetime
import html

import ipywidgets as widgets

from ..logs import split_upload
from .style import PROBLEM_CSS, REPORT_CSS, WRAPPED_TEXT_CSS


class ShownAsWidget:
    """Displays as its `widget`, with a short, stable text/plain.

    A widget tree's own repr embeds every value and the figure's random uids;
    the one-line text is what a notebook viewer without a kernel shows, and
    what nbval compares.
    """

    widget: widgets.Widget

    def text_form(self) -> str:
        # what a page shows before the notebook is run: say how to get the widget
        return f"{type(self).__name__} (run the notebook to use it)"

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = self.text_form()
        return bundle


class TextUploadExplorer(ShownAsWidget):
    """Upload a log: `describe(name, bytes)` -> (text, is_a_problem) shown as it
    arrives, a problem in the problem colours. `describe` is a pure function, so tests
    call it, and `render`, without a browser."""

    def __init__(self, describe, text_form: str, doing: str = "measuring it"):
        self.describe, self._text_form = describe, text_form
        self.doing = doing  # what the line shown while the upload is read says
        self.problem = False
        # several files at once: one task's files (Cline's two) are read together
        self.upload = widgets.FileUpload(
            accept="", multiple=True, description="Upload a log"
        )
        self.output = widgets.HTML()
        self.upload.observe(lambda change: self.render(), "value")
        self.widget = widgets.VBox([self.upload, self.output])

    def render(self):
        if not self.upload.value:
            return None
        files = upload_files(self.upload)
        # at once: a large log takes a moment, which must not look like nothing
        self.output.value = (
            f'<pre style="{REPORT_CSS}padding:6px 10px;{WRAPPED_TEXT_CSS}'
            f'font-size:13px">{html.escape(reading_line(files, self.doing))}</pre>'
        )
        name, content, _ = split_upload(files)
        text, problem = described(self.describe, name, content)
        self.problem = problem  # the upload was refused: what it shows is why
        style = PROBLEM_CSS if problem else REPORT_CSS
        self.output.value = (
            f'<pre style="{style}padding:6px 10px;{WRAPPED_TEXT_CSS}'
            f'font-size:13px">{html.escape(text)}</pre>'
        )
        return text

    def text_form(self) -> str:
        return self._text_form


def size_words(size: int) -> str:
    """A file's size as a person reads it: 2.3 MB, or 8,412 bytes."""
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size:,} bytes"


def reading_line(files, doing: str) -> str:
    """The line shown at once when an upload arrives, before the seconds a large log
    takes: which file, how large, and what is being done with it."""
    name, content, beside = split_upload(files)
    also = f" with {', '.join(beside)}" if beside else ""
    return f"{name} ({size_words(len(content))}){also}: reading it, {doing}..."


def upload_value(files) -> tuple:
    """What a browser sets as a FileUpload's value (ipywidgets 8) when `files`,
    (name, bytes) pairs, are chosen at once: how tests and benchmarks upload."""
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
    return tuple(
        {
            "name": name,
            "type": "",
            "size": len(content),
            "content": memoryview(bytes(content)),
            "last_modified": when,
        }
        for name, content in files
    )


def upload_files(upload: widgets.FileUpload) -> list:
    """(name, bytes) of each file of the upload (ipywidgets 8's value)."""
    return [(item["name"], bytes(item["content"])) for item in upload.value]


def described(describe, name: str, content: bytes, parts: int = 2, **options) -> tuple:
    """`describe(name, content, **options)`: (words, ..., is_a_problem), `parts`
    values. Where
    it fails in a way no log should make it (a fault of the lab's), words saying so,
    not a traceback in the log console with the last upload's words left on screen;
    the values between are None."""
    try:
        return describe(name, bytes(content), **options)
    except Exception as error:  # the lab's fault: said, and the file is untouched
        words = (
            f"{name}: the lab failed to read it ({type(error).__name__}: {error}). "
            "That is a fault in the lab, not in your file; please report it with "
            "the file."
        )
        return (words, *[None] * (parts - 2), True)


def upload_text(name: str, content: bytes, describe):
    """(text, is_a_problem) of an uploaded log: `describe(text)` of its text, or one
    line saying why not (what the bytes are instead of text, or a LogFileError naming
    the place)."""
    from ..logs import LogFileError, decoded_text

    try:
        return describe(decoded_text(bytes(content), name)), False
    except LogFileError as error:
        return str(error), True
