"""Every numeric box of every chapter's widgets reads numbers one way (parse_number):
1,500, 1 500, 1500 and 1.5k are 1,500; what it cannot read is said beside the box and
the box keeps its value; a value clamped or moved to the slider's grid is said too."""

import pytest

from minilib.lab.dashboard import LongSessionDashboard
from minilib.lab.explore import AgingExplorer
from minilib.lab.log_explorer import LogExplorer
from minilib.lab.numbers import NumberBox, counted, parse_number, short_count
from minilib.lab.policies_view import PolicyLab
from minilib.lab.scale_view import ScaleExplorer
from minilib.lab.six_paths import SixPathsExplorer
from minilib.lab.stepper import StateMachineStepper
from minilib.session import load_session, run_baseline
from minilib.window import Settings

SAME = ["1,500", "1 500", "1500", "1.5k", " 1\u202f500 ", "1_500", "1.5K"]


@pytest.mark.parametrize("typed", SAME)
def test_every_way_of_writing_fifteen_hundred_reads_as_1500(typed):
    assert parse_number(typed) == 1_500


@pytest.mark.parametrize("typed", ["", "abc", "1,50", "1.5", "1..5", "k", "15 00 0x"])
def test_what_cannot_be_read_says_why(typed):
    with pytest.raises(ValueError):
        parse_number(typed)


def test_units_agree_with_the_number():
    assert counted(1, "message") == "1 message"
    assert counted(2, "message") == "2 messages"
    assert counted(1, "token") == "1 token"
    assert counted(1_500, "token") == "1,500 tokens"


@pytest.mark.parametrize(
    "count, short",
    [
        (9_876, "9,876"),
        (10_000, "10k"),
        (143_567, "144k"),
        (999_999, "1M"),  # not "1e+03k"
        (1_878_455, "1.88M"),
        (20_373_291, "20.4M"),
    ],
)
def test_a_short_count_keeps_three_figures_and_reads_back_near_the_count(count, short):
    assert short_count(count) == short
    assert abs(parse_number(short) - count) <= 0.005 * count


def test_a_box_refuses_words_keeps_its_value_and_clamps_with_a_word():
    seen = []
    box = NumberBox(1_200, minimum=1, maximum=10**9, unit="token", on_value=seen.append)
    assert box.accept("1.5k") == 1_500 and seen == [1_500]
    assert box.note.value == ""
    assert box.accept("twelve") == 1_500 and seen == [1_500]
    assert "is not a number: kept 1,500 tokens" in box.note.value
    assert box.text.value == "1,500"
    assert box.accept("0") == 1 and seen == [1_500, 1]
    assert "0 is below the least, 1 token: set to 1 token" in box.note.value
    assert "1 tokens" not in box.note.value


def test_enter_on_the_value_the_box_shows_takes_its_note_away():
    box = NumberBox(13, minimum=0, maximum=13)
    box.text.value = "99999999999"  # clamped, and said
    assert box.text.value == "13" and "is over the most, 13" in box.note.value

    def enter(typed: str) -> None:
        # as the page sends it: "submit" first, then the value, only if it changed
        box.text._handle_string_msg(None, {"event": "submit"}, None)
        box.text.value = typed

    enter("13")  # the text is unchanged, so no value arrives: the note goes anyway
    assert box.note.value == "" and box.value == 13
    enter("abc")  # a new value brings its own note, after the submit
    assert "&#x27;abc&#x27; is not a number: kept 13" in box.note.value


def builders():
    """Every chapter's widget builder that has a numeric box: (chapter, builder)."""
    session = load_session()

    def aging_explorer():
        final = run_baseline(session).final_messages
        return AgingExplorer(next(m for m in final if m.get("tool_call_id") == "call_01"))

    return [
        ("03 aging explorer", aging_explorer),
        ("05 stepper", lambda: StateMachineStepper(session, Settings(), round_number=9)),
        ("06 dashboard", lambda: LongSessionDashboard(session)),
        ("07.9 log explorer", LogExplorer),
        ("08 six paths", SixPathsExplorer),
        ("09 scale", lambda: ScaleExplorer(threshold=32_000, calls=200)),
        (
            "10 policy lab",
            lambda: PolicyLab("generated session, 200 tool calls, 4 user turns", 32_000),
        ),
    ]


