"""Chapter 7's "what real compactions kept": the agent's own compactions of a log,
measured (`minilib.measure.compactions`), as a table and as the command line prints
them; and an upload that does the same for your log. The callbacks are pure
functions of the upload's name and bytes, so tests call them directly."""

import html
from typing import List, Optional, Tuple

import ipywidgets as widgets
import pandas as pd

from ..logs.replay import TranscriptFileError, load_transcript, parse_transcript
from ..measure.compactions import CompactionReport, measure_compactions
from ..reports.compactions import format_compactions
from .shown import ShownAsWidget
from .style import PROBLEM_CSS, REPORT_CSS


def compactions_frame(reports: List[CompactionReport]) -> pd.DataFrame:
    """One row a compaction: as recorded, the three fates, the stand-in beside them."""
    columns = {
        "round": "round",
        "trigger": "trigger",
        "tokens_before": "tokens before",
        "summary_tokens": "summary tokens",
        "facts_after": "facts after",
        "held": "held",
        "reread": "re-read",
        "reread_tokens": "re-read tokens",
        "neither": "neither",
        "restorable": "restorable",
        "standin_held": "stand-in held",
    }
    rows = [report.as_dict() for report in reports]
    frame = pd.DataFrame(rows, columns=list(columns)).rename(columns=columns)
    frame.index = pd.Index([report.number for report in reports], name="compaction")
    frame["summary tokens"] = [
        "opaque" if r.summary_tokens is None else f"{r.summary_tokens:,}" for r in reports
    ]
    return frame.astype(object).where(frame.notna(), "not recorded")


def compactions_of_file(path) -> List[CompactionReport]:
    return measure_compactions(load_transcript(path))


def compactions_text(name: str, content: bytes) -> Tuple[str, bool]:
    """What the upload shows: the log's compactions, or one line saying why not
    (then True: a problem)."""
    try:
        text = bytes(content).decode("utf-8")
    except UnicodeDecodeError:
        return f"{name}: not UTF-8 text, so not a log the lab reads", True
    try:
        log = parse_transcript(text, name)
    except TranscriptFileError as error:
        return str(error), True
    return format_compactions(measure_compactions(log, text=text)), False


class CompactionsExplorer(ShownAsWidget):
    """Upload a log: its own compactions, measured as they arrive."""

    def __init__(self):
        self.upload = widgets.FileUpload(
            accept="", multiple=False, description="Upload a log"
        )
        self.output = widgets.HTML()
        self.upload.observe(lambda change: self.render(), "value")
        self.widget = widgets.VBox([self.upload, self.output])

    def render(self) -> Optional[str]:
        if not self.upload.value:
            return None
        upload = self.upload.value[0]
        text, problem = compactions_text(upload["name"], bytes(upload["content"]))
        style = PROBLEM_CSS if problem else REPORT_CSS
        self.output.value = (
            f'<pre style="{style}padding:6px 10px;white-space:pre-wrap;'
            f'font-size:13px">{html.escape(text)}</pre>'
        )
        return text

    def text_form(self) -> str:
        return "Compactions explorer (run the notebook, then upload a log)"
