"""The four new paths, example by example: what each cuts, keeps, stores and costs."""

import json

import pytest
from message_builders import assistant, tool, tool_call

from minilib import (
    SUMMARY_MARK,
    ContextWindow,
    RollingSummary,
    Tracer,
    closed_range,
    estimate_tokens,
    scripted_summary,
)
from minilib.markers import INDEX_MARK, STORE_MARK
from minilib.policies import (
    ExternalStore,
    HierarchicalSummary,
    InputBudgeting,
    OffloadGroups,
    OffloadToolResults,
    PromptSection,
    RecallTool,
    SlidingWindowTruncation,
)
from minilib.policies.budgeting import declaration_section
from minilib.policies.hierarchical import (
    HIERARCHICAL_TITLE,
    scripted_group_summary,
    split_groups,
)
from minilib.policies.store import ToolsWithRecall

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


def parallel(call_ids, text="x"):
    """One assistant message with parallel calls, and their answers in reverse order."""
    message = {
        "role": "assistant",
        "content": "look",
        "tool_calls": [tool_call(c) for c in call_ids],
    }
    return [message] + [tool(c, f"{text} {c}") for c in reversed(call_ids)]


# --- truncation
# --------------------------------------------------------------------------------


def test_truncation_drops_the_closed_range_and_keeps_head_and_tail():
    history = HEAD + parallel(["a", "b"]) + parallel(["c"]) + parallel(["d"])
    result = SlidingWindowTruncation(protect_tail=2).compress(history)
    assert result.messages == HEAD + history[-2:]
    assert result.affected_indexes == list(range(2, 7))


def test_truncation_never_splits_parallel_calls_from_their_answers():
    history = (
        HEAD + parallel(["a"]) + parallel(["b", "c", "d"])
    )  # tail of 2 cuts into the second group
    result = SlidingWindowTruncation(protect_tail=2).compress(history)
    assert result.messages == HEAD + history[4:]  # the whole parallel group stays
    assert closed_range(history, 2) == range(2, 4)


def test_truncation_with_nothing_closed_changes_nothing():
    history = HEAD + parallel(["a"])
    result = SlidingWindowTruncation(protect_tail=2).compress(history)
    assert not result.changed and result.messages == history


def test_truncation_parameter_is_checked():
    with pytest.raises(ValueError, match="protect_tail must be >= 0"):
        SlidingWindowTruncation(protect_tail=-1)


# --- hierarchical
# ------------------------------------------------------------------------------


def test_hierarchical_calls_once_a_group_plus_a_merge_and_keeps_more_than_rolling():
    body = (
        "header\nline without facts\nexit code 2 in logs/build.log\nNOT_FOUND here\nplain"
    )
    history = HEAD + [
        assistant("a1", "c1"),
        tool("c1", body),
        assistant("a2", "c2"),
        tool("c2", body),
        assistant("a3", "c3"),
        tool("c3", "done"),
    ]
    result = HierarchicalSummary(key_lines=2, protect_tail=2).compress(history)
    assert [call["purpose"] for call in result.model_calls] == [
        "summary"
    ] * 3  # two groups, then the merge
    assert [len(call["input"]) for call in result.model_calls] == [2, 2, 2]
    assert result.model_calls[2]["input"][0]["content"] == result.model_calls[0]["reply"]
    summary = result.messages[2]["content"]
    assert (
        summary.startswith(f"{SUMMARY_MARK} {HIERARCHICAL_TITLE}")
        and "exit code 2 in logs/build.log" in summary
    )
    assert "NOT_FOUND here" in summary and "line without facts" not in summary
    rolling = RollingSummary(scripted_summary, 2).compress(history).messages[2]["content"]
    assert "exit code 2 in logs/build.log" not in rolling  # one call, first lines only


def test_group_summary_respects_key_lines_and_skips_aging_markers():
    group = [
        assistant("read", "c1"),
        tool("c1", "first\n[已老化] 原 999 字符 / 9 行\n1\n2\n3"),
    ]
    assert scripted_group_summary(group, 2).splitlines()[2:] == ["    1", "    2"]
    assert scripted_group_summary(group, 0).count("\n") == 1


def test_hierarchical_folds_an_earlier_summary_without_a_call():
    earlier = {"role": "user", "content": f"{SUMMARY_MARK} old\n- kept line"}
    history = HEAD + [
        earlier,
        assistant("a", "c1"),
        tool("c1", "r 42"),
        assistant("b", "c2"),
        tool("c2", "s"),
    ]
    result = HierarchicalSummary(protect_tail=2).compress(history)
    assert [c["purpose"] for c in result.model_calls] == [
        "summary",
        "summary",
    ]  # one new group, then the merge
    assert "- kept line" in result.messages[2]["content"]
    assert split_groups(history[2:5]) == [[earlier], history[3:5]]


# --- external store and recall
# ----------------------------------------------------------------


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
        == "1 lines of call_01 contain '#58'\n2: E2BIG fix (#58) still in review"
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


# --- input budgeting
# ---------------------------------------------------------------------------


def sections():
    return [
        PromptSection("core", "You are an agent.", required=True),
        PromptSection("style", "s" * 200, priority=1),
        PromptSection("examples", "e" * 40, priority=5),
    ]


def test_budgeting_keeps_required_and_the_highest_priority_optional_sections_that_fit():
    budgeting = InputBudgeting(sections(), budget_tokens=30)
    assert [s.name for s in budgeting.kept] == [
        "core",
        "examples",
    ] and budgeting.dropped == ["style"]
    history = [
        {"role": "system", "content": budgeting.full_prompt},
        {"role": "user", "content": "go"},
    ]
    result = budgeting.compress(history)
    assert result.messages[0]["content"] == "You are an agent.\n\n" + "e" * 40
    assert result.affected_indexes == [0] and result.messages[1] is history[1]
    assert not budgeting.compress(result.messages).changed  # already budgeted


def test_budgeting_leaves_a_system_prompt_it_did_not_build_alone():
    budgeting = InputBudgeting(sections(), budget_tokens=0)
    history = [
        {"role": "system", "content": "someone else's prompt " * 50},
        {"role": "user", "content": "go"},
    ]
    assert not budgeting.compress(history).changed


def test_budgeting_in_a_window_cuts_the_prompt_before_anything_else():
    budgeting = InputBudgeting(sections(), budget_tokens=0)
    history = [
        {"role": "system", "content": budgeting.full_prompt},
        {"role": "user", "content": "go"},
    ]
    tracer = Tracer()
    ContextWindow(20, [budgeting]).before_model_call(history, tracer, 0)
    assert history[0]["content"] == "You are an agent." and estimate_tokens(history) <= 20
    assert tracer.events("context_compression")[0]["strategy"] == "input_budgeting"


def test_budgeting_input_errors_name_the_section():
    with pytest.raises(ValueError, match="repeated: core"):
        InputBudgeting([PromptSection("core", "a", True), PromptSection("core", "b")], 10)
    with pytest.raises(
        ValueError, match="prompt section 'x': text must be a non-empty string"
    ):
        PromptSection("x", "")
    with pytest.raises(ValueError, match="function.name"):
        declaration_section({"type": "function"}, required=True)
