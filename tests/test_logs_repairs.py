"""Gaps real runs leave, repaired as a harness would before its next call: one
constructed fixture per gap (data/logs/gaps/, each made from a bundled log of the
same shape with the gap put in), read, named, replayed with the window's guarantees,
and refused whole with strict."""

import json
import subprocess
import sys

import pytest
from test_logs import check_pairing

from minilib import Settings
from minilib.aging import ToolResultAging
from minilib.logs import LogFileError, parse_log
from minilib.logs.base import INTERRUPTED_TEXT, REPAIRS, repair_counts
from minilib.logs.replay import load_transcript, replay_transcript
from minilib.session import DATA_DIR

GAPS = DATA_DIR / "logs" / "gaps"
# per fixture: each repair kind with its count, and where the file holds the first
EXPECTED = {
    "chat_result_for_earlier_call.json": {"late-result": (1, "messages[5]")},
    "chat_unknown_parts.json": {"unread-part": (2, "messages[1].content[3]")},
    "claude_code_missing_line.jsonl": {
        "orphan-result": (1, "line 13: message.content[0]")
    },
    "cline_task_resumption.json": {"interrupted-call": (1, "messages[11]")},
    "codex_approval_between.jsonl": {"moved-message": (1, "line 18")},
    "codex_interrupted_call.jsonl": {"interrupted-call": (1, "line 32")},
    "harbor_unrecorded_observation.json": {"interrupted-call": (1, "steps[3]")},
    # the damaged line held a result: its call is then unanswered, and the next
    # entry names the lost line as its parent
    # its first kept entry is on the branch left behind, not on the path before it
    "pi_compaction_kept_entry_elsewhere.jsonl": {"missing-kept-entry": (1, "line 17")},
    "pi_damaged_line.jsonl": {
        "bad-line": (1, "line 7"),
        "missing-parent": (1, "line 8"),
        "interrupted-call": (1, "line 5"),
    },
}


def test_every_gap_fixture_is_a_case():
    assert {path.name for path in GAPS.iterdir()} == set(EXPECTED)
    kinds = {kind for case in EXPECTED.values() for kind in case}
    assert kinds == set(REPAIRS)  # every repair the readers make has a fixture


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_gap_is_repaired_and_named_where_the_file_holds_it(name):
    log = load_transcript(GAPS / name)
    found = {
        row["kind"]: (row["count"], row["first"]) for row in repair_counts(log.repairs)
    }
    assert found == EXPECTED[name]
    described = log.describe()
    for kind, (count, first) in EXPECTED[name].items():
        assert f"repaired {count} x {REPAIRS[kind]} (first: {first})" in described


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_strict_refuses_each_gap_in_one_line(name):
    with pytest.raises(LogFileError) as error:
        load_transcript(GAPS / name, strict=True)
    message = str(error.value)
    assert message.startswith(f"{GAPS / name}: ") and "\n" not in message


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("threshold", [600, 1200])
def test_a_repaired_log_replays_keeping_the_windows_guarantees(name, threshold):
    log = load_transcript(GAPS / name)
    settings = Settings(threshold=threshold, fold_user_turns=True)
    run = replay_transcript(log, settings)
    assert run.overflow is not None or len(run.rounds) == log.rounds
    decisions = [
        call for call in run.tracer.events("model_call") if call["purpose"] == "decision"
    ]
    head = [m for m in log.messages[:2] if m["role"] in ("system", "user")]
    for call in decisions:
        check_pairing(call["input"])  # every call answered right after it
        assert call["input"][: len(head)] == head or log.compactions  # head kept
    for record in run.rounds:  # within budget wherever it did not stop
        assert record.tokens_after <= threshold


def test_an_interrupted_result_is_never_aged_as_an_output():
    log = load_transcript(GAPS / "codex_interrupted_call.jsonl")
    [added] = [m for m in log.messages if m.get("synthetic")]
    assert added["content"] == INTERRUPTED_TEXT
    assert added["repaired"] == "interrupted-call"
    aging = ToolResultAging(head_chars=10, tail_chars=10, min_chars=0)
    long = dict(added, content=INTERRUPTED_TEXT * 20)  # long enough to shrink
    assert aging.age_message(long) is None
    real = dict(long, synthetic=False)  # the same text as a real output is aged
    assert aging.age_message(real) is not None


def test_a_moved_message_comes_after_the_results_it_arrived_between():
    log = load_transcript(GAPS / "codex_approval_between.jsonl")
    index = next(i for i, m in enumerate(log.messages) if m.get("repaired"))
    moved = log.messages[index]
    assert moved["repaired"] == "moved-message"
    assert moved["content"].startswith("Approved command prefix saved")
    assert log.messages[index - 1]["role"] == "tool"
    assert log.messages[index - 1]["tool_call_id"] == "call_c4"


