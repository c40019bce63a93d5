"""minilib.logs: every fixture's shape, messages, pairing, system prompt and skips."""

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from message_builders import (
    OPENING,
    REPAIRABLE,
    flat_tool_calls,
    refused_unless_repairable,
    tool_call,
)

from minilib import Settings
from minilib.logs import (
    NEEDS,
    SHAPES,
    LogFileError,
    conversion_hint,
    load_log,
    parse_log,
)
from minilib.logs.base import Builder, make_call
from minilib.logs.replay import (
    TranscriptFileError,
    load_transcript,
    parse_transcript,
    replay_transcript,
)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "data" / "logs"
BOOK = "bookkeeping"


def roles(log) -> str:
    """'s u a t', with '*' on user messages marked as environment output."""
    return " ".join(
        m["role"][0] + ("*" if m.get("observation") else "") for m in log.messages
    )


def check_pairing(messages, allow_open=False):
    """(assistant index, call id, tool index) of every answer, checked positionally.

    A tool message must answer an open call of the latest assistant message, with
    only tool messages between them; ids need not be unique across turns.
    """
    pairs, open_calls, caller = [], [], None
    for index, message in enumerate(messages):
        assert set(message) <= {
            "role",
            "content",
            "tool_calls",
            "tool_call_id",
            "name",
            "error",
            "observation",  # the lab's own marks on environment output
            "output_id",
            "repaired",  # the reader's marks on what it repaired
            "synthetic",
            "timestamp",  # when the log says the record was written
        }, index
        assert message["role"] in ("system", "user", "assistant", "tool")
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, (index, message["tool_call_id"])
            open_calls.remove(message["tool_call_id"])
            pairs.append((caller, message["tool_call_id"], index))
            assert isinstance(message["content"], str)
            if "error" in message:
                assert set(message["error"]) == {"code", "message"}
            continue
        assert allow_open or not open_calls, f"calls {open_calls} unanswered at {index}"
        calls = message.get("tool_calls") or []
        if message["role"] == "assistant" and calls:
            assert message["content"] is None or message["content"]
        else:
            assert isinstance(message["content"], str), index
        for call in calls:
            assert call["type"] == "function" and call["function"]["name"]
            json.loads(call["function"]["arguments"])  # a JSON string
        open_calls, caller = [call["id"] for call in calls], index
    assert allow_open or not open_calls
    return pairs


NO_SHAPE_SHARES = "not a known agent log, and no shape's example shares a field name"

