"""Chapter 7's real compactions, replayed: on a real log, the input the agent's calls
recorded beside the replay of the agent's own policy (`own_agent_row`), the agent's
compactions and clearings and the replay's marked on the same axis; and the real
summary set beside the lab's stand-in by what each was given and used."""

from typing import List

import plotly.graph_objects as go

from ..measure.compactions import measure_compactions
from ..policies.production.own_agent import own_agent_row
from .style import BLUE, RECORDED_COLOR


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
    before = [0]
    for message in log.messages:
        before.append(before[-1] + (message["role"] == "assistant"))
    return [before[clearing.at] for clearing in log.clearings]


def agent_replay_figure(log, row: dict, title: str = "") -> go.Figure:
    """The record (black) and the replay (blue) per call; a dashed black line where the
    agent compacted, a blue triangle where the replay did; crosses where results were
    cleared in place (black: recorded by the agent; blue: the replay)."""
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
    top = max([t for _, t in recorded] + replay + [1])
    for entry in row["recorded_compaction_rounds"] or ():
        figure.add_vline(
            x=entry["round"] - 0.5, line={"color": RECORDED_COLOR, "dash": "dash"}
        )
    figure.add_scatter(  # the legend's key for the dashed lines
        x=[None],
        y=[None],
        mode="lines",
        name="the agent compacted before this round",
        line={"color": RECORDED_COLOR, "dash": "dash"},
    )
    figure.add_scatter(
        x=[c["round"] for c in row["compaction_rounds"]],
        y=[top * 1.04] * len(row["compaction_rounds"]),
        mode="markers",
        name="the replay compacted before this round",
        marker={"symbol": "triangle-down", "size": 14, "color": BLUE},
    )
    cleared = clearing_rounds(log)
    if cleared or row.get("microcompaction_rounds"):
        figure.add_scatter(
            x=cleared,
            y=[top * 0.98] * len(cleared),
            mode="markers",
            name="the agent cleared old results",
            marker={"symbol": "x", "size": 10, "color": RECORDED_COLOR},
        )
        replayed = row.get("microcompaction_rounds") or []
        figure.add_scatter(
            x=replayed,
            y=[top * 0.94] * len(replayed),
            mode="markers",
            name="the replay cleared old results",
            marker={"symbol": "x", "size": 10, "color": BLUE},
        )
    figure.update_layout(
        title=title
        or "Input tokens per call: the agent's record and its policy replayed",
        xaxis_title="round (model call)",
        yaxis_title="input tokens",
        yaxis_rangemode="tozero",
        height=420,
        margin={"l": 60, "r": 20, "t": 50, "b": 40},
        legend={"orientation": "h", "y": -0.2},
    )
    return figure


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
    """(figure, lines) for `log`: its own agent's row replayed at `window`."""
    row, lines = own_agent_row(log, window)
    return agent_replay_figure(log, row), lines + summaries_beside(log), row
