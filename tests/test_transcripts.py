"""Real transcripts: the files in data/transcripts/ load, replay and compress from the
command line."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from message_builders import flat_tool_calls

from minilib import (
    estimate_tokens,
    is_summary,
    load_session,
    recover_tool_output,
    run_baseline,
    run_session,
)
from minilib.cli.main import format_rounds
from minilib.logs import load_transcript, replay_transcript
from minilib.logs.replay import parse_transcript
from minilib.reports.rounds import FINAL_LIST
from minilib.trace import read_jsonl

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "data" / "transcripts"
FILES = sorted(path.name for path in TRANSCRIPTS.iterdir())


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "minilib", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_the_four_transcripts_are_there():
    assert FILES == [
        "agent_trajectory.json",
        "cjk_refactor.jsonl",
        "coding_agent_fix.json",
        "m3_release_check.json",
    ]


def test_the_trajectory_shape_is_normalized_to_chat_completions():
    stored = json.loads(
        (TRANSCRIPTS / "agent_trajectory.json").read_text(encoding="utf-8")
    )["messages"]
    loaded = load_transcript(TRANSCRIPTS / "agent_trajectory.json").messages
    assert len(loaded) == len(stored)
    strings = [m for m in stored if isinstance(m.get("tool_calls"), str)]
    parts = [m for m in stored if isinstance(m.get("content"), list)]
    assert len(strings) >= 5 and len(parts) >= 2  # the file really uses both shapes
    for before, after in zip(stored, loaded):
        if isinstance(before.get("tool_calls"), str):
            calls = json.loads(before["tool_calls"])
            assert [c["id"] for c in after["tool_calls"]] == [c["id"] for c in calls]
            assert [
                json.loads(c["function"]["arguments"]) for c in after["tool_calls"]
            ] == [c["function"]["arguments"] for c in calls]
        if isinstance(before.get("content"), list):
            assert after["content"] == "\n".join(
                part["text"] for part in before["content"]
            )
        assert isinstance(after["content"], str)


def test_the_request_shape_declares_its_tools():
    transcript = load_transcript(TRANSCRIPTS / "coding_agent_fix.json")
    assert transcript.declared_tools == ("run_shell", "read_file", "apply_patch")
    used = {
        c["function"]["name"]
        for m in transcript.messages
        for c in m.get("tool_calls") or ()
    }
    assert used == set(transcript.declared_tools)


def test_the_transcripts_have_what_they_claim():
    coding = load_transcript(TRANSCRIPTS / "coding_agent_fix.json").messages
    cjk = load_transcript(TRANSCRIPTS / "cjk_refactor.jsonl").messages
    for messages in (coding, cjk):
        assert any(len(m.get("tool_calls") or ()) > 1 for m in messages)  # parallel calls
        assert any("error" in m for m in messages if m["role"] == "tool")  # tool errors
        assert (
            max(len(m["content"]) for m in messages if m["role"] == "tool") > 3000
        )  # long outputs
    assert sum(1 for m in cjk if m["role"] == "user") == 2  # a second user turn
    assert (
        sum(estimate_tokens([m]) for m in cjk if m["role"] == "tool")
        > len("".join(m["content"] for m in cjk if m["role"] == "tool")) / 4
    )  # CJK costs more than 4 characters a token


def test_the_bundled_session_replayed_as_a_transcript_gives_the_same_table_and_trace():
    session = load_session()
    recorded = load_transcript(TRANSCRIPTS / "m3_release_check.json").messages
    assert recorded == list(run_baseline(session).final_messages)
    replayed, original = replay_transcript(recorded), run_session(session)
    assert format_rounds(replayed) == format_rounds(original)
    assert replayed.tracer.to_jsonl() == original.tracer.to_jsonl()
    assert replayed.final_messages == original.final_messages


@pytest.mark.parametrize("name", FILES)
def test_replay_governs_every_round_and_keeps_every_output(name):
    messages = load_transcript(TRANSCRIPTS / name).messages
    before = copy.deepcopy(messages)
    run = replay_transcript(messages)
    assert messages == before and run.overflow is None
    assistants = [
        index for index, message in enumerate(messages) if message["role"] == "assistant"
    ]
    assert [r.round for r in run.rounds] == list(range(len(assistants)))
    assert [r.baseline_tokens for r in run.rounds] == [
        estimate_tokens(messages[:i]) for i in assistants
    ]
    assert all(r.tokens_after <= 1200 for r in run.rounds)
    assert any(r.aged for r in run.rounds)
    for message in messages:
        if message["role"] == "tool":
            assert (
                recover_tool_output(run.tracer.records, message["tool_call_id"])
                == message["content"]
            )
    for call in run.tracer.events("model_call"):
        if call["purpose"] == "summary":  # a summary never folds a user's request
            assert all(
                m["role"] in ("assistant", "tool") or is_summary(m) for m in call["input"]
            )


def test_a_second_user_turn_is_never_folded_and_bounds_what_a_summary_may_fold():
    messages = load_transcript(TRANSCRIPTS / "cjk_refactor.jsonl").messages
    second = [i for i, m in enumerate(messages) if m["role"] == "user"][1]
    earlier_calls = {
        c["id"] for m in messages[:second] for c in m.get("tool_calls") or ()
    }
    run = replay_transcript(messages)
    summaries = [
        call["input"]
        for call in run.tracer.events("model_call")
        if call["purpose"] == "summary"
    ]
    assert summaries
    for folded in summaries:
        assert {m["tool_call_id"] for m in folded if m["role"] == "tool"} <= earlier_calls
    assert messages[second] in run.final_messages
    low = replay_transcript(messages, run.settings.__class__(threshold=900))
    assert low.overflow is not None and low.overflow.threshold == 900


@pytest.mark.parametrize("name", FILES)
def test_cli_compress_prints_the_run_table_and_writes_the_trace(tmp_path, name):
    result = cli("compress", TRANSCRIPTS / name, "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    log = load_transcript(TRANSCRIPTS / name)
    run = replay_transcript(log.messages)
    # what was read first (shape, counts, skips), which window replayed it (by default
    # the production one), how tokens are counted, then the same table as `run`
    counted = "tokens: estimated (the article's rule, not a tokenizer)"
    # the article's transcripts keep the article's threshold, and say so first
    window = "window: 1,200 tokens (the article's threshold, for the article's session)"
    assert result.stdout.startswith(
        f"{window}\n{log.describe()}\n{run.window_line()}\n{counted}\n\n"
        f"{format_rounds(run)}\n\n"
    )
    assert run.window_line().startswith("window: production")
    assert (
        f"{FINAL_LIST}: {len(run.final_messages)} messages, {run.final_tokens:,} tokens"
        in result.stdout
    )
    assert (tmp_path / "out" / "trace.jsonl").read_text(
        encoding="utf-8"
    ) == run.tracer.to_jsonl()
    document = json.loads((tmp_path / "out" / "rounds.json").read_text(encoding="utf-8"))
    assert document["rounds"] == run.rounds_as_dicts() and document["overflow"] is None


def test_cli_compress_matches_cli_run_on_the_bundled_session(tmp_path):
    compressed = cli(
        "compress",
        TRANSCRIPTS / "m3_release_check.json",
        "--out",
        tmp_path / "a",
        cwd=tmp_path,
    )
    ran = cli("run", "--out", tmp_path / "b", cwd=tmp_path)
    description, table = compressed.stdout.split("\n\n", 1)
    assert description.startswith("window: 1,200 tokens (the article's threshold")
    assert "\nshape: openai-chat" in description
    # both say once that the tokens are estimated: a log's report above its table,
    # run's under its summary
    from minilib.measure.costs import ESTIMATED

    counted = f"tokens: {ESTIMATED}\n"
    assert counted in description + "\n" and ran.stdout.count(counted) == 1
    assert table.replace(str(tmp_path / "a"), "OUT") == ran.stdout.replace(
        counted, ""
    ).replace(str(tmp_path / "b"), "OUT")
    assert read_jsonl(tmp_path / "a" / "trace.jsonl") == read_jsonl(
        tmp_path / "b" / "trace.jsonl"
    )
    assert "round 13: 1,193 tokens sent against 17,991" in compressed.stdout


def test_cli_compress_reports_an_overflow_and_exits_1(tmp_path):
    result = cli(
        "compress",
        TRANSCRIPTS / "coding_agent_fix.json",
        "--threshold",
        "100",
        "--out",
        tmp_path,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        "python -m minilib: stopped: context window needs 119 tokens after compression, "
        "over the threshold of 100"
    )
    # the protected head alone is over: the window said, the overflow line, no output
    assert (
        result.stdout == "window: 100 tokens (the threshold given on the command line)\n"
    )
    assert not (tmp_path / "rounds.json").exists()


def test_settings_reach_the_replay(tmp_path):
    result = cli(
        "compress",
        TRANSCRIPTS / "coding_agent_fix.json",
        "--threshold",
        "4000",
        "--out",
        tmp_path,
        cwd=tmp_path,
    )
    rounds = json.loads((tmp_path / "rounds.json").read_text(encoding="utf-8"))["rounds"]
    assert result.returncode == 0 and not any(
        r["aged"] or r["summarized"] for r in rounds
    )  # the whole transcript is 3,592 tokens


def test_jsonl_and_json_give_the_same_transcript():
    messages = load_transcript(TRANSCRIPTS / "cjk_refactor.jsonl").messages
    assert parse_transcript(json.dumps(messages, ensure_ascii=False)).messages == messages


def test_notebook_views_agree_with_the_core():
    from minilib import validate_messages
    from minilib.lab.transcripts_view import (
        keep_last,
        naive_cut_table,
        transcript_baseline,
        what_was_cut,
    )

    messages = load_transcript(TRANSCRIPTS / "coding_agent_fix.json").messages
    run = replay_transcript(messages)
    assert list(transcript_baseline(messages).tokens) == [
        r.baseline_tokens for r in run.rounds
    ]
    cut = what_was_cut(run, messages)
    assert cut["recoverable"].all() and len(cut) == sum(
        m["role"] == "tool" for m in messages
    )
    final_tools = {
        m["tool_call_id"]: m for m in run.final_messages if m["role"] == "tool"
    }
    for _, row in cut.iterrows():  # rows by place in the log; call ids are unique here
        if row["tool_call_id"] in final_tools:
            assert row["characters in last window"] == len(
                final_tools[row["tool_call_id"]]["content"]
            )
        else:
            assert row["fate"] == "folded into the summary"
    assert set(cut["fate"]) == {"folded into the summary", "aged", "verbatim"}
    window = messages[
        : max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    ]
    table = naive_cut_table(window, range(0, 14))
    for count, row in table.iterrows():
        kept = keep_last(window, count)
        assert (
            kept[:1] == window[:1] and len(kept) == 1 + count
        )  # the system prompt, then the last N
        try:
            validate_messages(kept)
            valid = not kept[-1].get("tool_calls")
        except ValueError:
            valid = False
        assert row["valid"] == valid and row["tokens"] == estimate_tokens(kept)
    assert not table["valid"].all() and table["valid"].any()


def test_flat_calls_are_nested_and_a_flat_call_without_id_is_named():
    flat = flat_tool_calls()
    loaded = parse_transcript(json.dumps(flat)).messages
    assert loaded[1]["tool_calls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "bash", "arguments": '{"command": "ls"}'},
        }
    ]
    del flat[1]["tool_calls"]
    flat[1]["tool_calls"] = [{"name": "bash", "arguments": {}}]
    with pytest.raises(
        ValueError, match=r"^flat: messages\[1\]\.tool_calls\[0\]\.id is missing$"
    ):
        parse_transcript(json.dumps(flat), "flat")