CASES = {  # file: (shape, roles, system source, skipped reasons, notes reasons)
    "aider.chat.history.md": (
        "aider-chat-md",
        "u a u* a u* u a u* a u a",
        "not recorded",
        {
            "aider's own output: shown to the person, not sent to the model": 6,
            "aider command: handled by aider, not sent to the model": 2,
            "another run: a separate conversation (read: the last run with a turn)": 1,
        },
        {
            "command output added to the chat: in aider's run_output words": 1,
            "system prompt, repo map and file contents: sent with every call, "
            "not in the chat history": 1,
        },
    ),
    "aider.llm.history": (
        "aider-llm-history",
        "s u a u* a u a",  # the files and aider's "Ok" open the first window
        "TO LLM at line 1",
        {"weak-model call (a commit message): not part of the conversation": 1},
        {},
    ),
    "openai_chat.json": (
        "openai-chat",
        "s u a t t a t a",
        "messages[0]",
        {
            "image part: cannot be measured as text": 1,
            "reasoning_content: not sent back as content": 1,
        },
        {},
    ),
    "openai_request.json": ("openai-request", "s u a t a", "messages[0]", {}, {}),
    "openai_chat_split_calls.json": (
        "openai-chat",
        "s u a t t a t t a t a t a",
        "messages[0]",
        {},
        {"one response's calls split over consecutive assistant messages: merged": 2},
    ),
    "openai_response.json": (
        "openai-response",
        "s u a",
        "messages[0]",
        {"another choice: an alternative not kept": 1},
        {"tool call without a recorded result": 2},
    ),
    "anthropic_request.json": (
        "anthropic-messages",
        "s u a t t a t u a",
        "field 'system'",
        {
            "image block: cannot be measured as text": 1,
            "thinking block: not sent back as content": 1,
        },
        {},
    ),
    "claude_code_session.jsonl": (
        "claude-code",
        "u a t t a t a t a u a t u a t a",
        "not recorded",
        {
            f"file-history-snapshot: {BOOK}": 2,
            f"progress: {BOOK}": 2,
            f"queue-operation: {BOOK}": 1,
            f"system: {BOOK}": 1,
            "thinking block: not sent back as content": 2,
        },
        {},
    ),
    "codex_rollout.jsonl": (
        "codex-rollout",
        "s s u u a t t a t a t a t a t a u a t a t a",
        "session_meta.payload.base_instructions",
        {
            "event_msg user_message: repeats a response_item message": 2,
            "event_msg agent_message: repeats a response_item message": 2,
            f"turn_context: {BOOK}": 2,
            "reasoning: not sent back as content": 2,
            "web_search_call: run by the provider, no id and no output": 1,
        },
        {},
    ),
    "codex_compacted.jsonl": (
        "codex-rollout",
        "s s u u a t a t a t a u a t a t a t a u a t a",
        "session_meta.payload.base_instructions",
        {
            "event_msg user_message: repeats a response_item message": 3,
            "event_msg agent_message: repeats a response_item message": 3,
            f"turn_context: {BOOK}": 2,
            f"event_msg context_compacted: {BOOK}": 2,
            "reasoning: not sent back as content": 1,
        },
        {},
    ),
    "claude_code_compacted.jsonl": (
        "claude-code",
        "u a t t a t a u a t a t a t a",
        "not recorded",
        {
            f"file-history-snapshot: {BOOK}": 1,
            f"system: {BOOK}": 1,
            "thinking block: not sent back as content": 1,
        },
        {},
    ),
    "codex_event_users.jsonl": (
        "codex-rollout",
        "u a t a t t a u a t a",
        "not recorded",
        {
            "session_meta: no base_instructions recorded": 1,
            f"turn_context: {BOOK}": 1,
            "reasoning: not sent back as content": 1,
            "event_msg agent_message: repeats a response_item message": 1,
        },
        {},
    ),
    "sweagent_tools.traj": (
        "swe-agent",
        "s u a t a t a t a t a t a t",
        "history[0]",
        {"trajectory: step records repeating the history": 1},
        {},
    ),
    "sweagent_text.traj": (
        "swe-agent",
        "s u u a u* a u* a u* a u*",
        "history[0]",
        {},
        {"demonstration (is_demo): kept, it was sent to the model": 1},
    ),
    "sweagent_no_message_type.traj": (
        "swe-agent",
        "s u a u* a u* a u* a",
        "history[0]",
        {"trajectory: step records repeating the history": 1},
        {
            "no message_type: outputs told by position after an action, confirmed by "
            "the trajectory": 1
        },
    ),
    "mini_swe_agent.traj.json": (
        "mini-swe-agent",
        "s u a u* a u* a u* a",
        "messages[0]",
        {"exit record: the end of the run, never sent to the model": 1},
        {},
    ),
    "mini_swe_agent_list.json": ("mini-swe-agent", "s u a u* a", "messages[0]", {}, {}),
    "openhands_events.json": (
        "openhands-events",
        "s u a t t a t a t a t a t a",
        "events[0].args.content",
        {
            "recall: rendered from a template, its text is not recorded": 2,
            f"agent_state_changed observation: {BOOK}": 2,
            f"null observation: {BOOK}": 1,
            f"change_agent_state action: {BOOK}": 1,
        },
        {"finish call: sent back as assistant text, as OpenHands does": 1},
    ),
    "openhands_eval.json": (
        "openhands-eval",
        "s u a t a t t u* a u a t a",
        "history[0].args.content",
        {"run action without tool_call_metadata: no model turn": 1},
        {"finish call: sent back as assistant text, as OpenHands does": 1},
    ),
    "gemini_session.json": (
        "gemini-cli",
        "u a t t t a t a u a t a",
        "not recorded",
        {
            "info message: shown to the person, not sent to the model": 1,
            "warning message: shown to the person, not sent to the model": 1,
            "thoughts: not sent back as content": 1,
        },
        {},
    ),
    "gemini_session.jsonl": (
        "gemini-cli",
        "u a t a u a t a",
        "not recorded",
        {"rewound by line 9: taken back": 2, "$set: session metadata update": 1},
        {},
    ),
    "cline_task.json": (
        "cline",
        "u a t t u a t u a t u a t u a u a t u a t u a t u a",
        "not recorded",
        {"image block: cannot be measured as text": 1},
        {
            "the replies' own metrics give each prompt whole but not how much of it "
            "the cache read and how much it wrote: the bill counts it all as read (a "
            "lower bound); the ui_messages.json of the same task records the split": 1
        },
    ),
    "claude_stream.jsonl": (
        "claude-stream-json",
        "u a t t a t a t a t a t a t a t a",
        "not recorded",
        {
            "subagent line (parent_tool_use_id): not the main window": 3,
            "system init: the run's settings, no message": 1,
            "result: the run's outcome, repeats the last reply": 1,
        },
        {},
    ),
    "openhands_v1_output.jsonl": (
        "openhands-v1",
        "u a t t a t a t a t a a t",
        "not recorded",
        {
            f"ConversationStateUpdateEvent: {BOOK}": 3,
            "another task's record: one task is read at a time": 2,
            "reasoning: not sent back as content": 1,
        },
        {
            "instruction: the task, as the first user turn": 1,
            "the run's input over all its calls, 61,234 tokens: a total, not a call's "
            "usage, so not set beside a call": 1,
        },
    ),
    "harbor_trajectory.json": (
        "harbor-atif",
        "s u a t t a t a t a t a t a t u a t a",
        "steps[0].message",
        {
            "sidechain step (extra.is_sidechain): a subagent's window": 2,
            "reasoning: not sent back as content": 1,
        },
        {},
    ),
    "pi_session.jsonl": (
        "pi-session",
        "u a t t a t u u a t u a t a",
        "not recorded",
        {
            "session header: metadata": 1,
            f"model_change: {BOOK}": 1,
            f"thinking_level_change: {BOOK}": 1,
            f"custom: {BOOK}": 1,
            "on an abandoned branch: not in the window": 2,
            "thinking block: not sent back as content": 1,
            "image block: cannot be measured as text": 1,
            "assistant stopped by aborted: not sent back": 1,
            "result of a call of a stopped assistant: not sent back": 1,
        },
        {
            "branch_summary: the branch left behind, sent as user text": 1,
            "custom_message: an extension's message, sent as user text": 1,
        },
    ),
    "goose_session.jsonl": (
        "goose-session",
        "u a t t a t a t a t a t a",
        "not recorded",
        {
            "session metadata": 1,
            "content for the person only (audience): not sent": 1,
            "thinking: not sent back as content": 1,
            "toolRequest that did not parse: never ran": 1,
            "response to a request that did not parse": 1,
            "agentVisible false: kept out of the model's context": 1,
        },
        {},
    ),
    "opencode_export.json": (
        "opencode-export",
        "s u a t t a t a t a u a t a",
        "messages[1].info.system",
        {
            "file part: its text is sent as the text part beside it": 1,
            "reasoning part: not kept as text": 1,
            f"step-finish part: {BOOK}": 4,
            f"patch part: {BOOK}": 1,
            "assistant message with an error: not sent back": 1,
        },
        {},  # the output opencode pruned is a clearing, not a note
    ),
    "langchain_messages.json": (
        "langchain-messages",
        "s u a t t a t a t a t a",
        "messages[0]",
        {
            "thinking part: not sent back as content": 1,
            "tool_use part: the same call as in tool_calls": 2,
            "invalid tool call: its arguments did not parse, it never ran": 1,
        },
        {},
    ),
    "langgraph_state.json": ("langchain-messages", "u a t t a", "not recorded", {}, {}),
    "openai_agents_session.json": (
        "responses-items",
        "u a t t a t a t a u a",
        "not recorded",
        {
            "reasoning: not sent back as content": 1,
            "web_search_call: run by the provider, no id and no output": 1,
        },
        {},
    ),
}


