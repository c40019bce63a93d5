"""The state-machine stepper (notebook 05): it explains ContextWindow.walk and never
re-implements it.

Expected values come from the core: the walk itself, `run_session` for the same
settings, the message objects (a row said to have moved must be the same object), and
the token estimate.
"""

import html
from html.parser import HTMLParser

import pytest

from minilib import (
    AGING_MARK,
    Settings,
    closed_range,
    protected_head_length,
    run_session,
    window_before_round,
)
from minilib.lab.stepper import (
    EDGES,
    StateMachineStepper,
    explain_step,
    last_round,
    round_walk,
    state_diagram,
    step_changes,
    step_view,
    table_html,
)
from minilib.lab.style import (
    EXPLANATION_HEIGHT,
    PREVIEW_COLUMNS,
    STATE_COLORS,
    TABLE_CSS,
    TABLE_HEIGHT,
    TITLE_CHARS,
)
from minilib.lab.tables import display_width
from minilib.tokens import estimate_message_tokens


@pytest.fixture(scope="module")
def article_run(session):
    return run_session(session, Settings())


@pytest.fixture(scope="module")
def stepper(session):
    return StateMachineStepper(session, Settings(), round_number=9)


def test_round_walk_is_the_windows_own_walk(session):
    messages, window = window_before_round(session, Settings(), 9)
    expected = window.walk(messages, step=9)
    walk = round_walk(session, Settings(), 9)
    assert [(s.state, s.tokens, len(s.messages)) for s in walk] == [
        (s.state, s.tokens, len(s.messages)) for s in expected
    ]


def test_every_round_ends_where_the_run_went(session, article_run):
    """The last state of each round's walk is the window the run actually sent, after the
    strategies it used."""
    for round_ in article_run.rounds:
        walk = round_walk(session, Settings(), round_.round)
        assert walk[-1].state == "send"
        assert (
            walk[-1].tokens == round_.tokens_after
            and len(walk[-1].messages) == round_.messages_after
        )
        assert walk[0].tokens == round_.tokens_before
        fired = {s.state for s in walk if s.compression is not None}
        assert ("tool_result_aging" in fired) == round_.aged
        assert ("rolling_summary" in fired) == round_.summarized


def test_the_views_follow_the_walk_state_by_state(session):
    walk = round_walk(session, Settings(), 9)
    for position, state in enumerate(walk):
        view = step_view(walk, position, Settings(), 9)
        assert view.state == state.state
        assert view.title.startswith(
            f"Round 9, step {position + 1} of {len(walk)}: {state.state}"
        )
        assert len(view.table) == len(state.messages)
        assert list(view.table["tokens"]) == [
            estimate_message_tokens(m) for m in state.messages
        ]
        assert list(view.table["role"]) == [m["role"] for m in state.messages]
        assert sum(view.table["tokens"]) == state.tokens


def test_aging_step_marks_exactly_the_messages_it_aged(session):
    walk = round_walk(session, Settings(), 9)
    position = next(i for i, s in enumerate(walk) if s.state == "tool_result_aging")
    before, after = walk[position - 1], walk[position]
    changes = step_changes(before, after)
    assert set(changes) == set(after.compression.affected_indexes)
    for index in changes:
        assert not before.messages[index]["content"].startswith(AGING_MARK)
        assert after.messages[index]["content"].startswith(AGING_MARK)
        assert changes[index] == (
            f"aged: {estimate_message_tokens(before.messages[index]):,} → "
            f"{estimate_message_tokens(after.messages[index]):,} tokens"
        )
    table = step_view(walk, position, Settings(), 9).table
    assert [i for i in table.index if table.loc[i, "aged"]] == [
        i for i, m in enumerate(after.messages) if m["content"].startswith(AGING_MARK)
    ]


def test_summary_step_names_the_folded_range_and_where_each_message_moved(session):
    walk = round_walk(session, Settings(), 9)
    position = next(i for i, s in enumerate(walk) if s.state == "rolling_summary")
    before, after = walk[position - 1], walk[position]
    span = closed_range(before.messages, Settings().protect_tail)
    changes = step_changes(before, after)
    assert (
        changes[span.start]
        == f"summary of #{span.start}–#{span.stop - 1} ({len(span)} messages)"
    )
    for index, change in changes.items():
        if index == span.start:
            continue
        old_index = int(change.removeprefix("was #"))
        assert (
            after.messages[index] is before.messages[old_index]
        )  # the same message object, moved
    assert len(changes) == len(after.messages) - span.start


def test_protected_and_group_columns(session):
    settings = Settings(protect_tail=5)
    walk = round_walk(session, settings, 9)
    messages = walk[0].messages
    table = step_view(walk, 0, settings, 9).table
    head = protected_head_length(messages)
    assert (
        list(table["protected"])
        == ["head"] * head + [""] * (len(messages) - head - 5) + ["tail"] * 5
    )
    # A tool result shares its group with the assistant message that called it.
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            caller = next(
                i
                for i, m in enumerate(messages)
                if message["tool_call_id"] in [c["id"] for c in m.get("tool_calls") or ()]
            )
            assert (
                table.loc[index, "group"]
                == table.loc[caller, "group"]
                == message["tool_call_id"]
            )


