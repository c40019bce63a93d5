"""The agent's own policy, replayed on its own real log, does what the log says the
agent did: Claude Code's compactions where it compacted, its 2.0.x microcompact where
the recorded input drops."""

import dataclasses
import json

import pytest

from minilib.cli.main import main
from minilib.logs.replay import load_transcript
from minilib.measure.calibration import calibrate, call_points, logged_events
from minilib.policies.production import build_policy
from minilib.policies.production.compare import NEAR, rounds_before
from minilib.policies.production.run import replay_policy
from minilib.session import DATA_DIR

REAL = DATA_DIR / "real" / "claude-code"
COMPACTED = sorted(
    path
    for path in REAL.glob("entire-*.jsonl")
    if '"compact_boundary"' in path.read_text(encoding="utf-8")
)


@pytest.mark.parametrize("path", COMPACTED, ids=lambda p: p.name)
def test_claude_code_row_compacts_where_the_agent_did(path, tmp_path):
    out = tmp_path / "rows.json"
    assert (
        main(["compare", str(path), "--policies", "claude-code", "--json", str(out)]) == 0
    )
    row = json.loads(out.read_text())[0]
    recorded = [c["round"] for c in row["recorded_compaction_rounds"]]
    replayed = [c["round"] for c in row["compaction_rounds"]]
    assert recorded, "a log picked for its compactions records one"
    for at in recorded:
        assert any(abs(r - at) <= NEAR for r in replayed), (at, replayed)
    assert len(replayed) <= 2 * len(recorded)  # at most one extra for each
    assert row["first_disagreement"] is None
    assert len(row["tokens_per_round"]) == row["rounds"]


def test_claude_codes_row_compacts_only_where_the_record_crossed_its_trigger(tmp_path):
    """pi never compacted this session, but its record passes Claude Code's trigger
    near its end: Claude Code's row, counted as calibrated, compacts there and
    nowhere before."""
    path = DATA_DIR / "real" / "pi" / "pi-mono-sonnet-4-5-large-session.jsonl"
    out = tmp_path / "rows.json"
    main(["compare", str(path), "--policies", "claude-code", "--json", str(out)])
    row = json.loads(out.read_text())[0]
    log = load_transcript(path)
    trigger = build_policy("claude-code", 200_000).trigger_tokens
    rounds = rounds_before(log)
    crossed = min(rounds[u.message] for u in log.usage if u.input_tokens >= trigger)
    replayed = [c["round"] for c in row["compaction_rounds"]]
    assert replayed and all(abs(r - crossed) <= NEAR for r in replayed), (
        crossed,
        replayed,
    )


def test_version_sets_the_trigger():
    old = build_policy("claude-code", 200_000, version="2.0.76")
    new = build_policy("claude-code", 200_000, version="2.1.21")
    assert (old.trigger_tokens, new.trigger_tokens) == (155_000, 167_000)
    # 2.1.12 on the client writes each clearing down: the replay follows the log's
    assert old.microcompact == "token-rule" and new.microcompact == "off"
    assert old.reattach and new.reattach


def test_the_2_0_token_rule_clears_where_the_record_drops():
    """A 2.0.76 session records no clearing, but its input drops by 24,291 tokens at
    one call with no compaction; the replayed token rule clears there (within a
    call: it decides on the count the lab predicts, not the record) and nowhere else."""
    log = load_transcript(REAL / "entire-94-de498254e2-0.jsonl")
    points = call_points(log)
    drops = [
        b.round
        for a, b in zip(points, points[1:])
        if b.stretch == a.stretch and b.recorded - a.recorded < -10_000
    ]
    assert len(drops) == 1
    calibration = calibrate(log)
    policy = build_policy(
        "claude-code",
        200_000,
        calibration.counter(log, held_out=True),
        overhead_tokens=calibration.overhead(log, held_out=True),
        version=log.agent_version,
    )
    replay_policy(log.messages, policy)
    assert len(policy.microcompactions) == 1
    assert abs(policy.microcompactions[0] - drops[0]) <= 1


def test_a_fall_the_client_made_without_a_record_is_named_on_its_call():
    """2.0.76 wrote no line for a microcompact: the one drop in its record, above the
    warning threshold, is named as likely one; a version that writes each clearing
    down leaves the same drop unexplained."""
    log = load_transcript(REAL / "entire-94-de498254e2-0.jsonl")
    points = call_points(log)
    drop = next(
        b
        for a, b in zip(points, points[1:])
        if b.stretch == a.stretch and b.recorded - a.recorded < -10_000
    )
    named = {
        round_
        for round_, events in logged_events(log).items()
        if any("likely a microcompact" in event for event in events)
    }
    assert named == {drop.round}
    said = logged_events(log)[drop.round][0]
    fell = points[points.index(drop) - 1].recorded - drop.recorded
    assert f"fell {fell:,}" in said and "2.0.76" in said
    newer = dataclasses.replace(log, agent_version="2.1.14")
    assert logged_events(newer)[drop.round] == ()