def test_a_late_result_goes_back_to_its_call_and_the_placeholder_is_gone():
    log = load_transcript(GAPS / "chat_result_for_earlier_call.json")
    roles = [m["role"] for m in log.messages]
    assert roles[2:6] == ["assistant", "tool", "assistant", "tool"]
    assert log.messages[3]["tool_call_id"] == "call_q1"
    assert log.messages[3]["repaired"] == "late-result"
    assert not any(m.get("synthetic") for m in log.messages)


def test_a_result_with_no_call_stays_as_context_text():
    log = load_transcript(GAPS / "claude_code_missing_line.jsonl")
    [kept] = [m for m in log.messages if m.get("repaired") == "orphan-result"]
    assert kept["role"] == "user" and kept["observation"] is True
    assert "call 'toolu_03', whose call the log does not hold" in kept["content"]


def test_an_unread_part_is_a_placeholder_naming_its_type():
    log = load_transcript(GAPS / "chat_unknown_parts.json")
    text = "\n".join(m["content"] or "" for m in log.messages)
    assert "[input_audio part: not read by the lab]" in text
    assert "[refusal part: not read by the lab]" in text


def test_a_damaged_line_over_the_limit_is_refused_and_names_the_limit():
    good = '{"role": "user", "content": "a"}'
    text = "\n".join([good] + ["{broken"] * 2 + [good] * 97)  # 2 of 100: over 1
    limit = "2 of its 100 lines are damaged, and a log is read with at most 1 damaged"
    with pytest.raises(LogFileError, match=limit):
        parse_log(text, "x.jsonl")
    assert len(parse_log("\n".join([good, "{broken"] + [good] * 98), "x").repairs) == 1


def test_compress_names_the_repairs_in_its_output_and_rounds_json(tmp_path):
    path = GAPS / "pi_damaged_line.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "minilib", "compress", str(path), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "repaired 1 x a line that is not valid JSON: skipped (first: line 7)" in (
        done.stdout
    )
    document = json.loads((tmp_path / "rounds.json").read_text(encoding="utf-8"))
    assert [(r["kind"], r["count"], r["first"]) for r in document["repairs"]] == [
        ("bad-line", 1, "line 7"),
        ("missing-parent", 1, "line 8"),
        ("interrupted-call", 1, "line 5"),
    ]
    trace = (tmp_path / "trace.jsonl").read_text(encoding="utf-8")
    assert '"repaired": "interrupted-call"' in trace  # the trace marks the message
    strict = subprocess.run(
        [sys.executable, "-m", "minilib", "compress", str(path), "--strict"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert strict.returncode == 2
    assert "line 7 is not valid JSON" in strict.stderr


def _claude_code_lines(agent_id):
    common = {"isSidechain": True, "agentId": agent_id, "sessionId": "s1"}
    return "\n".join(
        json.dumps({**common, **line})
        for line in (
            {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}},
            {
                "type": "assistant",
                "uuid": "u2",
                "parentUuid": "u1",
                "message": {"id": "m1", "role": "assistant", "content": "done"},
            },
        )
    )


def test_a_subagent_log_and_the_compaction_agents_own_run_are_said_to_be_so():
    subagent = parse_log(_claude_code_lines("a1b2c3"), "agent-a1b2c3.jsonl")
    assert subagent.run_of.startswith("a subagent's own log (agentId a1b2c3)")
    assert "run: a subagent's own log" in subagent.describe()
    summariser = parse_log(_claude_code_lines("acompact-9f8e"), "agent-acompact.jsonl")
    assert summariser.run_of.startswith(
        "the compaction agent's own run (agentId acompact-9f8e)"
    )
    main = load_transcript(DATA_DIR / "logs" / "claude_code_session.jsonl")
    assert main.run_of == ""


def test_an_interrupted_result_is_no_facts_source():
    from minilib.measure.used_facts import used_facts

    log = load_transcript(GAPS / "codex_interrupted_call.jsonl")
    [added] = [m for m in log.messages if m.get("synthetic")]
    planted = dict(added, content="see src/tallyho/report_json.py:42")
    messages = [planted if m is added else m for m in log.messages]
    messages.append(
        {"role": "assistant", "content": "Edited src/tallyho/report_json.py:42"}
    )
    facts = {use.fact for use in used_facts(messages).uses}
    assert "src/tallyho/report_json.py:42" not in facts
    planted.pop("synthetic")  # the same text from a real tool is a source
    assert "src/tallyho/report_json.py:42" in {
        use.fact for use in used_facts(messages).uses
    }


def test_aiders_rebuilt_windows_are_not_reported_as_compactions():
    from minilib.measure.compactions import measure_compactions

    log = load_transcript(DATA_DIR / "logs" / "aider.llm.history")
    assert log.compactions and all(c.rebuilt for c in log.compactions)
    assert measure_compactions(log) == []
