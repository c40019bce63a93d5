"""Step one round of the session through the context window's state machine.

    measure -> tool_result_aging -> measure -> rolling_summary -> measure -> send |
    overflow

The states come from `ContextWindow.walk` (the same code that governs the real
run); this module only explains them: a diagram with the current state lit, the
message list in that state, and what changed since the previous state.
`step_view(walk, position, settings, round_number)` is a pure function;
`StateMachineStepper`
wires it to a round slider and Back/Next buttons.

The stepper fits an output area about 840 px wide (JupyterLab at 1280 x 720 with the file
browser open): the table's `changed` column holds a short label (the explanation above it
says the same in full), `content` a preview of at most `PREVIEW_COLUMNS` display columns
with the whole text on hover, and the explanation and the table keep one height on every
step (scrolling inside), so the page does not move when Next is pressed.
"""

import html
import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import ipywidgets as widgets
import pandas as pd

from ..ranges import range_candidates
from ..session import Session, load_session, run_session, window_before_round
from ..tokens import estimate_message_tokens
from ..window import Settings, WindowState
from .numbers import boxed_slider, note_under
from .shown import ShownAsWidget
from .style import (
    DIAGRAM_ARROW_COLOR,
    DIAGRAM_EDGE_COLOR,
    DIAGRAM_INK,
    DIAGRAM_LABEL_COLOR,
    DIAGRAM_MAX_WIDTH,
    DIAGRAM_NOTE_COLOR,
    DIAGRAM_VIEW_BOX,
    EXPLANATION_HEIGHT,
    NODE_CENTERS,
    NODE_HALF,
    PREVIEW_COLUMNS,
    STATE_COLORS,
    STEPPER_CSS,
    TABLE_CSS,
    TABLE_HEIGHT,
    TITLE_CHARS,
)
from .tables import messages_table, to_html

# What each state does, one line under its name in the diagram.
STATE_SUBTITLES = {
    "measure": "tokens ≤ threshold?",
    "tool_result_aging": "shorten long tool results",
    "rolling_summary": "fold an old closed group",
    "send": "call the model",
    "overflow": "ContextOverflowError",
}


def round_walk(
    session: Session, settings: Settings, round_number: int
) -> List[WindowState]:
    """Every state the window passes through before the model call
    of round `round_number`."""
    messages, window = window_before_round(session, settings, round_number)
    return window.walk(messages, step=round_number)


def last_round(session: Session, settings: Settings) -> int:
    """The last round that can be stepped: the final one, or the one that overflowed."""
    run = run_session(session, settings)
    return len(run.rounds) if run.overflow is not None else len(run.rounds) - 1


def step_changes(previous: Optional[WindowState], state: WindowState) -> Dict[int, str]:
    """What the step into `state` changed, by message index in `state.messages`."""
    compression = state.compression
    if previous is None or compression is None:
        return {}
    affected = compression.affected_indexes
    if compression.strategy == "tool_result_aging":
        return {
            i: f"aged: {estimate_message_tokens(previous.messages[i]):,} → "
            f"{estimate_message_tokens(state.messages[i]):,} tokens"
            for i in affected
        }
    # A summary replaces the contiguous range `affected` with one message at its start.
    start, folded = affected[0], len(affected)
    changes = {start: f"summary of #{affected[0]}–#{affected[-1]} ({folded} messages)"}
    for index in range(start + 1, len(state.messages)):
        changes[index] = f"was #{index + folded - 1}"
    return changes


def change_labels(previous: Optional[WindowState], state: WindowState) -> Dict[int, str]:
    """`step_changes` in a word or two, for the table's `changed` column: "aged",
    "summary", or where a message moved from ("was #16")."""
    changes = step_changes(previous, state)
    if not changes:
        return {}
    if state.compression.strategy == "tool_result_aging":
        return {index: "aged" for index in changes}
    start = state.compression.affected_indexes[0]
    # The moved messages keep their "was #16": already short.
    return {index: "summary" if index == start else changes[index] for index in changes}