def test_after_a_compaction_the_files_read_last_are_reattached():
    history = [
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"c{n}",
                    "type": "function",
                    "function": {
                        "name": "Read",
                        "arguments": json.dumps({"file_path": f"f{n}.py"}),
                    },
                }
                for n in range(7)
            ],
        },
        *[
            {"role": "tool", "tool_call_id": f"c{n}", "content": f"body {n} " * 10}
            for n in range(7)
        ],
    ]
    policy = build_policy("claude-code", 200_000, version="2.1.30")
    for message in policy.take_new(history):
        policy.client.add(message)
    policy.compact()
    attached = [m["content"].splitlines()[0] for m in policy.client.messages[1:]]
    # the last 5 files read, newest first
    assert attached == [f"[re-attached: f{n}.py]" for n in (6, 5, 4, 3, 2)]


# files that begin mid-session: their first calls counted history the file lacks, and
# a compaction early in the file replaced it
MID_SESSION = ["entire-4b-7d5121b42a-0.jsonl", "entire-d7-0360ee0899-0.jsonl"]


@pytest.mark.parametrize("name", MID_SESSION)
def test_history_a_file_lacks_is_carried_until_the_compaction_not_paid_every_call(name):
    log = load_transcript(REAL / name)
    calibration = calibrate(log)
    fit = next(iter(calibration.held_out_fits.values()))
    first = log.usage[0].input_tokens
    # the calls after the compaction show the overhead alone; the calls before it
    # counted more than half their input beyond it
    assert fit.missing > first / 2 and fit.overhead < first / 2
    assert calibration.missing_history(log) == fit.missing
    from minilib.policies.production.own_agent import own_agent_row

    row, lines = own_agent_row(log, 200_000)
    assert any("begins mid-session" in line for line in lines)
    # every call, before the compaction and after it, within a tenth of its record
    # (an overhead that took the lacking history in sent 60% too much after it)
    assert row["recorded_usage"]["p90_abs_error"] < 0.10


def test_a_recorded_clearing_of_results_the_file_lacks_takes_them_off_that_history():
    from minilib.logs.base import Clearing
    from minilib.measure.calibration import lacking_cleared

    # the clearing names four results; the file holds one: three quarters of what it
    # saved (the client's estimate) was history the file lacks
    clearing = Clearing(5, "line 9", ("a", "b", "c", "held"), 60_000, 20_000)
    assert lacking_cleared(clearing, {"held"}) == 15_000
    assert lacking_cleared(Clearing(5, "line 9", ("held",)), {"held"}) == 0
    policy = build_policy(
        "claude-code",
        200_000,
        version="2.1.20",
        missing_history_tokens=30_000,
        recorded_clearings=[(1, ("a", "b", "c", "held"), 15_000)],
    )
    history = [{"role": "user", "content": "go on"}]
    policy.send(history, 0)
    history += [
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "and?"},
    ]
    policy.send(history, 1)
    assert policy.unseen_by_round == [30_000, 15_000]


def test_a_clearing_of_lacking_results_comes_off_the_overhead_when_it_holds_them():
    # no compaction told the lacking history from the overhead: the overhead holds it,
    # and what a clearing took of it comes off there (never below nothing sent)
    policy = build_policy(
        "claude-code",
        200_000,
        version="2.1.20",
        overhead_tokens=40_000,
        recorded_clearings=[(1, ("gone",), 15_000), (2, ("also gone",), 90_000)],
    )
    history = [{"role": "user", "content": "go on"}]
    for step in range(3):
        policy.send(history, step)
        history = history + [
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "and?"},
        ]
    assert policy.unseen_by_round == [0, -15_000, -40_000]


def test_a_manual_compaction_is_followed_where_the_user_ran_it():
    """/compact is the user's: the replay compacts at the recorded round, far below
    its trigger, and the rounds around it stay as its own rule decides."""
    from minilib.agents.claude_code.policy import ClaudeCodePolicy
    from minilib.scale import generate_history

    messages = list(generate_history(40, user_turns=2).messages)
    plain = replay_policy(messages, ClaudeCodePolicy(200_000))
    manual = replay_policy(
        messages, ClaudeCodePolicy(200_000, recorded_manual_compactions=[12])
    )
    assert plain.summary_calls == 0  # 40 calls never reach the trigger
    assert manual.summary_calls == 1
    assert manual.tokens[12] < plain.tokens[12]
    assert manual.tokens[11] == plain.tokens[11]


def test_the_agents_row_follows_a_recorded_manual_compaction(tmp_path):
    """The same real session with its compaction recorded as the user's /compact: the
    row compacts at exactly the recorded round (its own rule put it within NEAR of
    it), and the line names it as manual."""
    source = REAL / "entire-98-78b713483d-0.jsonl"
    copy = tmp_path / "manual.jsonl"
    copy.write_text(source.read_text().replace('"trigger":"auto"', '"trigger":"manual"'))
    log = load_transcript(copy)
    assert [c.manual for c in log.compactions] == [True]
    out = tmp_path / "rows.json"
    main(["compare", str(copy), "--policies", "claude-code", "--json", str(out)])
    row = json.loads(out.read_text())[0]
    recorded = row["recorded_compaction_rounds"]
    assert [c.get("manual") for c in recorded] == [True]
    assert recorded[0]["round"] in [c["round"] for c in row["compaction_rounds"]]
