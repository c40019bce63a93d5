"""One way to read a number typed into any box of the course.

`1,500`, `1 500`, `1_500`, `1500` and `1.5k` all read as 1,500 (`k` thousand, `m`
million). A slider's own readout cannot do that: ipywidgets reads it in the browser, up
to its first character that is not a digit, so `1,500` was 1. So every slider of the
chapters hides its readout and gets a `NumberBox` beside it: a text box read by
`parse_number`, and a note under the row of controls (`note_under`) that says, in
words, when what was typed could not be read (the box keeps the value it had) or was
moved to fit the slider's range or grid (the box shows where it went). Nouns agree
with their number: `1 message`, `2 messages`.
"""

import html
import re
from typing import Callable, Optional, Sequence

import ipywidgets as widgets

from .prose import plural
from .style import NOTE_MOVED, NOTE_PROBLEM


def parse_number(text: str, integer: bool = True) -> float:
    """The number `text` writes, as the course reads every box: thousands separated by
    commas or spaces or not at all, and `k`/`m` suffixes (`1.5k` is 1,500). Raises
    ValueError, saying why, for anything else (an empty box, words, `1,50`, `1.5` where
    a whole number is needed)."""
    raw = str(text).strip()
    # thousands apart by spaces (thin and no-break ones too), underscores or quotes
    compact = re.sub(r"[\s\u00a0\u2009\u202f_']", "", raw).lower()
    if not compact:
        raise ValueError("the box is empty")
    if "," in compact:
        if not re.match(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?[km]?$", compact):
            raise ValueError(f"{raw!r} is not a number (commas go between thousands)")
        compact = compact.replace(",", "")
    match = re.match(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)([km]?)$", compact)
    if match is None:
        raise ValueError(f"{raw!r} is not a number")
    sign, digits, suffix = match.groups()
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[suffix]
    value = float(digits) * scale * (-1 if sign == "-" else 1)
    if integer:
        if value != int(value):
            raise ValueError(f"{raw!r} is not a whole number")
        return int(value)
    return value


def format_number(value: float) -> str:
    """A number as the boxes show it: thousands separated by commas."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{int(value):,}"


def short_count(value: int) -> str:
    """A count in three figures where it has more than four (`9,876`, `144k`, `1.88M`,
    `20.4M`), for a line that has to fit a narrow column; the parser reads `144k` back
    (to the thousand)."""
    if abs(value) < 10_000:
        return f"{value:,}"
    for size, unit in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        text = f"{value / size:.3g}"
        if "e" not in text and abs(float(text)) < 1000:  # 999,999 is 1M, not 1e+03k
            return text + unit
    return f"{value:,}"


def counted(value: float, unit: str) -> str:
    """`1 token`, `1,500 tokens`, `0.5 tokens`: the unit agrees with the number."""
    if not unit:
        return format_number(value)
    if isinstance(value, float) and not value.is_integer():
        return f"{format_number(value)} {unit}s"
    return plural(int(value), unit)


class NumberBox:
    """A text box read by `parse_number`, with a note beside it.

    `accept(text)` is the whole behaviour, a pure function of the typed text and the
    box's settings, so tests drive it without a browser: it returns the value the box
    now holds. Below `minimum` or above `maximum` the value is clamped and the note says
    so; `snap` (the nearest value a slider offers, say) may move it again, also said;
    text it cannot read leaves the value as it was and the note says why. `on_value` is
    called with each new value."""

    def __init__(
        self,
        value: float,
        *,
        minimum: Optional[float] = None,
        maximum: Optional[float] = None,
        unit: str = "",
        integer: bool = True,
        snap: Optional[Callable[[float], float]] = None,
        on_value: Optional[Callable[[float], None]] = None,
        width: str = "96px",
        description: str = "",
        tooltip: str = "",
    ):
        self.minimum, self.maximum = minimum, maximum
        self.unit, self.integer, self.snap, self.on_value = unit, integer, snap, on_value
        self.value = value
        self.text = widgets.Text(
            format_number(value),
            description=description,
            continuous_update=False,  # read on Enter or leaving the box, not each key
            tooltip=tooltip or self.range_text(),
            layout=widgets.Layout(width=width),
        )
        self.text.add_class("ccl-number-box")
        self.note = widgets.HTML("", layout=widgets.Layout(min_width="0"))
        self.note.add_class("ccl-number-note")
        self.note_css = ""  # more of the note's style, where it sits elsewhere
        self.empty_note_display = ""
        self._showing = False
        self.text.observe(self._typed, names="value")
        # Enter sends "submit" before the text's new value, and no value when the text
        # is what the box showed: the student is past the note either way, and a new
        # value brings its own. (ipywidgets deprecates `on_submit`, the public way to
        # it, in favour of watching the value, which tells nothing here.)
        submitted = getattr(self.text, "_submission_callbacks", None)
        if submitted is not None:
            submitted.register_callback(lambda _: self.clear_note())
        self.widget = widgets.HBox([self.text, self.note])

    def range_text(self) -> str:
        if self.minimum is None or self.maximum is None:
            return "type a number: 1,500, 1 500 and 1.5k are all 1,500"
        return (
            f"from {format_number(self.minimum)} to {format_number(self.maximum)}: "
            "1,500, 1 500 and 1.5k are all 1,500"
        )

    def _typed(self, change) -> None:
        if not self._showing:
            self.accept(change["new"])

    def show(self, value: float, note: str = "", problem: bool = False) -> None:
        """Put `value` in the box (a slider moved, say) with `note` beside it."""
        self.value = value
        self._showing = True
        try:
            self.text.value = format_number(value)
        finally:
            self._showing = False
        style = NOTE_PROBLEM if problem else NOTE_MOVED
        self.note.value = (
            f'<span style="{style};font-size:13px;{self.note_css}">'
            f"{html.escape(note)}</span>"
            if note
            else ""
        )
        # an empty note takes no room (a note under its box would leave a gap)
        self.note.layout.display = "" if note else self.empty_note_display

    def show_empty(self, placeholder: str) -> None:
        """No value in the box, `placeholder` in grey instead (a box that waits for
        something else: a number shown there would be no one's)."""
        self._showing = True
        try:
            self.text.value = ""
        finally:
            self._showing = False
        self.text.placeholder = placeholder
        self.clear_note()

    def clear_note(self) -> None:
        """The note gone (the value stays): the student has moved on to another
        control, and a note left up would read as if about this one."""
        self.note.value = ""
        self.note.layout.display = self.empty_note_display

    def accept(self, text: str) -> float:
        """Read `text` as typed into the box; returns the value the box then holds."""
        try:
            typed = parse_number(text, self.integer)
        except ValueError as error:
            kept = counted(self.value, self.unit)
            self.show(self.value, f"{error}: kept {kept}", problem=True)
            return self.value
        value, notes = typed, []
        if self.minimum is not None and value < self.minimum:
            value = self.minimum
            least = counted(self.minimum, self.unit)
            notes.append(f"{format_number(typed)} is below the least, {least}")
        elif self.maximum is not None and value > self.maximum:
            value = self.maximum
            most = counted(self.maximum, self.unit)
            notes.append(f"{format_number(typed)} is over the most, {most}")
        if self.snap is not None:
            snapped = self.snap(value)
            if snapped != value and not notes:
                notes.append(
                    f"{format_number(typed)} is not offered; the nearest is "
                    f"{format_number(snapped)}"
                )
            value = snapped
        note = ""
        if notes:
            note = f"{notes[0]}: set to {counted(value, self.unit)}"
        changed = value != self.value
        self.show(value, note, problem=False)
        if changed and self.on_value is not None:
            self.on_value(value)
        return value


def slider_snap(slider: widgets.Widget) -> Callable[[float], float]:
    """The value `slider` would take for `value`: on its grid of steps from its min."""

    def snap(value: float) -> float:
        steps = round((value - slider.min) / slider.step)
        snapped = slider.min + steps * slider.step
        snapped = min(max(snapped, slider.min), slider.max)
        return int(snapped) if isinstance(slider.step, int) else round(snapped, 10)

    return snap


def boxed_slider(
    slider: widgets.Widget,
    unit: str = "",
    width: str = "96px",
    snap: bool = True,
    waiting: str = "",
) -> NumberBox:
    """Hide `slider`'s own readout (ipywidgets reads it up to its first non-digit) and
    give it a `NumberBox` instead, kept in step both ways: the box's range and grid are
    the slider's, read when a number is typed (a slider's range may change). With
    `waiting`, a switched-off slider's box is empty and says that instead."""
    if hasattr(slider, "readout"):
        slider.readout = False
    integer = not isinstance(slider, (widgets.FloatSlider, widgets.FloatText))
    box = NumberBox(slider.value, unit=unit, integer=integer, width=width)

    def follow_slider(change) -> None:
        box.minimum, box.maximum = slider.min, slider.max
        box.text.disabled = slider.disabled
        if slider.disabled and waiting:
            box.show_empty(waiting)
        elif slider.value != box.value or slider.disabled or not box.text.value:
            # moved by hand or by code: the box follows; switched off: its note goes
            box.show(slider.value)

    def set_slider(value: float) -> None:
        slider.value = value

    box.minimum, box.maximum = slider.min, slider.max
    box.snap = slider_snap(slider) if snap else None
    box.on_value = set_slider
    slider.observe(follow_slider, names="value")
    slider.observe(follow_slider, names=["min", "max", "disabled"])
    box.text.disabled = slider.disabled
    if slider.disabled and waiting:
        box.show_empty(waiting)
    return box


def note_under(items: Sequence[object], layout=None) -> widgets.VBox:
    """`items` in a row, each `NumberBox` among them as its text box alone, and the
    boxes' notes under the row, as wide as it: a note beside its box would take the
    slider's room (the slider shrank under it and its handle covered the box). An
    empty note takes no room."""
    row, notes = [], []
    for item in items:
        if isinstance(item, NumberBox):
            item.text.layout.flex = "0 0 auto"  # a full row narrows the others, not it
            row.append(item.text)
            item.note_css = "display:block;line-height:16px"
            item.empty_note_display = "none"
            item.note.layout.display = "" if item.note.value else "none"
            # as wide as the row, never wider: a long note must not widen its column
            item.note.layout.width, item.note.layout.min_width = "0", "100%"
            notes.append(item.note)
        else:
            row.append(item)
    return widgets.VBox([widgets.HBox(row), *notes], layout=layout or widgets.Layout())


def notes_but(pairs, moved) -> None:
    """Every box's note gone but the one beside `moved`: `pairs` are (control, box);
    a control the student moved means they are on that one now, and a note left up
    beside another would read as if about it."""
    for control, box in pairs:
        if control is not moved and box.note.value:
            box.clear_note()


def number_boxes(*owners: object) -> Sequence[NumberBox]:
    """Every NumberBox an explorer holds (its `number_boxes` attribute)."""
    return [box for owner in owners for box in getattr(owner, "number_boxes", ())]
