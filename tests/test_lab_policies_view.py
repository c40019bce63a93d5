"""Chapter 10's policy lab, driven without a browser: a slider re-runs its own policy."""

import html
import json
import re
from pathlib import Path

from minilib.lab import policies_view
from minilib.lab.log_runs import LogRuns, log_messages, saved_share
from minilib.lab.policies_view import PolicyLab
from minilib.lab.policy_rows import (
    available_policies,
    catalogue_table,
    comparison_frame,
    policy_catalogue,
    policy_rows,
    row_problems,
    same_run,
)
from minilib.lab.shown import upload_value
from minilib.lab.style import BROKEN_TRACE, OVERFLOW_COLOR, PROBLEM_CSS
from minilib.lab.tradeoff_figure import tradeoff_figure, tradeoff_traces
from minilib.logs.replay import load_transcript
from minilib.policies.production.compare import measure_policy
from minilib.session import DATA_DIR
from minilib.tokens import estimate_tokens

SHORT = "generated session, 200 tool calls, 4 user turns"
REAL_CLAUDE = (
    Path(__file__).resolve().parent.parent
    / "data"
    / "real"
    / "claude-code"
    / "entire-91-b42542f24f-0.jsonl"
)


def test_rows_are_the_compare_rows_with_tokens_saved():
    runs = LogRuns(log_messages(SHORT))
    rows = policy_rows(runs, 32_000)
    assert [row["policy"] for row in rows] == list(available_policies())
    swe = next(row for row in rows if row["policy"] == "swe-agent-last-n")
    direct = measure_policy(runs.messages, "swe-agent-last-n", 32_000)
    # compare's row, less each output's fate (the chapter shows none of them)
    assert {k: v for k, v in swe.items() if k != "tokens_saved"} == {
        k: v for k, v in direct.items() if k != "cut"
    }
    # saved: against the whole log sent every round, over the rounds it sent
    messages = list(runs.messages)
    replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    whole = sum(estimate_tokens(messages[:i]) for i in replies[: swe["rounds"]])
    assert (
        swe["tokens_saved"]
        == 1 - swe["tokens_sent"] / whole
        == saved_share(swe, runs.baseline)
    )


def test_the_table_and_the_figure_show_every_row():
    runs = LogRuns(log_messages(SHORT))
    rows = policy_rows(runs, 8_000)
    frame = comparison_frame(rows)
    assert list(frame.index) == [row["policy"] for row in rows]
    saved, _, lost, restorable, cache = tradeoff_traces(rows)  # _: the legend's key
    for trace in (saved, lost, restorable, cache):
        assert trace["y"] == list(frame.index)  # one bar a policy, the table's order
    for row, x, text in zip(rows, saved["x"], saved["text"]):
        if row["overflow_round"] is None:
            assert x == round(100 * row["tokens_saved"], 1)
        else:  # no bar: it saved nothing, the agent failed there
            assert x == 0 and text == f"stopped at round {row['overflow_round']:,}"
    assert lost["x"] == [row["facts_lost"] for row in rows]
    assert restorable["x"] == [row["facts_restorable"] for row in rows]
    # the legend names the bars in the panels' order, left to right
    figure = tradeoff_figure(rows)
    panels = [trace.xaxis for trace in figure.data]
    assert panels == sorted(panels, key=lambda axis: int(axis[1:] or 1))
    assert figure.layout.legend.traceorder == "normal"


def test_a_slider_reruns_its_own_policy_and_leaves_the_others():
    lab = PolicyLab(SHORT, 32_000)
    before = {row["policy"]: row for row in lab.rows}
    slider = lab.sliders["swe-agent-last-n"]
    slider.value = 2
    after = {row["policy"]: row for row in lab.rows}
    assert after["swe-agent-last-n"] == lab.current().row("swe-agent-last-n", 32_000, 2)
    assert (
        after["swe-agent-last-n"]["tokens_sent"]
        < before["swe-agent-last-n"]["tokens_sent"]
    )
    for key in before:
        if key != "swe-agent-last-n":
            assert after[key] is before[key]  # computed once, not again
    assert "swe-agent-last-n" in lab.table.value