def explain_step(
    walk: Sequence[WindowState], position: int, settings: Settings
) -> List[str]:
    """Plain-text lines saying what the state at `position` did and where the
    machine goes next."""
    state = walk[position]
    previous = walk[position - 1] if position > 0 else None
    following = walk[position + 1].state if position + 1 < len(walk) else None
    threshold = settings.threshold
    if state.state == "measure":
        if state.tokens <= threshold:
            verdict = f"{state.tokens:,} ≤ {threshold:,} tokens: within budget"
        else:
            verdict = f"{state.tokens:,} > {threshold:,} tokens: over budget"
        nexts = {"send": "next: send", "overflow": "no strategy left: overflow"}
        return [
            f"measure {len(state.messages)} messages: {verdict}",
            nexts.get(following, f"next: try {following}"),
        ]
    if state.state == "send":
        return [
            _arrows(state.detail),
            "the model sees exactly this list; the loop never learns what was cut",
        ]
    if state.state == "overflow":
        return [
            _arrows(state.detail),
            "nothing is sent: the loop's message list is left exactly as it was, and "
            "the run stops",
        ]
    lines = [_arrows(state.detail)]
    changes = step_changes(previous, state)
    if state.state == "tool_result_aging":
        lines += [f"#{index} {change}" for index, change in changes.items()]
        if not changes:
            lines.append(
                f"no tool message over min_chars={settings.min_chars} whose aged form "
                "is smaller"
            )
    elif state.state == "rolling_summary":
        lines += _summary_lines(changes)
        for candidate in range_candidates(previous.messages, settings.protect_tail):
            lines.append(
                f"range [{candidate.start}, {candidate.end}): {candidate.reason}"
            )
    return lines


def _arrows(detail: str) -> str:
    """The window's detail line with the arrows the stepper's own lines use ("1,464 →
    1,282 tokens"; the trace and the CLI write "->")."""
    return detail.replace(" -> ", " → ")


def _summary_lines(changes: Dict[int, str]) -> List[str]:
    """The summary step's changes in full, one line; the table's `changed`
    column is short."""
    if not changes:
        return []
    start, *moved = sorted(changes)
    line = f"#{start} {changes[start]}"
    if len(moved) == 1:
        line += f"; #{moved[0]} {changes[moved[0]]}"
    elif moved:
        first, last = (
            changes[index].removeprefix("was ") for index in (moved[0], moved[-1])
        )
        line += f"; #{moved[0]}–#{moved[-1]} were {first}–{last}"
    return [line]


@dataclass(frozen=True)
class StepView:
    """Everything the stepper shows for one position of one round's walk.

    `changes` says in full what the step did to each row; `table` holds the short form
    (its `changed` column) and content previews; `contents` are the messages' whole texts.
    """

    position: int
    steps: int
    state: str
    title: str
    lines: List[str]
    changes: Dict[int, str]
    table: pd.DataFrame
    diagram: str
    contents: List[str]


def step_view(
    walk: Sequence[WindowState], position: int, settings: Settings, round_number: int
) -> StepView:
    """What the stepper shows at `position` (0-based) of the walk
    of round `round_number`."""
    if not 0 <= position < len(walk):
        raise ValueError(
            f"position must be between 0 and {len(walk) - 1}, got {position}"
        )
    state = walk[position]
    previous = walk[position - 1] if position > 0 else None
    changes = step_changes(previous, state)
    table = messages_table(
        state.messages,
        settings.protect_tail,
        change_labels(previous, state),
        preview_columns=PREVIEW_COLUMNS,
    )
    contents = [message.get("content") or "" for message in state.messages]
    title = (
        f"Round {round_number}, step {position + 1} of {len(walk)}: {state.state} "
        f"({len(state.messages)} messages, {state.tokens:,} tokens)"
    )
    return StepView(
        position,
        len(walk),
        state.state,
        title,
        explain_step(walk, position, settings),
        changes,
        table,
        state_diagram(walk, position),
        contents,
    )


