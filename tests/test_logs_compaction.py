"""The agent's own compactions: recorded by the readers, followed by the replay.

Codex writes a `compacted` line, Claude Code a `compact_boundary` record and an
`isCompactSummary` summary; after either, the model saw the replacement, not the
history before it. The constructed fixtures hold one (Claude Code) and two (Codex:
one with `replacement_history`, one with the summary alone).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from minilib import Settings, estimate_tokens
from minilib.logs import LogFileError, load_transcript, parse_log, replay_transcript
from minilib.logs.replay import TranscriptRun, user_turn_advice
from minilib.messages import validate_messages
from minilib.reports.rounds import format_summary
from minilib.trace import event_records

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "data" / "logs"
CODEX, CLAUDE = LOGS / "codex_compacted.jsonl", LOGS / "claude_code_compacted.jsonl"
SUMMARY_START = {  # how each fixture's summary begins
    CODEX: "Another model worked on this task before you",
    CLAUDE: "This session is being continued from a previous conversation",
}


def decisions(run):
    """The window sent with each model decision, in round order."""
    calls = run.tracer.events("model_call")
    return [call["input"] for call in calls if call["purpose"] == "decision"]


def contents(window):
    return [m.get("content") or "" for m in window]


# --- what the readers record ----------------------------------------------------------


def test_codex_records_both_compactions_with_what_replaced_the_history():
    log = load_transcript(CODEX)
    first, second = log.compactions
    assert (first.at, first.where, first.kept) == (12, "line 21", 1)
    assert first.recorded_by == "compacted payload.replacement_history"
    assert first.replaced == 11  # the history but the base instructions
    assert [m["role"] for m in first.replacement] == ["system"] + ["user"] * 4
    assert first.replacement[-1]["content"].startswith(SUMMARY_START[CODEX])
    # the second holds only the summary: rebuilt as Codex rebuilds it on resume
    assert (second.at, second.where) == (20, "line 34")
    assert second.recorded_by.startswith("compacted payload.message")
    assert second.replaced == len(first.replacement) + (second.at - first.at)
    texts = contents(second.replacement)
    assert texts[1].startswith("<environment_context>")  # the opening context again
    assert texts[2:5] == [
        "`inkwell build` drops the footnotes of some pages. Find out why and fix it.",
        "Good. Also add a test for nested footnotes.",
        "Run the whole suite once more, then stop.",
    ]  # the user's messages, not the first summary
    assert "test_nested_footnotes" in texts[-1] and len(texts) == 6
    # the summaries are not messages of the history itself
    assert not any(t.startswith(SUMMARY_START[CODEX]) for t in contents(log.messages))


def test_claude_code_records_the_boundary_and_its_summary():
    log = load_transcript(CLAUDE)
    (compaction,) = log.compactions
    assert (compaction.at, compaction.where, compaction.kept) == (10, "line 17", 0)
    assert compaction.recorded_by == (
        "system compact_boundary, summary line 18 (isCompactSummary)"
    )
    assert compaction.detail == "trigger auto, 158,340 tokens before"
    assert compaction.replaced == 10
    (summary,) = compaction.replacement
    assert summary["role"] == "user"
    assert summary["content"].startswith(SUMMARY_START[CLAUDE])
    assert not any(t.startswith(SUMMARY_START[CLAUDE]) for t in contents(log.messages))


@pytest.mark.parametrize("path", [CODEX, CLAUDE])
def test_describe_names_each_compaction(path):
    log = load_transcript(path)
    text = log.describe()
    for compaction in log.compactions:
        assert (
            f"agent compaction before messages[{compaction.at}] ({compaction.where}, "
            in text
        )
        assert f"{compaction.replaced} messages replaced by " in text
    assert "trigger auto, 158,340 tokens before" in load_transcript(CLAUDE).describe()


def test_a_log_without_compactions_describes_and_replays_as_before():
    path = LOGS / "codex_rollout.jsonl"
    log = load_transcript(path)
    assert log.compactions == [] and "agent compaction" not in log.describe()
    settings = Settings(threshold=600, fold_user_turns=True)
    by_log, by_messages = (
        replay_transcript(log, settings),
        replay_transcript(log.messages, settings),
    )
    assert by_log.tracer.to_jsonl() == by_messages.tracer.to_jsonl()
    assert by_log.rounds == by_messages.rounds
    assert "agent compaction" not in format_summary(by_log)


# --- the replay, as the model saw it ----------------------------------------------------


@pytest.mark.parametrize("path", [CODEX, CLAUDE])
def test_the_window_after_a_compaction_holds_the_replacement_not_the_history(path):
    log = load_transcript(path)
    run = replay_transcript(log, Settings(threshold=100_000))
    windows = decisions(run)
    assert len(windows) == len(run.rounds) == log.rounds  # every round, none doubled
    for round_number, compaction in run.agent_compactions:
        window = windows[round_number]
        head = log.messages[: compaction.kept]
        after = log.messages[compaction.at :]
        opening = window[: len(head) + len(compaction.replacement)]
        assert opening == head + list(compaction.replacement)
        assert window[len(opening) :] == after[: len(window) - len(opening)]
        # nothing of the history it replaced: no tool result from before it
        before = log.messages[: compaction.at]
        before_ids = {m["tool_call_id"] for m in before if m["role"] == "tool"}
        assert not any(m.get("tool_call_id") in before_ids for m in window)
    # the last window ends where the log ends, after the last replacement
    last = log.compactions[-1]
    assert run.final_messages[-1] == log.messages[-1]
    assert len(run.final_messages) == last.kept + len(last.replacement) + (
        len(log.messages) - last.at
    )


@pytest.mark.parametrize("path", [CODEX, CLAUDE])
def test_full_history_replays_everything(path):
    log = load_transcript(path)
    settings = Settings(threshold=100_000)
    full = replay_transcript(log, settings, full_history=True)
    plain = replay_transcript(log.messages, settings)
    assert full.tracer.to_jsonl() == plain.tracer.to_jsonl()
    assert full.final_messages == log.messages and full.full_history
    assert not any(
        text.startswith(SUMMARY_START[path])
        for window in decisions(full)
        for text in contents(window)
    )
    assert "replayed through with the full history" in format_summary(full)


@pytest.mark.parametrize("path", [CODEX, CLAUDE])
def test_the_baseline_is_the_window_the_agent_itself_sent(path):
    log = load_transcript(path)
    settings = Settings(threshold=600, fold_user_turns=True)
    run = replay_transcript(log, settings)
    full = replay_transcript(log, settings, full_history=True)
    for round_number, compaction in run.agent_compactions:
        sent = log.messages[: compaction.kept] + list(compaction.replacement)
        sent += log.messages[compaction.at : _reply_index(log, round_number)]
        assert run.rounds[round_number].baseline_tokens == estimate_tokens(sent)
        assert run.rounds[round_number].baseline_messages == len(sent)
        # with the full history the baseline is the whole log up to that reply
        whole = log.messages[: _reply_index(log, round_number)]
        assert full.rounds[round_number].baseline_tokens == estimate_tokens(whole)


def _reply_index(log, round_number):
    """Where the log's assistant message of `round_number` sits."""
    replies = [i for i, m in enumerate(log.messages) if m["role"] == "assistant"]
    return replies[round_number]


