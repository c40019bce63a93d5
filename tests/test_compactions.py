"""The agent's own compactions, measured: as recorded, the fate of the facts used after
each (held, re-read, neither), and the lab's stand-in beside it. The numbers below are
worked out by hand from the logs' text; the comments say how."""

import json
import re
import subprocess
import sys
from dataclasses import replace as replaced
from pathlib import Path

from minilib.logs.replay import load_transcript
from minilib.measure.compactions import (
    STANDIN_TOKENS,
    compaction_totals,
    measure_compactions,
    real_compactions,
    recorded_against_usage,
)
from minilib.reports.compactions import format_compaction
from minilib.tokens import estimate_message_tokens, estimate_text_tokens

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "data" / "logs"
REAL_SESSION = ROOT / "data" / "real" / "claude-code" / "entire-91-b42542f24f-0.jsonl"
JSON_KEYS = {
    "round",
    "trigger",
    "tokens_before",
    "summary_tokens",
    "facts_after",
    "held",
    "reread",
    "neither",
    "standin_held",
}


def fates(report):
    return {fact.fact: fact.fate for fact in report.facts}


def test_the_bundled_claude_code_compaction():
    log = load_transcript(LOGS / "claude_code_compacted.jsonl")
    (report,) = measure_compactions(log)
    row = report.as_dict()
    # the boundary record (line 17): compactMetadata {trigger: auto, preTokens: 158340};
    # four assistant messages before it, so it comes before round 4
    assert (row["round"], row["trigger"], row["tokens_before"]) == (4, "auto", 158_340)
    summary = log.compactions[0].replacement[0]["content"]
    assert row["summary_tokens"] == estimate_text_tokens(summary) and not row["opaque"]
    # after it the agent writes test_case_24 (the Edit's old_string, round 4: only the
    # Read of tests/test_schedule.py before the compaction showed it; the summary says
    # "24 cases") and tests/test_schedule.py (the pytest command, round 5: the first
    # test run printed it; the summary names the file)
    assert fates(report) == {"test_case_24": "neither", "tests/test_schedule.py": "held"}
    assert (row["facts_after"], row["held"], row["reread"], row["neither"]) == (
        2,
        1,
        0,
        1,
    )
    assert (row["reread_calls"], row["reread_tokens"]) == (0, 0)
    # the Read that showed test_case_24 took /home/dev/pollster/tests/test_schedule.py,
    # and the summary names tests/test_schedule.py: the agent, which knows the folder
    # it works in, can read it again by that
    assert row["restorable"] == 1
    # the stand-in, in the summary's room, condenses to a line of counts and the
    # bounded summary's own facts (pollster/schedule.py, BACKOFF): neither fact
    assert (row["standin_held"], row["standin_restorable"]) == (0, 0)
    assert 0 < row["standin_tokens"] <= row["summary_tokens"]


def test_the_bundled_codex_compactions():
    log = load_transcript(LOGS / "codex_compacted.jsonl")
    first, second = measure_compactions(log)
    # compacted records on lines 21 and 34; Codex records no trigger; the tokens before
    # are the last call's input, from the last token_count event before each record
    assert (first.round, second.round) == (4, 8)
    assert (first.trigger, second.trigger) == (None, None)
    records = [
        json.loads(line)
        for line in (LOGS / "codex_compacted.jsonl").read_text("utf-8").splitlines()
    ]
    last_before = [
        next(
            r["payload"]["info"]["last_token_usage"]["input_tokens"]
            for r in reversed(records[: line - 1])
            if r["type"] == "event_msg" and r["payload"]["type"] == "token_count"
        )
        for line in (21, 34)
    ]
    assert [first.tokens_before, second.tokens_before] == last_before
    assert first.tokens_before_field == "token_count info.last_token_usage.input_tokens"
    # the summary is the user message that opens with Codex's summary prefix; the
    # retained user messages are copies of earlier ones, not summary
    summary = log.compactions[0].replacement[-1]["content"]
    assert first.summary_tokens == estimate_text_tokens(summary)
    # what the agent writes after each (test_nested_footnotes, tests/test_render.py,
    # "49 tests") no tool showed before it: nothing to judge
    assert first.as_dict()["facts_after"] == second.as_dict()["facts_after"] == 0