def test_every_fixture_on_disk_is_a_case_or_a_broken_example():
    # the files in data/logs/ are written by hand: each must be checked here
    on_disk = {path.name for path in FIXTURES.iterdir() if path.is_file()}
    assert on_disk == set(CASES) | {"damaged.jsonl", "unknown_shape.json"}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("threshold", [600, 1200])
def test_each_fixture_replays_keeping_every_call_paired(name, threshold):
    messages = load_transcript(FIXTURES / name).messages
    run = replay_transcript(messages, Settings(threshold=threshold, fold_user_turns=True))
    # it runs to the end, or stops because what nothing may cut is over the threshold
    assert run.overflow is not None or len(run.rounds) == sum(
        m["role"] == "assistant" for m in messages
    )
    windows = [
        call["input"]
        for call in run.tracer.events("model_call")
        if call["purpose"] == "decision"
    ]
    unanswered = name == "openai_response.json"  # the reply's calls have no results
    for window in windows:  # each tool result in a window follows its call
        check_pairing(window, allow_open=unanswered)
    check_pairing(run.final_messages, allow_open=unanswered)


def test_every_shape_has_a_fixture():
    assert {case[0] for case in CASES.values()} == set(SHAPES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_fixture_loads_in_its_shape(name):
    shape, expected_roles, system_source, skipped, notes = CASES[name]
    log = load_log(FIXTURES / name)
    assert (log.shape, log.path) == (shape, FIXTURES / name)
    assert roles(log) == expected_roles
    assert log.system_source == system_source
    assert Counter(why for _, why in log.skipped) == Counter(skipped)
    assert Counter(why for _, why in log.notes) == Counter(notes)
    pairs = check_pairing(log.messages, allow_open=name == "openai_response.json")
    assert len(pairs) == sum(1 for m in log.messages if m["role"] == "tool")
    text = log.describe()
    assert f"shape: {shape}" in text and f"system prompt: {system_source}" in text
    for reason, count in skipped.items():
        assert f"{count} x {reason}" in text


SMALL = {
    "openai_request.json",
    "openai_response.json",
    "mini_swe_agent_list.json",
    "gemini_session.jsonl",
}  # short by design: each shows one quirk


@pytest.mark.parametrize("name", sorted(set(CASES) - SMALL))
def test_fixtures_have_a_long_output_for_compression_to_cut(name):
    log = load_log(FIXTURES / name)
    seen = log.messages + [m for c in log.compactions for m in c.replacement]
    assert max(len(m["content"] or "") for m in seen if m["role"] != "system") > 2000


def test_detection_is_by_content_not_by_file_name(tmp_path):
    renamed = tmp_path / "notes.txt"
    renamed.write_text((FIXTURES / "codex_rollout.jsonl").read_text(encoding="utf-8"))
    assert load_log(renamed).shape == "codex-rollout"
    text = (FIXTURES / "openhands_events.json").read_text(encoding="utf-8")
    assert parse_log(text, "events.jsonl").shape == "openhands-events"


# --- shape by shape ---------------------------------------------------------------------


def test_claude_code_merges_one_response_and_places_its_results_after_it():
    log = load_log(FIXTURES / "claude_code_session.jsonl")
    first = log.messages[1]
    assert (
        first["content"]
        == "I'll read the function and look for its tests at the same time."
    )
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_01", "toolu_02"]
    assert json.loads(first["tool_calls"][0]["function"]["arguments"]) == {
        "file_path": "ledgerlite/format.py"
    }
    assert [m["tool_call_id"] for m in log.messages[2:4]] == ["toolu_01", "toolu_02"]
    assert len(log.messages[2]["content"]) > 2000
    assert log.messages[5]["error"] == {"code": "TOOL_ERROR", "message": "Exit code 1"}
    assert log.messages[6]["content"] is None  # calls and no text
    # a user line with a tool_result and text: the result first, then the text
    assert log.messages[11]["tool_call_id"] == "toolu_05"
    assert log.messages[12] == {
        "role": "user",
        "content": "And please run the whole suite this time.",
        "timestamp": "2026-03-02T10:00:20.000Z",  # when its line was written
    }
    assert [m["content"] for m in log.messages if m["role"] == "user"][1].startswith(
        "Good."
    )


def test_codex_groups_parallel_calls_and_keeps_each_turn_once():
    log = load_log(FIXTURES / "codex_rollout.jsonl")
    assert log.messages[0]["content"].startswith("You are Codex")
    assert log.messages[1]["content"].startswith(
        "<permissions instructions>"
    )  # developer
    assert [c["id"] for c in log.messages[4]["tool_calls"]] == ["call_c1", "call_c2"]
    patch = log.messages[7]
    assert (
        patch["content"] == "I'll add the flag and a JSON renderer next to the text one."
    )
    arguments = json.loads(patch["tool_calls"][0]["function"]["arguments"])
    assert list(arguments) == ["input"] and arguments["input"].startswith(
        "*** Begin Patch"
    )
    assert log.messages[10]["error"] == {
        "code": "EXIT_1",
        "message": "FAILED tests/test_report.py::test_json_flag - KeyError: 'total'",
    }
    users = [m["content"] for m in log.messages if m["role"] == "user"]
    assert users[1:] == [
        "Add a --json flag to `tallyho report` that prints the totals as JSON.",
        "Thanks. Document the flag in the README too.",
    ]
    texts = [
        m["content"] for m in log.messages if m["role"] == "assistant" and m["content"]
    ]
    assert len(texts) == len(set(texts))  # agent_message events not counted twice


def test_codex_user_turns_that_exist_only_as_events_are_used():
    log = load_log(FIXTURES / "codex_event_users.jsonl")
    assert [m["content"] for m in log.messages if m["role"] == "user"] == [
        "Why does `make docs` fail on a clean checkout?",
        "Install them into the venv and try again.",
    ]
    assert log.messages[1]["tool_calls"][0]["function"]["name"] == "local_shell"
    assert log.messages[2]["error"] == {
        "code": "EXIT_127",
        "message": "sphinx-build: not found",
    }
    # outputs written d3 then d2: placed in call order
    assert [m["tool_call_id"] for m in log.messages[4:6]] == ["call_d2", "call_d3"]
    assert log.messages[5]["error"]["code"] == "TOOL_ERROR"


def test_swe_agent_keeps_repeated_call_ids_and_pairs_them_positionally():
    log = load_log(FIXTURES / "sweagent_tools.traj")
    ids = [c["id"] for m in log.messages for c in m.get("tool_calls") or ()]
    assert ids == ["call_00", "call_00", "call_01", "call_02", "call_00", "call_03"]
    pairs = check_pairing(log.messages)
    assert [(a, t) for a, _, t in pairs] == [
        (2, 3),
        (4, 5),
        (6, 7),
        (8, 9),
        (10, 11),
        (12, 13),
    ]
    assert (
        json.loads(log.messages[4]["tool_calls"][0]["function"]["arguments"])["command"]
        == "view"
    )  # tool_calls stored as a string in that entry
    assert not any(m.get("observation") for m in log.messages)  # the task is not marked


def test_swe_agent_text_mode_marks_observations_and_notes_the_demonstration():
    log = load_log(FIXTURES / "sweagent_text.traj")
    assert log.messages[1]["content"].startswith("Here is a demonstration")
    assert not log.messages[1].get("observation") and not log.messages[2].get(
        "observation"
    )
    assert [i for i, m in enumerate(log.messages) if m.get("observation")] == [
        4,
        6,
        8,
        10,
    ]
    assert log.notes == [
        ("history[1]", "demonstration (is_demo): kept, it was sent to the model")
    ]
    assert "demonstration (is_demo)" in log.describe()


def test_mini_swe_agent_task_is_not_an_observation_and_later_user_messages_are():
    log = load_log(FIXTURES / "mini_swe_agent.traj.json")
    assert log.messages[1]["content"].startswith("<pr_description>")
    assert "observation" not in log.messages[1]
    assert all(m.get("observation") for m in log.messages[2:] if m["role"] == "user")
    assert log.skipped == [
        ("messages[9]", "exit record: the end of the run, never sent to the model")
    ]


def test_a_plain_openai_list_is_not_taken_for_mini_swe_agent():
    plain = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": "more"},
    ]
    assert parse_log(json.dumps(plain)).shape == "openai-chat"
    plain[3]["content"] = "<returncode>0</returncode>\n<output>\nok\n</output>"
    assert parse_log(json.dumps(plain)).shape == "mini-swe-agent"