@pytest.mark.parametrize("path", [CODEX, CLAUDE])
@pytest.mark.parametrize("threshold", [600, 1200])
def test_after_a_compaction_the_lab_governs_within_budget(path, threshold):
    log = load_transcript(path)
    run = replay_transcript(log, Settings(threshold=threshold, fold_user_turns=True))
    assert run.overflow is None and len(run.rounds) == log.rounds
    for window in decisions(run):
        validate_messages(window)
        assert estimate_tokens(window) <= threshold
    assert [r.round for r in run.rounds] == list(range(log.rounds))


def test_round_numbers_and_trace_steps_run_on_across_compactions():
    log = load_transcript(CODEX)
    run = replay_transcript(log, Settings(threshold=600))
    assert [rounds for rounds, _ in run.agent_compactions] == [4, 8]
    records = list(event_records(run.tracer.records))
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    steps = [r["payload"]["step"] for r in records]
    assert steps == sorted(steps) and steps[-1] == log.rounds - 1
    marks = run.tracer.events("agent_compaction")
    assert [(m["step"], m["where"]) for m in marks] == [(4, "line 21"), (8, "line 34")]
    assert marks[0]["replacement"] == [dict(m) for m in log.compactions[0].replacement]
    assert all(c.step < log.rounds for c in run.compressions)
    # every tool output is in the trace once, whatever the window kept of it
    traced = [call["tool_call_id"] for call in run.tracer.events("tool_call")]
    assert traced == [m["tool_call_id"] for m in log.messages if m["role"] == "tool"]


def test_the_summary_names_each_compaction_and_what_it_replaced():
    run = replay_transcript(load_transcript(CLAUDE), Settings(threshold=600))
    assert isinstance(run, TranscriptRun)
    assert (
        "agent compaction before round 4 (line 17, system compact_boundary, summary "
        "line 18 (isCompactSummary)): 10 messages replaced by 1, the replay went on "
        "from them"
    ) in format_summary(run)


def test_a_replay_that_stops_before_a_compaction_says_it_was_not_reached():
    log = load_transcript(CODEX)
    run = replay_transcript(log, Settings(threshold=150))
    assert run.overflow is not None and len(run.rounds) < 4
    assert format_summary(run).count("not reached") == 2


def test_the_user_turn_advice_replays_the_same_way():
    log = load_transcript(CODEX)
    settings = Settings(threshold=500)
    # as the model saw it the replay fits; the whole history stops at its second turn
    # under the article's rule (its summary may not fold a later user turn)
    assert replay_transcript(log, settings, window="article").overflow is None
    full = replay_transcript(log, settings, full_history=True, window="article")
    assert full.overflow is not None and len(full.rounds) == 4
    # the advice replays the full history through the same window: folding gets
    # further, not to the end
    advice = user_turn_advice(log, settings, full)
    assert "--fold-user-turns" in advice and advice.endswith("gets to round 9.")