def test_a_new_window_resets_the_sliders_to_its_defaults():
    lab = PolicyLab(SHORT, 32_000)
    lab.sliders["article"].value = 16_000
    lab.window.value = 8_000
    assert lab.sliders["article"].value == 8_000  # the article's threshold: the window
    assert all(row["tokens_peak"] <= 8_000 for row in lab.rows)


def upload(lab, name, content: bytes):
    lab.upload.value = upload_value([(name, content)])


def test_an_uploaded_log_is_compared_and_a_bad_one_is_named():
    lab = PolicyLab(SHORT, 8_000)
    text = json.dumps(list(log_messages("m3_release_check.json")))
    upload(lab, "mine.json", text.encode())
    assert lab.choice.value == "uploaded: mine.json"
    assert "uploaded: mine.json" in lab.status.value
    assert len(lab.rows) == len(available_policies())
    upload(lab, "bad.json", b"{not json")
    # said under the upload button, in the problem colours, not under the sliders
    box = lab.widget.children
    assert box.index(lab.problem) == 1 and "bad.json" in lab.problem.value
    assert PROBLEM_CSS in lab.problem.value
    assert "still shows <b>uploaded: mine.json</b>" in lab.problem.value
    assert lab.choice.value == "uploaded: mine.json"  # the last good log stays
    assert "mine.json" in lab.status.value and lab.table.value  # and is shown again
    upload(lab, "shot.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert "shot.png: a PNG image, not a text log" in lab.problem.value
    upload(lab, "mine.json", text.encode())
    assert lab.problem.value == ""  # a good upload clears the last refusal


def slider_positions(slider) -> list:
    count = round((slider.max - slider.min) / slider.step)
    return [slider.min + i * slider.step for i in range(count + 1)]


def test_every_slider_offers_only_values_its_policy_accepts():
    from minilib.lab.policies_view import POLICY_WINDOWS, slider_for
    from minilib.policies.production import POLICIES, build_policy

    for window in POLICY_WINDOWS:
        for key in available_policies():
            slider = slider_for(key, window)
            name = POLICIES[key].main_parameter
            assert slider.min <= slider.value <= slider.max
            for value in slider_positions(slider) + [slider.max]:
                build_policy(key, window, **{name: value})  # no ValueError
    # the two that offered refused values at their low ends now start where the
    # policy does: one step lower is refused
    for key, window in (
        ("anthropic-compaction", 32_000),
        ("openhands-summarizing", 8_000),
    ):
        slider = slider_for(key, window)
        name = POLICIES[key].main_parameter
        below = slider.min - slider.step
        try:
            build_policy(key, window, **{name: below})
        except ValueError:
            pass
        else:
            raise AssertionError(f"{key}: {name}={below} accepted, below the slider")


def test_a_refused_setting_says_so_in_its_row_and_the_others_follow_their_sliders():
    lab = PolicyLab(SHORT, 32_000)
    compaction = lab.sliders["anthropic-compaction"]
    compaction.min = 800  # a value the policy refuses, as a too-wide slider offered
    compaction.value = 800
    by_policy = {row["policy"]: row for row in lab.rows}
    refused = by_policy["anthropic-compaction"]
    assert "trigger" in refused["error"] and "800" in refused["error"]
    assert f"not run: {refused['error']}" in lab.table.value.replace("&gt;", ">")
    saved = lab.figure.data[0]
    place = list(saved.y).index("anthropic-compaction")
    assert saved.x[place] == 0 and saved.text[place].startswith("not run")
    # another slider still re-runs its row
    swe = lab.sliders["swe-agent-last-n"]
    swe.value = swe.min
    after = {row["policy"]: row for row in lab.rows}["swe-agent-last-n"]
    assert after == lab.current().row("swe-agent-last-n", 32_000, swe.min)
    assert rounds_text(after) in lab.table.value
    compaction.value = compaction.max  # back to a value it takes: measured again
    assert "error" not in {row["policy"]: row for row in lab.rows}["anthropic-compaction"]


def rounds_text(row) -> str:
    from minilib.lab.policy_rows import rounds_cell

    return rounds_cell(row)


def test_the_chart_writes_tokens_saved_as_the_table_does():
    runs = LogRuns(log_messages(SHORT))
    rows = policy_rows(runs, 200_000)
    frame = comparison_frame(rows)
    saved = tradeoff_traces(rows)[0]
    for row, text in zip(rows, saved["text"]):
        if row["overflow_round"] is not None:  # a stop is no saving, here as there
            assert frame.loc[row["policy"], "saved"] == "none"
        elif row["windows_invalid"]:  # no share: what it broke, as the line beside it
            assert text == f"{frame.loc[row['policy'], 'broken']:,} broken"
            assert frame.loc[row["policy"], "saved"] == "none"
        elif row["task_gone_rounds"]:  # the table's share, and that it lost its task
            assert text == frame.loc[row["policy"], "saved"] + ", task gone"
        else:
            assert text == frame.loc[row["policy"], "saved"]


def test_a_run_that_broke_windows_is_marked_in_the_chart_not_shown_as_a_plain_saving():
    rows = policy_rows(LogRuns(log_messages(SHORT)), 8_000)
    saved = tradeoff_traces(rows)[0]
    broken = [
        row["overflow_round"] is None and row["windows_invalid"] > 0 for row in rows
    ]
    assert any(broken) and not all(broken)  # the log shows both kinds
    shapes = saved["marker"]["pattern"]["shape"]
    colors = saved["textfont"]["color"]
    for row, bad, shape, color, text in zip(rows, broken, shapes, colors, saved["text"]):
        assert (shape == "/") == bad
        if bad:
            assert (
                color == OVERFLOW_COLOR and text == f"{row['windows_invalid']:,} broken"
            )
        elif row["overflow_round"] is None:  # red only where it lost its task
            assert (color == OVERFLOW_COLOR) == bool(row["task_gone_rounds"])
    # the legend names the hatching, beside the bars it marks, only where there are any
    figure = tradeoff_figure(rows)
    assert [trace.name for trace in figure.data][:2] == ["tokens saved", BROKEN_TRACE]
    assert figure.data[1].showlegend
    clean = [row for row in rows if not row["windows_invalid"]]
    assert not tradeoff_figure(clean).data[1].showlegend


def test_the_lab_chart_keeps_each_trace_in_its_place_as_runs_break_windows_or_not():
    """The lab updates its figure trace by trace: a log with a run that broke windows,
    then one without, then back, leaves every trace what a fresh figure of the same
    rows draws."""
    lab = PolicyLab(SHORT, 8_000)
    keys = []
    for log in (SHORT, "m3_release_check.json", SHORT):
        lab.choice.value = log
        fresh = tradeoff_figure(lab.rows)
        keys.append(fresh.data[1].showlegend)
        for shown, drawn in zip(lab.figure.data, fresh.data, strict=True):
            assert (shown.name, shown.x, shown.showlegend) == (
                drawn.name,
                drawn.x,
                drawn.showlegend,
            )
    assert keys == [True, False, True]  # the logs chosen show both
    # the chart names the log and the window it shows
    lab.window.value = 32_000
    assert lab.figure.layout.title.text == f"{SHORT} at a 32,000-token window"


def test_an_upload_shows_only_the_uploaded_log(monkeypatch):
    lab = PolicyLab(SHORT, 8_000)
    shown = []
    original = lab.render

    def render():
        shown.append(lab.choice.value)
        return original()

    monkeypatch.setattr(lab, "render", render)
    # while the log is read and replayed: a line says so, and the old table is gone
    seen_meanwhile = []
    real_runs = policies_view.LogRuns

    def runs_of(*args, **kwargs):
        bars = {trace.visible for trace in lab.figure.data}
        lines = {readout.value for readout in lab.readouts.values()}
        seen_meanwhile.append(
            (lab.problem.value, lab.table.value, lab.status.value, bars, lines)
        )
        return real_runs(*args, **kwargs)

    monkeypatch.setattr(policies_view, "LogRuns", runs_of)
    # the reading line goes once the table is shown, before the slider notes
    lines_at_notes = []
    real_notes = lab.note_inert

    def note_inert(rows):
        lines_at_notes.append(lab.problem.value)
        return real_notes(rows)

    monkeypatch.setattr(lab, "note_inert", note_inert)
    text = json.dumps(list(log_messages("m3_release_check.json")))
    upload(lab, "mine.json", text.encode())
    assert shown == ["uploaded: mine.json"]  # not the first log's table first
    [(line, table, status, bars, lines)] = seen_meanwhile
    assert f"mine.json ({len(text.encode()):,} bytes): reading it" in line
    # never two logs on the screen at once: no table, status line or bars of the last
    assert table == "" and status == "" and bars == {False} and lines == {""}
    assert {trace.visible for trace in lab.figure.data} == {True}  # the new log's
    assert lines_at_notes == [""]
    assert lab.problem.value == "" and lab.table.value  # done: the line has gone


def test_each_slider_has_its_policys_row_beside_it_and_the_line_follows_it():
    """Beside each slider, its policy's row in one line (tokens saved, facts kept, tokens
    sent in three figures; on hover, exactly and with the rounds), the slider and its
    line next to each other in the grid; moving the slider changes that line to the row
    computed at the new value, a stopped or refused run in red."""
    from minilib.lab.numbers import short_count
    from minilib.lab.policies_view import row_readout
    from minilib.lab.policy_rows import rounds_cell, row_problems, saved_percent

    lab = PolicyLab(SHORT, 32_000)
    children = list(lab.slider_box.children)
    for key in available_policies():
        at = children.index(lab.sliders[key])
        assert children[at + 1] is lab.boxes[key].text  # the number box, then the line
        assert children[at + 2] is lab.readouts[key]
        # then the box's note, on a row of its own under the box and the line
        assert children[at + 3] is lab.boxes[key].note
        # each in a cell of its own (ipywidgets passes `grid_area` on to the page,
        # not `grid_row` or `grid_column`): the note spans the box's and the line's
        top = int(lab.sliders[key].layout.grid_area.split(" / ")[0])
        assert [part.layout.grid_area for part in children[at : at + 4]] == [
            f"{top} / 1 / {top + 1} / 2",
            f"{top} / 2 / {top + 1} / 3",
            f"{top} / 3 / {top + 1} / 4",
            f"{top + 1} / 2 / {top + 2} / 4",
        ]
    swe = lab.sliders["swe-agent-last-n"]
    swe.value = swe.min
    row = lab.current().row("swe-agent-last-n", 32_000, swe.min)
    line = lab.readouts["swe-agent-last-n"].value
    assert line == row_readout(row, lab.inert.get("swe-agent-last-n", ""))
    problems = row_problems(row)
    shown, hover = _shown_and_hover(line)
    parts = (
        [p.replace("the task gone from", "task gone in") for p in problems]
        if problems
        else [f"{short_count(row['tokens_sent'])} sent", saved_percent(row) + " saved"]
    )
    for part in parts:
        assert part in shown, (part, shown)
    assert f"{row['tokens_sent']:,} tokens sent" in hover
    if not problems:
        assert f"{rounds_cell(row)} rounds" in hover
    stopped = [r for r in lab.rows if r["overflow_round"] is not None]
    clean = [r for r in lab.rows if not row_problems(r)]
    assert stopped, "pick a log where some policies stop"
    assert "#fdecea" in lab.readouts[stopped[0]["policy"]].value  # PROBLEM_CSS
    assert (
        " saved" not in lab.readouts[stopped[0]["policy"]].value
    )  # a stop saves nothing
    for r in clean:
        assert "#fdecea" not in lab.readouts[r["policy"]].value
    compaction = lab.sliders["anthropic-compaction"]
    compaction.min = 800  # refused by the policy, as a too-wide slider offered
    compaction.value = 800
    refused = lab.readouts["anthropic-compaction"].value
    assert "not run: " in refused and "#fdecea" in refused


def test_every_slider_starts_with_its_handle_on_its_default():
    """A default between two grid positions drew the handle beside the value shown (an
    attention window of 100 with its handle at 101)."""
    from minilib.lab.policies_view import POLICY_WINDOWS, slider_for

    for window in POLICY_WINDOWS:
        for key in available_policies():
            slider = slider_for(key, window)
            positions = (slider.value - slider.min) / slider.step
            assert abs(positions - round(positions)) < 1e-9, (key, window, slider)


def _shown_and_hover(readout: str):
    """A readout's first line as shown, and its hover text."""
    first = re.search(r'<div title="([^"]*)"[^>]*>([^<]*)</div>', readout)
    return html.unescape(first.group(2)), html.unescape(first.group(1))


def test_a_problem_is_never_shown_as_a_saving_and_a_share_never_overstates():
    from minilib.lab.policies_view import row_readout
    from minilib.lab.policy_rows import share_text

    row = {
        "policy": "langchain-trim",
        "rounds": 160,
        "rounds_total": 160,
        "overflow_round": None,
        "tokens_sent": 1_000,
        "tokens_saved": 1.0,
        "facts_kept": 3,
        "facts_lost": 0,
        "windows_invalid": 25,
    }
    line = row_readout(row)
    assert "25 broken windows" in line and "saved" not in line and "#fdecea" in line
    stopped = {**row, "windows_invalid": 0, "overflow_round": 80, "tokens_saved": 0.71}
    line = row_readout(stopped)
    assert "stopped at round 80" in line and "saved" not in line
    clean = {**row, "windows_invalid": 0, "tokens_sent": 1_878_455}
    # saved and kept first: a column narrower than the line cuts its end, not them;
    # the exact line on hover
    assert _shown_and_hover(row_readout(clean)) == (
        "100% saved · 3 kept · 1.88M sent",
        "100% saved · 3 kept · 160 / 160 rounds · 1,878,455 tokens sent",
    )
    one = {**row, "windows_invalid": 1, "facts_lost": 1}
    assert "1 broken window " in row_readout(one) and "1 fact lost" in row_readout(one)
    assert share_text(0.996) == "99%" and share_text(1.0) == "100%"
    assert share_text(-0.004) == "0%" and share_text(0.004) == "0%"


def test_a_slider_that_cannot_change_the_run_says_why_and_is_checked_per_log():
    lab = PolicyLab()  # the default log: no timestamps, one long request per turn
    assert "no timestamps" in lab.inert["claude-code"]
    assert "changes nothing here" in lab.readouts["claude-code"].value
    for key in ("openai-agents-trimming", "opencode-prune"):
        assert "stops at round" in lab.inert[key], key
    assert "article-bounded" not in lab.inert
    lab.window.value = 200_000  # another window: every reason is worked out again
    assert lab.inert.get("claude-code", "").startswith("no timestamps")


def test_the_catalogue_reads_each_row_from_its_top_with_code_set_as_code():
    catalogue = policy_catalogue()
    shown = catalogue_table()
    css, table = shown.html.rsplit("</style>", 1)
    assert 'class="ccl-table ccl-shown ccl-prose"' in table
    assert ".ccl-table.ccl-prose tbody th { white-space: nowrap; }" in css
    names = re.findall(r"<tr><th[^>]*>([^<]*)</th>", table.split("<tbody>")[1])
    assert names == list(catalogue.index)
    # every span in backticks, and only those, is set as code; the text form keeps them
    spans = [span for text in catalogue["what it does"] for span in text.split("`")[1::2]]
    codes = re.findall(r"<code>([^<]*)</code>", table)
    assert spans and [html.unescape(code) for code in codes] == spans
    assert "`" not in table
    assert "`" in repr(shown)


def test_a_boxs_note_has_a_line_of_its_own_and_goes_when_another_control_is_used():
    lab = PolicyLab(SHORT, 32_000)
    article, swe = lab.boxes["article"], lab.boxes["swe-agent-last-n"]
    assert article.note.layout.display == "none"  # no note, no room taken
    article.text.value = "1,501"  # between two of the slider's steps
    assert "is not offered; the nearest is" in article.note.value
    assert article.note.layout.display == ""
    swe.text.value = "abc"  # on to another box: the first note goes
    assert article.note.value == "" and article.note.layout.display == "none"
    assert "kept" in swe.note.value
    slider = lab.sliders["claude-code"]
    slider.value = slider.max  # a slider moved: the other notes go too
    assert swe.note.value == "" and swe.note.layout.display == "none"
    assert article.value == lab.sliders["article"].value  # the values stay


def test_a_move_that_leaves_the_run_as_it_was_says_so_under_its_line():
    # Gemini CLI splits its history only at a person's message: on the lab's opening
    # log every threshold up to half the window compresses at the same rounds
    lab = PolicyLab()
    key = "gemini-cli"
    slider = lab.sliders[key]
    assert key not in lab.inert  # its two ends differ: the slider is not inert
    slider.value = 0.5
    left = slider.value
    slider.value = 0.2
    runs, window = lab.current(), lab.window.value
    assert same_run(runs.row(key, window, left), runs.row(key, window, 0.2))
    assert f"the same run as at {left}" in lab.readouts[key].value
    slider.value = slider.max  # a value whose run differs: the line goes
    assert not same_run(runs.row(key, window, 0.2), runs.row(key, window, slider.max))
    assert "the same run as at" not in lab.readouts[key].value


def test_a_real_log_uploaded_runs_as_compare_runs_it(monkeypatch):
    """A real log with recorded usage, uploaded: the window its agent ran at, every
    row counted in one unit (calibrated on the log's first half of calls, with its
    overhead), the agent's own replayed as its version behaved; the rows are the ones
    `compare` prints, and the own row compacts near where the agent did."""
    from minilib.policies.production.compare import compare_policies
    from minilib.policies.production.own_agent import (
        log_counting,
        own_agent_count,
        own_agent_parameters,
    )

    path = REAL_CLAUDE
    lab = PolicyLab(SHORT, 8_000)
    shown = []
    original = lab.render
    monkeypatch.setattr(
        lab, "render", lambda: shown.append(lab.choice.value) or original()
    )
    upload(lab, path.name, path.read_bytes())
    assert shown == [f"uploaded: {path.name}"]  # the window changed without a render
    log = load_transcript(path)
    counting = log_counting(log)
    assert lab.window.value == counting.window == 200_000
    # every row in the one calibrated unit, the agent's own among them
    assert counting.calibrated and counting.own_count is counting.count_tokens
    assert "every row in one unit: API tokens, as calibrated" in lab.status.value
    assert f"also sent {counting.overhead:,} tokens of system prompt" in lab.status.value
    rows = {row["policy"]: row for row in lab.rows}
    count, overhead, _, missing = own_agent_count(log, None)[:4]
    expected = compare_policies(
        log.messages,
        ["claude-code", "codex"],
        200_000,
        counting.count_tokens,
        counted_with=counting.counted_with,
        overhead_tokens=counting.overhead,
        agent_log=log,
        agent_count=count,
        agent_parameters=own_agent_parameters(log, None, overhead, missing, count),
    )
    for row in expected:
        shown_row = rows[row["policy"]]
        for field in ("rounds", "tokens_sent", "compaction_rounds", "facts_kept"):
            assert shown_row[field] == row[field], (row["policy"], field)
    (agent,) = rows["claude-code"]["recorded_compaction_rounds"]
    (replayed,) = rows["claude-code"]["compaction_rounds"]
    assert abs(replayed["round"] - agent["round"]) <= 10
    # saved against the whole log in the row's own count: the article's pipeline
    # never reaches its threshold here, cuts nothing and saves nothing
    assert rows["article"]["compaction_rounds"] == []
    assert rows["article"]["tokens_saved"] == 0
    assert rows["claude-code"]["tokens_saved"] > 0.2  # it compacted, at round 39 of 51


def test_a_log_without_usage_keeps_each_policys_defaults():
    lab = PolicyLab(SHORT, 8_000)
    text = json.dumps(list(log_messages("m3_release_check.json")))
    upload(lab, "mine.json", text.encode())
    assert lab.current().counting is None and lab.window.value == 8_000
    assert "(estimated)" in lab.status.value


def test_a_window_no_policy_can_run_at_is_said_once_in_words():
    """A log whose system prompt and tools alone fill a window: every row is refused
    for that one reason, said once in the status line (which wraps), in words."""
    from minilib.lab.shown import upload_value

    path = DATA_DIR / "real" / "claude-code" / "entire-98-78b713483d-0.jsonl"
    lab = PolicyLab()
    lab.upload.value = upload_value([(path.name, path.read_bytes())])
    overhead = lab.current().counting.overhead
    small = min(value for _, value in lab.window.options)
    assert overhead >= small
    lab.window.value = small
    assert all("error" in row for row in lab.rows)
    said = html.unescape(lab.status.value)
    assert (
        "no policy runs at this window: the system prompt and tool definitions " in said
    )
    assert (
        f"alone ({overhead:,} tokens, overhead_tokens) fill the {small:,}-token" in said
    )
    # beside each slider, a line short enough to read whole, pointing to the reason
    for readout in lab.readouts.values():
        assert "the line under the sliders says why" in readout.value
        assert "tool definitions" in html.unescape(readout.value)  # on hover
    lab.window.value = max(value for _, value in lab.window.options)
    assert "no policy runs" not in lab.status.value
    assert not any("line under the" in r.value for r in lab.readouts.values())


def test_a_window_without_its_task_is_a_problem_shown_like_a_stop():
    """LangChain's trims keep the newest messages: the person's first message, the
    task, leaves the window and nothing quotes it. The row counts those windows, and
    the line beside the slider and the chart's label say so; a policy that keeps the
    task, or folds it into a summary it wrote, loses it in no window."""
    from minilib.lab.tradeoff_figure import saved_text

    runs = LogRuns(log_messages("generated session, 200 tool calls, 4 user turns"))
    trimmed = runs.row("langchain-trim-human", 8_000)
    assert trimmed["task_gone_rounds"] > 0 and trimmed["overflow_round"] is None
    assert f"the task gone from {trimmed['task_gone_rounds']:,} windows" in (
        row_problems(trimmed)
    )
    assert saved_text(trimmed).endswith(", task gone")
    for key in ("article", "claude-code", "swe-agent-last-n", "codex"):
        assert runs.row(key, 8_000)["task_gone_rounds"] == 0, key


def test_a_poor_fit_is_said_in_the_status_and_a_good_one_is_not():
    """A log whose calibration misses its own second half by more than POOR_FIT (here
    one whose publisher redacted most of its text): the status line says the fit is
    poor, by how much, and that every row's count is as unsure; a log the fit holds on
    says nothing of it. Either way it says what a row's tokens sent leave out."""
    from minilib.logs import load_log
    from minilib.measure.calibration import POOR_FIT, calibrate

    poor = Path(__file__).resolve().parent.parent / "corpus" / "codex"
    poor = poor / "localpush-019c8a4d.jsonl"
    error = calibrate(load_log(poor)).held_out["median_abs_error"]
    assert error > POOR_FIT
    lab = PolicyLab(SHORT, 8_000)
    upload(lab, poor.name, poor.read_bytes())
    assert f"off by {error:.0%} on the calls it did not see" in lab.status.value
    assert "tokens of system prompt and tools" in lab.status.value
    good = DATA_DIR / "real" / "claude-code" / "entire-94-de498254e2-0.jsonl"
    upload(lab, good.name, good.read_bytes())
    assert "tokens of system prompt and tools" in lab.status.value
    assert "fit is poor" not in lab.status.value


def test_a_new_window_says_at_once_that_it_is_replaying(monkeypatch):
    """The status line's words of the last window go the moment the window changes,
    replaced by a line saying what is being replayed, before any policy runs."""
    lab = PolicyLab(SHORT, 8_000)
    seen = []
    real = lab.reset

    def reset():  # what the page shows while the policies replay
        seen.append(lab.status.value)
        return real()

    monkeypatch.setattr(lab, "reset", reset)
    lab.window.value = 32_000
    assert len(seen) == 1 and "replaying every policy on " in seen[0]
    assert "at a 32,000-token window" in seen[0] and "8,000" not in seen[0]
    assert "replaying" not in lab.status.value  # the new words, once it is done