@pytest.mark.parametrize("chapter, build", builders(), ids=[c for c, _ in builders()])
def test_every_numeric_box_of_every_chapter_reads_the_same_inputs(chapter, build):
    explorer = build()
    boxes = explorer.number_boxes
    assert boxes, chapter
    for box in boxes:
        readings = set()
        for typed in ("1,500", "1 500", "1500", "1.5k"):
            value = box.accept(typed)
            readings.add(value)
            if box.value == 1_500:
                assert box.note.value == "", (chapter, typed)
            else:  # out of range or off the grid: moved, and said so beside the box
                assert "set to" in box.note.value or "nearest" in box.note.value, (
                    chapter,
                    typed,
                    box.note.value,
                )
        assert len(readings) == 1, (chapter, readings)  # the four inputs are one number
        before = box.value
        assert box.accept("lots") == before
        assert "is not a number" in box.note.value and "kept" in box.note.value
        assert box.text.value.replace(",", "") == str(before).replace(".0", "")


def test_a_slider_switched_off_takes_its_boxs_note_away():
    import ipywidgets as widgets

    from minilib.lab.numbers import boxed_slider

    slider = widgets.IntSlider(500, min=100, max=1000, step=100)
    box = boxed_slider(slider, unit="token")
    box.accept("abc")
    assert "is not a number" in box.note.value
    slider.disabled = True  # the box greys out with it: an old complaint would stay
    assert box.note.value == "" and box.text.disabled


def test_the_log_reports_threshold_line_agrees_with_its_number():
    from minilib.lab.log_explorer import ThresholdChoice, threshold_line

    choice = ThresholdChoice(threshold=600, stops_at=500, step=100, largest_window=1)
    assert threshold_line(1, choice).startswith("threshold: 1 token.")
    assert "its largest window" in threshold_line(1, choice)
    choice = ThresholdChoice(threshold=600, stops_at=500, step=100, largest_window=4_000)
    assert threshold_line(1_500, choice).startswith("threshold: 1,500 tokens.")


def test_a_note_under_one_box_goes_when_another_slider_moves():
    explorer = SixPathsExplorer()
    first, second = list(explorer.typed)[:2]
    explorer.typed[first].accept("abc")
    assert "is not a number" in explorer.typed[first].note.value
    slider = explorer.sliders[second]
    options = getattr(slider, "options", None)
    slider.value = options[-1] if options else slider.max
    assert explorer.typed[first].note.value == ""


def test_chapter_3_and_6_notes_go_when_another_slider_moves():
    """A refused entry's note stays only while the student is on its control: in the
    aging explorer (chapter 3) and the long-session lab (chapter 6 and the projector
    page), moving another slider takes it away, as chapters 8 and 10 do."""
    from minilib.lab.dashboard import LongSessionDashboard
    from minilib.lab.explore import AgingExplorer
    from minilib.session import DATA_DIR

    text = (DATA_DIR / "workspace" / "long_notes.txt").read_text(encoding="utf-8")
    aging = AgingExplorer({"role": "tool", "tool_call_id": "c1", "content": text})
    head_box = aging.number_boxes[0]
    head_box.accept("abc")
    assert "is not a number" in head_box.note.value
    aging.tail.value = aging.tail.value + 10
    assert head_box.note.value == ""

    lab = LongSessionDashboard()
    names = list(lab.boxes)
    lab.boxes[names[0]].accept("abc")
    assert lab.boxes[names[0]].note.value
    other = lab.sliders[names[1]]
    other.value = other.max if other.value != other.max else other.min
    assert lab.boxes[names[0]].note.value == ""
