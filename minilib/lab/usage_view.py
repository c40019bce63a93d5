"""Chapter 7's "what the API counted": a log's recorded usage beside the lab's count of
the same windows (`minilib.measure.recorded_usage`), as a figure, a table and the lines
`compress` prints; and an upload that does the same for your log. The callbacks are pure
functions of the upload's name and bytes, so tests call them directly."""

from typing import List, Tuple

import pandas as pd
import plotly.graph_objects as go

from ..logs import load_log, parse_log
from ..measure.recorded_usage import UsageRow, format_usage, usage_rows
from .shown import TextUploadExplorer, upload_text
from .style import BASELINE_COLOR, BLUE, RECORDED_COLOR, RED


def usage_of_file(path) -> List[UsageRow]:
    return usage_rows(load_log(path))


def usage_frame(rows: List[UsageRow]) -> pd.DataFrame:
    """One row a call: what the API counted, the three parts the lab adds up and their
    sum (the figure's blue line), the error left."""
    frame = pd.DataFrame(
        {
            "API counted": [r.recorded for r in rows],
            "lab: window": [r.counted for r in rows],
            "arguments, thinking": [r.sent_extra for r in rows],
            "overhead": [r.overhead for r in rows],
            "lab in all": [r.received for r in rows],
            "error left": [f"{r.error_with_overhead:+.1%}" for r in rows],
            "cache read": [r.cache_read for r in rows],
            "lab: could be read": [r.lab_reused for r in rows],
        },
        index=pd.Index([r.round for r in rows], name="round"),
    )
    return frame.astype(object).where(frame.notna(), "not recorded")


def usage_figure(rows: List[UsageRow], title: str = "") -> go.Figure:
    """Per call: the recorded prompt (black) beside the lab's count at each step; a red
    ring marks the first call after one of the agent's compactions."""
    rounds = [r.round for r in rows]
    steps = (
        ("lab: the window", [r.counted for r in rows], BASELINE_COLOR, "dot"),
        (
            "window + arguments, thinking",
            [r.counted + r.sent_extra for r in rows],
            BASELINE_COLOR,
            "dash",
        ),
        (
            "+ overhead (estimated from the first call): lab in all",
            [r.received for r in rows],
            BLUE,
            "solid",
        ),
    )
    figure = go.Figure()
    figure.add_scatter(
        x=rounds,
        y=[r.recorded for r in rows],
        name="API counted (the log's record)",
        mode="lines+markers",
        line={"color": RECORDED_COLOR, "width": 3},
    )
    for name, values, color, dash in steps:
        figure.add_scatter(
            x=rounds,
            y=values,
            name=name,
            mode="lines+markers",
            line={"color": color, "dash": dash},
        )
    after = [r for r in rows if r.after_compaction]
    if after:
        figure.add_scatter(
            x=[r.round for r in after],
            y=[r.recorded for r in after],
            name="first call after a compaction",
            mode="markers",
            marker={
                "color": "rgba(0,0,0,0)",
                "size": 16,
                "line": {"color": RED, "width": 2},
            },
        )
    figure.update_layout(
        title=title or "Input tokens per call: the record and the lab",
        xaxis_title="round (model call)",
        yaxis_title="input tokens",
        yaxis_rangemode="tozero",
        height=380,
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
        legend={"orientation": "h", "y": -0.2},
    )
    return figure


def usage_text(name: str, content: bytes) -> Tuple[str, bool]:
    """What the upload shows: the log's usage beside the lab's count, or one line
    saying why not (then True: a problem)."""
    return upload_text(
        name, content, lambda text: format_usage(usage_rows(parse_log(text, name)))
    )


class UsageExplorer(TextUploadExplorer):
    """Upload a log: what its API counted beside the lab's count, as it arrives."""

    def __init__(self):
        super().__init__(
            usage_text, "Usage explorer (run the notebook, then upload a log)"
        )
