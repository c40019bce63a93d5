"""Every log shape loads, replays and compresses, through the library and the CLI."""

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from message_builders import BAD_CONVERSATIONS, NOT_LOGS

from minilib import (
    InvalidMessagesError,
    Settings,
    estimate_tokens,
    is_aged,
    recover_tool_output,
)
from minilib.logs import SHAPES, LogFileError, load_transcript, replay_transcript
from minilib.logs.replay import user_turn_advice
from minilib.messages import validate_messages
from minilib.session import DATA_DIR

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "data" / "logs"
READABLE = sorted(  # with the repaired gaps of data/logs/gaps/
    str(p.relative_to(LOGS))
    for p in LOGS.rglob("*")
    if p.is_file() and p.name not in NOT_LOGS
)


def test_every_shape_has_a_log():
    shapes = {load_transcript(LOGS / name).shape for name in READABLE}
    assert shapes == set(SHAPES)


@pytest.mark.parametrize("name", READABLE)
@pytest.mark.parametrize("threshold", [600, 1200])
def test_each_log_replays_within_the_window_or_stops_cleanly(name, threshold):
    messages = load_transcript(LOGS / name).messages
    run = replay_transcript(messages, Settings(threshold=threshold, fold_user_turns=True))
    windows = [
        c["input"] for c in run.tracer.events("model_call") if c["purpose"] == "decision"
    ]
    assert len(windows) == len(run.rounds)
    for window in windows:  # what the model was sent: valid, and within budget
        validate_messages(window)
        assert estimate_tokens(window) <= threshold
    if run.overflow is None:
        assert len(run.rounds) == sum(m["role"] == "assistant" for m in messages)


def test_compression_really_happens_on_the_logs():
    compressed = []
    for name in READABLE:
        run = replay_transcript(
            load_transcript(LOGS / name).messages, Settings(threshold=600)
        )
        if run.compressions:
            compressed.append(name)
    assert len(compressed) >= len(READABLE) // 2, compressed


def test_observations_logged_as_user_messages_are_aged():
    log = load_transcript(LOGS / "sweagent_text.traj")
    observed = [m for m in log.messages if m.get("observation")]
    assert observed and max(len(m["content"]) for m in observed) > 240
    run = replay_transcript(log.messages, Settings(threshold=1500))
    aged = [
        m
        for m in run.final_messages
        if m.get("observation") and "[已老化]" in m["content"]
    ]
    assert aged


def test_a_repeated_call_id_pairs_by_position_through_the_replay():
    log = load_transcript(LOGS / "sweagent_tools.traj")
    ids = [c["id"] for m in log.messages for c in m.get("tool_calls") or ()]
    assert len(ids) > len(set(ids))  # the file really reuses ids
    run = replay_transcript(log.messages, Settings(threshold=100_000))
    assert run.overflow is None and len(run.tracer.events("tool_call")) == len(ids)


def test_the_article_rule_alone_stopping_a_multi_turn_log_is_said():
    messages = load_transcript(LOGS / "codex_rollout.jsonl").messages
    assert sum(m["role"] == "user" for m in messages) >= 2
    settings = Settings(threshold=500)
    stopped = replay_transcript(messages, settings)
    assert stopped.overflow is not None
    folding = replay_transcript(messages, Settings(threshold=500, fold_user_turns=True))
    assert folding.overflow is None
    summary = next(
        m for m in folding.final_messages if m["content"] and "[滚动摘要]" in m["content"]
    )
    assert "- 用户: " in summary["content"]  # the later user turn, quoted whole
    assert "--fold-user-turns" in user_turn_advice(messages, settings, stopped)


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "minilib", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )


@pytest.mark.parametrize("name", READABLE)
def test_compress_reads_every_shape(name, tmp_path):
    done = cli(
        "compress",
        LOGS / name,
        "--threshold",
        "600",
        "--fold-user-turns",
        "--out",
        tmp_path,
    )
    assert done.returncode in (0, 1), done.stderr
    # the window and why come first, whatever follows
    assert done.stdout.startswith(
        "window: 600 tokens (the threshold given on the command line)\n"
    )
    if "round   baseline" in done.stdout:  # not when the protected head alone is over
        shape = load_transcript(LOGS / name).shape
        assert f"\nshape: {shape} (" in done.stdout
    else:
        assert "stopped: context window needs" in done.stderr