def test_openhands_one_assistant_per_response_results_in_call_order():
    log = load_log(FIXTURES / "openhands_events.json")
    assert log.declared_tools == ("execute_bash", "str_replace_editor", "think", "finish")
    assert (
        log.messages[2]["content"]
        == "I'll look at the client while searching for callers."
    )
    assert [c["id"] for c in log.messages[2]["tool_calls"]] == ["toolu_h1", "toolu_h2"]
    assert len(log.messages[4]["content"]) > 2000
    assert log.messages[8]["error"]["code"] == "EXIT_1"
    assert log.messages[-1] == {
        "role": "assistant",
        "content": "fetch_rates now retries a 503 up to three times.",
    }
    record = load_log(FIXTURES / "openhands_eval.json")
    assert record.messages[3]["error"]["code"] == "ERROR"
    assert [m["tool_call_id"] for m in record.messages[5:7]] == ["call_e2", "call_e3"]
    assert record.messages[7] == {
        "role": "user",
        "content": "Python 3.12.4",
        "observation": True,
    }


def test_gemini_tool_calls_become_tool_messages():
    log = load_log(FIXTURES / "gemini_session.json")
    assert [
        c["name"] for c in (c["function"] for c in log.messages[1]["tool_calls"])
    ] == ["view_file", "view_file", "run_shell_command"]
    assert log.messages[3]["error"] == {
        "code": "TOOL_ERROR",
        "message": "File not found: /home/dev/gitstat/tests/filter.py",
    }
    assert log.messages[-1]["content"] == "All 57 tests pass."
    replayed = load_log(FIXTURES / "gemini_session.jsonl")
    assert (
        replayed.messages[2]["content"] == "cli.py:14: parser.add_argument('--verbose')"
    )
    assert "--trace" not in json.dumps(replayed.messages)  # rewound