def test_narrowing_is_explained_when_the_tail_cuts_a_group(session):
    """With protect_tail=5 the first candidate range would leave a call unanswered; the
    lines say which."""
    settings = Settings(protect_tail=5)
    walk = round_walk(session, settings, 9)
    position = next(i for i, s in enumerate(walk) if s.state == "rolling_summary")
    lines = explain_step(walk, position, settings)
    span = closed_range(walk[position - 1].messages, settings.protect_tail)
    assert any("unanswered tool call" in line for line in lines)
    assert lines[-1] == f"range [{span.start}, {span.stop}): closed"


def test_measure_lines_say_where_the_machine_goes_next(session):
    walk = round_walk(session, Settings(), 9)
    for position, state in enumerate(walk[:-1]):
        if state.state != "measure":
            continue
        following = walk[position + 1].state
        lines = explain_step(walk, position, Settings())
        within = state.tokens <= Settings().threshold
        assert ("within budget" in lines[0]) == within
        assert lines[1] == (
            "next: send" if following == "send" else f"next: try {following}"
        )


def test_overflow_round_can_be_stepped_and_its_message_is_shown(session):
    tight = Settings(threshold=300)
    run = run_session(session, tight)
    assert last_round(session, tight) == len(run.rounds)
    stepper = StateMachineStepper(session, tight, round_number=len(run.rounds))
    assert stepper.round_slider.max == len(run.rounds)
    stepper.go(len(stepper.walk()) - 1)
    assert stepper.view().state == "overflow"
    assert str(run.overflow) in stepper.explanation.value
    assert stepper.next_button.disabled


def test_next_and_back_step_through_the_walk(stepper):
    walk = stepper.walk()
    stepper.round_slider.value = 9
    stepper.go(0)
    assert stepper.back_button.disabled and not stepper.next_button.disabled
    assert "first state" in stepper.back_button.tooltip  # a disabled button says why
    seen = [stepper.view().state]
    while not stepper.next_button.disabled:
        stepper.next_button.click()
        seen.append(stepper.view().state)
        assert (
            f'class="ccl-state ccl-current" data-state="{seen[-1]}"'
            in stepper.diagram.value
        )
    assert seen == [s.state for s in walk]
    assert "pick another round" in stepper.next_button.tooltip
    stepper.back_button.click()
    assert stepper.position == len(walk) - 2 and stepper.view().state == walk[-2].state


def test_changing_the_round_starts_its_walk_from_the_top(stepper, session, article_run):
    stepper.go(3)
    stepper.round_slider.value = 1
    assert stepper.position == 0
    assert (
        html.escape(step_view(round_walk(session, Settings(), 1), 0, Settings(), 1).title)
        in stepper.title.value
    )
    assert f"{article_run.rounds[1].tokens_before:,} tokens" in stepper.title.value
    stepper.round_slider.value = 9


def test_diagram_lights_the_current_state_and_the_transition_taken(session):
    walk = round_walk(session, Settings(), 9)
    svg = state_diagram(walk, 3)
    assert svg.count("ccl-current") == 1
    assert f'class="ccl-state ccl-current" data-state="{walk[3].state}"' in svg
    assert f'fill="{STATE_COLORS[walk[3].state]}"' in svg
    assert (
        f'class="ccl-edge ccl-taken" data-from="{walk[2].state}" '
        f'data-to="{walk[3].state}"' in svg
    )
    assert svg.count("ccl-taken") == 1
    assert "ccl-taken" not in state_diagram(walk, 0)  # nothing taken yet
    # Every transition a walk can take is drawn.
    drawn = {(source, target) for source, target, _, _ in EDGES}
    assert all((a.state, b.state) in drawn for a, b in zip(walk, walk[1:]))


def test_bad_positions_and_rounds_are_refused_with_a_readable_message(
    session, article_run
):
    walk = round_walk(session, Settings(), 9)
    with pytest.raises(
        ValueError,
        match=f"position must be between 0 and {len(walk) - 1}, got {len(walk)}",
    ):
        step_view(walk, len(walk), Settings(), 9)
    final = len(article_run.rounds) - 1
    with pytest.raises(
        ValueError,
        match=f"round_number must be between 0 and {final} at these settings, "
        f"got {final + 1}",
    ):
        StateMachineStepper(session, Settings(), round_number=final + 1)


def test_text_form_is_one_line(stepper):
    bundle = stepper._repr_mimebundle_()
    assert bundle["text/plain"].startswith("State-machine stepper, round ")
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_table_css_is_on_the_page_once_not_in_every_step(stepper):
    stepper.go(0)
    stepper.next_button.click()
    assert "<style" not in stepper.table.value and "<table" in stepper.table.value
    styles = [
        child
        for child in stepper.widget.children
        if getattr(child, "value", None) == TABLE_CSS
    ]
    assert len(styles) == 1