def hover_text(content: str, limit: int = TITLE_CHARS) -> str:
    """A content as its cell's hover title: the whole text, or its
    first `limit` characters."""
    return content if len(content) <= limit else content[: limit - 1] + "…"


def table_html(view: StepView) -> str:
    """The view's message table, changed rows marked, each cut content's whole text (up
    to TITLE_CHARS) as its cell's hover title."""
    previews = view.table["content"]
    titles = [
        "" if preview == content else hover_text(content)
        for preview, content in zip(previews, view.contents)
    ]
    return to_html(view.table, view.changes, cell_titles={"content": titles})


# ---- the diagram ----------------------------------------------------------------------

EDGES = (  # (from, to, label, sideways offset so two-way pairs do not overlap)
    ("measure", "tool_result_aging", "over budget", -8),
    ("tool_result_aging", "measure", "", 8),
    ("measure", "rolling_summary", "still over", 8),
    ("rolling_summary", "measure", "", -8),
    ("measure", "send", "within budget", 0),
    ("measure", "overflow", "over, nothing left to cut", 0),
)


def _border_point(center, towards):
    """Where the segment from `center` towards `towards` leaves the node's rectangle."""
    dx, dy = towards[0] - center[0], towards[1] - center[1]
    scale = min(
        NODE_HALF[0] / abs(dx) if dx else math.inf,
        NODE_HALF[1] / abs(dy) if dy else math.inf,
    )
    return center[0] + dx * scale, center[1] + dy * scale


def _edge_points(source: str, target: str, offset: float):
    a, b = NODE_CENTERS[source], NODE_CENTERS[target]
    length = math.hypot(b[0] - a[0], b[1] - a[1])
    # Shift both ends sideways (perpendicular, relative to the pair's fixed orientation)
    # so A->B and B->A separate.
    first, second = sorted((source, target))
    fa, fb = NODE_CENTERS[first], NODE_CENTERS[second]
    nx, ny = -(fb[1] - fa[1]) / length, (fb[0] - fa[0]) / length
    a = (a[0] + nx * offset, a[1] + ny * offset)
    b = (b[0] + nx * offset, b[1] + ny * offset)
    return _border_point(a, b), _border_point(b, a)


def _arrowhead(marker_id: str, size: int, color: str) -> str:
    return (
        f'<marker id="{marker_id}" viewBox="0 0 10 10" refX="9" refY="5" '
        f'markerWidth="{size}" markerHeight="{size}" orient="auto-start-reverse">'
        f'<path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>'
    )


def _svg_start() -> str:
    """The SVG element, its two arrowheads (a transition, the one just taken) and the
    entry: the message list as the loop hands it over."""
    width, height = DIAGRAM_VIEW_BOX
    return (
        f'<svg class="ccl-state-diagram" viewBox="0 0 {width} {height}" width="100%" '
        f'style="max-width:{DIAGRAM_MAX_WIDTH};height:auto" '
        'xmlns="http://www.w3.org/2000/svg" font-family="sans-serif">'
        "<defs>"
        + _arrowhead("ccl-arrow", 7, DIAGRAM_ARROW_COLOR)
        + _arrowhead("ccl-arrow-taken", 6, DIAGRAM_INK)
        + "</defs>"
        f'<text x="10" y="146" font-size="12" fill="{DIAGRAM_NOTE_COLOR}">window</text>'
        f'<text x="10" y="161" font-size="12" fill="{DIAGRAM_NOTE_COLOR}">'
        "before round</text>"
        f'<line x1="90" y1="150" x2="266" y2="150" stroke="{DIAGRAM_ARROW_COLOR}" '
        'stroke-width="1.5" marker-end="url(#ccl-arrow)"/>'
    )


