"""The long-session lab: sliders for the pipeline's knobs, the lab's figure and two
tables.

Every slider change replays the whole 13-call session (`run_session`, about a
millisecond) and redraws the figure and the tables in place. What is shown is a pure
function of the slider values (`LongSessionDashboard.render`), so a test sets
`slider.value` and checks the figure and tables against `run_session` for that setting.
"""

import html
from dataclasses import dataclass
from typing import Dict, Optional

import ipywidgets as widgets

from ..measure.grounding import run_grounded
from ..reports import plural
from ..session import Session, SessionRun, load_session, run_baseline, run_session
from ..window import Settings
from .figures import lab_figure, update_lab_figure
from .numbers import boxed_slider, note_under, notes_but
from .shown import ShownAsWidget
from .style import (
    ANSWER_TEXT_COLOR,
    CONTROLS_MAX_WIDTH,
    DASHBOARD_HEIGHT,
    FINE_CSS,
    PRESENT_HEIGHT,
    PROBLEM_CSS,
    SLIDER_COLUMNS,
    SLIDER_LABEL_WIDTH,
    STATUS_HEIGHT,
    STATUS_LINES,
    STATUS_MIN_WIDTH,
    TABLE_CSS,
    UNBROKEN_ITEM,
)
from .tables import event_rows, round_rows, rows_html


@dataclass(frozen=True)
class SliderSpec:
    name: str  # the Settings field it sets, also the slider's label
    minimum: int
    maximum: int
    step: int
    tooltip: str


SLIDERS = (
    # A threshold below the protected head (135 tokens) is reachable on purpose: it shows
    # the overflow.
    SliderSpec(
        "threshold",
        100,
        8000,
        50,
        "window budget in tokens, checked before every model call",
    ),
    SliderSpec(
        "head_chars", 0, 2000, 10, "characters an aged tool result keeps from its start"
    ),
    SliderSpec(
        "tail_chars", 0, 2000, 10, "characters an aged tool result keeps from its end"
    ),
    # up past the largest result (39,537 characters), so aging can be switched off
    SliderSpec(
        "min_chars", 0, 40000, 20, "tool results this long or shorter are never aged"
    ),
    SliderSpec(
        "protect_tail", 0, 20, 1, "newest messages a rolling summary may not fold"
    ),
)


def settings_from_values(values: Dict[str, int]) -> Settings:
    """Settings for slider values (a ValueError names a bad one)."""
    return Settings(**{spec.name: values[spec.name] for spec in SLIDERS})


def slider_widget(spec: SliderSpec, value: int) -> widgets.IntSlider:
    """The slider of one knob, marked with its name for browser tests; as wide as its
    column of the dashboard's grid."""
    slider = widgets.IntSlider(
        value=value,
        min=spec.minimum,
        max=spec.maximum,
        # digits only: the readout is read up to its first non-digit when typed into, so
        # "1,500" would be 1 (the chapter says so)
        readout_format="d",
        step=spec.step,
        description=spec.name,
        tooltip=spec.tooltip,
        continuous_update=True,
        style={"description_width": SLIDER_LABEL_WIDTH},
        # beside its number box the slider takes the rest of its cell: at "auto" alone
        # a flex row shrinks it to its label, its track gone
        layout=widgets.Layout(width="auto", flex="1 1 auto", min_width="0"),
    )
    slider.add_class(f"ccl-slider-{spec.name}")
    return slider


