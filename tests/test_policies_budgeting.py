"""minilib.policies.budgeting: the system prompt keeps required sections that fit."""

import pytest

from minilib import ContextWindow, Tracer, estimate_tokens
from minilib.policies import InputBudgeting, PromptSection
from minilib.policies.budgeting import declaration_section


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
