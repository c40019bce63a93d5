"""The views of notebooks 00-04: every number they show is the core's own number.

Widgets are driven as a person would, by setting `.value`; the expected values come
from minilib (tokens, aging, summary, trace), never from constants copied here.
"""

import html

import pytest
from hypothesis import given
from hypothesis import strategies as st
from message_builders import assistant, tool

from minilib import (
    AGING_MARK,
    RollingSummary,
    ScriptedModel,
    Settings,
    ToolResultAging,
    aged_content,
    closed_range,
    estimate_tokens,
    protected_head_length,
    range_candidates,
    recover_tool_output,
    run_baseline,
    run_session,
)
from minilib.lab.explore import (
    AgingExplorer,
    TokenEstimateBox,
    aging_view,
    candidates_table,
    estimate_readout,
    fact_survival,
    folded_results_table,
    message_table,
    message_tokens_figure,
    side_by_side,
    text_panels,
    token_breakdown,
    token_examples,
    tokens_by_role,
    zones_table,
)
from minilib.model import first_line_of_result
from minilib.tokens import count_cjk, estimate_message_tokens, estimate_text_tokens


@pytest.fixture(scope="module")
def final_messages(session):
    return list(run_baseline(session).final_messages)


@pytest.fixture(scope="module")
def long_notes(final_messages):
    """The session's first tool result: long_notes.txt, read in full."""
    return next(m for m in final_messages if m.get("tool_call_id") == "call_01")


# ---------------------------------------------------------------- 01


def test_message_table_has_one_row_per_message_with_the_core_estimate(final_messages):
    table = message_table(final_messages)
    assert len(table) == len(final_messages)
    assert table["tokens"].tolist() == [
        estimate_message_tokens(m) for m in final_messages
    ]
    assert table["tokens"].sum() == estimate_tokens(final_messages)
    assert table["role"].tolist() == [m["role"] for m in final_messages]
    first_tool = next(i for i, m in enumerate(final_messages) if m["role"] == "tool")
    assert (
        table.loc[first_tool, "link"]
        == f"answers {final_messages[first_tool]['tool_call_id']}"
    )


def test_tokens_by_role_sums_each_role_and_tool_results_dominate(final_messages):
    by_role = tokens_by_role(final_messages)
    for role in by_role.index:
        mine = [m for m in final_messages if m["role"] == role]
        assert by_role.loc[role, "messages"] == len(mine)
        assert by_role.loc[role, "tokens"] == estimate_tokens(mine)
    assert by_role["share"].sum() == pytest.approx(1, abs=0.002)
    assert by_role["tokens"].idxmax() == "tool"


def test_bar_chart_draws_each_message_once_at_its_estimate_coloured_by_role(
    final_messages,
):
    figure = message_tokens_figure(final_messages)
    expected = {i: estimate_message_tokens(m) for i, m in enumerate(final_messages)}
    for axis in ("y", "y2"):  # the whole scale, then the zoom: every message in each
        drawn = {}
        for trace in figure.data:
            if trace.yaxis != axis:
                continue
            for index, tokens in zip(trace.x, trace.y):
                assert final_messages[index]["role"] == trace.name
                drawn[index] = tokens
        assert drawn == expected
    legend = [t.name for t in figure.data if t.showlegend is not False]
    assert sorted(legend) == sorted({m["role"] for m in final_messages})  # once a role


def test_bar_chart_zoom_makes_the_short_messages_readable(final_messages):
    """Chapter 01: the assistant's messages (a few dozen tokens) are a pixel tall on an
    axis to 10,000; the zoom's axis ends above them, each bar says its tokens, and a bar
    the zoom cuts off says it was cut and how big it is."""
    figure = message_tokens_figure(final_messages, zoom_tokens=120)
    assert list(figure.layout.yaxis2.range) == [0, 120]
    assistant = [
        estimate_message_tokens(m) for m in final_messages if m["role"] == "assistant"
    ]
    # the zoom's axis ends above every assistant message, but not 10x above it
    assert max(assistant) < 120 < 10 * min(assistant)
    labels = {(a.x, a.text) for a in figure.layout.annotations if a.yref == "y2"}
    for index, message in enumerate(final_messages):
        tokens = estimate_message_tokens(message)
        shown = f"{tokens:,}" if tokens <= 120 else f"{tokens:,} ►"
        assert (index, shown) in labels
    cut = [a for a in figure.layout.annotations if a.yref == "y2" and "►" in a.text]
    assert cut and all(a.y == 120 for a in cut)  # at the top edge, inside the panel


