"""Every error path: a clear error that names what and where, never a KeyError or
TypeError from inside,
and a failed call leaves the caller's list as it was."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from minilib import (
    AGING_MARK,
    SUMMARY_MARK,
    ContextOverflowError,
    ContextWindow,
    InvalidMessagesError,
    RollingSummary,
    ScriptedModel,
    Settings,
    ToolResultAging,
    Tracer,
    aged_content,
    article_window,
    closed_range,
    estimate_tokens,
    load_session,
    recover_tool_output,
    run_loop,
    run_session,
    scripted_summary,
    validate_messages,
    window_before_round,
)
from minilib.logs import load_transcript, replay_transcript
from minilib.logs.replay import TranscriptFileError, parse_transcript
from minilib.session import SessionFileError
from minilib.tokens import estimate_message_tokens
from minilib.trace import ToolOutputNotFound, read_jsonl

ROOT = Path(__file__).resolve().parent.parent


def call(call_id, name="read_file", arguments="{}"):
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


HEAD = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
PAIR = [
    {"role": "assistant", "content": "go", "tool_calls": [call("c1")]},
    {"role": "tool", "tool_call_id": "c1", "content": "out"},
]


def with_message(index, message):
    """HEAD + PAIR with one message replaced (or appended at the end)."""
    messages = copy.deepcopy(HEAD + PAIR)
    if index == len(messages):
        messages.append(message)
    else:
        messages[index] = message
    return messages


BAD_CONVERSATIONS = {
    "unknown role": (
        with_message(1, {"role": "bot", "content": "hi"}),
        "messages[1].role is 'bot'; expected one of system, user, assistant, tool",
    ),
    "non-string content": (
        with_message(1, {"role": "user", "content": 42}),
        "messages[1].content must be a string, got int",
    ),
    "missing content": (
        with_message(1, {"role": "user"}),
        "messages[1].content is missing",
    ),
    "not a dict": (with_message(1, "hello"), "messages[1] must be a dict, got str"),
    "orphan tool result": (
        with_message(4, {"role": "tool", "tool_call_id": "zz", "content": "x"}),
        "messages[4].tool_call_id 'zz' answers no open tool call of the most recent "
        "assistant message (messages[2])",
    ),
    "answered twice": (
        with_message(4, {"role": "tool", "tool_call_id": "c1", "content": "x"}),
        "messages[4].tool_call_id 'c1' was already answered",
    ),
    "tool result without id": (
        with_message(4, {"role": "tool", "content": "x"}),
        "messages[4].tool_call_id is missing",
    ),
    "duplicate call id in one message": (
        with_message(
            4,
            {
                "role": "assistant",
                "content": "again",
                "tool_calls": [call("c1"), call("c1")],
            },
        ),
        "messages[4].tool_calls[1].id 'c1' is used twice in this message",
    ),
    "result of an earlier turn's call": (
        with_message(
            4, {"role": "assistant", "content": "next", "tool_calls": [call("c2")]}
        )
        + [{"role": "tool", "tool_call_id": "c1", "content": "late"}],
        "messages[5].tool_call_id 'c1' answers no open tool call of the most recent "
        "assistant message "
        "(messages[4])",
    ),
    "call without id": (
        with_message(
            2,
            {
                "role": "assistant",
                "content": "go",
                "tool_calls": [{"type": "function", "function": {"name": "read_file"}}],
            },
        ),
        "messages[2].tool_calls[0].id is missing",
    ),
    "call without name": (
        with_message(
            2,
            {
                "role": "assistant",
                "content": "go",
                "tool_calls": [{"id": "c1", "type": "function", "function": {}}],
            },
        ),
        "messages[2].tool_calls[0].function.name is missing",
    ),
    "arguments not a string": (
        with_message(
            2,
            {
                "role": "assistant",
                "content": "go",
                "tool_calls": [call("c1", arguments={"path": "a"})],
            },
        ),
        "messages[2].tool_calls[0].function.arguments must be a JSON string, got dict",
    ),
    "tool_calls on a user": (
        with_message(1, {"role": "user", "content": "u", "tool_calls": [call("c0")]}),
        "messages[1].tool_calls is only allowed on assistant messages, not user",
    ),
    "tool_calls not a list": (
        with_message(2, {"role": "assistant", "content": "go", "tool_calls": "c1"}),
        "messages[2].tool_calls must be a list",
    ),
    "unanswered call then a user turn": (
        HEAD + [PAIR[0], {"role": "user", "content": "and?"}, PAIR[1]],
        "tool call 'c1' of messages[2] is never answered: messages[3] (user) comes "
        "where its tool result should be",
    ),
    "bad error field": (
        with_message(
            3, {"role": "tool", "tool_call_id": "c1", "content": "x", "error": "boom"}
        ),
        "messages[3].error must be a dict with a 'code'",
    ),
}


def _aging(messages):
    return ToolResultAging().compress(messages)


def _summary(messages):
    return RollingSummary(scripted_summary).compress(messages)


def _window(messages):
    return article_window(scripted_summary, threshold=10).before_model_call(
        messages, Tracer(), 0
    )


def _walk(messages):
    return article_window(scripted_summary).walk(messages)


def _loop(messages):
    return run_loop(
        ScriptedModel([{"role": "assistant", "content": "done"}]), messages, tools=None
    )


def _replay(messages):
    return replay_transcript(messages)


ENTRY_POINTS = {
    "validate_messages": validate_messages,
    "ToolResultAging.compress": _aging,
    "RollingSummary.compress": _summary,
    "closed_range": lambda m: closed_range(m, 4),
    "ContextWindow.before_model_call": _window,
    "ContextWindow.walk": _walk,
    "run_loop": _loop,
    "replay_transcript": _replay,
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("case", BAD_CONVERSATIONS)
def test_every_entry_point_names_the_bad_message_and_changes_nothing(entry, case):
    messages, expected = BAD_CONVERSATIONS[case]
    before = copy.deepcopy(messages)
    with pytest.raises(InvalidMessagesError) as raised:
        ENTRY_POINTS[entry](messages)
    assert str(raised.value).startswith(expected)
    assert messages == before


def test_not_a_list_is_named():
    with pytest.raises(
        InvalidMessagesError, match=r"^messages must be a list of messages, got dict$"
    ):
        validate_messages({"role": "user", "content": "u"})


def test_a_call_still_unanswered_at_the_end_is_allowed():
    validate_messages(
        HEAD + [PAIR[0]]
    )  # the model just made it; the loop answers it next


# --- parameters
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: Settings(threshold=0), "threshold must be >= 1, got 0"),
        (lambda: Settings(head_chars=-1), "head_chars must be >= 0, got -1"),
        (lambda: Settings(tail_chars="120"), "tail_chars must be an integer, got '120'"),
        (lambda: Settings(min_chars=2.5), "min_chars must be an integer, got 2.5"),
        (
            lambda: Settings(protect_tail=True),
            "protect_tail must be an integer, got True",
        ),
        (lambda: ContextWindow(threshold=-5), "threshold must be >= 1, got -5"),
        (
            lambda: article_window(scripted_summary, threshold=None),
            "threshold must be an integer, got None",
        ),
        (lambda: ToolResultAging(head_chars=-1), "head_chars must be >= 0, got -1"),
        (
            lambda: RollingSummary(scripted_summary, protect_tail="4"),
            "protect_tail must be an integer, got '4'",
        ),
        (lambda: closed_range(HEAD + PAIR, -1), "protect_tail must be >= 0, got -1"),
        (
            lambda: article_window(scripted_summary).before_model_call(
                HEAD + PAIR, None, -1
            ),
            "step must be >= 0, got -1",
        ),
        (
            lambda: run_loop(ScriptedModel([]), list(HEAD), tools=None, max_steps=0),
            "max_steps must be >= 1, got 0",
        ),
        (
            lambda: window_before_round(load_session(), Settings(), -2),
            "round_number must be >= 0, got -2",
        ),
        (lambda: aged_content(42, 10, 10), "content must be a string, got int"),
        (lambda: aged_content("text", 10, -3), "tail_chars must be >= 0, got -3"),
        (
            lambda: recover_tool_output([], ""),
            "tool_call_id must be a non-empty string, got ''",
        ),
    ],
)
def test_bad_parameters_are_named(make, expected):
    with pytest.raises(ValueError) as raised:
        make()
    assert str(raised.value) == expected


def test_a_strategy_without_compress_is_named():
    with pytest.raises(
        TypeError, match=r"^strategies\[1\] \(str\) has no compress\(messages\) method$"
    ):
        ContextWindow(threshold=100, strategies=[ToolResultAging(), "summary"])


def test_replay_and_run_want_settings():
    with pytest.raises(
        TypeError, match=r"^settings must be a minilib Settings, got dict$"
    ):
        replay_transcript(HEAD + PAIR, {"threshold": 100})
    with pytest.raises(
        TypeError, match=r"^settings must be a minilib Settings, got int$"
    ):
        run_session(load_session(), 900)


def test_a_model_reply_that_is_not_an_assistant_message_is_named():
    with pytest.raises(
        InvalidMessagesError,
        match=r"^model reply at step 0 must be an assistant message$",
    ):
        run_loop(
            ScriptedModel([{"role": "user", "content": "?"}]), list(HEAD), tools=None
        )


# --- the trace
# ----------------------------------------------------------------------------


def test_a_missing_tool_output_is_a_readable_key_error():
    tracer = Tracer()
    tracer.tool_call(0, "c1", "read_file", "{}", "full output")
    assert recover_tool_output(tracer.records, "c1") == "full output"
    with pytest.raises(ToolOutputNotFound) as raised:
        recover_tool_output(tracer.records, "c9")
    assert isinstance(raised.value, KeyError)  # callers catching KeyError keep working
    assert str(raised.value) == "no tool_call record with tool_call_id 'c9' in the trace"


def test_malformed_trace_records_are_named():
    with pytest.raises(ValueError, match=r"^trace record 1 must be a dict, got list$"):
        recover_tool_output([{"event": "x"}, []], "c1")
    with pytest.raises(
        ValueError, match=r"^trace record 0 \(seq 7\): payload.output is missing$"
    ):
        recover_tool_output(
            [{"event": "tool_call", "seq": 7, "payload": {"tool_call_id": "c1"}}], "c1"
        )


def test_a_bad_trace_line_names_file_and_line(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text('{"seq": 1}\n\n{"seq": 2\n', encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"trace.jsonl: line 3 is not valid JSON \(Expecting"
    ):
        read_jsonl(path)


# --- overflow
# -----------------------------------------------------------------------------


def test_overflow_after_a_summary_names_the_summary_that_wrote_the_largest_message():
    # Found by the property tests: a summary written by compression was reported as the
    # caller's message at the summary's window index, with the wrong role.
    messages = [
        {"role": "assistant", "content": ""},
        PAIR[0],
        {**PAIR[1], "content": "error NOT_FOUND: "},
    ]
    before = copy.deepcopy(messages)
    with pytest.raises(ContextOverflowError) as raised:
        article_window(scripted_summary, threshold=1, protect_tail=0).before_model_call(
            messages
        )
    error = raised.value
    assert (error.written_by, error.largest_index, error.largest_role) == (
        "rolling_summary",
        0,
        "user",
    )
    assert error.window[0]["content"].startswith(SUMMARY_MARK) and len(error.window) == 1
    assert str(error).endswith(
        f"#0 (user, {error.largest_tokens:,} tokens, written by rolling_summary), "
        "which no strategy may cut further."
    )
    assert messages == before


def test_overflow_names_the_message_in_the_window_it_would_have_sent():
    # The caller's #3 was aged; the error names the aged copy, which is what did not fit.
    messages = HEAD + [PAIR[0], {**PAIR[1], "content": "x" * 3000}]
    with pytest.raises(ContextOverflowError) as raised:
        article_window(scripted_summary, threshold=50).before_model_call(messages)
    error = raised.value
    assert error.written_by == "tool_result_aging" and error.window[error.largest_index][
        "content"
    ].startswith(AGING_MARK)
    assert error.largest_tokens == estimate_tokens([error.window[error.largest_index]])


def test_overflow_blames_the_callers_message_by_its_own_index():
    messages = HEAD + [{"role": "assistant", "content": "x" * 4000}]
    with pytest.raises(ContextOverflowError) as raised:
        article_window(scripted_summary, threshold=100).before_model_call(messages)
    assert (
        raised.value.largest_index,
        raised.value.largest_role,
        raised.value.written_by,
    ) == (2, "assistant", None)
    assert (
        "Largest message left: #2 (assistant, 1,004 tokens), which no strategy may cut "
        "further." in str(raised.value)
    )


# --- session files
# ------------------------------------------------------------------------


def write_session(tmp_path, **changes):
    document = json.loads((ROOT / "data" / "session.json").read_text(encoding="utf-8"))
    document["workspace"] = str((ROOT / "data" / "workspace").resolve())
    document.update(changes)
    path = tmp_path / f"session_{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


def test_session_file_errors_name_file_and_field(tmp_path):
    cases = [
        (write_session(tmp_path, task=None), "field 'task' is missing or not a str"),
        (
            write_session(tmp_path, replies=[{"role": "user", "content": "x"}]),
            "replies[0] must be an assistant message",
        ),
        (
            write_session(
                tmp_path,
                replies=[
                    {
                        "role": "assistant",
                        "content": "b",
                        "tool_calls": [call("c1"), call("c1")],
                    }
                ],
            ),
            "replies[0].tool_calls[1].id 'c1' is used twice in this message",
        ),
        (
            write_session(
                tmp_path,
                replies=[
                    {
                        "role": "assistant",
                        "content": "a",
                        "tool_calls": [call("c1", name="rm_rf")],
                    }
                ],
            ),
            "replies[0].tool_calls[0] calls unknown tool 'rm_rf'",
        ),
        (
            write_session(tmp_path, workspace="nowhere"),
            "field 'workspace' names nowhere, which is not a folder",
        ),
    ]
    for path, expected in cases:
        with pytest.raises(SessionFileError) as raised:
            load_session(path)
        assert str(raised.value) == f"{path}: {expected}"
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": ', encoding="utf-8")
    with pytest.raises(
        SessionFileError,
        match=r"broken.json: not valid JSON \(Expecting value, line 1 column 10\)",
    ):
        load_session(broken)
    with pytest.raises(SessionFileError, match=r"absent.json: no such session file$"):
        load_session(tmp_path / "absent.json")


# --- transcript files
# ---------------------------------------------------------------------

TRANSCRIPT_ERRORS = [
    (
        "list.json",
        "[1, 2",
        "not valid JSON (Expecting ',' delimiter, line 1 column 6)",
    ),
    (
        "bad.jsonl",
        '{"role": "user", "content": "a"}\n\n{"role": "user"\n',
        "line 3 is not valid JSON (Expecting ',' delimiter, column 16)",
    ),
    # no known shape: one line naming every shape tried and what it missed
    ("object.json", '{"conversation": []}', "not a known agent log: tried claude-code ("),
    ("messages.json", '{"messages": "hi"}', "not a known agent log: tried claude-code ("),
    ("empty.json", "[]", "not a known agent log: tried claude-code ("),
    ("number.json", "42", "not a known agent log: tried claude-code ("),
    ("item.json", '[{"role": "user", "content": "u"}, 7]', "not a known agent log"),
    (
        "string_calls.json",
        json.dumps(
            HEAD + [{"role": "assistant", "content": "", "tool_calls": "[{'id': 1}]"}]
        ),
        "messages[2].tool_calls is not valid JSON (Expecting property name",
    ),
    (
        "calls_object.json",
        json.dumps(
            HEAD + [{"role": "assistant", "content": "", "tool_calls": {"id": "c1"}}]
        ),
        "messages[2].tool_calls must be a list, got dict",
    ),
    (
        "orphan.json",
        json.dumps(HEAD + [{"role": "tool", "tool_call_id": "c7", "content": "x"}]),
        "messages[2]: tool result for call 'c7' answers no open call of the assistant "
        "message before it",
    ),
    (
        "orphan.jsonl",
        "".join(
            json.dumps(m) + "\n\n"
            for m in HEAD + [{"role": "tool", "tool_call_id": "c7", "content": "x"}]
        ),
        "line 5: tool result for call 'c7' answers no open call of the assistant "
        "message before it",
    ),
    (
        "unknown_tool.json",
        json.dumps(
            {
                "tools": [{"type": "function", "function": {"name": "read_file"}}],
                "messages": HEAD
                + [
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [call("c1", name="rm_rf")],
                    }
                ],
            }
        ),
        "messages[2].tool_calls[0].function.name calls unknown tool 'rm_rf'; the file "
        "declares read_file",
    ),
    (
        "tools.json",
        json.dumps({"tools": [{"type": "function", "function": {}}], "messages": HEAD}),
        "tools[0].function.name is missing",
    ),
    (
        "tools_object.json",
        json.dumps({"tools": {"read_file": {}}, "messages": HEAD}),
        "field 'tools' must be a list of tool declarations",
    ),
]


@pytest.mark.parametrize(
    "name, text, expected", TRANSCRIPT_ERRORS, ids=[case[0] for case in TRANSCRIPT_ERRORS]
)
def test_transcript_file_errors_name_file_and_field(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TranscriptFileError) as raised:
        load_transcript(path)
    assert str(raised.value).startswith(f"{path}: {expected}")


def test_unreadable_transcript_files_are_named(tmp_path):
    with pytest.raises(TranscriptFileError, match=r"absent.json: no such log file$"):
        load_transcript(tmp_path / "absent.json")
    with pytest.raises(TranscriptFileError, match=r": is a folder, not a log file$"):
        load_transcript(tmp_path)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"role": "user", "content": "caf\xe9"}]')
    with pytest.raises(
        TranscriptFileError, match=r"latin.json: not UTF-8 text \(byte 33\)$"
    ):
        load_transcript(latin)


def test_parse_names_its_source():
    with pytest.raises(
        TranscriptFileError, match=r"^pasted: not a known agent log: tried claude-code"
    ):
        parse_transcript("[]", "pasted")


# --- the command line: one line on stderr, exit status 2
# ---------------------------------


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "minilib", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["compress", "missing.json"],
            "python -m minilib: error: missing.json: no such log file",
        ),
        (
            ["compress", "bad.json"],
            "python -m minilib: error: bad.json: not valid JSON (Expecting "
            "value, "
            "line 1 column 1)",
        ),
        (
            ["compress", "bad.json", "--threshold", "0"],
            "python -m minilib compress: error: argument --threshold: "
            "expected a number >= 1, got 0",
        ),
        (
            ["compress", "bad.json", "--protect-tail", "-1"],
            "python -m minilib compress: error: argument --protect-tail: "
            "expected a number >= 0, got -1",
        ),
        (
            ["compress", "bad.json", "--head-chars", "ten"],
            "python -m minilib compress: error: argument --head-chars: "
            "expected a whole number, got 'ten'",
        ),
        (
            ["compress"],
            "python -m minilib compress: error: the following arguments are required: "
            "file",
        ),
        (
            ["run", "--session", "bad.json"],
            "python -m minilib: error: bad.json: not valid JSON (Expecting value, "
            "line 1 column 1)",
        ),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(tmp_path, args, expected):
    (tmp_path / "bad.json").write_text("nope", encoding="utf-8")
    result = cli(*args, cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", expected + "\n")
    assert not (tmp_path / "out").exists()  # nothing written on a failed call


def test_the_unknown_shape_line_says_what_each_shape_missed(tmp_path):
    path = tmp_path / "item.json"
    path.write_text('[{"role": "user", "content": "u"}, 7]', encoding="utf-8")
    with pytest.raises(TranscriptFileError) as raised:
        load_transcript(path)
    text = str(raised.value)
    assert "\n" not in text and "openai-chat (no 'role' in item[1])" in text
    assert "swe-agent (no 'history' list)" in text


def test_two_messages_a_line_in_a_json_file_load_by_content(tmp_path):
    # the shape is read from the content, not the file name
    path = tmp_path / "lines.json"
    path.write_text(
        '{"role": "user", "content": "a"}\n{"role": "user", "content": "b"}\n'
    )
    assert [m["content"] for m in load_transcript(path).messages] == ["a", "b"]


def test_an_image_part_is_skipped_and_said_so(tmp_path):
    path = tmp_path / "image.json"
    image = {"type": "image_url", "image_url": {"url": "x"}}
    path.write_text(
        json.dumps(
            [{"role": "user", "content": [{"type": "text", "text": "see"}, image]}]
        )
    )
    log = load_transcript(path)
    assert log.messages == [{"role": "user", "content": "see"}]
    assert any("image" in why for _, why in log.skipped + log.notes)


def test_a_counter_of_one_message_where_a_list_counter_belongs_is_named():
    """Chapter 2's exercise 4: a per-message counter passed as count_tokens."""
    with pytest.raises(TypeError) as raised:
        run_session(load_session(), Settings(), count_tokens=estimate_message_tokens)
    assert str(raised.value).startswith(
        "count_tokens must take a list of messages and return an int, like "
        "estimate_tokens; given a one-message list it raised TypeError"
    )
    with pytest.raises(TypeError, match="count_tokens must be a function, got int"):
        ContextWindow(1200, [], 5)
    with pytest.raises(TypeError, match="; it returned str"):
        ContextWindow(1200, [], lambda messages: "12")


def test_a_round_past_the_session_s_end_is_named_not_walked():
    """Chapter 5's exercise loops over rounds: round 14 of a 14-round session is no
    round at all (it used to give the final list's walk, answer included)."""
    for past in (14, 99):
        with pytest.raises(
            ValueError, match=r"past the end of the session \(rounds 0-13\)"
        ):
            window_before_round(load_session(), Settings(), past)
    messages, _ = window_before_round(load_session(), Settings(), 13)
    assert messages[-1]["role"] == "tool"  # round 13 is governed before its answer