def status_lines(run: SessionRun) -> list:
    """What the run came to, in at most five short lines. An overflow comes first, as the
    reason the run stopped, and the list it stopped on is called what it is (it was
    never sent); the error's full text is `run.overflow` (the box shows it on hover)."""
    last = run.rounds[-1] if run.rounds else None
    if last is None:
        sent = "no round was sent"
    else:
        sent = f"round {last.round}: {last.tokens_after:,} tokens sent"
        if last.baseline_tokens:  # a round past the recorded baseline has none
            saved = 1 - last.tokens_after / last.baseline_tokens
            sent += f", {last.baseline_tokens:,} uncompressed ({saved:.0%} less)"
    final = f"{plural(len(run.final_messages), 'message')}, {run.final_tokens:,} tokens"
    error = run.overflow
    if error is None:
        strategies = [compression.strategy for compression in run.compressions]
        return [
            f"{plural(run.model_decisions, 'model decision')}, "
            f"{plural(run.tool_calls, 'tool call')}, "
            f"{plural(run.summary_calls, 'summary call')}",
            f"aging in {plural(strategies.count('tool_result_aging'), 'round')}, "
            f"summary in {strategies.count('rolling_summary')}",
            sent,
            f"final list, with the answer: {final}",
        ]
    written = f", by {error.written_by}" if error.written_by else ""
    return [
        f"Overflow before the model call of round {len(run.rounds)}",
        f"{error.tokens:,} tokens after compression, threshold {error.threshold:,}",
        f"largest left: #{error.largest_index} ({error.largest_role}, "
        f"{error.largest_tokens:,} tokens{written})",
        sent,
        f"before compression (never sent): {final}",
    ]


def answer_html(grounded, plain: SessionRun, session_rounds: int) -> str:
    """The grounded answer (chapter 4), short enough to wrap into its fixed box: facts
    right and the look-ups, what it sent against the same settings without grounding
    (`plain`), then the facts looked up again, by round. Look-ups are rounds of their
    own, so a grounded replay's rounds run past the session's `session_rounds`."""
    outcome = grounded.outcome
    first = (
        f"Grounded answer: {outcome.facts_right} facts right"
        + ("" if outcome.finished else " (the task did not finish)")
        + f"; {plural(outcome.lookup_calls, 'look-up')} in "
        + f"{plural(outcome.lookup_rounds, 'extra round')}"
    )
    by_round: Dict[int, list] = {}
    for lookup in outcome.lookups:
        by_round.setdefault(lookup.round, []).append(lookup.fact)
    looked_up = "; ".join(
        f"round {number}: {_fact_ids(facts)}" for number, facts in by_round.items()
    )
    second = f"looked up again: {looked_up or 'nothing'}"
    if outcome.finished and outcome.lost:  # what keeps "4/6" short of all six
        second += f"; the answer lacks: {_fact_ids(outcome.lost)}"
    if outcome.unknown:  # each fact once, however many replies along the way marked it
        marked = dict.fromkeys(fact for _, fact in outcome.unknown)
        second += f"; marked unknown along the way: {_fact_ids(marked)}"
    against = tokens_against_plain(grounded, plain, session_rounds)
    return (
        f'<div style="font-size:13px;color:{ANSWER_TEXT_COLOR};line-height:1.35">'
        f"<b>{html.escape(first)}</b><br>{html.escape(against)}<br>{second}</div>"
    )


def _fact_ids(facts) -> str:
    """Fact ids as HTML, each on one line (`num-1-of-3` broke at its hyphens)."""
    return ", ".join(UNBROKEN_ITEM.format(html.escape(fact)) for fact in facts)


def tokens_against_plain(grounded, plain: SessionRun, session_rounds: int) -> str:
    """What the grounded run sent over all its rounds, against the same settings without
    grounding, and why the difference is what it is: the look-ups' cost when both runs
    went as far, or a run that stopped sooner (then fewer tokens are no saving)."""
    outcome = grounded.outcome
    sent = outcome.tokens_sent
    line = (
        f"tokens sent over all rounds: {sent:,}, against {outcome.plain_tokens_sent:,} "
        f"without grounding ({outcome.extra_tokens:+,}"
    )
    # the session's own rounds each run sent (a look-up round is not one of them)
    own = sum(1 for step in grounded.steps if not step.is_lookup)
    if not sent and not plain.rounds:
        return (
            "tokens sent: none; the run stopped before its first round, as it does "
            "without grounding"
        )
    if own == len(plain.rounds) and outcome.finished == (plain.overflow is None):
        return line + ": what the look-ups cost)"
    stopped = f"it stopped after {own} of the session's {session_rounds} rounds"
    if outcome.finished:
        stopped = "it answered"
    plain_end = f"after {len(plain.rounds)}"
    if plain.overflow is None:
        plain_end = "it answered"
    elif outcome.finished:
        plain_end = f"it stopped after {len(plain.rounds)}"
    verdict = ": no saving, " if outcome.extra_tokens < 0 else "; "
    return line + f"{verdict}{stopped}, without grounding {plain_end})"