# ---------------------------------------------------------------- 02


@given(
    st.text(alphabet=st.sampled_from("ab ,.\n上下文窗口，。カナ한글ＡＢ"), max_size=60)
)
def test_token_breakdown_adds_up_to_the_core_estimate(text):
    parts = token_breakdown(text)
    assert parts["cjk"] == count_cjk(text)
    assert parts["cjk"] + parts["other"] == parts["chars"] == len(text)
    assert parts["tokens"] == estimate_text_tokens(text)
    assert parts["message_tokens"] == estimate_message_tokens(
        {"role": "user", "content": text}
    )


def test_token_examples_has_a_row_per_text():
    texts = ["context window", "上下文窗口", "窗口 window"]
    table = token_examples(texts)
    assert table["text"].tolist() == texts
    assert table["tokens"].tolist() == [estimate_text_tokens(t) for t in texts]


def _tokens(number):
    return "1 token" if number == 1 else f"{number:,} tokens"


@pytest.mark.parametrize(
    "typed",
    ["", "hello", "上下文窗口告急", "tool_call_id 配对 kept", "a", "上", "x" * 5000],
)
def test_text_box_readout_follows_what_is_typed(typed):
    box = TokenEstimateBox("start")
    box.text.value = typed
    assert box.readout.value == estimate_readout(typed)
    assert f"<b>{_tokens(estimate_text_tokens(typed))}</b>" in box.readout.value
    assert (
        f"<b>{_tokens(estimate_message_tokens({'role': 'user', 'content': typed}))}</b>"
        in box.readout.value
    )


@pytest.mark.parametrize(
    "typed, tokens, characters",
    [
        ("a", "1 token", "1 character"),
        ("上", "1 token", "1 character"),
        ("", "0 tokens", "0 characters"),
        ("abcde", "2 tokens", "5 characters"),
    ],
)
def test_text_box_readout_says_one_token_in_the_singular(typed, tokens, characters):
    assert estimate_text_tokens(typed) == int(
        tokens.split()[0]
    )  # the premise, from the core
    readout = estimate_readout(typed)
    assert readout.startswith(f"<b>{tokens}</b> for {characters}:")
    assert "1 tokens" not in readout and "1 characters" not in readout.replace(
        "11 characters", ""
    )


def test_widgets_display_with_a_short_stable_text():
    bundle = TokenEstimateBox("x" * 500)._repr_mimebundle_()
    assert bundle["text/plain"] == "TokenEstimateBox (run the notebook to use it)"
    assert "application/vnd.jupyter.widget-view+json" in bundle


# ---------------------------------------------------------------- 03


def test_aging_view_of_a_long_result_is_the_core_aged_message(long_notes):
    view = aging_view(long_notes, 160, 120, 240)
    expected = ToolResultAging(160, 120, 240).age_message(long_notes)
    assert view.aged == expected
    assert (view.before_tokens, view.after_tokens) == (
        estimate_tokens([long_notes]),
        estimate_tokens([expected]),
    )
    assert view.verdict.startswith("aged:")
    assert f"{view.after_tokens:,} tokens" in view.verdict


def test_aging_view_says_why_a_result_is_left_alone(long_notes):
    short = aging_view(long_notes, 160, 120, len(long_notes["content"]))
    assert short.aged is None and "≤ min_chars" in short.verdict
    assert short.after_tokens == short.before_tokens

    aged_once = ToolResultAging().age_message(long_notes)
    again = aging_view(aged_once, 160, 120, 240)
    assert again.aged is None and "already aged" in again.verdict

    assert "only tool messages" in aging_view(assistant("x" * 1000), 10, 10, 0).verdict


def test_aging_view_never_inflates_a_result_just_over_min_chars(long_notes):
    result = dict(long_notes, content=long_notes["content"][:250])
    view = aging_view(result, 160, 120, 240)
    would_be = aged_content(result["content"], 160, 120, result["tool_call_id"])
    would_be_tokens = estimate_tokens([dict(result, content=would_be)])
    assert would_be_tokens >= view.before_tokens  # the premise: aging would not help here
    assert view.aged is None
    assert f"{would_be_tokens:,} tokens" in view.verdict


def test_aging_view_keeps_the_error_code_in_the_header(long_notes):
    failed = dict(long_notes, error={"code": "TIMEOUT", "message": "ran past 30 s"})
    header = aging_view(failed, 160, 120, 240).aged["content"].splitlines()[0]
    assert header.startswith(AGING_MARK) and header.endswith("错误码 TIMEOUT")


