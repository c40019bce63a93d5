"""Chapter 7's "what real compactions kept": the agent's own compactions of a log,
measured (`minilib.measure.compactions`), as a table and as the command line prints
them; and an upload that does the same for your log. The callbacks are pure
functions of the upload's name and bytes, so tests call them directly."""

from typing import List, Tuple

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go

from ..logs import split_upload
from ..logs.replay import load_transcript, parse_transcript
from ..measure.compactions import (
    CompactionReport,
    measure_compactions,
    real_compactions,
)
from ..reports.compactions import format_compactions, record_falls
from .shown import TextUploadExplorer, upload_files, upload_text
from .style import COMPACTION_COLUMNS


def compactions_frame(reports: List[CompactionReport]) -> pd.DataFrame:
    """One row a compaction: as recorded (the record's tokens before, the last call's
    prompt as the usage says), the three fates, the stand-in beside them."""
    frame = _frame(
        [report.as_dict() for report in reports],
        ("round", "trigger", "tokens_before", "last_call_tokens", "summary_tokens")
        + ("facts_after", "held", "reread", "reread_tokens", "neither", "restorable")
        + ("standin_held",),
    )
    frame.index = pd.Index([report.number for report in reports], name="compaction")
    frame["summary tokens"] = [
        "opaque" if r.summary_tokens is None else f"{r.summary_tokens:,}" for r in reports
    ]
    return frame.astype(object).where(frame.notna(), "not recorded")


def real_compactions_frame() -> pd.DataFrame:
    """The real logs' compactions (`real_compactions`), one row each: the log (its
    file's name, up to its first two dashes' worth) and the compaction's number, what
    the record and the usage say before it, and the facts after it, the real summary's
    fates beside the stand-in's."""
    rows = real_compactions()
    frame = _frame(
        rows,
        ("tokens_before", "last_call_tokens", "summary_tokens", "facts_after", "held")
        + ("reread", "neither", "restorable", "standin_held", "standin_restorable"),
    )
    frame.index = pd.Index(
        [f"{_short_name(row['log'])} #{row['number']}" for row in rows],
        name="log, compaction",
    )
    return frame


def _frame(rows: List[dict], keys: Tuple[str, ...]) -> pd.DataFrame:
    """`rows` (`CompactionReport.as_dict()`s) as a table of `keys`, under the names a
    person reads (`COMPACTION_COLUMNS`)."""
    return pd.DataFrame(rows, columns=list(keys)).rename(columns=COMPACTION_COLUMNS)


def _short_name(log: str) -> str:
    """`claude-code/entire-91-b42542f24f-0.jsonl` -> `entire-91`; a pi file keeps its
    model: `pi-mono-opus-4-5-two-compactions.jsonl` -> `pi opus-4-5`."""
    stem = log.rsplit("/", 1)[-1].split(".")[0]
    if stem.startswith("pi-mono-"):
        return "pi " + "-".join(stem[len("pi-mono-") :].split("-")[:3])
    return "-".join(stem.split("-")[:2])


def compactions_of_file(path) -> List[CompactionReport]:
    return measure_compactions(load_transcript(path))


def compactions_text(name: str, content: bytes) -> Tuple[str, bool]:
    """What the upload shows: the log's compactions, or one line saying why not
    (then True: a problem)."""
    return upload_text(
        name,
        content,
        lambda text: _compactions_line(name, parse_transcript(text, name), text),
    )


def _compactions_line(name: str, log, text: str) -> str:
    reports = measure_compactions(log, text=text)
    return f"{name}: " + format_compactions(reports, record_falls(log))


NO_FIGURE = (
    "No figure for this log: the record beside the agent's own policy replayed is drawn "
    "for logs whose agent the lab replays (Claude Code, Codex) and that record usage."
)


def compactions_figure(name: str, content: bytes, beside=None):
    """The figure chapter 7.10 draws for its bundled session, for an uploaded log:
    the agent's record beside its own policy replayed at its window, the compactions
    of both marked; None for a log the lab cannot replay so (no usage, or an agent
    whose policy it does not replay) or cannot read."""
    from ..agents.windows import agent_window
    from ..logs import LogFileError, decoded_text
    from ..policies.production.compare import AGENT_POLICY
    from .agent_replay_view import agent_replay_of

    try:
        log = parse_transcript(decoded_text(content, name), name, beside=beside)
    except LogFileError:
        return None
    if AGENT_POLICY.get(log.shape) is None or not log.usage or not log.agent:
        return None
    figure, _, _ = agent_replay_of(log, agent_window(log)[0])
    return figure


class CompactionsExplorer(TextUploadExplorer):
    """Upload a log: its own compactions, measured as they arrive, and, where the lab
    replays its agent, the record beside the agent's policy replayed (as 7.10 shows
    the bundled session)."""

    def __init__(self):
        super().__init__(
            compactions_text,
            "Compactions explorer (run the notebook, then upload a log)",
            "measuring the compactions it records",
        )
        self.figure = widgets.VBox()  # the figure of the log shown, or nothing
        self.widget = widgets.VBox([self.upload, self.output, self.figure])

    def render(self):
        self.figure.children = ()  # the last log's figure never stays under this one
        text = super().render()
        if text is None:
            return None
        name, content, beside = split_upload(upload_files(self.upload))
        figure = compactions_figure(name, content, beside)
        if figure is not None:
            self.figure.children = (go.FigureWidget(figure),)
        elif not self.problem:  # a log read, whose agent the lab does not replay
            self.figure.children = (widgets.HTML(f"<small>{NO_FIGURE}</small>"),)
        return text