def test_anthropic_results_come_before_the_text_of_the_same_user_message():
    log = load_log(FIXTURES / "anthropic_request.json")
    assert log.messages[0]["content"] == (
        "You are a coding agent in /srv/pinecone-notes.\nPrefer small diffs."
    )
    assert log.declared_tools == ("bash", "view")
    assert log.messages[4]["error"] == {"code": "TOOL_ERROR", "message": "Exit code 1"}
    assert [m["role"] for m in log.messages[6:8]] == ["tool", "user"]


def test_openai_response_object_is_the_request_and_its_reply():
    log = load_log(FIXTURES / "openai_response.json")
    assert log.messages[-1]["content"] == "Reading both files."
    assert log.notes[0] == (
        "messages[2] call 'call_s1'",
        "tool call without a recorded result",
    )


# --- the openai reader replaces transcripts.normalize_message ---------------------------


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (ROOT / "data" / "transcripts").iterdir())
)
def test_the_openai_reader_reads_the_bundled_transcripts_as_today(name):
    path = ROOT / "data" / "transcripts" / name
    log, today = load_log(path), load_transcript(path)
    assert log.shape.startswith("openai-")
    assert log.messages == today.messages
    assert log.declared_tools == today.declared_tools


def test_the_openai_reader_normalizes_like_today():
    chat = json.loads((FIXTURES / "openai_chat.json").read_text(encoding="utf-8"))
    log = parse_log(json.dumps(chat))
    assert log.messages[0]["role"] == "system"  # developer
    assert log.messages[1]["content"] == (
        "The CSV export of tallyho prints dates as "
        "2024-1-5.\nScreenshot above. Please pad months "
        "and days."
    )
    assert log.messages[2]["content"] is None
    assert log.messages[2]["tool_calls"][0] == {
        "id": "call_q1",
        "type": "function",
        "function": {"name": "shell", "arguments": '{"cmd": "grep -rn strftime src"}'},
    }
    flat = flat_tool_calls()
    expected = parse_transcript(json.dumps(flat)).messages
    expected[1]["content"] = None  # today keeps "", the new reader says None
    assert parse_log(json.dumps(flat)).messages == expected
    flat[1]["tool_calls"] = [{"name": "bash", "arguments": {}}]
    with pytest.raises(
        LogFileError, match=r"^flat: messages\[1\]\.tool_calls\[0\]\.id is " r"missing$"
    ):
        parse_log(json.dumps(flat), "flat")


