"""Every production policy on every bundled log shape, one row each, checked."""

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import PROFILE

from minilib.logs import LogFileError, load_transcript
from minilib.logs.replay import with_output_ids
from minilib.measure.costs import REPORT_KEYS
from minilib.messages import InvalidMessagesError, validate_messages
from minilib.policies.production import POLICIES
from minilib.policies.production.compare import PolicyRows, compare_policies
from minilib.policies.production.run import PairingCheck
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens
from minilib.trace import model_calls, read_jsonl

ROOT = Path(__file__).resolve().parent.parent
# the gaps real runs leave (data/logs/gaps/) are replayed repaired, like the rest
LOGS = sorted(p for p in (ROOT / "data" / "logs").rglob("*") if p.is_file()) + sorted(
    (ROOT / "data" / "transcripts").iterdir()
)
# Run as written: LangChain's trim_messages may cut a call and keep its result.
MAY_BREAK_PAIRING = {"langchain-trim"}


def readable_logs():
    for path in LOGS:
        try:
            yield path.name, load_transcript(path)
        except LogFileError:
            continue  # the damaged and foreign fixtures: their readers' tests cover them


READABLE = dict(readable_logs())


def replies(log):
    """The place of each reply: the window before it is what a round sends."""
    return [i for i, m in enumerate(log.messages) if m["role"] == "assistant"]


try:
    import langchain_core  # noqa: F401

    KEYS = list(POLICIES)
except ImportError:
    KEYS = [key for key in POLICIES if not key.startswith("langchain-trim")]


def test_there_are_logs_of_many_shapes_to_compare_on():
    assert len(READABLE) >= 25
    assert len({log.shape for log in READABLE.values()}) >= 15


@pytest.mark.parametrize("window", [2_000, 200_000])
@pytest.mark.parametrize("name", sorted(READABLE))
def test_every_policy_on_every_log_keeps_its_invariants(name, window):
    log = READABLE[name]
    rows = compare_policies(log.messages, KEYS, window)
    assert [row["policy"] for row in rows] == KEYS
    whole = sum(estimate_tokens(with_output_ids(log.messages)[:i]) for i in replies(log))
    for row in rows:
        assert set(REPORT_KEYS) | {"policy", "windows_invalid", "summary_calls"} <= set(
            row
        )
        assert row["rounds_total"] == log.rounds
        if row["overflow_round"] is None:
            assert row["rounds"] == log.rounds
        else:
            assert row["rounds"] == row["overflow_round"] < log.rounds
        assert row["tokens_peak"] <= window
        fates = row["facts_kept"] + row["facts_restorable"] + row["facts_lost"]
        assert fates == row["facts_used"]
        if row["policy"] not in MAY_BREAK_PAIRING:
            assert row["windows_invalid"] == 0, (row["policy"], row["invalid_rounds"])
        # at 200k every log here fits: a policy loses a fact only where it cut a
        # window anyway (clearing old results every turn) and no read-only call of
        # the harness could bring the fact back (an omission id alone cannot)
        if window == 200_000 and row["policy"] not in MAY_BREAK_PAIRING:
            assert row["facts_lost"] == 0 or row["tokens_sent"] < whole


def test_compare_on_the_command_line_writes_rows_and_traces(tmp_path):
    log = ROOT / "data" / "transcripts" / "m3_release_check.json"
    keys = "article,swe-agent-last-n,anthropic-clear-tool-uses"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "minilib",
            "compare",
            str(log),
            "--policies",
            keys,
            "--window",
            "3000",
            "--json",
            "rows.json",
            "--out",
            "traces",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "rows.json").read_text(encoding="utf-8"))
    assert [row["policy"] for row in rows] == keys.split(",")
    for row in rows:
        assert row["policy"] in done.stdout
        trace = read_jsonl(tmp_path / "traces" / row["policy"] / "trace.jsonl")
        windows = [c["input"] for c in model_calls(trace)]
        assert len(windows) == row["rounds"]


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("processes", [1, 2])
def test_the_cycle_collector_is_off_while_policies_replay_and_as_it_was_after(
    enabled, processes, monkeypatch
):
    seen = []
    find_facts = PolicyRows.find_facts

    def noting(job):
        seen.append(gc.isenabled())
        return find_facts(job)

    monkeypatch.setattr(PolicyRows, "find_facts", noting)
    log = READABLE["m3_release_check.json"]
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        rows = compare_policies(log.messages, KEYS[:3], 3_000, processes=processes)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
    assert len(rows) == 3
    if processes == 1:  # with two, a forked process finds them
        assert seen == [False]


def test_an_unknown_policy_is_named():
    done = subprocess.run(
        [sys.executable, "-m", "minilib", "compare", "x.json", "--policies", "gpt-magic"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2
    assert "unknown policy 'gpt-magic'" in done.stderr


@settings(PROFILE, max_examples=80)
@given(
    calls=st.integers(1, 25),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["append", "drop", "mask", "keep", "trim", "next", "fold"]),
            st.integers(0, 99),
        ),
        min_size=1,
        max_size=12,
    ),
)
def test_the_runners_pairing_check_agrees_with_validate_messages(calls, edits):
    """Checking only from the last message before a change that is not a tool
    result, and only until the window goes on as the last one did, gives the same
    verdict as checking the whole window."""
    history = list(generate_history(calls).messages)
    check, window, taken = PairingCheck(), [], 2
    for how, at in edits:
        if how == "append" or not window:
            taken = min(len(history), taken + 1 + at % 4)
            window = window + history[len(window) : taken]
        elif how == "drop":
            window = window[: at % len(window)] + window[at % len(window) + 1 :]
        elif how == "mask":
            index = at % len(window)
            window = (
                window[:index]
                + [dict(window[index], content="<MASKED>")]
                + window[index + 1 :]
            )
        elif how == "fold":  # a reply and its results sent as one user message
            index = at % len(window)
            end = index + 1
            while end < len(window) and window[end].get("role") == "tool":
                end += 1
            window = window[:index] + [{"role": "user", "content": "<M>"}] + window[end:]
        elif how == "trim":  # the oldest messages after the first dropped
            cut = 1 + at % len(window)
            window = window[:1] + window[cut:]
        elif how == "next":  # what follows the last message taken, as a trimmer sends
            more = min(len(history), taken + 1 + at % 4)
            window, taken = window + history[taken:more], more
        try:
            validate_messages(window)
            expected = True
        except InvalidMessagesError:
            expected = False
        assert check.valid(list(window)) == expected


