"""Damaged logs, the normal case for a log reader: every bundled log shape, mutated
(truncated, fields deleted and retyped, lines reordered and duplicated, bad encodings,
deep nesting, huge numbers), gives a clear one-line error or a valid replay through the
loader, the replay and the CLI; never a traceback, and the input is never changed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from scale_helpers import SCALE_PROFILE

from minilib import Settings, validate_messages
from minilib.logs import LogFileError, replay_transcript
from minilib.logs.replay import parse_transcript
from minilib.session import DATA_DIR

ROOT = Path(__file__).resolve().parent.parent
LOGS = sorted(p for p in (DATA_DIR / "logs").iterdir() if p.is_file())
PROFILE = settings(SCALE_PROFILE, max_examples=250)  # derandomized, no database
# values a field may be retyped to: other JSON types, a huge number, deep nesting
ODD_VALUES = [None, 0, -1, 2.5, True, "", "x" * 5000, [], {}, [[[[]]]], {"type": 7}]
HUGE_NUMBER = "1" + "0" * 5000
DEEP = "[" * 100_000 + "]" * 100_000


def paths_into(value, path=()):
    """Every (path, value) inside a JSON value, the value itself first."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_into(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths_into(item, path + (index,))


def parsed(text):
    """The fixture as a list of JSON values (one a line for JSON Lines), or None."""
    try:
        return [json.loads(text)], False
    except json.JSONDecodeError:
        try:
            return [json.loads(line) for line in text.splitlines() if line.strip()], True
        except json.JSONDecodeError:
            return None, False


def dumped(values, lines):
    if lines:
        return "\n".join(json.dumps(value, ensure_ascii=False) for value in values)
    return json.dumps(values[0], ensure_ascii=False)


@st.composite
def mutated_logs(draw):
    """(fixture name, mutated text)."""
    path = draw(st.sampled_from(LOGS))
    text = path.read_text(encoding="utf-8")
    values, lines = parsed(text)
    kind = draw(
        st.sampled_from(
            ["truncate", "delete", "retype", "huge", "deep", "reorder", "duplicate"]
        )
    )
    if values is None or kind == "truncate":  # text formats are cut or spliced
        cut = draw(st.integers(0, len(text)))
        splice = draw(st.sampled_from(["", "\x00", "\ud800", "{", "\n]\n", "#### "]))
        return path.name, text[:cut] + splice
    if kind in ("reorder", "duplicate") and lines and len(values) > 1:
        first, second = sorted(
            draw(st.lists(st.integers(0, len(values) - 1), min_size=2, max_size=2))
        )
        if kind == "reorder":
            values[first], values[second] = values[second], values[first]
        else:
            values.insert(second, values[first])
        return path.name, dumped(values, lines)
    places = [(i, p) for i, value in enumerate(values) for p, _ in paths_into(value)]
    index, place = draw(st.sampled_from(places))
    if not place:  # the whole record
        values[index] = draw(st.sampled_from(ODD_VALUES))
        return path.name, dumped(values, lines)
    parent = values[index]
    for key in place[:-1]:
        parent = parent[key]
    key = place[-1]
    if kind == "delete":
        del parent[key]
        return path.name, dumped(values, lines)
    marker = "__MUTATED__"
    parent[key] = {"huge": marker, "deep": marker}.get(kind) or draw(
        st.sampled_from(ODD_VALUES)
    )
    text = dumped(values, lines)
    return path.name, text.replace(f'"{marker}"', HUGE_NUMBER if kind == "huge" else DEEP)


def read_and_replay(text, source):
    """The replay of a log's text, or the LogFileError saying why there is none."""
    log = parse_transcript(text, source)  # what load_transcript does with a file's text
    validate_messages(log.messages)  # a loaded log is a valid conversation...
    run = replay_transcript(log.messages, Settings(threshold=600, fold_user_turns=True))
    assert run.overflow is not None or len(run.rounds) == log.rounds  # ...that replays
    return run


@PROFILE
@given(mutated_logs())
def test_a_mutated_log_is_read_and_replayed_or_named_in_one_line(case):
    name, text = case
    try:
        read_and_replay(text, name)
        event("replayed")
    except LogFileError as error:
        event("one-line error")
        message = str(error)
        assert message.startswith(f"{name}: ") and "\n" not in message
        assert len(message) < 2_000  # a huge value is not echoed whole
    except Exception as error:  # the failure a user would see as a traceback
        if type(error).__name__ == "InvalidMessagesError":
            raise AssertionError(f"a loaded log was not a valid conversation: {error}")
        raise


@pytest.mark.parametrize("name", [p.name for p in LOGS])
def test_the_cli_gives_a_status_and_one_line_on_a_damaged_copy_of_each_shape(
    tmp_path, name
):
    text = (DATA_DIR / "logs" / name).read_text(encoding="utf-8")
    damaged = tmp_path / name
    damaged.write_bytes(
        text[: len(text) // 2].encode() + b"\xff\xfe" + HUGE_NUMBER.encode()
    )
    before = damaged.read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "minilib", "compress", str(damaged), "--out", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode in (0, 1, 2), done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") <= 2
    assert damaged.read_bytes() == before


# --- the gaps real runs leave: repaired and named, never the whole file refused -------

# per line-based shape: what marks a line holding a tool result, and a message line
# a harness might write between a call and its result (an approval, a reminder)
GAP_SHAPES = {
    "claude_code_session.jsonl": (
        '"tool_result"',
        '"type":"tool_use"',
        {"type": "user", "message": {"role": "user", "content": "(approved)"}},
    ),
    "codex_rollout.jsonl": (
        '"function_call_output"',
        '"type":"function_call"',
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "Approved."}],
            },
        },
    ),
}


@st.composite
def gapped_logs(draw):
    """(name, text, the repair kind the gap must be named by)."""
    name = draw(st.sampled_from(sorted(GAP_SHAPES)))
    result_mark, call_mark, between = GAP_SHAPES[name]
    lines = (DATA_DIR / "logs" / name).read_text(encoding="utf-8").splitlines()
    kind = draw(st.sampled_from(["delete a result", "insert between", "corrupt"]))
    if kind == "delete a result":
        index = draw(
            st.sampled_from([i for i, x in enumerate(lines) if result_mark in x])
        )
        del lines[index]
        return name, "\n".join(lines), "interrupted-call"
    if kind == "insert between":
        index = draw(st.sampled_from([i for i, x in enumerate(lines) if call_mark in x]))
        lines.insert(index + 1, json.dumps(between))
        return name, "\n".join(lines), "moved-message"
    index = draw(st.integers(1, len(lines) - 1))  # the first line tells the shape
    cut = draw(st.integers(1, max(1, len(lines[index]) - 2)))
    lines[index] = lines[index][:cut]
    return name, "\n".join(lines), "bad-line"


@settings(SCALE_PROFILE, max_examples=60)
@given(gapped_logs())
def test_a_gap_a_real_run_leaves_is_repaired_named_and_replayed(case):
    name, text, expected = case
    log = parse_transcript(text, name)
    assert expected in {repair.kind for repair in log.repairs}
    assert f"repaired {sum(r.kind == expected for r in log.repairs)} x" in log.describe()
    run = read_and_replay(text, name)
    for call in run.tracer.events("model_call"):
        validate_messages(call["input"])  # every window the API would accept
    with pytest.raises(LogFileError):
        parse_transcript(text, name, strict=True)