def claude_line(kind, content, **extra):
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = extra.pop("id")
    return json.dumps({"type": kind, "message": message, **extra})


def tool_use(call_id, name, arguments):
    return [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]


def tool_result(call_id, text):
    return [{"type": "tool_result", "tool_use_id": call_id, "content": text}]


SOURCE = "\n".join(
    [
        "def handle_event(): pass",
        "def load_config_data(): pass",
        "worker_pool_size: 4",
        "port: 8443",
    ]
)
SUMMARY = (
    "This session is being continued from a previous conversation. Summary: the user "
    "asked to fix the config loader; the agent read src/app.py, where handle_event is "
    "the entry point and the loader is defined; nothing has been changed yet, and the "
    "next step is to find why the loader ignores the port setting."
)


def test_held_reread_and_neither_on_a_session_that_reads_again(tmp_path):
    lines = [
        claude_line("user", "Fix the config loader."),
        claude_line(
            "assistant",
            [{"type": "text", "text": "Reading the app."}]
            + tool_use("t1", "Read", {"file_path": "src/app.py"}),
            id="m1",
        ),
        claude_line("user", tool_result("t1", SOURCE)),
        json.dumps(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "compactMetadata": {"trigger": "manual", "preTokens": 1234},
            }
        ),
        claude_line("user", SUMMARY, isCompactSummary=True),
        claude_line(  # round 1: from memory, then a second read of the same file
            "assistant",
            [{"type": "text", "text": "worker_pool_size may matter; reading again."}]
            + tool_use("t2", "Read", {"file_path": "src/app.py"}),
            id="m2",
        ),
        claude_line("user", tool_result("t2", SOURCE)),
        claude_line(  # round 2: after the re-read
            "assistant",
            [{"type": "text", "text": "handle_event calls load_config_data on 8443."}],
            id="m3",
        ),
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log = load_transcript(path)
    (report,) = measure_compactions(log)
    row = report.as_dict()
    assert (row["round"], row["trigger"], row["tokens_before"]) == (1, "manual", 1234)
    assert fates(report) == {
        "worker_pool_size": "neither",  # written before the second read came back
        "handle_event": "held",  # the summary names it
        "load_config_data": "reread",  # shown again by t2 before round 2
        "8443": "reread",
    }
    assert (row["held"], row["reread"], row["neither"]) == (1, 2, 1)
    t2 = next(m for m in log.messages if m.get("tool_call_id") == "t2")
    assert (row["reread_calls"], row["reread_tokens"]) == (1, estimate_message_tokens(t2))
    # the summary names src/app.py, the path the read-only call t1 took: the three not
    # held were one Read away
    assert row["restorable"] == 3
    # the stand-in has room for the scripted summary whole: the task, "Reading the
    # app. → Read" and the result's first line, def handle_event(): pass
    assert (row["standin_held"], row["standin_restorable"]) == (1, 0)


def codex_line(kind, payload):
    return json.dumps(
        {"timestamp": "2026-05-14T09:00:00.000Z", "type": kind, "payload": payload}
    )


