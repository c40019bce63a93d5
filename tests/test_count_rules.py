"""What a log records that moves the count, read as the agent that wrote it meant it.
Each rule has a constructed fixture here (a bundled log changed in the one way the
rule is about), and where the project holds one, the real log that shows it."""

import json
from pathlib import Path

from minilib.logs import load_log
from minilib.measure.compactions import measure_compactions
from minilib.session import DATA_DIR

LOGS = DATA_DIR / "logs"
CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


ZERO_COUNT = {
    "type": "event_msg",
    "payload": {
        "type": "token_count",
        "info": {
            "total_token_usage": {"input_tokens": 0, "output_tokens": 0},
            "last_token_usage": {
                "input_tokens": 0,
                "cached_input_tokens": 0,
                "output_tokens": 0,
                "reasoning_output_tokens": 0,
                "total_tokens": 0,
            },
        },
    },
}


def test_a_codex_token_count_of_all_zeros_is_a_placeholder_not_a_call(tmp_path):
    """Codex writes a token_count that counts nothing before a call is counted: read
    as usage it gave a call 0 tokens, and a compaction '0 tokens before'."""
    source = LOGS / "codex_compacted.jsonl"
    records = []
    for record in _lines(source):
        if record["type"] == "compacted":
            records.append(dict(ZERO_COUNT, timestamp=record["timestamp"]))
        records.append(record)
    mutated = load_log(_write(tmp_path / "placeholder.jsonl", records))
    original = load_log(source)
    assert [(u.message, u.input_tokens) for u in mutated.usage] == [
        (u.message, u.input_tokens) for u in original.usage
    ]
    assert all(u.input_tokens > 0 for u in mutated.usage)
    assert sum("placeholder" in why for _, why in mutated.skipped) == 2
    before = [r.tokens_before for r in measure_compactions(mutated)]
    assert before == [r.tokens_before for r in measure_compactions(original)]
    assert before[0] == 10_680  # the last call counted before the first compaction


def _hook_line(event, command, after):
    return {
        "type": "progress",
        "isSidechain": False,
        "sessionId": after.get("sessionId"),
        "version": after.get("version"),
        "timestamp": after.get("timestamp"),
        "data": {
            "type": "hook_progress",
            "hookEvent": event.split(":")[0],
            "hookName": event,
            "command": command,
        },
    }


def test_hooks_whose_output_joins_the_context_are_named_where_they_ran(tmp_path):
    """Claude Code adds a SessionStart or UserPromptSubmit hook's output to the
    context and logs only that the hook ran: the log cannot be counted there, so the
    call after it names the hooks (a PreToolUse hook's output does not join it)."""
    from minilib.measure.calibration import call_events, call_points

    source = LOGS / "claude_code_compacted.jsonl"
    records = []
    for record in _lines(source):
        records.append(record)
        if record.get("isCompactSummary"):
            for command in ("/home/me/.claude/hooks/prime.sh", "bd prime"):
                records.append(_hook_line("SessionStart:compact", command, record))
            records.append(_hook_line("PreToolUse:Bash", "check.sh", record))
    log = load_log(_write(tmp_path / "hooks.jsonl", records))
    assert [(u.event, u.commands) for u in log.unrecorded] == [
        ("SessionStart:compact", ("prime.sh", "bd prime"))
    ]
    points = call_points(log, every_call=True)
    after = next(p for p in points if p.unrecorded)
    before = points[points.index(after) - 1]
    named = call_events(before, after, log)
    assert any(
        e.startswith("2 SessionStart:compact hooks ran (prime.sh, bd prime)")
        for e in named
    )
    assert load_log(source).unrecorded == []


def test_a_real_session_names_the_hooks_after_its_compaction():
    from minilib.measure.calibration import calibrate, predicted_calls

    log = load_log(CORPUS / "claude-code" / "spotter-ae4a77f8.jsonl")
    calls = predicted_calls(log, calibrate(log))
    named = [
        c for c in calls if any("SessionStart:compact hooks ran" in e for e in c.events)
    ]
    assert [c.round for c in named] == [138]  # the first call after /compact