def _edge_svg(source: str, target: str, label: str, offset: float, taken: bool) -> str:
    """One transition: an arrow, bold if it was just taken, and its label beside it."""
    (x1, y1), (x2, y2) = _edge_points(source, target, offset)
    stroke, width, marker = (
        (DIAGRAM_INK, 3.5, "ccl-arrow-taken")
        if taken
        else (DIAGRAM_EDGE_COLOR, 1.5, "ccl-arrow")
    )
    svg = (
        f'<line class="ccl-edge{" ccl-taken" if taken else ""}" data-from="{source}" '
        f'data-to="{target}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
        f'stroke="{stroke}" stroke-width="{width}" marker-end="url(#{marker})"/>'
    )
    if not label:
        return svg
    # the label away from the middle of the diagram, where the nodes are
    mx, my, middle = (x1 + x2) / 2, (y1 + y2) / 2, DIAGRAM_VIEW_BOX[0] / 2
    anchor = "end" if mx < middle else "start" if mx > middle else "middle"
    dx = -10 if anchor == "end" else 10 if anchor == "start" else 0
    return svg + (
        f'<text x="{mx + dx:.1f}" y="{my + 4:.1f}" font-size="12" '
        f'fill="{DIAGRAM_LABEL_COLOR}" text-anchor="{anchor}">{html.escape(label)}</text>'
    )


def _node_svg(name: str, current: str, visited: set) -> str:
    """One state: filled when current, tinted when already passed, white otherwise."""
    color = STATE_COLORS[name]
    if name == current:
        fill, text, css, border = color, "white", "ccl-state ccl-current", 3
    elif name in visited:  # a 20% opacity tint
        fill, text, css, border = color + "33", DIAGRAM_INK, "ccl-state ccl-visited", 1.5
    else:
        fill, text, css, border = "white", DIAGRAM_INK, "ccl-state", 1.5
    (cx, cy), (w, h) = NODE_CENTERS[name], NODE_HALF
    return (
        f'<g class="{css}" data-state="{name}">'
        f'<rect x="{cx - w}" y="{cy - h}" width="{2 * w}" height="{2 * h}" rx="10" '
        f'fill="{fill}" stroke="{color}" stroke-width="{border}"/>'
        f'<text x="{cx}" y="{cy - 3}" font-size="14" font-weight="bold" fill="{text}" '
        f'text-anchor="middle">{name}</text>'
        f'<text x="{cx}" y="{cy + 15}" font-size="11.5" fill="{text}" '
        f'text-anchor="middle">{html.escape(STATE_SUBTITLES[name])}</text></g>'
    )


def state_diagram(walk: Sequence[WindowState], position: int) -> str:
    """The state machine as inline SVG: the current state filled, states already
    passed tinted, the transition just taken drawn bold. Nodes carry `data-state`
    for browser tests."""
    current = walk[position].state
    visited = {state.state for state in walk[:position]}
    taken = (walk[position - 1].state, current) if position > 0 else None
    edges = [
        _edge_svg(source, target, label, offset, taken == (source, target))
        for source, target, label, offset in EDGES
    ]
    nodes = [_node_svg(name, current, visited) for name in NODE_CENTERS]
    return "".join([_svg_start(), *edges, *nodes, "</svg>"])


# ---- the widget ------------------------------------------------------------------------