def test_a_claude_code_log_sets_its_recorded_compaction_beside_the_replays():
    from minilib.policies.production.compare import calibrated_window

    log = load_transcript(ROOT / "data" / "logs" / "claude_code_compacted.jsonl")
    replies_before = sum(
        m["role"] == "assistant" for m in log.messages[: log.compactions[0].at]
    )
    rows = compare_policies(log.messages, ["claude-code", "codex"], agent_log=log)
    mine, other = rows
    assert other["recorded_compaction_rounds"] is None  # not the log's agent
    assert [
        (e["round"], e["tokens_before"]) for e in mine["recorded_compaction_rounds"]
    ] == [(replies_before, 158_340)]
    assert mine["compaction_rounds"] == []  # the abridged log never nears 200k
    assert mine["overhead_tokens"] == 20_000
    # scaled by what the log holds against what the agent counted, the replay's
    # trigger falls where the agent's did
    window = calibrated_window(log)
    replies = [i for i, m in enumerate(log.messages) if m["role"] == "assistant"]
    held = estimate_tokens(log.messages[: replies[replies_before]])
    assert window == round(200_000 * held / 158_340)
    row = compare_policies(log.messages, ["claude-code"], window, agent_log=log)[0]
    assert [e["round"] for e in row["compaction_rounds"]] == [replies_before]
    entry = row["recorded_compaction_rounds"][0]
    assert entry["replay_tokens"] == row["compaction_rounds"][0]["tokens_before"]


def test_a_codex_rollout_records_rounds_but_no_tokens_and_no_window_matches_both():
    from minilib.policies.production.compare import calibrated_window

    log = load_transcript(ROOT / "data" / "logs" / "codex_compacted.jsonl")
    replies = [0]
    for message in log.messages:
        replies.append(replies[-1] + (message["role"] == "assistant"))
    recorded = [replies[c.at] for c in log.compactions]
    row = compare_policies(log.messages, ["codex"], agent_log=log)[0]
    assert [e["round"] for e in row["recorded_compaction_rounds"]] == recorded
    assert all(e["tokens_before"] is None for e in row["recorded_compaction_rounds"])
    assert calibrated_window(log) is None  # nothing to scale by
    found = {
        window: [
            c["round"]
            for c in compare_policies(log.messages, ["codex"], window)[0][
                "compaction_rounds"
            ]
        ]
        for window in range(800, 3_000, 50)
    }
    assert any(rounds[:1] == recorded[:1] for rounds in found.values())
    assert not any(rounds == recorded for rounds in found.values())


def test_a_measured_overhead_replaces_every_default():
    log = READABLE["claude_code_compacted.jsonl"]
    rows = compare_policies(log.messages, KEYS[:4], 200_000, overhead_tokens=1_234)
    assert {row["overhead_tokens"] for row in rows} == {1_234}


def test_compare_prints_the_replays_and_the_agents_compaction_rounds(tmp_path):
    log = ROOT / "data" / "logs" / "claude_code_compacted.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "minilib",
            "compare",
            str(log),
            "--policies",
            "claude-code",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "claude-code: replay compacted before rounds none; the agent, before " in (
        done.stdout
    )
    assert "(158,340 tokens)" in done.stdout


def test_every_stand_in_row_says_what_the_real_summaries_kept_beside_it():
    from minilib.measure.compactions import measure_compactions

    log = load_transcript(ROOT / "data" / "logs" / "claude_code_compacted.jsonl")
    reports = [r.as_dict() for r in measure_compactions(log)]
    expected = {
        "compactions": len(reports),
        "facts_after": sum(r["facts_after"] for r in reports),
        "real_held": sum(r["held"] for r in reports),
        "standin_held": sum(r["standin_held"] for r in reports),
    }
    assert expected["facts_after"] > 0
    keys = ["claude-code", "codex", "langchain-trim", "openhands-masking"]
    rows = compare_policies(log.messages, keys, 200_000, agent_log=log)
    for key, row in zip(keys, rows):
        if POLICIES[key].stand_in:
            assert row["standin_vs_real"] == expected
        else:
            assert "standin_vs_real" not in row
    assert any(POLICIES[key].stand_in for key in keys)
    assert not all(POLICIES[key].stand_in for key in keys)
    # a log with no compaction of its own has nothing to set the stand-in beside
    plain = load_transcript(ROOT / "data" / "logs" / "claude_code_session.jsonl")
    row = compare_policies(plain.messages, ["claude-code"], agent_log=plain)[0]
    assert "standin_vs_real" not in row


def test_a_window_below_the_logs_measured_overhead_is_refused_by_name(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "minilib", "compare"]
        + [str(ROOT / "data" / "logs" / "claude_code_session.jsonl"), "--window", "2000"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "--window 2,000: the log's calls counted" in done.stderr
    assert "Traceback" not in done.stderr
