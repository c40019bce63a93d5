"""minilib.policies.checks: check_strategy names each rule a strategy breaks."""

import copy

from minilib import CompressionResult, ToolResultAging, load_session, run_baseline
from minilib.policies import check_strategy


def session_window():
    return run_baseline(load_session()).final_messages


class Careful:
    """The library's aging: keeps every rule."""

    name = "careful"

    def compress(self, messages):
        return ToolResultAging().compress(messages)


class InPlace:
    """Shortens the first long tool result in the list it was given."""

    name = "in_place"

    def compress(self, messages):
        for index, message in enumerate(messages):
            if message["role"] == "tool" and len(message["content"]) > 1000:
                message["content"] = message["content"][:400]
                return CompressionResult(self.name, list(messages), [index])
        return CompressionResult(self.name, list(messages), [])


class DropsAResult:
    """Drops the first tool result and leaves its call unanswered."""

    name = "drops"

    def compress(self, messages):
        index = next(i for i, m in enumerate(messages) if m["role"] == "tool")
        return CompressionResult(
            self.name, list(messages[:index]) + list(messages[index + 1 :]), [index]
        )


class Grows:
    name = "grows"

    def compress(self, messages):
        bigger = [dict(m) for m in messages]
        bigger[-1]["content"] += " and more" * 50
        return CompressionResult(self.name, bigger, [len(bigger) - 1])


class Fails:
    name = "fails"

    def compress(self, messages):
        raise KeyError("tool_calls")


def test_the_library_s_own_strategy_keeps_every_rule():
    assert check_strategy(Careful(), [session_window()]) == []


def test_a_strategy_that_changes_its_input_is_named_and_the_caller_keeps_its_list():
    window = session_window()
    kept = copy.deepcopy(window)
    problems = check_strategy(InPlace(), [window])
    assert [problem.rule for problem in problems] == ["the input list is left as it was"]
    assert window == kept  # the chapter's session is not cut to 400 characters


def test_a_dropped_tool_result_names_the_call_left_unanswered():
    window = session_window()
    call_id = next(m for m in window if m["role"] == "tool")["tool_call_id"]
    (problem,) = check_strategy(DropsAResult(), [window])
    assert problem.rule == "the result is a valid conversation"
    assert problem.detail.startswith(
        f"tool call {call_id!r} of result[2] is never answered"
    )


def test_growing_failing_and_wrong_results_are_each_named():
    window = session_window()
    assert [p.rule for p in check_strategy(Grows(), [window])] == [
        "compression never grows the window"
    ]
    (failed,) = check_strategy(Fails(), [window])
    assert failed.rule == "compress must not fail"
    assert failed.detail == "it raised KeyError: 'tool_calls'"
    (no_method,) = check_strategy(object(), [window])
    assert no_method.detail == "object has no compress method"


def test_a_printed_list_of_problems_reads_as_sentences():
    problems = check_strategy(Grows(), [session_window()])
    assert repr(problems) == f"[{problems[0]}]"
    assert str(problems[0]).startswith("window 0: compression never grows the window — ")