def test_a_request_calling_an_undeclared_tool_is_an_error():
    request = json.loads((FIXTURES / "openai_request.json").read_text(encoding="utf-8"))
    request["tools"] = request["tools"][1:]
    with pytest.raises(
        LogFileError,
        match=r"^req: messages\[2\]\.tool_calls\[0\]\.function"
        r"\.name calls unknown tool 'run'; the file "
        r"declares open_file$",
    ):
        parse_log(json.dumps(request), "req")


# --- errors -----------------------------------------------------------------------------


def test_a_damaged_line_is_named_by_its_number():
    path = FIXTURES / "damaged.jsonl"  # 2 of its 4 lines damaged: past the 1% limit
    with pytest.raises(LogFileError) as error:
        load_log(path)
    assert str(error.value) == (
        f"{path}: line 4 is not valid JSON (Expecting ',' delimiter, column 17); "
        "2 of its 4 lines are damaged, and a log is read with at most 1 damaged line "
        "skipped (1% of its lines, at least one)"
    )
    with pytest.raises(LogFileError) as error:
        load_log(path, strict=True)
    assert str(error.value) == (
        f"{path}: line 4 is not valid JSON (Expecting ',' delimiter, column 17)"
    )


def test_an_unknown_shape_names_the_closest_shape_and_the_others_tried():
    path = FIXTURES / "unknown_shape.json"  # standup notes: a title and entries
    with pytest.raises(LogFileError) as error:
        load_log(path)
    others = [n for n in SHAPES if n != "opencode-export" and not n.startswith("aider")]
    assert str(error.value) == (
        f"{path}: not a known agent log; closest: opencode-export (not an object with "
        "'info'); its example shares 1 field name with this file (title); "
        f"{conversion_hint('opencode-export')}; also tried: " + ", ".join(others)
    )
    # the smallest conversion: the closest shape's fields, or openai-chat's
    assert conversion_hint("opencode-export") == (
        f"to read it as opencode-export, it needs {NEEDS['opencode-export']}; or "
        f"convert it to openai-chat: {NEEDS['openai-chat']} (docs/convert_your_log.md)"
    )