def test_damaged_and_unknown_logs_get_one_line(tmp_path):
    damaged = cli("compress", LOGS / "damaged.jsonl", "--out", tmp_path)
    assert damaged.returncode == 2 and damaged.stderr.count("\n") == 1
    assert "damaged.jsonl: line 4 is not valid JSON" in damaged.stderr
    unknown = cli("compress", LOGS / "unknown_shape.json", "--out", tmp_path)
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1
    assert "not a known agent log; closest: " in unknown.stderr


def test_a_head_over_the_threshold_gets_the_clean_overflow_line(tmp_path):
    done = cli(
        "compress", LOGS / "sweagent_text.traj", "--threshold", "300", "--out", tmp_path
    )
    # the window and why, then nothing but the stop
    assert done.returncode == 1
    assert done.stdout == "window: 300 tokens (the threshold given on the command line)\n"
    assert done.stderr.startswith("python -m minilib: stopped: context window needs ")
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize("case", BAD_CONVERSATIONS)
def test_a_bad_conversation_is_named_and_left_as_it_was(case):
    messages, expected = BAD_CONVERSATIONS[case]
    before = copy.deepcopy(messages)
    with pytest.raises(InvalidMessagesError) as raised:
        replay_transcript(messages)
    assert str(raised.value).startswith(expected)
    assert messages == before


@pytest.mark.parametrize(
    "name",
    sorted(
        str(p.relative_to(DATA_DIR / "logs"))
        for p in (DATA_DIR / "logs").rglob("*")
        if p.is_file()
    ),
)
def test_every_output_a_replay_cuts_comes_back_whole_from_the_trace(name):
    # tool results and environment output alike: the id an omission line names finds
    # the whole output in the trace
    try:
        log = load_transcript(DATA_DIR / "logs" / name)
    except LogFileError:
        return  # a damaged example: its error is tested with the readers
    run = replay_transcript(log.messages, Settings(threshold=600, fold_user_turns=True))
    records = run.tracer.records
    cut = [
        message
        for call in run.tracer.events("model_call")
        for message in call["input"]
        if is_aged(message)
    ]
    for message in cut:
        named = re.search(r"tool_call_id=([^)]*)\)", message["content"]).group(1)
        assert named, f"an aged output in {name} names no id"
        # `like`: the output that holds every line the aged copy kept
        whole = recover_tool_output(records, named, like=message["content"])
        kept_head = message["content"].split("\n", 1)[1].split("\n……(")[0]
        assert whole.startswith(kept_head) and len(whole) > len(kept_head)


def test_an_error_found_after_reading_names_the_files_own_lines(tmp_path):
    # the conversation check runs on the converted list; its messages[i] are placed
    lines = [
        {"type": "user", "message": {"role": "user", "content": "go"}},
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}
                ],
            },
        },
        {
            "type": "assistant",
            "message": {"id": "m2", "role": "assistant", "content": "no result came"},
        },
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    with pytest.raises(LogFileError) as raised:
        load_transcript(path, strict=True)
    assert str(raised.value) == (
        f"{path}: tool call 't1' of file line 2 (the lab's messages[1]) is never "
        "answered: file line 3 (the lab's messages[2]) (assistant) comes where its "
        "tool result should be; "
        "tool results must directly follow the assistant message that made the calls"
    )
    # unless strict, the call gets a result saying it was interrupted, named by its line
    log = load_transcript(path)
    [repair] = log.repairs
    assert (repair.kind, repair.where) == ("interrupted-call", "line 2")
    assert log.messages[2]["synthetic"] and log.origins[2] == "line 2"


def test_a_fresh_copy_is_a_deep_copy_that_shares_nothing_it_could_change():
    from minilib.logs.replay import fresh_copy

    class Note:  # not a JSON value: copied by copy.deepcopy
        def __init__(self, text):
            self.text = text

    call = {"id": "c1", "function": {"name": "f", "arguments": "{}"}}
    message = {
        "role": "assistant",
        "content": "读 x",
        "tool_calls": [call],
        "extra": (1, [2.5, None, True]),
        "note": Note("n"),
    }
    copied = fresh_copy(message)
    assert copied["tool_calls"] == [call] and copied["extra"] == (1, [2.5, None, True])
    assert copied["tool_calls"] is not message["tool_calls"]
    assert copied["tool_calls"][0]["function"] is not call["function"]
    assert copied["extra"][1] is not message["extra"][1]
    assert copied["note"] is not message["note"] and copied["note"].text == "n"
