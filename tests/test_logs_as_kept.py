"""Logs as their harness keeps them: constructed fixtures (data/logs/as_kept/) of what a
harness writes beside the model's own turns, each read and replayed through the
production window with its guarantees (every call answered right after it, the head
kept, the window under the threshold or a stated stop)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_logs import check_pairing

from minilib import Settings
from minilib.agents.pi.reader import COMPACTION_PREFIX, COMPACTION_SUFFIX
from minilib.logs import NEEDS, SHAPES, LogFileError, load_log
from minilib.logs.base import INTERRUPTED_TEXT, REPAIRS, RecordedUsage
from minilib.logs.replay import load_transcript, parse_transcript, replay_transcript
from minilib.model import scripted_summary
from minilib.ranges import closed_range, why_not_closed
from minilib.scale.bounded import BoundedSummarizer, parse_line
from minilib.session import DATA_DIR
from minilib.tokens import estimate_tokens

KEPT = DATA_DIR / "logs" / "as_kept"
DEVELOPER = KEPT / "codex_desktop_developer_turns.jsonl"


def replayed_within_guarantees(log, threshold):
    """The replay at `threshold` (production window), after checking what each model
    call was sent: paired, the head kept, within the threshold."""
    run = replay_transcript(log, Settings(threshold=threshold, fold_user_turns=True))
    head = [m for m in log.messages[:3] if m["role"] in ("system", "user")]
    windows = [
        c["input"] for c in run.tracer.events("model_call") if c["purpose"] == "decision"
    ]
    assert len(windows) == len(run.rounds)
    for window in windows:
        check_pairing(window)
        assert estimate_tokens(window) <= threshold
        if not log.compactions:
            assert window[: len(head)] == head
    if run.overflow is None:
        assert len(run.rounds) == log.rounds
    else:  # a stop only where the protected content alone does not fit, said so
        said = str(run.overflow)
        assert "Protected content: head (system + task" in said
        assert (
            run.overflow.head_tokens
            + run.overflow.kept_tokens
            + (run.overflow.summary_tokens)
            > threshold
        )
    return run


# --- developer and system messages between user turns ---------------------------------


def test_developer_messages_between_turns_are_read_in_place():
    log = load_transcript(DEVELOPER)
    roles = "".join(m["role"][0] for m in log.messages)
    assert roles == "ssuuatatatatasuatatatasuata"
    later = [i for i, m in enumerate(log.messages) if m["role"] == "system" and i > 1]
    assert [log.messages[i]["content"].split(">")[0] for i in later] == [
        "<permissions instructions",
        "<collaboration instructions",
    ]


def test_a_system_message_after_the_head_folds_only_with_later_user_turns():
    log = load_transcript(DEVELOPER)
    messages = log.messages
    system = next(i for i, m in enumerate(messages) if m["role"] == "system" and i > 1)
    end = system + 3  # the developer message, the next user turn, one call
    while messages[end]["role"] == "tool":
        end += 1
    # after the head (two system messages, the environment context) and the task
    assert why_not_closed(messages, 4, end) == f"message {system} is a system message"
    assert why_not_closed(messages, 4, end, fold_user_turns=True) is None
    # the head's own system messages never are in a range: it starts after them
    assert closed_range(messages, 4, fold_user_turns=True).start == 3


def test_the_summary_quotes_a_folded_system_message_whole():
    message = {"role": "system", "content": "<permissions instructions>never ask"}
    text = scripted_summary([message])
    assert text == "- 系统: <permissions instructions>never ask"
    # condensed, it is counted beside the user turns, and read back as counted
    summarizer = BoundedSummarizer(32)
    turns = [
        {"role": "user", "content": "next task " * 20},
        message,
        {"role": "assistant", "content": "ok " * 40},
    ]
    condensed = summarizer(turns)
    first = condensed.splitlines()[0]
    assert first.startswith("- ⋯ earlier (")
    state = parse_line(first)
    assert (state.user_turns, state.system_messages) == (1, 1)


@pytest.mark.parametrize("threshold", [600, 1200, 8000, 32000])
def test_a_log_with_developer_messages_between_turns_replays_to_its_end(threshold):
    log = load_transcript(DEVELOPER)
    run = replayed_within_guarantees(log, threshold)
    assert run.overflow is None and len(run.rounds) == log.rounds == 11
    if threshold == 600:  # the developer messages were folded, quoted whole
        summaries = [
            c["reply"]
            for c in run.tracer.events("model_call")
            if c["purpose"] == "summary"
        ]
        assert any("- 系统: <permissions instructions>" in s for s in summaries)


# --- Cline as Cline keeps it: a resumed task, and ui_messages.json beside it ---------

CLINE = KEPT / "cline_task"
HISTORY, UI = CLINE / "api_conversation_history.json", CLINE / "ui_messages.json"


def test_a_resumed_plan_gets_an_interrupted_result_and_keeps_the_resumption():
    log = load_transcript(HISTORY)
    plan, result, resumed = log.messages[-3:]
    [call] = plan["tool_calls"]
    assert call["function"]["name"] == "plan_mode_respond"
    assert result["tool_call_id"] == call["id"] and result["content"] == INTERRUPTED_TEXT
    assert resumed["role"] == "user" and resumed["content"].startswith(
        "[TASK RESUMPTION] This task was interrupted 2 hours ago."
    )
    assert "The plan is fine." in resumed["content"]
    [repair] = log.repairs
    assert (repair.kind, repair.where) == ("interrupted-call", "messages[5]")
    assert f"repaired 1 x {REPAIRS['interrupted-call']} (first: messages[5])" in (
        log.describe()
    )


def test_a_call_left_open_at_the_very_end_gets_no_result():
    # no message follows it: the next call never came, so nothing is added
    history = json.loads(HISTORY.read_text(encoding="utf-8"))[:-1]
    log = parse_transcript(json.dumps(history), "history.json")
    assert log.messages[-1]["tool_calls"] and not log.repairs
    last = len(log.messages) - 1
    noted = (f"messages[{last}] call 'toolu_l03'", "tool call without a recorded result")
    assert noted in log.notes


def test_the_usage_beside_the_history_is_paired_with_its_calls_in_order():
    log = load_transcript(HISTORY)
    requests = [
        (index, json.loads(entry["text"]))
        for index, entry in enumerate(json.loads(UI.read_text(encoding="utf-8")))
        if entry.get("say") == "api_req_started"
    ]
    replies = [i for i, m in enumerate(log.messages) if m["role"] == "assistant"]
    assert len(requests) == len(replies) == 3
    assert log.usage == [
        RecordedUsage(
            reply,
            said["tokensIn"] + said["cacheReads"] + said["cacheWrites"],
            said["cacheReads"],
            said["cacheWrites"],
            f"ui_messages.json[{index}]",
        )
        for (index, said), reply in zip(requests, replies)
    ]
    assert "usage of 3 API requests read from the file beside it" in log.describe()


def test_ui_messages_alone_says_what_it_is_and_holds():
    entries = json.loads(UI.read_text(encoding="utf-8"))
    said = [json.loads(e["text"]) for e in entries if e.get("say") == "api_req_started"]
    prompt = sum(s["tokensIn"] + s["cacheReads"] + s["cacheWrites"] for s in said)
    with pytest.raises(LogFileError) as error:
        load_log(UI)
    message = str(error.value)
    assert message.startswith(f"{UI}: a Cline ui_messages.json")
    assert "not a known agent log" not in message and "\n" not in message
    assert f"{len(said)} API requests" in message
    assert f"{prompt:,} input tokens" in message
    assert f"{sum(s['tokensOut'] for s in said):,} output tokens" in message
    assert f"cost ${sum(s['cost'] for s in said):.4f}" in message


def _task_folder(tmp_path, ui_text):
    (tmp_path / "api_conversation_history.json").write_text(
        HISTORY.read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "ui_messages.json").write_text(ui_text, encoding="utf-8")
    return tmp_path / "api_conversation_history.json"


def test_a_damaged_ui_messages_beside_the_history_is_a_note_not_a_failure(tmp_path):
    entries = json.loads(UI.read_text(encoding="utf-8"))
    broken = [dict(e) for e in entries]
    second = [i for i, e in enumerate(broken) if e.get("say") == "api_req_started"][1]
    broken[second]["text"] = '{"tokensIn": 3, "tokensOut":'  # cut mid-write
    log = load_transcript(_task_folder(tmp_path, json.dumps(broken)))
    assert log.usage == [] and log.rounds == 3
    [(where, why)] = [note for note in log.notes if note[0] == "ui_messages.json"]
    assert why == (
        f"usage record beside it not read: ui_messages.json: [{second}].text is not "
        "the JSON of an API request"
    )
    for text in ("[{", "not json"):  # the file itself cut, or not JSON at all
        log = load_transcript(_task_folder(tmp_path, text))
        assert log.usage == [] and "usage record beside it not read: not JSON" in (
            log.describe()
        )
    # alone, the same damage is one clear line, never a trace
    (tmp_path / "ui_messages.json").write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(LogFileError, match=r"\.text is not the JSON of an API request"):
        load_log(tmp_path / "ui_messages.json")
    negative = [dict(e) for e in entries]
    negative[second]["text"] = json.dumps({"tokensIn": -1, "tokensOut": 2})
    (tmp_path / "ui_messages.json").write_text(json.dumps(negative), encoding="utf-8")
    with pytest.raises(LogFileError, match="tokensIn must be a whole number >= 0"):
        load_log(tmp_path / "ui_messages.json")


def test_requests_that_do_not_match_the_replies_are_not_paired(tmp_path):
    entries = json.loads(UI.read_text(encoding="utf-8"))
    first = next(e for e in entries if e.get("say") == "api_req_started")
    log = load_transcript(_task_folder(tmp_path, json.dumps([*entries, first])))
    assert log.usage == []
    assert (
        "ui_messages.json",
        "usage record beside it not paired: 4 API requests for 3 assistant messages "
        "(they pair one for one, in order)",
    ) in log.notes


def test_compress_shows_the_recorded_usage_of_a_cline_task(tmp_path):
    command = ["compress", str(HISTORY), "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "minilib", *command],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    log = load_transcript(HISTORY)
    total = sum(usage.input_tokens for usage in log.usage)
    assert f"recorded usage: 3 calls; the API counted {total:,} input tokens" in (
        done.stdout
    )
    document = json.loads((tmp_path / "rounds.json").read_text(encoding="utf-8"))
    assert document["recorded_usage"]["recorded_total"] == total


@pytest.mark.parametrize("threshold", [300, 8000, 32000])
def test_the_cline_task_replays_within_the_windows_guarantees(threshold):
    log = load_transcript(HISTORY)
    run = replayed_within_guarantees(log, threshold)
    assert run.overflow is None
    if threshold == 300:
        assert run.compressions


# --- pi's compactions, followed as the model saw them ----------------------------------

PI = KEPT / "pi_compacted.jsonl"


def _pi_entries():
    return [json.loads(line) for line in PI.read_text(encoding="utf-8").splitlines()]


def test_pis_compactions_put_the_summary_and_the_kept_entries_in_place():
    log = load_transcript(PI)
    entries = _pi_entries()
    recorded = [e for e in entries if e.get("type") == "compaction"]
    assert len(log.compactions) == len(recorded) == 2
    ids = [e.get("id") for e in entries]
    for compaction, entry in zip(log.compactions, recorded):
        summary, *kept = compaction.replacement
        assert summary == {
            "role": "user",
            "content": COMPACTION_PREFIX + entry["summary"] + COMPACTION_SUFFIX,
            "timestamp": entry["timestamp"],  # when pi wrote it
        }
        # the kept entries are the messages from the first kept one to the compaction
        first = ids.index(entry["firstKeptEntryId"])
        origin = f"line {first + 1}"
        start = log.origins.index(origin)
        assert [m["content"] for m in kept] == [
            m["content"] for m in log.messages[start : compaction.at]
        ]
        assert compaction.kept == 0
        assert compaction.detail == f"{entry['tokensBefore']:,} tokens before"


def test_the_compactions_command_sets_tokens_before_beside_the_labs_count(capsys):
    from minilib.cli.main import main
    from minilib.measure.compactions import measure_compactions, replaced_history

    log = load_transcript(PI)
    reports = measure_compactions(log)
    for number, (report, entry) in enumerate(
        zip(reports, [e for e in _pi_entries() if e.get("type") == "compaction"])
    ):
        assert report.tokens_before == entry["tokensBefore"]
        assert report.tokens_before_field == "compaction.tokensBefore"
        assert report.lab_tokens_before == estimate_tokens(replaced_history(log, number))
    assert main(["compactions", str(PI)]) == 0
    out = capsys.readouterr().out
    assert "the agent's own compactions: 2" in out
    for report in reports:
        assert (
            f"trigger not recorded, {report.tokens_before:,} tokens before "
            "(compaction.tokensBefore)"
        ) in out
        assert (
            f"the lab's count of the window it replaced: {report.lab_tokens_before:,} "
            "tokens"
        ) in out


@pytest.mark.parametrize("threshold", [300, 8000, 32000])
def test_pis_compactions_are_followed_in_the_replay(threshold):
    log = load_transcript(PI)
    run = replayed_within_guarantees(log, threshold)
    assert run.overflow is None
    assert len(run.tracer.events("agent_compaction")) == 2
    assert all("the replay went on from them" in line for line in run.compaction_lines())


def _pi_mutated(change):
    entries = _pi_entries()
    [first, _] = [e for e in entries if e.get("type") == "compaction"]
    change(first)
    return "\n".join(json.dumps(e) for e in entries)


def test_a_compaction_without_its_first_kept_entry_is_a_named_repair():
    text = _pi_mutated(lambda entry: entry.pop("firstKeptEntryId"))
    log = parse_transcript(text, "pi.jsonl")
    [repair] = log.repairs
    assert (repair.kind, repair.where) == ("missing-kept-entry", "line 11")
    assert repair.detail == "has no firstKeptEntryId"
    first = log.compactions[0]
    assert len(first.replacement) == 1  # the summary alone, as pi rebuilds it
    assert f"repaired 1 x {REPAIRS['missing-kept-entry']} (first: line 11)" in (
        log.describe()
    )
    with pytest.raises(LogFileError) as error:
        parse_transcript(text, "pi.jsonl", strict=True)
    assert str(error.value) == "pi.jsonl: line 11: compaction has no firstKeptEntryId"


@pytest.mark.parametrize(
    "field, value, said",
    [
        ("summary", None, "line 11: compaction summary must be a string"),
        (
            "tokensBefore",
            "31k",
            "line 11: compaction tokensBefore must be a whole number >= 0",
        ),
    ],
)
def test_a_damaged_compaction_is_one_clear_line(field, value, said):
    text = _pi_mutated(lambda entry: entry.update({field: value}))
    with pytest.raises(LogFileError) as error:
        parse_transcript(text, "pi.jsonl")
    assert str(error.value) == f"pi.jsonl: {said}"


# --- a log of no known shape: the smallest conversion, and the documented one --------

CONVERT_DOC = Path(__file__).resolve().parent.parent / "docs" / "convert_your_log.md"
HOMEMADE = {
    "task": "Find why the build is slow.",
    "total_steps": 3,
    "steps": [
        {
            "thought": "List the build files and read the Makefile.",
            "tool_calls": [
                {"name": "ls", "args": {"path": "build"}},
                {"name": "read", "args": {"path": "build/Makefile"}},
            ],
            "observations": ["Makefile\nrules.mk", "all:\n\tsleep 30 && cc main.c"],
        },
        {
            "thought": "The rule sleeps 30 s before compiling; removing it.",
            "tool_calls": [{"name": "edit", "args": {"path": "build/Makefile"}}],
            "observations": ["edited build/Makefile"],
        },
        {"thought": "The build waited 30 s for nothing; the sleep is gone."},
    ],
}


def test_a_homemade_trajectory_is_refused_with_the_smallest_conversion():
    with pytest.raises(LogFileError) as error:
        parse_transcript(json.dumps(HOMEMADE), "trajectory.json")
    message = str(error.value)
    assert "not a known agent log; closest: harbor-atif" in message
    assert f"to read it as harbor-atif, it needs {NEEDS['harbor-atif']}" in message
    assert f"or convert it to openai-chat: {NEEDS['openai-chat']}" in message
    assert "docs/convert_your_log.md" in message and "\n" not in message
    assert set(NEEDS) == {name for name in SHAPES if not name.startswith("aider")}


def test_the_conversion_the_docs_show_makes_a_readable_log(tmp_path):
    text = CONVERT_DOC.read_text(encoding="utf-8")
    [snippet] = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(snippet.strip().splitlines()) <= 12  # about ten lines
    # the example the page shows is itself a trajectory of that shape
    [example] = re.findall(r"```json\n(.*?)```", text, re.S)
    for trajectory in (json.loads(example), HOMEMADE):
        source, converted = tmp_path / "trajectory.json", tmp_path / "converted.json"
        source.write_text(json.dumps(trajectory), encoding="utf-8")
        script = tmp_path / "convert.py"
        script.write_text(snippet, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script), str(source), str(converted)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        log = load_transcript(converted)
        assert log.shape == "openai-chat" and not log.repairs
        assert log.rounds == len(trajectory["steps"])
        calls = [c for s in trajectory["steps"] for c in s.get("tool_calls") or []]
        results = [o for s in trajectory["steps"] for o in s.get("observations") or []]
        assert [
            json.loads(c["function"]["arguments"])
            for m in log.messages
            for c in m.get("tool_calls") or ()
        ] == [c["args"] for c in calls]
        assert [m["content"] for m in log.messages if m["role"] == "tool"] == results
        replayed_within_guarantees(log, 300)


# --- calls answered after later assistant messages ------------------------------------

LATE = KEPT / "chat_calls_answered_late.json"


def test_calls_answered_after_a_run_of_assistant_messages_are_paired_in_place():
    log = load_transcript(LATE)
    written = json.loads(LATE.read_text(encoding="utf-8"))
    calls = [c["id"] for m in written for c in m.get("tool_calls") or ()]
    pairs = check_pairing(log.messages)
    assert [call_id for _, call_id, _ in pairs] == calls  # each right after its call
    late = [r for r in log.repairs if r.kind == "late-result"]
    assert len(late) == len(log.repairs) == 3  # e1, e2 and e4 came after a later call
    assert {m["content"] for m in log.messages if m["role"] == "tool"} == {
        m["content"] for m in written if m["role"] == "tool"
    }


def test_a_call_never_answered_gets_the_interrupted_result_and_folds():
    written = json.loads(LATE.read_text(encoding="utf-8"))
    unanswered = [m for m in written if m.get("tool_call_id") != "call_e3"]
    log = parse_transcript(json.dumps(unanswered), "late.json")
    [added] = [m for m in log.messages if m.get("synthetic")]
    assert added["tool_call_id"] == "call_e3" and added["content"] == INTERRUPTED_TEXT
    run = replayed_within_guarantees(log, 600)
    assert run.overflow is None and run.compressions


@pytest.mark.parametrize("threshold", [600, 8000, 32000])
def test_late_answered_calls_replay_within_the_windows_guarantees(threshold):
    run = replayed_within_guarantees(load_transcript(LATE), threshold)
    assert run.overflow is None
    # below what the last group and the head need alone, the stop says so
    stopped = replayed_within_guarantees(load_transcript(LATE), 300)
    assert "over the threshold on their own" in str(stopped.overflow)
