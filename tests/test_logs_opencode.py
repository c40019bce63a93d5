"""opencode exports: one assistant message a step, tool parts as opencode sends them."""

import json
from pathlib import Path

import pytest

from minilib.logs import LogFileError, load_log, parse_log

FIXTURE = (
    Path(__file__).resolve().parent.parent / "data" / "logs" / "opencode_export.json"
)


def export():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_steps_become_assistant_messages_with_their_results():
    log = load_log(FIXTURE)
    assert log.messages[0]["content"].startswith("You are opencode")
    first = log.messages[2]
    assert (
        first["content"]
        == "I'll read the sync module and look for the delete calls together."
    )
    assert [c["function"]["name"] for c in first["tool_calls"]] == ["read", "grep"]
    assert [m["tool_call_id"] for m in log.messages[3:5]] == ["toolu_oc1", "toolu_oc2"]
    assert len(log.messages[3]["content"]) > 2000
    # an output opencode pruned later was sent whole until then: the prune is a
    # clearing, at the first message created after it
    assert log.messages[4]["content"].startswith("Found 3 matches")
    pruned = [c for c in log.clearings if log.messages[4]["tool_call_id"] in c.call_ids]
    assert len(pruned) == 1 and pruned[0].at > 4
    assert log.messages[-1]["content"].startswith("The test run was interrupted")


def test_failed_and_interrupted_tool_parts_are_errors():
    log = load_log(FIXTURE)
    tools = {m["tool_call_id"]: m for m in log.messages if m["role"] == "tool"}
    assert tools["toolu_oc3"]["error"] == {
        "code": "TOOL_ERROR",
        "message": "usage: ferry sync [-h] [--prefix PREFIX] [--verbose] root",
    }
    assert tools["toolu_oc5"] == {
        "role": "tool",
        "tool_call_id": "toolu_oc5",
        "content": "[Tool execution was interrupted]",
        "error": {"code": "INTERRUPTED", "message": "[Tool execution was interrupted]"},
    }


def test_the_user_turn_keeps_its_synthetic_text_and_skips_the_file_part():
    log = load_log(FIXTURE)
    user = log.messages[1]["content"]
    assert user.startswith("Add a --dry-run flag")
    assert "Called the Read tool with the following input" in user
    assert (
        "messages[0].parts[1]",
        "file part: its text is sent as the text part beside it",
    ) in log.skipped


def test_an_errored_reply_is_skipped_unless_aborted_after_it_said_something():
    log = load_log(FIXTURE)
    assert ("messages[3]", "assistant message with an error: not sent back") in (
        log.skipped
    )
    data = export()
    data["messages"][3]["info"]["error"] = {"name": "MessageAbortedError", "data": {}}
    data["messages"][3]["parts"].append({"type": "text", "text": "Running the tests now"})
    aborted = parse_log(json.dumps(data), "x")
    assert "Running the tests now" in json.dumps(aborted.messages)


def test_without_a_recorded_system_prompt():
    data = export()
    del data["messages"][1]["info"]["system"]
    log = parse_log(json.dumps(data), "x")
    assert log.system_source == "not recorded" and log.messages[0]["role"] == "user"


def mutate(change):
    data = export()
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            lambda d: d["messages"][1]["parts"][3].pop("callID"),
            "x: messages[1].parts[3]: a tool part needs 'callID', 'tool' and 'state'",
        ),
        (
            lambda d: d["messages"][1]["parts"][3]["state"].update(status="paused"),
            "x: messages[1].parts[3].state.status is 'paused'; expected completed or "
            "error",
        ),
        (
            lambda d: d["messages"][0]["info"].update(role="robot"),
            "x: messages[0].info.role is 'robot'; expected user or assistant",
        ),
        (
            lambda d: d["messages"][2].update(parts="hello"),
            "x: messages[2] needs 'info' (an object) and 'parts' (a list)",
        ),
        (
            lambda d: d["messages"][1]["parts"].append({"type": "hologram"}),
            "x: messages[1].parts[17] has type 'hologram', not an assistant part",
        ),
    ],
)
def test_a_damaged_field_is_one_line_naming_the_field(change, expected):
    with pytest.raises(LogFileError) as error:
        parse_log(mutate(change), "x")
    assert str(error.value) == expected


def test_only_an_export_with_info_and_message_parts_is_opencode():
    data = export()
    data["messages"] = [{"role": "user", "content": "hi"}]  # a request, not an export
    assert parse_log(json.dumps(data)).shape == "openai-request"
    with pytest.raises(LogFileError, match=r"opencode-export \(no 'messages' list\)"):
        parse_log(json.dumps({"info": {"id": "ses_1"}}), "x")