@pytest.mark.parametrize(
    "head, tail, minimum",
    [(0, 0, 240), (500, 40, 240), (160, 120, "max"), (2000, 2000, 0)],
)
def test_aging_sliders_show_what_aging_does_at_their_values(
    long_notes, head, tail, minimum
):
    explorer = AgingExplorer(long_notes)
    explorer.scale.value = explorer.longest
    minimum = (
        explorer.min.max if minimum == "max" else minimum
    )  # at its max, min_chars spares the whole result
    explorer.head.value, explorer.tail.value, explorer.min.value = head, tail, minimum
    expected = ToolResultAging(head, tail, minimum).age_message(long_notes)
    assert (
        explorer.verdict.value
        == f"<b>{html.escape(aging_view(long_notes, head, tail, minimum).verdict)}</b>"
    )
    shown = expected["content"] if expected is not None else long_notes["content"]
    assert explorer.view.value == text_panels(
        [("sent to the model", shown), ("original", long_notes["content"])],
        explorer.height,
    )


def test_aging_sliders_reach_the_length_where_aging_declines(long_notes):
    """3.3's claim: raise head_chars + tail_chars near the length and aging declines; the
    sliders get there."""
    explorer = AgingExplorer(long_notes)
    assert explorer.head.max == 1000  # a fine scale first: 10 px are ~16 characters
    length = len(long_notes["content"])
    # on it min_chars cannot reach the result's length, and a note says so, its
    # lines as tall as its text (not a widget's 28 px)
    assert f"this one is {length:,} characters" in explorer.inert.value
    assert "line-height:18px" in explorer.inert.value
    explorer.scale.value = explorer.longest
    assert explorer.inert.value == ""
    assert (
        explorer.head.max >= length
        and explorer.tail.max >= length
        and explorer.min.max >= length
    )
    explorer.tail.value = 120
    explorer.head.value = explorer.head.max
    view = aging_view(long_notes, explorer.head.value, 120, explorer.min.value)
    assert view.aged is None and "would cost" in view.verdict
    assert (
        ToolResultAging(explorer.head.value, 120, explorer.min.value).age_message(
            long_notes
        )
        is None
    )
    assert explorer.verdict.value == f"<b>{html.escape(view.verdict)}</b>"
    # and the decline sets in below the length: the first head_chars (in slider steps)
    # where aging declines
    declines = next(
        h
        for h in range(0, explorer.head.max + 1, explorer.head.step)
        if aging_view(long_notes, h, 120, 240).aged is None
    )
    assert declines + 120 < length
    assert (
        aging_view(long_notes, declines - explorer.head.step, 120, 240).aged is not None
    )


def test_text_panels_never_wrap_a_line_and_stack_when_narrow():
    # 03's log is 81 columns: a wrapped row would split an id in a chapter about cuts
    page = text_panels([("a", "x" * 500), ("b", "y"), ("c", "z")])
    assert page.count("white-space:pre;") == 3 and "pre-wrap" not in page
    assert "overflow:auto" in page  # a long line scrolls inside its pane
    assert (
        "repeat(auto-fit,minmax(min(100%,610px),1fr))" in page
    )  # side by side, or stacked


def test_text_panels_escape_markup():
    page = side_by_side("a <b>", "x < y & z", "b", "</pre>").data
    assert "x &lt; y &amp; z" in page and "&lt;/pre&gt;" in page and "a &lt;b&gt;" in page


# ---------------------------------------------------------------- 04


@pytest.fixture(scope="module")
def summary_call(session):
    """The one summary of the default run: the messages it folded and the text it
    wrote."""
    run = run_session(session, Settings())
    call = next(c for c in run.tracer.events("model_call") if c["purpose"] == "summary")
    return run, call["input"], call["reply"]


def test_candidates_table_is_the_narrowing_loop_step_by_step():
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
        assistant("a", "c1"),
        tool("c1", "r1"),
        assistant("b", "c2", "c3"),
        tool("c2", "r2"),
        tool("c3", "r3"),
        assistant("done"),
    ]
    table = candidates_table(messages, protect_tail=2)
    candidates = list(range_candidates(messages, 2))
    assert len(table) == len(candidates) > 1
    assert table["closed"].tolist() == [c.closed for c in candidates]
    assert table["why"].tolist() == [c.reason for c in candidates]
    assert (
        table["range"].iloc[-1]
        == f"[{closed_range(messages, 2).start}, {closed_range(messages, 2).stop})"
    )


