"""The facts an agent used, read from its own log, and what a window left of them."""

import pytest
from message_builders import tool

from minilib.loop import replay
from minilib.measure.facts import load_facts
from minilib.measure.used_facts import (
    FactMeter,
    WindowIndex,
    classify,
    facts_used,
    used_facts,
    written_text,
)
from minilib.session import DATA_DIR, DEFAULT_SESSION, load_session
from minilib.tokens import estimate_message_tokens


def call(call_id, name="read_file", arguments='{"path": "src/app.py"}'):
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


TASK = {"role": "user", "content": "fix the crash"}
READ = {"role": "assistant", "content": "", "tool_calls": [call("c_read")]}
RESULT = {
    "role": "tool",
    "tool_call_id": "c_read",
    "content": "raise E2BIG in src/app.py after 1,342 bytes; timeout_s=30",
}
ANSWER = {"role": "assistant", "content": "E2BIG comes from src/app.py (timeout_s=30)."}
LOG = [TASK, READ, RESULT, ANSWER]


def test_a_fact_a_tool_showed_and_the_agent_wrote_is_a_use_at_its_round():
    uses = facts_used(LOG)
    assert [(u.fact, u.kind, u.round, u.sources) for u in uses] == [
        ("E2BIG", "error code", 1, ("c_read",)),
        ("src/app.py", "path", 1, ("c_read",)),
        ("timeout_s=30", "setting", 1, ("c_read",)),
        ("timeout_s", "identifier", 1, ("c_read",)),  # the setting's key, a name
    ]


def test_a_fact_the_person_named_first_is_not_the_tools_to_show():
    log = [dict(TASK, content="the crash is in src/app.py"), READ, RESULT, ANSWER]
    assert "src/app.py" not in {u.fact for u in facts_used(log)}


def test_a_fact_written_before_any_tool_showed_it_is_not_a_use():
    early = {"role": "assistant", "content": "maybe E2BIG?", "tool_calls": [call("c0")]}
    log = [TASK, early, tool("c0", "nothing"), READ, RESULT]
    assert facts_used(log) == []


def test_call_arguments_are_written_text():
    again = {"role": "assistant", "content": "", "tool_calls": [call("c2")]}
    assert "src/app.py" in written_text(again)
    log = LOG + [again]
    assert [u.round for u in facts_used(log) if u.fact == "src/app.py"] == [1, 2]


@pytest.mark.parametrize(
    "window, fate",
    [
        (LOG[:3], "kept"),  # the result is there whole
        (  # an id alone: no tool of this harness reads the run log back
            [TASK, dict(RESULT, content="[aged] see tool_call_id=c_read")],
            "lost",
        ),
        (  # the read's path is still in the window: it can be read again
            LOG[:2] + [dict(RESULT, content="[aged] see tool_call_id=c_read")],
            "restorable",
        ),
        # the call is folded away, and a summary quotes the fact
        ([TASK, {"role": "user", "content": "[summary] read_file: E2BIG"}], "kept"),
        (
            [TASK, {"role": "user", "content": "[summary] read the file c_read"}],
            "lost",
        ),
        ([TASK, {"role": "user", "content": "[summary] looked at a file"}], "lost"),
    ],
)
def test_a_use_is_kept_restorable_or_lost_by_what_the_window_holds(window, fate):
    used = used_facts(LOG)
    use = next(u for u in used.uses if u.fact == "E2BIG")
    assert classify(use, WindowIndex(window), used) == fate


def test_an_id_the_window_names_is_a_way_back_only_with_a_recall_tool():
    window = WindowIndex([TASK, {"role": "user", "content": "[stored] c_read"}])
    use = facts_used(LOG)[0]
    assert classify(use, window, used_facts(LOG)) == "lost"
    assert classify(use, window, used_facts(LOG, recall=True)) == "restorable"
    recalling = LOG + [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("c_recall", "recall", '{"id": "c_read"}')],
        }
    ]
    assert used_facts(recalling).recall  # the harness has it: the agent called it


