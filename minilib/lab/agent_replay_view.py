"""Chapter 7's real compactions, replayed: on a real log, the input the agent's calls
recorded beside the replay of the agent's own policy (`own_agent_row`), the agent's
compactions and clearings and the replay's marked on the same axis; and the real
summary set beside the lab's stand-in by what each was given and used."""

import textwrap
from typing import List

import plotly.graph_objects as go

from ..agents.claude_code.behaviour import auto_compact_trigger
from ..measure.compactions import measure_compactions
from ..policies.production.compare import rounds_before
from ..policies.production.own_agent import own_agent_row
from .calibration_view import per_call_layout
from .style import BLUE, PRINTED_COLUMNS, RECORDED_COLOR


def recorded_inputs(log) -> List[tuple]:
    """(round, input tokens) of each call the log records usage for."""
    numbers = {}
    for index, message in enumerate(log.messages):
        if message["role"] == "assistant":
            numbers[index] = len(numbers)
    return [
        (numbers[u.message], u.input_tokens)
        for u in log.usage
        if u.message in numbers and u.input_tokens > 0
    ]


def clearing_rounds(log) -> List[int]:
    before = rounds_before(log)
    return [before[clearing.at] for clearing in log.clearings]


def agent_replay_figure(
    log, row: dict, title: str = "", window: int = 200_000
) -> go.Figure:
    """The record (black) and the replay (blue) per call; a dashed black line where the
    agent compacted, a blue triangle where the replay did, at the count that crossed
    its trigger; crosses where results were
    cleared in place (black: recorded by the agent; blue: the replay); for Claude Code,
    a dotted line at the count where that version compacts."""
    recorded = recorded_inputs(log)
    replay = row["tokens_per_round"]
    figure = go.Figure()
    figure.add_scatter(
        x=[r for r, _ in recorded],
        y=[t for _, t in recorded],
        name="API counted (the log's record)",
        mode="lines",
        line={"color": RECORDED_COLOR, "width": 3},
    )
    figure.add_scatter(
        x=list(range(len(replay))),
        y=replay,
        name=f"replay of {row['policy']} (the version that wrote the log)",
        mode="lines",
        line={"color": BLUE, "width": 2},
    )
    _events(figure, log, row, max([t for _, t in recorded] + replay + [1]))
    if log.agent == "claude-code":
        trigger = auto_compact_trigger(log.agent_version, window)
        figure.add_hline(
            y=trigger,
            line={"color": RECORDED_COLOR, "dash": "dot", "width": 1},
            annotation_text=f"{log.agent_version or 'its'} compacts at {trigger:,}",
            annotation_position="bottom left",
        )
    return per_call_layout(
        figure,
        title or "Input tokens per call: the agent's record and its policy replayed",
        420,
    )


def _events(figure, log, row: dict, top: int) -> None:
    """The agent's compactions and clearings and the replay's, on the figure."""
    recorded = row["recorded_compaction_rounds"] or ()
    for entry in recorded:
        figure.add_vline(
            x=entry["round"] - 0.5, line={"color": RECORDED_COLOR, "dash": "dash"}
        )
    if recorded:  # the legend's key for the dashed lines, where there are any
        figure.add_scatter(
            x=[None],
            y=[None],
            mode="lines",
            name="the agent compacted before this round",
            line={"color": RECORDED_COLOR, "dash": "dash"},
        )
    # A replay's triangle stands at the count that crossed its trigger: that window
    # was never sent (the compacted one was), so the line never shows it.
    replayed = row["compaction_rounds"]
    _marks(
        figure,
        [c["round"] for c in replayed],
        [
            top * 1.04 if c.get("tokens_before") is None else c["tokens_before"]
            for c in replayed
        ],
        "the replay compacted before this round (at the count that crossed it)",
        "triangle-down",
        BLUE,
    )
    cleared, microcompacted = clearing_rounds(log), row.get("microcompaction_rounds")
    if cleared or microcompacted:
        _marks(
            figure,
            cleared,
            top * 0.98,
            "the agent cleared old results",
            "x",
            RECORDED_COLOR,
        )
        _marks(
            figure,
            microcompacted or [],
            top * 0.94,
            "the replay cleared old results",
            "x",
            BLUE,
        )


def _marks(figure, rounds, height, name, symbol, color) -> None:
    """A marker at each of `rounds`, at `height` (one for all, or one a round)."""
    figure.add_scatter(
        x=rounds,
        y=height if isinstance(height, list) else [height] * len(rounds),
        mode="markers",
        name=name,
        marker={"symbol": symbol, "size": 12, "color": color},
    )


def summaries_beside(log) -> List[str]:
    """A line a compaction: the real summary and the stand-in, by what each was given
    (the history it replaced) and what it used."""
    lines = []
    for report in measure_compactions(log):
        entry = report.as_dict()
        if entry["opaque"]:
            lines.append(f"compaction {entry['number']}: the real summary is opaque")
            continue
        lines.append(
            f"compaction {entry['number']} (before round {entry['round']}): both were "
            f"given the {entry['replaced']} messages it replaced; the real summary used "
            f"{entry['summary_tokens']:,} tokens (estimated), the stand-in, given the "
            f"same room, used {entry['standin_tokens']:,}; of the {entry['facts_after']} "
            f"facts the agent used after it that a tool had shown before, the real one "
            f"held {entry['held']}, the stand-in {entry['standin_held']}"
        )
    return lines


def agent_replay_of(log, window: int = 200_000):
    """(figure, lines, row) for `log`: its own agent's row replayed at `window`;
    (None, [], None) for a log whose agent the lab does not replay on it (no usage to
    count by, or too few calls to fit)."""
    row, lines = own_agent_row(log, window)
    if row is None:
        return None, [], None
    wrapped = [
        part
        for line in lines + summaries_beside(log)
        for part in textwrap.wrap(line, PRINTED_COLUMNS, subsequent_indent="  ")
    ]
    return agent_replay_figure(log, row, window=window), wrapped, row
