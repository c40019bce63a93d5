"""minilib.strategy: what a strategy returns, and how the core's strategies treat input
they trust (the window checked it on entry)."""

import copy

import pytest
from message_builders import BAD_CONVERSATIONS, OPENING, groups

from minilib import (
    CompressionResult,
    InvalidMessagesError,
    RollingSummary,
    Strategy,
    ToolResultAging,
    closed_range,
    scripted_summary,
)
from minilib.strategy import unchanged

CALLED_DIRECTLY = {
    "ToolResultAging.compress": lambda m: ToolResultAging(min_chars=0).compress(m),
    "RollingSummary.compress": lambda m: RollingSummary(scripted_summary, 0).compress(m),
    "closed_range": lambda m: closed_range(m, 0),
}


def test_a_result_is_changed_when_it_names_what_it_changed():
    messages = OPENING + groups("a")
    assert not unchanged("tool_result_aging", messages).changed
    assert unchanged("tool_result_aging", messages).messages is not messages
    assert CompressionResult("drop", messages[:2], [2, 3]).changed


def test_the_cores_strategies_are_strategies():
    assert isinstance(ToolResultAging(), Strategy)
    assert isinstance(RollingSummary(scripted_summary), Strategy)


@pytest.mark.parametrize("entry", CALLED_DIRECTLY)
@pytest.mark.parametrize("case", BAD_CONVERSATIONS)
def test_a_bad_list_given_directly_is_trusted_or_named_never_a_deep_trace(entry, case):
    # The window checks every list on entry; called directly, a strategy trusts its
    # input, and when a wrong type breaks it the full check names the message instead.
    messages, expected = BAD_CONVERSATIONS[case]
    before = copy.deepcopy(messages)
    try:
        CALLED_DIRECTLY[entry](messages)
    except InvalidMessagesError as error:
        assert str(error).startswith(expected)
    assert messages == before


def test_a_broken_summarizer_on_a_good_list_keeps_its_own_error():
    def broken(folded):
        raise TypeError("my summarizer is broken")

    with pytest.raises(TypeError, match="my summarizer is broken"):
        RollingSummary(broken, 0).compress(OPENING + groups("a", "b"))