def test_compress_prints_the_compaction_and_takes_full_history(tmp_path):
    def compress(*flags):
        return subprocess.run(
            [sys.executable, "-m", "minilib", "compress", str(CODEX), "--out"]
            + [str(tmp_path / "out"), "--threshold", "1200", *flags],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        ).stdout

    followed, full = compress(), compress("--full-history")
    assert "agent compaction before messages[12] (line 21" in followed
    assert "agent compaction before round 4 (line 21" in followed
    assert "the replay went on from them" in followed
    assert "replayed through with the full history" in full
    trace = (tmp_path / "out" / "trace.jsonl").read_text(encoding="utf-8")
    assert '"agent_compaction"' not in trace  # the last run replayed the full history


# --- damaged compaction records: one line, naming the line -----------------------------


def compacted(**payload) -> dict:
    return {"type": "compacted", "payload": payload}


def _codex_with(line_number: int, record: dict) -> str:
    lines = CODEX.read_text(encoding="utf-8").splitlines()
    lines[line_number - 1] = json.dumps(record)
    return "\n".join(lines) + "\n"


def _claude_with(changes: dict, line_number: int = 17) -> str:
    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[line_number - 1])
    record.update(changes)
    lines[line_number - 1] = json.dumps(record)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            _codex_with(21, compacted(summary="x")),
            "s.jsonl: line 21: compacted payload.message must be a string",
        ),
        (
            _codex_with(21, {"type": "compacted", "payload": "summary"}),
            "s.jsonl: line 21: compacted payload.message must be a string",
        ),
        (
            _codex_with(21, compacted(message="", replacement_history={})),
            "s.jsonl: line 21: compacted payload.replacement_history must be a list",
        ),
        (
            _codex_with(21, compacted(message="", replacement_history=[3])),
            "s.jsonl: line 21: payload.replacement_history[0] must be an object",
        ),
        (
            _claude_with({"compactMetadata": "auto"}),
            "s.jsonl: line 17: compact_boundary compactMetadata must be an object",
        ),
        (
            _claude_with({"compactMetadata": {"trigger": "auto", "preTokens": "many"}}),
            "s.jsonl: line 17: compact_boundary compactMetadata.preTokens must be a "
            "number",
        ),
        (
            _claude_with({"isCompactSummary": False}, 18),
            "s.jsonl: line 17: compact_boundary is not followed by its isCompactSummary "
            "user record (line 18 is a user record)",
        ),
    ],
)
def test_a_damaged_compaction_record_is_one_line_naming_its_line(text, expected):
    with pytest.raises(LogFileError) as caught:
        parse_log(text, "s.jsonl")
    assert str(caught.value) == expected


def test_a_damaged_compaction_is_one_line_from_the_cli(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_claude_with({"compactMetadata": [1]}), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "minilib", "compress", str(bad), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "line 17: compact_boundary" in result.stderr


def test_a_replacement_that_breaks_pairing_is_named_by_its_compaction():
    item = {"type": "function_call_output", "call_id": "nobody", "output": "x"}
    text = _codex_with(21, compacted(message="", replacement_history=[item]))
    with pytest.raises(LogFileError, match=r"^s\.jsonl: line 21: payload\.replacement"):
        parse_log(text, "s.jsonl", strict=True)
    # unless strict, the result that answers nothing is kept as context text
    [repair] = parse_log(text, "s.jsonl").repairs
    assert repair.kind == "orphan-result"


# --- the rarer records ------------------------------------------------------------------


def test_an_encrypted_compaction_item_is_skipped_and_said():
    history = [
        {"role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "compaction", "encrypted_content": "gAAAA-opaque"},
    ]
    text = _codex_with(21, compacted(message="", replacement_history=history))
    log = parse_log(text, "s.jsonl")
    assert contents(log.compactions[0].replacement) == ["go"]
    assert (
        "line 21: payload.replacement_history[1]",
        "compaction item: encrypted, cannot be measured",
    ) in log.skipped


def test_a_subagent_compaction_and_a_trailing_boundary_are_not_followed():
    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    sidechain = [json.loads(lines[16]), json.loads(lines[17])]
    for record in sidechain:
        record["isSidechain"] = True
    lines[16:18] = [json.dumps(record) for record in sidechain]
    lines.append(json.dumps({"type": "system", "subtype": "compact_boundary"}))
    log = parse_log("\n".join(lines) + "\n", "s.jsonl")
    assert log.compactions == []
    reasons = [why for _, why in log.skipped]
    assert reasons.count("a subagent's compaction: not this conversation's") == 2
    assert ("line 24", "compact_boundary at the end of the log: no summary after it") in (
        log.notes
    )