def test_a_remote_codex_compaction_is_opaque_and_its_stand_in_gets_the_default_room(
    tmp_path,
):
    task = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Why does the build fail?"}],
    }
    call = {
        "type": "function_call",
        "name": "shell_command",
        "call_id": "c1",
        "arguments": json.dumps({"command": "cat build.log"}),
    }
    output = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": "error E501 in src/app.py:120",
    }
    lines = [
        codex_line("session_meta", {"id": "s", "cwd": "/w", "cli_version": "0.63.0"}),
        codex_line("response_item", task),
        codex_line("response_item", call),
        codex_line("response_item", output),
        codex_line(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "last_token_usage": {
                        "input_tokens": 180_000,
                        "cached_input_tokens": 9,
                    }
                },
            },
        ),
        codex_line(
            "compacted",
            {
                "message": "",
                "replacement_history": [
                    task,
                    {"type": "compaction", "encrypted_content": "gAAAA"},
                ],
            },
        ),
        codex_line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": "The build fails on E501 in src/app.py:120.",
                    }
                ],
            },
        ),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (report,) = measure_compactions(load_transcript(path))
    row = report.as_dict()
    assert row["opaque"] and row["summary_tokens"] is None
    assert (row["tokens_before"], report.tokens_before_field) == (
        180_000,
        "token_count info.last_token_usage.input_tokens",
    )
    # E501, src/app.py:120 and its path: none is in the retained task, none re-read
    assert (row["facts_after"], row["held"], row["neither"]) == (3, 0, 3)
    # `cat build.log` is a read-only call, but nothing left names build.log
    assert row["restorable"] == 0
    assert report.standin_tokens <= STANDIN_TOKENS
    assert row["standin_held"] == 3  # the stand-in quotes the result's first line


