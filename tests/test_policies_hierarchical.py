"""minilib.policies.hierarchical: a summary a group, then a merge keeping facts."""

from message_builders import assistant, tool

from minilib import SUMMARY_MARK, RollingSummary, scripted_summary
from minilib.policies import HierarchicalSummary
from minilib.policies.hierarchical import (
    HIERARCHICAL_TITLE,
    scripted_group_summary,
    split_groups,
)

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]


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