def test_unreadable_files_are_one_line_errors(tmp_path):
    with pytest.raises(LogFileError, match=r"missing\.json: no such log file$"):
        load_log(tmp_path / "missing.json")
    with pytest.raises(LogFileError, match=r": is a folder, not a log file$"):
        load_log(tmp_path)
    latin = tmp_path / "latin.json"
    latin.write_bytes('[{"role": "user", "content": "caf\u00e9"}]'.encode("latin-1"))
    with pytest.raises(LogFileError, match=r"latin\.json: not UTF-8 text \(byte 33\)$"):
        load_log(latin)
    with pytest.raises(LogFileError, match=r"^x: the file is empty$"):
        parse_log("  \n", "x")
    with pytest.raises(
        LogFileError,
        match=r"^x: a plain text file, not JSON, and no text log shape the lab knows: "
        r"tried aider-llm-history \(no first line 'TO LLM <time>'\), aider-chat-md",
    ):
        parse_log("nope", "x")
    # an upload is decoded with its bad bytes replaced: an image is a binary file, not
    # "a Markdown text file" because a line of it happened to start with "-"
    png = (b"\x89PNG\r\n\x1a\n-" + bytes(range(256)) * 4).decode("utf-8", "replace")
    with pytest.raises(LogFileError, match=r"^x\.png: a binary file .*, not a log$"):
        parse_log(png, "x.png")
    with pytest.raises(LogFileError, match=r"^x: a Markdown text file"):
        parse_log("- a list\n- of notes \ufffd\n", "x")  # one stray byte is text


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{"type": "user", "message": {"role": "user"}}\n{"type": "progress"}\n',
            "x: line 1: message.content is missing",
        ),
        (
            '{"type": "user", "message": {"role": "user", "content": '
            '[{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]}}\n'
            '{"type": "progress"}\n',
            "x: line 1: message.content[0]: tool result for call 'toolu_9' answers no "
            "open call of the assistant message before it",
        ),
        (
            json.dumps(
                {
                    "history": [
                        {"role": "system", "content": "s"},
                        {"role": "tool", "content": "out"},
                    ]
                }
            ),
            "x: history[1].tool_call_ids is missing",
        ),
        (
            json.dumps([{"role": "robot", "content": "beep"}]),
            "x: messages[0].role is 'robot'; expected one of system, developer, user, "
            "assistant, tool",
        ),
        (
            '{"type": "session_meta", "payload": {}}\n'
            '{"type": "response_item", '
            '"payload": {"type": "function_call", "name": "shell"}}\n',
            "x: line 2: payload.call_id is missing",
        ),
    ],
)
def test_field_errors_name_the_line_or_index_and_the_field(text, message):
    refused_unless_repairable(lambda strict: parse_log(text, "x", strict), message)


def test_an_unexpected_structure_deep_inside_is_still_one_line():
    events = [
        {
            "id": 0,
            "action": "run",
            "source": "agent",
            "args": {},
            "tool_call_metadata": {"model_response": {"id": "r", "choices": "oops"}},
        }
    ]
    with pytest.raises(LogFileError) as error:
        parse_log(json.dumps(events), "x")
    assert str(error.value).startswith("x: events[0].tool_call_metadata.model_response")
    with pytest.raises(LogFileError) as error:
        parse_log(
            '{"type": "session_meta", "payload": {}}\n'
            '{"type": "response_item", "payload": ["not", "an", "object"]}\n',
            "x",
        )
    assert str(error.value) == (
        "x: codex-rollout: a record has an unexpected structure "
        "(AttributeError: 'list' object has no attribute 'get')"
    )
    assert "\n" not in str(error.value)