class StateMachineStepper(ShownAsWidget):
    """Pick a round, then Next/Back through the states its window passes.

    What is shown is `step_view(walk, position, settings, round)` for the round slider's
    value and the current position; nothing else is remembered between clicks.
    """

    def __init__(
        self,
        session: Optional[Session] = None,
        settings: Settings = Settings(),
        round_number: int = 9,
    ):
        self.session = session if session is not None else load_session()
        self.settings = settings
        final = last_round(self.session, settings)
        if not 0 <= round_number <= final:
            raise ValueError(
                f"round_number must be between 0 and {final} at these settings, got "
                f"{round_number}"
            )
        self._walks: Dict[int, List[WindowState]] = {}  # pure: walked once
        self.position = 0
        self._add_controls(round_number, final)
        self._add_views()
        self.round_slider.observe(self._on_round, names="value")
        self.back_button.on_click(lambda _: self.go(self.position - 1))
        self.next_button.on_click(lambda _: self.go(self.position + 1))
        self.widget = widgets.VBox(
            [
                self.table_style,
                self.stepper_style,
                note_under(
                    [
                        self.round_slider,
                        self.round_box,
                        self.back_button,
                        self.next_button,
                    ]
                ),
                self.title,
                # what the step did, right under Next: on a projector the table below
                # the diagram may need a scroll, this never does
                self.explanation,
                self.diagram,
                self.table,
            ]
        )
        self.widget.add_class("ccl-state-stepper")
        self.go(0)

    def _add_controls(self, round_number: int, final: int) -> None:
        self.round_slider = widgets.IntSlider(
            value=round_number,
            min=0,
            max=final,
            description="round",
            continuous_update=False,
        )
        self.round_box = boxed_slider(self.round_slider, width="64px")
        self.number_boxes = [self.round_box]
        self.back_button = widgets.Button(
            description="Back", icon="arrow-left", tooltip="previous state"
        )
        self.next_button = widgets.Button(
            description="Next",
            icon="arrow-right",
            tooltip="next state",
            button_style="primary",
        )

    def _add_views(self) -> None:
        self.title = widgets.HTML()
        self.diagram = widgets.HTML()
        # Fixed heights, scrolling inside: the page below stays still while stepping.
        self.explanation = widgets.HTML(
            layout=widgets.Layout(height=f"{EXPLANATION_HEIGHT}px", overflow="auto")
        )
        self.table = widgets.HTML(
            layout=widgets.Layout(height=f"{TABLE_HEIGHT}px", overflow="auto")
        )
        # The tables' CSS, on the page once rather than in every table update (a style
        # recalculation each).
        self.table_style = widgets.HTML(TABLE_CSS, layout=widgets.Layout(display="none"))
        self.stepper_style = widgets.HTML(
            STEPPER_CSS, layout=widgets.Layout(display="none")
        )

    def walk(self, round_number: Optional[int] = None) -> List[WindowState]:
        round_number = self.round_slider.value if round_number is None else round_number
        if round_number not in self._walks:
            self._walks[round_number] = round_walk(
                self.session, self.settings, round_number
            )
        return self._walks[round_number]

    def view(self) -> StepView:
        return step_view(
            self.walk(), self.position, self.settings, self.round_slider.value
        )

    def go(self, position: int) -> None:
        """Show state `position` of the current round (clamped to the walk)."""
        walk = self.walk()
        self.position = max(0, min(position, len(walk) - 1))
        view = self.view()
        self.back_button.disabled = self.position == 0
        self.next_button.disabled = self.position == len(walk) - 1
        # a disabled button says why on hover: the round's walk ended (or began) here
        self.next_button.tooltip = (
            "the round's last state: pick another round on the slider"
            if self.next_button.disabled
            else "next state"
        )
        self.back_button.tooltip = (
            "the round's first state" if self.back_button.disabled else "previous state"
        )
        self.title.value = f'<b style="font-size:17px">{html.escape(view.title)}</b>'
        self.diagram.value = view.diagram
        self.explanation.value = (
            f'<div style="border-left:4px solid {STATE_COLORS[view.state]};padding:2px '
            "10px;"
            f'font-size:15px;line-height:1.5">'
            + "<br>".join(html.escape(line) for line in view.lines)
            + "</div>"
        )
        self.table.value = table_html(view)

    def _on_round(self, change) -> None:
        self.go(0)

    def text_form(self) -> str:
        return (
            f"State-machine stepper, round {self.round_slider.value} (run the notebook "
            "to use it)"
        )
