"""minilib.messages: validate_messages names the bad message and leaves the list alone."""

import copy

import pytest
from message_builders import BAD_CONVERSATIONS, OPENING, PAIR

from minilib import InvalidMessagesError, validate_messages


@pytest.mark.parametrize("case", BAD_CONVERSATIONS)
def test_a_bad_conversation_is_named_and_left_as_it_was(case):
    messages, expected = BAD_CONVERSATIONS[case]
    before = copy.deepcopy(messages)
    with pytest.raises(InvalidMessagesError) as raised:
        validate_messages(messages)
    assert str(raised.value).startswith(expected)
    assert messages == before


def test_not_a_list_is_named():
    with pytest.raises(
        InvalidMessagesError, match=r"^messages must be a list of messages, got dict$"
    ):
        validate_messages({"role": "user", "content": "u"})


def test_a_call_still_unanswered_at_the_end_is_allowed():
    validate_messages(
        OPENING + [PAIR[0]]
    )  # the model just made it; the loop answers it next