# ---- fitting an ~840 px output area, and a widget whose height does not move ----------

# The stepper at the article's settings, a narrower tail (two summary candidates) and the
# tight budget (an overflow round).
LAYOUT_SETTINGS = (Settings(), Settings(protect_tail=5), Settings(threshold=300))
# Lines the fixed explanation box holds (an overflow's long first line wraps once, but
# that state has only two lines).
EXPLANATION_LINES = 4
SHORT_CHANGE = 12  # characters: "summary", "aged", "was #16"


def every_view(session):
    for settings in LAYOUT_SETTINGS:
        for round_number in range(last_round(session, settings) + 1):
            walk = round_walk(session, settings, round_number)
            for position, state in enumerate(walk):
                previous = walk[position - 1] if position else None
                view = step_view(walk, position, settings, round_number)
                yield previous, state, view


def test_display_width_counts_a_wide_character_twice():
    assert display_width("abc") == 3
    assert display_width("[已老化] 原") == len("[] ") + 2 * len("已老化原")


def test_table_text_columns_are_capped(session):
    """No cell wider than PREVIEW_COLUMNS; `content` is the start of the message,
    `changed` the short form of `step_changes`."""
    cut = 0
    for previous, state, view in every_view(session):
        for row, message in zip(view.table.itertuples(index=False), state.messages):
            for value in row:
                assert display_width(str(value)) <= PREVIEW_COLUMNS, value
            flat = (message.get("content") or "").replace("\n", " ⏎ ")
            if row.content.endswith("…"):
                cut += 1
                assert flat.startswith(row.content[:-1]) and len(row.content) < len(flat)
            else:
                assert row.content == flat
        full = step_changes(previous, state)
        expected = {
            index: "aged"
            if change.startswith("aged: ")
            else "summary"
            if change.startswith("summary of ")
            else change
            for index, change in full.items()
        }
        assert dict(view.table["changed"][view.table["changed"] != ""]) == expected
        assert all(len(label) <= SHORT_CHANGE for label in expected.values())
        assert set(view.changes) == set(expected)
    assert cut > 0  # long messages are there, and were cut


class _Cells(HTMLParser):
    """The rows of an HTML table: per row, its class and its cells as (text, title)."""

    def __init__(self, text):
        super().__init__()
        self.rows = []
        self._cell = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr":
            self.rows.append({"class": attrs.get("class"), "cells": []})
        elif tag in ("td", "th"):
            self._cell = ["", attrs.get("title")]

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1]["cells"].append(tuple(self._cell))
            self._cell = None


def test_table_html_shows_the_previews_with_the_whole_text_on_hover(session):
    capped = 0
    for _, state, view in every_view(session):
        header, *rows = _Cells(table_html(view)).rows
        assert [text for text, _ in header["cells"]] == ["#"] + list(view.table.columns)
        assert len(rows) == len(state.messages)
        for index, (row, message) in enumerate(zip(rows, state.messages)):
            assert (row["class"] == "ccl-changed") == (index in view.changes)
            text, title = row["cells"][-1]
            assert text == view.table["content"][index]
            content = message.get("content") or ""
            if text == content:
                assert title is None
            elif len(content) <= TITLE_CHARS:
                assert title == content
            else:
                capped += 1
                assert title == content[: TITLE_CHARS - 1] + "…"
            tokens = row["cells"][view.table.columns.get_loc("tokens") + 1][0]
            assert tokens == f"{view.table['tokens'][index]:,}"
    assert capped > 0  # the 16,400-character notes file, before aging


def test_explanation_and_table_keep_one_height_on_every_step(stepper, session):
    """The fixed boxes the page relies on: the widget's height is the same on every step,
    and every explanation fits its box."""
    boxes = {"explanation": EXPLANATION_HEIGHT, "table": TABLE_HEIGHT}
    for round_number in (0, 9):
        stepper.round_slider.value = round_number
        for position in range(len(stepper.walk())):
            stepper.go(position)
            for name, height in boxes.items():
                layout = getattr(stepper, name).layout
                assert (layout.height, layout.overflow) == (f"{height}px", "auto")
    stepper.round_slider.value = 9
    assert max(len(view.lines) for _, _, view in every_view(session)) <= EXPLANATION_LINES


def test_summary_step_says_in_full_what_the_table_says_short(session):
    walk = round_walk(session, Settings(), 9)
    position = next(i for i, s in enumerate(walk) if s.state == "rolling_summary")
    before = walk[position - 1]
    span = closed_range(before.messages, Settings().protect_tail)
    moved = len(before.messages) - span.stop
    first_moved, last_moved = span.start + 1, span.start + moved
    line = explain_step(walk, position, Settings())[1]
    assert line == (
        f"#{span.start} summary of #{span.start}–#{span.stop - 1} "
        f"({len(span)} messages); #{first_moved}–#{last_moved} were "
        f"#{span.stop}–#{len(before.messages) - 1}"
    )