# --- transcript files: the same readers, named by file and field ----------------------

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
    # no known shape: one line naming the closest shape and what it lacked
    ("object.json", '{"conversation": []}', NO_SHAPE_SHARES),
    ("messages.json", '{"messages": "hi"}', "not a known agent log; closest: openai-"),
    ("empty.json", "[]", NO_SHAPE_SHARES),
    ("number.json", "42", NO_SHAPE_SHARES),
    ("item.json", '[{"role": "user", "content": "u"}, 7]', "not a known agent log"),
    (
        "string_calls.json",
        json.dumps(
            OPENING + [{"role": "assistant", "content": "", "tool_calls": "[{'id': 1}]"}]
        ),
        "messages[2].tool_calls is not valid JSON (Expecting property name",
    ),
    (
        "calls_object.json",
        json.dumps(
            OPENING + [{"role": "assistant", "content": "", "tool_calls": {"id": "c1"}}]
        ),
        "messages[2].tool_calls must be a list, got dict",
    ),
    (
        "orphan.json",
        json.dumps(OPENING + [{"role": "tool", "tool_call_id": "c7", "content": "x"}]),
        "messages[2]: tool result for call 'c7' answers no open call of the assistant "
        "message before it",
    ),
    (
        "orphan.jsonl",
        "".join(
            json.dumps(m) + "\n\n"
            for m in OPENING + [{"role": "tool", "tool_call_id": "c7", "content": "x"}]
        ),
        "line 5: tool result for call 'c7' answers no open call of the assistant "
        "message before it",
    ),
    (
        "unknown_tool.json",
        json.dumps(
            {
                "tools": [{"type": "function", "function": {"name": "read_file"}}],
                "messages": OPENING
                + [
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [tool_call("c1", name="rm_rf")],
                    }
                ],
            }
        ),
        "messages[2].tool_calls[0].function.name calls unknown tool 'rm_rf'; the file "
        "declares read_file",
    ),
    (
        "tools.json",
        json.dumps(
            {"tools": [{"type": "function", "function": {}}], "messages": OPENING}
        ),
        "tools[0].function.name is missing",
    ),
    (
        "tools_object.json",
        json.dumps({"tools": {"read_file": {}}, "messages": OPENING}),
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
        load_transcript(path, strict=True)
    assert str(raised.value).startswith(f"{path}: {expected}")
    if not REPAIRABLE.search(f"{path}: {expected}"):  # refused either way
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
        TranscriptFileError, match=r"^pasted: not a known agent log, and no shape"
    ):
        parse_transcript("[]", "pasted")


def test_the_unknown_shape_line_names_the_closest_shape_and_what_it_missed(tmp_path):
    path = tmp_path / "item.json"
    path.write_text('[{"role": "user", "content": "u"}, 7]', encoding="utf-8")
    with pytest.raises(TranscriptFileError) as raised:
        load_transcript(path)
    text = str(raised.value)
    # a chat list but for its second item: closest by the field names it shares
    assert "\n" not in text and text.startswith(
        f"{path}: not a known agent log; closest: openai-chat (no 'role' in item[1]); "
        "its example shares 2 field names with this file (content, role); to read it "
        f"as openai-chat, it needs {NEEDS['openai-chat']} (docs/convert_your_log.md); "
        "also tried: claude-code, "
    )
    assert all(name in text for name in SHAPES if not name.startswith("aider"))


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


# --- the builder's pairing rule, on generated turns -------------------------------

turns = st.lists(
    st.tuples(st.integers(1, 4), st.randoms(use_true_random=False), st.booleans()),
    min_size=1,
    max_size=6,
)


@given(turns)
def test_results_follow_their_message_in_call_order_whatever_order_they_came_in(plan):
    log = Builder("gen", "generated")
    log.user("task")
    for number, (calls, rng, reuse) in enumerate(plan):
        # reuse: the ids of the first turn again, as real agents do
        ids = [f"call_{0 if reuse else number}_{n}" for n in range(calls)]
        log.assistant("", [make_call(i, "tool", {}) for i in ids], key=number)
        arrival = ids[:]
        rng.shuffle(arrival)
        for call_id in arrival:
            log.result(call_id, f"output of {call_id}", f"step {number}")
    messages = log.finish().messages
    pairs = check_pairing(messages)
    assert len(pairs) == sum(calls for calls, _, _ in plan)
    for index, message in enumerate(messages):
        ids = [c["id"] for c in message.get("tool_calls") or ()]
        answers = [m["tool_call_id"] for m in messages[index + 1 : index + 1 + len(ids)]]
        assert answers == ids


def test_the_first_refusal_reads_each_bundled_example_once(monkeypatch):
    """The closest-shape line compares a file with the bundled examples; reading them
    refuses the unknown-shape example with such a line too, which must not read them
    all again (it did, recursively: seconds before a first refusal)."""
    from importlib.resources import files

    import minilib.logs as logs

    examples = len(list(files("minilib.data").joinpath("logs").iterdir()))
    reads = []
    real = logs.load_log
    monkeypatch.setattr(
        logs, "load_log", lambda path, *a, **k: reads.append(path) or real(path, *a, **k)
    )
    logs._read_example_fields.cache_clear()
    with pytest.raises(logs.LogFileError, match="closest: "):
        logs.parse_log('{"samples": [{"timestamp": "t", "id": 1}]}', "x.json")
    assert 0 < len(reads) <= examples
    logs._read_example_fields.cache_clear()