def test_zones_table_marks_head_tail_and_the_summarized_range(final_messages):
    span = closed_range(final_messages, 4)
    zones = zones_table(final_messages, 4, span)["zone"].value_counts()
    assert zones["protected head"] == protected_head_length(final_messages)
    assert zones["protected tail"] == 4
    assert zones["summarized"] == len(span)
    assert zones.sum() == len(final_messages)


def test_folded_results_table_compares_the_window_with_the_trace(summary_call):
    run, folded, text = summary_call
    table = folded_results_table(
        folded,
        text,
        {c["tool_call_id"]: c["output"] for c in run.tracer.events("tool_call")},
    )
    folded_tools = [m for m in folded if m["role"] == "tool"]
    assert table["tool_call_id"].tolist() == [m["tool_call_id"] for m in folded_tools]
    assert table["full output chars"].tolist() == [
        len(recover_tool_output(run.tracer.records, m["tool_call_id"]))
        for m in folded_tools
    ]
    assert table["chars in window"].tolist() == [len(m["content"]) for m in folded_tools]
    assert table["quoted chars"].tolist() == [
        len(first_line_of_result(m["content"])) for m in folded_tools
    ]


def test_fact_survival_checks_the_summary_and_each_output():
    outputs = {"call_1": "build failed: E2BIG (#58)", "call_2": "timeout 30"}
    table = fact_survival(
        ["E2BIG", "#58", "timeout", "absent"], "- the log says E2BIG", outputs
    )
    assert table["in summary"].tolist() == [True, False, False, False]
    assert table["in tool outputs"].tolist() == ["call_1", "call_1", "call_2", ""]


def test_second_summary_folds_the_first_which_the_zones_show(summary_call, session):
    run, _, _ = summary_call
    second = RollingSummary(ScriptedModel(session.replies).summarize, 4).compress(
        run.final_messages
    )
    assert second.changed
    first_summary = run.final_messages[protected_head_length(run.final_messages)]
    zones = zones_table(run.final_messages, 4, closed_range(run.final_messages, 4))
    assert zones.loc[run.final_messages.index(first_summary), "zone"] == "summarized"


def test_changing_the_scale_builds_the_sliders_anew(long_notes):
    """The browser's slider keeps its first range for the End key, so a new scale gets
    new sliders (on the page, in the same places) that keep the values that fit."""
    explorer = AgingExplorer(long_notes, head_chars=900, tail_chars=120, min_chars=240)
    old = (explorer.head, explorer.tail, explorer.min)
    explorer.scale.value = explorer.longest
    new = (explorer.head, explorer.tail, explorer.min)
    assert all(slider.max == explorer.longest for slider in new)
    assert [slider.value for slider in new] == [900, 120, 240]
    assert all(a is not b for a, b in zip(old, new))
    rows = explorer.widget.children[1:4]
    assert tuple(row.children[0].children[0] for row in rows) == new  # in place
    explorer.head.value = 5000  # the new sliders drive the view
    assert explorer.verdict.value == (
        f"<b>{html.escape(aging_view(long_notes, 5000, 120, 240).verdict)}</b>"
    )
    explorer.scale.value = 1000  # back on the fine scale, 5,000 becomes its maximum
    assert [slider.value for slider in (explorer.head, explorer.tail, explorer.min)] == [
        1000,
        120,
        240,
    ]
    # each slider's box is the new slider's, and a number typed there moves it
    assert [box.value for box in explorer.number_boxes] == [1000, 120, 240]
    explorer.number_boxes[0].accept("1,500")
    assert (
        explorer.head.value == 1000
        and "over the most" in explorer.number_boxes[0].note.value
    )
    explorer.number_boxes[1].accept("300")
    assert explorer.tail.value == 300


def test_the_role_table_shows_each_share_in_per_cent_and_its_numbers_right():
    from minilib import load_session, run_baseline
    from minilib.lab.explore import role_table, tokens_by_role

    by_role = tokens_by_role(run_baseline(load_session()).final_messages)
    shown = role_table(by_role)
    assert shown.table["share"].tolist() == [f"{s:.1%}" for s in by_role["share"]]
    assert by_role["share"].dtype == float  # the DataFrame a student computes with
    tool_tokens = by_role.loc["tool", "tokens"]
    assert f"{tool_tokens:,}" in repr(shown)
    # the last two columns (tokens, share) hold numbers: right, not the CSS's left
    right = '<td style="text-align:right">'
    assert f"{right}{tool_tokens:,}</td>{right}" in shown._repr_html_()
