"""LangChain dumps: messages_to_dict and dumpd records, as a list or a LangGraph state."""

import json
from pathlib import Path

import pytest
from message_builders import refused_unless_repairable

from minilib.logs import LogFileError, load_log, parse_log

LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"


def dumped(kind, **data):
    return {"type": kind, "data": {"content": "", **data}}


def lc(cls, **kwargs):
    ids = ["langchain", "schema", "messages", cls]
    return {"lc": 1, "type": "constructor", "id": ids, "kwargs": kwargs}


def call(call_id, name="search", **args):
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def test_messages_to_dict_calls_results_and_errors():
    log = load_log(LOGS / "langchain_messages.json")
    assert log.messages[0]["content"].startswith("You are a careful Python assistant")
    first = log.messages[2]
    # the text part only: the thinking part and the tool_use parts are skipped
    assert (
        first["content"]
        == "I'll run the invoice tests and open the totals module together."
    )
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_lc1", "toolu_lc2"]
    assert json.loads(first["tool_calls"][1]["function"]["arguments"]) == {
        "path": "ledgerline/totals.py"
    }
    assert [m["tool_call_id"] for m in log.messages[3:5]] == ["toolu_lc1", "toolu_lc2"]
    assert log.messages[3]["name"] == "run_tests"
    assert len(log.messages[3]["content"]) > 2000
    assert log.messages[6]["error"] == {
        "code": "TOOL_ERROR",
        "message": "Error: FileNotFoundError: ledgerline/round.py",
    }
    # the invalid call never ran: not a call the window carries
    assert "toolu_lc3" not in json.dumps(log.messages)
    assert log.messages[9]["content"] is None  # calls and no text


def test_a_langgraph_state_of_dumpd_records():
    log = load_log(LOGS / "langgraph_state.json")
    assert log.shape == "langchain-messages"
    assert [c["function"]["name"] for c in log.messages[1]["tool_calls"]] == [
        "sql_schema",
        "sql_query",
    ]
    assert log.messages[3]["error"]["code"] == "TOOL_ERROR"
    assert log.messages[-1]["content"].startswith("Only `note` can be NULL")


def test_chunks_chat_messages_json_lines_and_older_provider_calls():
    older = {
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "ls", "arguments": "{}"},
            }
        ]
    }
    records = [
        lc("SystemMessage", content="be brief"),
        {"type": "chat", "data": {"content": "list it", "role": "user"}},
        lc("AIMessageChunk", content="", additional_kwargs=older),
        dumped(
            "tool", content=["a.py", {"type": "text", "text": "b.py"}], tool_call_id="c1"
        ),
        lc(
            "AIMessage",
            content=[{"type": "text", "text": "two files"}, {"type": "image_url"}],
        ),
    ]
    text = "".join(json.dumps(record) + "\n" for record in records)
    log = parse_log(text, "x")
    assert [m["role"] for m in log.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert log.messages[2]["tool_calls"][0]["function"]["name"] == "ls"
    assert log.messages[3]["content"] == "a.py\nb.py"
    assert log.skipped == [
        ("line 5.kwargs.content[1]", "image_url part: cannot be measured as text")
    ]


def test_a_plain_openai_list_is_not_taken_for_langchain():
    plain = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert parse_log(json.dumps(plain)).shape == "openai-chat"
    assert parse_log(json.dumps({"messages": plain})).shape == "openai-request"


@pytest.mark.parametrize(
    "records, expected",
    [
        (
            [dumped("human", content="a"), dumped("ai", tool_calls=[{"name": "x"}])],
            "x: messages[1].data.tool_calls[0].id is missing",
        ),
        (
            [
                dumped("human", content="a"),
                dumped("ai", tool_calls=[call("c1")]),
                dumped("tool", content="out"),
            ],
            "x: messages[2].data.tool_call_id is missing",
        ),
        (
            [
                dumped("human", content="a"),
                dumped("ai", tool_calls=[call("c1")]),
                dumped("tool", content="out", tool_call_id="c9"),
            ],
            "x: messages[2]: tool result for call 'c9' answers no open call of the "
            "assistant message before it",
        ),
        (
            [lc("HumanMessage", content={"text": "a"})],
            "x: messages[0].kwargs.content must be a string or a list of parts",
        ),
        (
            [{"type": "chat", "data": {"content": "a"}}],
            "x: messages[0].data.role is missing on a chat message",
        ),
    ],
)
def test_a_damaged_field_is_one_line_naming_the_field(records, expected):
    text = json.dumps(records)
    refused_unless_repairable(lambda strict: parse_log(text, "x", strict), expected)


def test_an_unknown_constructor_is_not_a_message_dump():
    records = [lc("HumanMessage", content="a"), lc("Document", page_content="x")]
    with pytest.raises(LogFileError) as error:
        parse_log(json.dumps(records), "x")
    assert (
        "langchain-messages (messages[1]: constructor 'Document' is not a message "
        in (str(error.value))
    )