def test_the_command_prints_each_compaction_and_writes_json(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "minilib",
            "compactions",
            str(LOGS / "claude_code_compacted.jsonl"),
            "--json",
            "c.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "compaction 1, before round 4 (line 17)\n  recorded: trigger auto, 158,340"
        in (done.stdout)
    )
    assert "held by the summary 1, re-read by a tool before use 0" in done.stdout
    (row,) = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert JSON_KEYS <= set(row)
    none = subprocess.run(
        [sys.executable, "-m", "minilib", "compactions", str(LOGS / "openai_chat.json")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert none.returncode == 0
    assert none.stdout.rstrip().endswith(
        "the log records no compaction made by the agent itself"
    )
    bad = subprocess.run(
        [sys.executable, "-m", "minilib", "compactions", "missing.jsonl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == "python -m minilib: error: missing.jsonl: no such log file\n"


def test_a_line_number_a_read_wrote_in_its_margin_is_no_fact_of_a_real_compaction():
    # Claude Code's Read shows each line as "   930→text": an agent that reads on from
    # line 930 has used no fact, and the real session does that after its compaction.
    log = load_transcript(REAL_SESSION)
    margin = re.compile(r"(?m)^ *(\d+)→")
    margins, elsewhere = set(), set()
    for message in log.messages:
        if message.get("role") == "tool":
            text = message.get("content") or ""
            margins.update(margin.findall(text))
            elsewhere.update(re.findall(r"\b\d+\b", margin.sub("", text)))
    (report,) = measure_compactions(log)
    after = {
        number
        for message in log.messages[log.compactions[0].at :]
        if message.get("role") == "assistant"
        for number in re.findall(r"\b\d+\b", json.dumps(message))
    }
    only_margins = (margins - elsewhere) & after
    numbers = {fact.fact for fact in report.facts if fact.kind == "number"}
    assert only_margins, "the session reads on from a margin's line number"
    assert not numbers & only_margins


def test_the_last_call_before_a_compaction_beside_its_record():
    # the fixture's line 15 is the last assistant record before the boundary (line
    # 17): its usage sums input 3, cache read and cache written to the prompt's size
    log = load_transcript(LOGS / "claude_code_compacted.jsonl")
    record = json.loads(
        (LOGS / "claude_code_compacted.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()[14]
    )
    usage = record["message"]["usage"]
    prompt = sum(value for key, value in usage.items() if "input" in key)
    (report,) = measure_compactions(log)
    assert report.last_call_tokens == prompt
    assert recorded_against_usage(log) == [(158_340, prompt)]
    assert f"the last call before it, as the log's usage records it: {prompt:,}" in (
        "\n".join(format_compaction(report))
    )


def test_a_real_sessions_record_and_its_last_call_agree():
    # a real Claude Code session: preTokens is what its last call sent, near enough
    # (the fixture above was written with a record its usage does not bear out)
    ((before, last),) = recorded_against_usage(load_transcript(REAL_SESSION))
    assert before == 174_247 and abs(before - last) / before < 0.01


def test_a_log_without_usage_has_no_last_call():
    log = load_transcript(LOGS / "as_kept" / "pi_compacted.jsonl")
    assert all(report.last_call_tokens is None for report in measure_compactions(log))
    assert recorded_against_usage(log) == []
    text = "\n".join(format_compaction(measure_compactions(log)[0]))
    assert "the last call before it" not in text


def test_the_real_compactions_file_is_what_the_logs_measure_now():
    # the file chapters 7 and 10 read: each row as measure_compactions gives it today
    # (every field; the byte-for-byte check of data/ runs the script itself)
    rows = real_compactions()
    for log in {row["log"] for row in rows}:
        measured = measure_compactions(load_transcript(ROOT / "data" / "real" / log))
        written = [row for row in rows if row["log"] == log]
        assert len(written) == len(measured)
        for row, report in zip(written, measured):
            now = report.as_dict()
            assert {k: v for k, v in row.items() if k != "log"} == {
                k: now[k] for k in row if k != "log"
            }


def test_compaction_totals_add_the_rows_up():
    rows = [
        dict(facts_after=10, held=4, reread=5, restorable=3, standin_held=1,
             standin_restorable=6),
        dict(facts_after=5, held=1, reread=2, restorable=1, standin_held=2,
             standin_restorable=0),
    ]  # fmt: skip
    assert compaction_totals(rows) == {
        "compactions": 2,
        "facts_after": 15,
        "real_held": 5,
        "reread": 7,
        "standin_held": 3,
        "real_held_or_restorable": 9,
        "standin_held_or_restorable": 9,
        "standin_held_fewer": 1,  # only the first: 1 < 4; the second 2 > 1
    }


def test_an_opaque_summary_is_not_said_to_hold_a_fact():
    """What holds a fact after an opaque (encrypted) summary is the messages kept
    with it, and the line says so."""
    [report] = measure_compactions(load_transcript(LOGS / "claude_code_compacted.jsonl"))
    readable = "\n".join(format_compaction(report))
    opaque = "\n".join(format_compaction(replaced(report, summary_tokens=None)))
    assert "held by the summary 1" in readable
    assert "summary: opaque" in opaque and "held by the summary" not in opaque
    assert "held by the messages kept with the opaque summary 1" in opaque


def test_a_record_that_falls_with_no_compaction_is_said_where_none_is_recorded():
    """A log that records no compaction, whose recorded input falls by over a quarter
    at one call (history dropped without a line for it, as a Cline task without its
    metadata shows): the line names the round and the fall; the whole log says only
    that it records none, and a fall at a recorded compaction is not one."""
    from dataclasses import replace

    from minilib.logs import load_log
    from minilib.reports.compactions import FELL_TO, format_compactions, record_falls
    from minilib.session import DATA_DIR

    log = load_log(DATA_DIR / "real" / "claude-code" / "entire-94-de498254e2-0.jsonl")
    assert record_falls(log) == [] and not log.compactions
    assert format_compactions([], record_falls(log)).endswith("by the agent itself")
    usage = sorted(log.usage, key=lambda u: u.message)
    at = len(usage) // 2
    fallen = round(usage[at - 1].input_tokens * FELL_TO) - 1
    log.usage[log.usage.index(usage[at])] = replace(usage[at], input_tokens=fallen)
    falls = record_falls(log)
    assert [(before, after) for _, before, after in falls] == [
        (usage[at - 1].input_tokens, fallen)
    ]
    line = format_compactions([], falls)
    assert f"before round {falls[0][0]}: {usage[at - 1].input_tokens:,} -> " in line
    assert "1 time" in line
    compacted = load_log(
        DATA_DIR / "real" / "pi" / "pi-mono-opus-4-5-two-compactions.jsonl"
    )
    assert compacted.compactions and record_falls(compacted) == []