def test_a_write_is_no_way_back_even_when_its_arguments_are_in_the_window():
    edit = call("c_read", "edit_file", '{"path": "src/app.py", "text": "x"}')
    log = [TASK, dict(READ, tool_calls=[edit]), RESULT, ANSWER]
    summary = {"role": "user", "content": "[summary] edit_file src/app.py"}
    use = next(u for u in used_facts(log).uses if u.fact == "E2BIG")
    assert classify(use, WindowIndex([TASK, summary]), used_facts(log)) == "lost"


def test_the_path_a_call_read_points_back_at_what_it_showed():
    used = used_facts(LOG)
    use = next(u for u in used.uses if u.fact == "E2BIG")
    summary = {"role": "user", "content": "[summary] read_file src/app.py"}
    assert classify(use, WindowIndex([TASK, summary]), used) == "restorable"
    assert classify(use, WindowIndex([TASK, summary])) == "lost"  # no harness given
    meter = FactMeter(used)
    meter.sent(1, [TASK, summary])
    fate = next(f for f in meter.fates() if f.fact == "E2BIG")
    assert (fate.way, fate.tokens) == ("re-read", estimate_message_tokens(RESULT))
    # E2BIG, timeout_s=30 and its key come back with the same read, paid once
    assert meter.counts()["facts_restorable_tokens"] == estimate_message_tokens(RESULT)


def test_a_fact_takes_the_worst_fate_of_its_uses():
    meter = FactMeter(used_facts(LOG + [dict(ANSWER)]))
    meter.sent(1, LOG[:3])
    meter.sent(2, [TASK])  # the same facts written again, from a window without them
    fates = {f.fact: (f.fate, f.round) for f in meter.fates()}
    assert fates["E2BIG"] == ("lost", 2)
    assert meter.counts() == {
        "facts_used": 4,
        "facts_kept": 0,
        "facts_restorable": 0,
        "facts_lost": 4,
        "facts_restorable_tokens": 0,
    }


def bundled_log():
    session = load_session(DEFAULT_SESSION)
    return replay(session.conversation(), None).messages


def test_it_finds_the_planted_facts_the_sessions_replies_use():
    """Recall on the bundled session: every planted fact a reply writes verbatim is
    found as a use at that reply's round (the fact, or a fact inside it)."""
    messages = bundled_log()
    replies = [m for m in messages if m["role"] == "assistant"]
    uses = facts_used(messages)
    planted = load_facts(DATA_DIR / "facts.json")
    expected = [
        (fact, number)
        for fact in planted
        for number, reply in enumerate(replies)
        if fact.text in written_text(reply)
    ]
    assert len(expected) >= 5  # the check has something to check
    for fact, number in expected:
        found = [u.fact for u in uses if u.round == number and u.fact in fact.text]
        assert found, f"{fact.id} ({fact.text!r}) used at round {number} not found"


def test_without_compression_every_use_is_kept():
    messages = bundled_log()
    meter = FactMeter(used_facts(messages))
    replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    for step, index in enumerate(replies):
        meter.sent(step, messages[:index])
    counts = meter.counts()
    assert counts["facts_used"] > 0
    assert counts["facts_kept"] == counts["facts_used"]


def test_judging_window_after_window_agrees_with_judging_each_alone():
    """The meter indexes only what a window appended since the last one it judged;
    every verdict is the one a fresh index of the whole window gives."""
    from minilib.logs.replay import load_transcript, replay_transcript, with_output_ids
    from minilib.trace import model_calls
    from minilib.window import Settings

    log = load_transcript(
        DATA_DIR.parent / "data" / "transcripts" / "m3_release_check.json"
    )
    run = replay_transcript(log, Settings(threshold=900, fold_user_turns=True))
    used = used_facts(with_output_ids(log.messages))
    meter = FactMeter(used)
    calls = [c for c in model_calls(run.tracer.records) if c["purpose"] == "decision"]
    for call in calls:
        judged = meter.sent(call["step"], call["input"])
        fresh = WindowIndex(call["input"])
        assert judged == [(use, classify(use, fresh, used)) for use, _ in judged]
    assert any(fate != "kept" for fate in (f.fate for f in meter.fates()))