def status_html(lines, problem: bool, title: str = "") -> str:
    style = PROBLEM_CSS if problem else FINE_CSS
    shown = [html.escape(line) for line in lines]
    if problem and shown:  # the reason the run stopped, first and in bold
        shown[0] = f"<b>{shown[0]}</b>"
    body = "<br>".join(shown)
    return (
        f'<div class="ccl-status" title="{html.escape(title)}" style="{style}'
        "padding:5px 12px;border-radius:4px;font-size:13px;line-height:1.4;"
        f'white-space:nowrap;overflow:hidden;text-overflow:ellipsis">{body}</div>'
    )


class LongSessionDashboard(ShownAsWidget):
    """Sliders → run_session → figure, per-round table, compression-event table and a
    status line."""

    def __init__(
        self,
        session: Optional[Session] = None,
        settings: Settings = Settings(),
        present: bool = False,
    ):
        """`present=True`: the projector page (`make present`): the figure follows the
        page's width. In a notebook or on the projector page, the sliders, the status box
        and the whole figure fit one 1280 x 720 screen."""
        self.session = session if session is not None else load_session()
        self.baseline = run_baseline(self.session)
        self.run: Optional[SessionRun] = None
        self._holding = False
        self.sliders = {
            spec.name: slider_widget(spec, getattr(settings, spec.name))
            for spec in SLIDERS
        }
        # the slider's own readout reads "1,500" as 1: a box beside each reads it
        self.boxes = {
            name: boxed_slider(slider, width="72px")
            for name, slider in self.sliders.items()
        }
        self.number_boxes = list(self.boxes.values())
        self._add_controls(present)
        self._add_outputs()
        first_run = run_session(self.session, settings)
        size = (
            dict(width=None, height=PRESENT_HEIGHT)
            if present
            else dict(height=DASHBOARD_HEIGHT)
        )
        self.figure = lab_figure(first_run, self.baseline, widget=True, **size)
        for control in [*self.sliders.values(), self.log_axis, self.grounded]:
            control.observe(self._on_change, names="value")
        self.reset_button.on_click(lambda _: self.reset())
        self.widget = self._arranged(None if present else CONTROLS_MAX_WIDTH)
        self.widget.add_class("ccl-long-session-dashboard")
        self.render()

    def _add_controls(self, present: bool) -> None:
        """The log-axis and grounded switches, the grounded answer's panel and Reset."""
        self.log_axis = widgets.Checkbox(
            value=False,
            description="log token axis",
            indent=False,
            layout=widgets.Layout(width="150px"),
        )
        # Grounded mode (chapter 4): the answer panel says which facts the final answer
        # gets right at these settings, and what it had to look up again.
        self.grounded = widgets.Checkbox(
            value=False,
            description="grounded answer",
            tooltip="chapter 4: a model that only states what its window shows",
            indent=False,
            layout=widgets.Layout(width="150px"),
        )
        # under the chart, shown while grounded mode is on: a fixed box, two lines of 13
        # px on the projector page (it is wide there), four in a notebook
        self.answer = widgets.HTML(
            layout=widgets.Layout(
                height="40px" if present else "90px", overflow="auto", display="none"
            )
        )
        self.answer.add_class("ccl-grounded-answer")
        # no icon: an icon is a FontAwesome glyph, which the projector page would fetch
        # from a CDN (and a classroom may be offline)
        self.reset_button = widgets.Button(
            description="Reset to the article's values",
            tooltip="every slider back to the article's value",
            layout=widgets.Layout(width="220px"),
        )

    def _add_outputs(self) -> None:
        """The status box and the two tables (the figure needs a run)."""
        # A fixed height (hidden past it if a narrow window wraps the text), so crossing
        # the threshold's boundary never moves the sliders or the chart.
        self.status = widgets.HTML(
            layout=widgets.Layout(
                flex="1 1 auto",
                min_width=STATUS_MIN_WIDTH,
                height=STATUS_HEIGHT,
                overflow="hidden",
            )
        )
        # The tables' CSS, on the page once: prepended to every table update it cost a
        # style recalculation of JupyterLab's whole DOM per keypress. A <style> applies
        # while hidden.
        self.table_style = widgets.HTML(TABLE_CSS, layout=widgets.Layout(display="none"))
        self.rounds_html = widgets.HTML()
        self.events_html = widgets.HTML()

    def _arranged(self, max_width: Optional[str]) -> widgets.VBox:
        """Controls first, then the figure they drive, on one 1280 x 720 screen: the five
        sliders three a row, under them the status box beside Reset and the two
        switches; the grounded answer and the tables, read after a change rather than
        during it, go under the figure. The controls are at most `max_width` wide."""
        sliders = widgets.GridBox(
            [
                note_under([slider, self.boxes[name]])
                for name, slider in self.sliders.items()
            ],
            layout=widgets.Layout(
                grid_template_columns=f"repeat({SLIDER_COLUMNS}, minmax(0, 1fr))",
                grid_gap="0 8px",
                width="100%",
                max_width=max_width,
            ),
        )
        switches = widgets.VBox(
            [self.reset_button, self.log_axis, self.grounded],
            layout=widgets.Layout(flex="0 0 auto", margin="0 0 0 8px"),
        )
        status = widgets.HBox(
            [self.status, switches],
            layout=widgets.Layout(align_items="center", max_width=max_width),
        )
        tables = widgets.HBox(
            [
                self._titled("Per round", self.rounds_html),
                self._titled("Compression events in the trace", self.events_html),
            ],
            layout=widgets.Layout(flex_flow="row wrap", grid_gap="24px"),
        )
        return widgets.VBox(
            [self.table_style, sliders, status, self.figure, self.answer, tables]
        )

    @staticmethod
    def _titled(title: str, body: widgets.Widget) -> widgets.VBox:
        return widgets.VBox(
            [widgets.HTML(f'<b style="font-size:16px">{html.escape(title)}</b>'), body]
        )

    def values(self) -> Dict[str, int]:
        return {name: slider.value for name, slider in self.sliders.items()}

    def render(self) -> None:
        """Show the run for the current slider values: the only place the
        display is changed."""
        try:
            settings = settings_from_values(self.values())
        except ValueError as error:
            # typed into a slider's readout: say so, keep the last figure
            self.status.value = status_html([f"Invalid setting: {error}"], problem=True)
            return
        run = run_session(self.session, settings)
        self.run = run
        grounded = run_grounded(self.session, settings) if self.grounded.value else None
        self.answer.value = (
            ""
            if grounded is None
            else answer_html(grounded, run, len(self.baseline.tokens))
        )
        self.answer.layout.display = None if grounded is not None else "none"
        update_lab_figure(self.figure, run, self.baseline, log_tokens=self.log_axis.value)
        lines = status_lines(run)
        if grounded is not None and len(lines) < STATUS_LINES:
            # the answer is under the chart, often below the screen: say it is there
            right = grounded.outcome.facts_right
            lines.append(f"grounded answer: {right} facts right (under the chart)")
        self.status.value = status_html(
            lines,
            problem=run.overflow is not None,
            title=str(run.overflow or ""),
        )
        self.rounds_html.value = rows_html(*round_rows(run), empty="no round was sent")
        self.events_html.value = rows_html(*event_rows(run), empty="no compression")

    def reset(self) -> None:
        """Back to the article's values, redrawn once rather than once per slider."""
        self._holding = True
        try:
            defaults = Settings()
            for name, slider in self.sliders.items():
                slider.value = getattr(defaults, name)
            self.log_axis.value = False
            self.grounded.value = False  # the article's model answers from memory
        finally:
            self._holding = False
        self.render()

    def _on_change(self, change) -> None:
        notes_but(
            [(self.sliders[name], box) for name, box in self.boxes.items()],
            change.get("owner"),
        )
        if not self._holding:
            self.render()

    def text_form(self) -> str:
        return "Long-session dashboard (run the notebook to use the sliders)"
