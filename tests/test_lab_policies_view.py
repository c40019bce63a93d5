"""Chapter 10's policy lab, driven without a browser: a slider re-runs its own policy."""

import datetime as dt
import json

from minilib.lab.policies_view import (
    LogRuns,
    PolicyLab,
    available_policies,
    comparison_frame,
    log_messages,
    policy_rows,
    saved_share,
    tradeoff_traces,
)
from minilib.policies.production.compare import measure_policy
from minilib.tokens import estimate_tokens

SHORT = "generated session, 200 tool calls, 4 user turns"


def test_rows_are_the_compare_rows_with_tokens_saved():
    runs = LogRuns(log_messages(SHORT))
    rows = policy_rows(runs, 32_000)
    assert [row["policy"] for row in rows] == list(available_policies())
    swe = next(row for row in rows if row["policy"] == "swe-agent-last-n")
    direct = measure_policy(runs.messages, "swe-agent-last-n", 32_000)
    assert {k: v for k, v in swe.items() if k != "tokens_saved"} == direct
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
    saved, lost, restorable, cache = tradeoff_traces(rows)
    for trace in (saved, lost, restorable, cache):
        assert trace["y"] == list(frame.index)  # one bar a policy, the table's order
    for row, x, text in zip(rows, saved["x"], saved["text"]):
        if row["overflow_round"] is None:
            assert x == round(100 * row["tokens_saved"], 1)
        else:  # no bar: it saved nothing, the agent failed there
            assert x == 0 and text == f"stopped at round {row['overflow_round']:,}"
    assert lost["x"] == [row["facts_lost"] for row in rows]
    assert restorable["x"] == [row["facts_restorable"] for row in rows]


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
    lab.upload.value = (
        {
            "name": name,
            "type": "",
            "size": len(content),
            "content": memoryview(content),
            "last_modified": dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
        },
    )


def test_an_uploaded_log_is_compared_and_a_bad_one_is_named():
    lab = PolicyLab(SHORT, 8_000)
    text = json.dumps(list(log_messages("m3_release_check.json")))
    upload(lab, "mine.json", text.encode())
    assert lab.choice.value == "uploaded: mine.json"
    assert "uploaded: mine.json" in lab.status.value
    assert len(lab.rows) == len(available_policies())
    upload(lab, "bad.json", b"{not json")
    assert "bad.json" in lab.status.value
    assert lab.choice.value == "uploaded: mine.json"  # the last good log stays
