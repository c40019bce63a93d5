"""minilib.policies.store: offload text to the external store; recall gets it back."""

import json

import pytest
from message_builders import assistant, tool

from minilib.markers import INDEX_MARK, STORE_MARK
from minilib.policies import ExternalStore, OffloadGroups, OffloadToolResults, RecallTool
from minilib.policies.store import ToolsWithRecall

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def test_offload_results_stores_the_full_text_and_names_its_id():
    store = ExternalStore()
    text = "\n".join(f"line {n}" for n in range(100))
    history = HEAD + [assistant("read", "c1"), tool("c1", text, "EXIT_1")]
    result = OffloadToolResults(
        store, min_chars=50, head_chars=20, tail_chars=10
    ).compress(history)
    short = result.messages[3]["content"]
    assert short.startswith(
        f"{STORE_MARK} id=c1 原 {len(text)} 字符 / 100 行 / 错误码 EXIT_1"
    )
    assert 'recall(id="c1"' in short and store.get("c1") == text
    assert result.messages[3]["tool_call_id"] == "c1" and result.affected_indexes == [3]


def test_offload_groups_leaves_an_index_and_keeps_the_first_stored_copy():
    store = ExternalStore()
    original = "the full original, " * 20
    offloaded = (
        OffloadToolResults(store, 10, 5, 5)
        .compress(HEAD + [assistant("read a", "c1"), tool("c1", original)])
        .messages[-1]
    )
    history = HEAD + [
        assistant("read a", "c1"),
        offloaded,  # the window's short copy; its header names the stored id
        assistant("read b", "c2"),
        tool("c2", "bbb"),
        assistant("now", "c3"),
        tool("c3", "ccc"),
    ]
    result = OffloadGroups(store, protect_tail=2).compress(history)
    index = result.messages[2]
    assert index["role"] == "user" and index["content"].startswith(INDEX_MARK)
    assert (
        "- read a" in index["content"]
        and f"id=c1 read_file {{}} ({len(original):,} 字符)" in index["content"]
    )
    assert store.get("c1") == original and store.get("c2") == "bbb"
    assert result.messages[3:] == history[-2:]


def test_a_call_id_reused_in_a_later_turn_is_stored_apart():
    store = ExternalStore()
    history = HEAD + [
        assistant("first", "c1"),
        tool("c1", "output of the first call"),
        assistant("again", "c1"),  # the same id, a later turn (positional pairing)
        tool("c1", "output of the second call"),
        assistant("now", "c2"),
        tool("c2", "ccc"),
    ]
    index = OffloadGroups(store, protect_tail=2).compress(history).messages[2]
    assert "id=c1 " in index["content"] and "id=c1~2 " in index["content"]
    assert store.get("c1") == "output of the first call"
    assert store.get("c1~2") == "output of the second call"
    recall = RecallTool(store)
    assert recall.call("recall", '{"id": "c1~2"}').content == "output of the second call"


def test_recall_returns_whole_text_or_matching_lines_and_errors_as_codes():
    store = ExternalStore()
    store.put("call_01", "alpha\nE2BIG fix (#58) still in review\nomega")
    recall = RecallTool(store)
    assert recall.call("recall", json.dumps({"id": "call_01"})).content.startswith(
        "alpha"
    )
    hit = recall.call("recall", json.dumps({"id": "call_01", "grep": "#58"}))
    assert (
        hit.content
        == "1 line of call_01 contains '#58'\n2: E2BIG fix (#58) still in review"
    )
    missing = recall.call("recall", json.dumps({"id": "call_99"}))
    assert missing.error["code"] == "NOT_FOUND" and "call_01" in missing.content
    assert recall.call("recall", "{not json").error["code"] == "BAD_ARGUMENTS"
    assert (
        recall.call("recall", json.dumps({"path": "x"})).error["code"] == "BAD_ARGUMENTS"
    )


def test_tools_with_recall_sees_what_is_stored_later():
    class Base:
        def call(self, name, arguments):
            raise AssertionError("recall must not reach the workspace tools")

    store = ExternalStore()
    tools = ToolsWithRecall(Base(), RecallTool(store))
    assert tools.call("recall", '{"id": "k"}').error["code"] == "NOT_FOUND"
    store.put("k", "now here")
    assert tools.call("recall", '{"id": "k"}').content == "now here"


def test_store_rejects_bad_ids_with_a_clear_error():
    with pytest.raises(ValueError, match="store id must be a non-empty string"):
        ExternalStore().put("", "x")
    with pytest.raises(KeyError, match="no stored text with id 'nope'"):
        ExternalStore().get("nope")
