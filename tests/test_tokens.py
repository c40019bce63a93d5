"""minilib.tokens: the deterministic token estimate, and what a token counter must be."""

import pytest
from message_builders import assistant, tool

from minilib import ContextWindow, Settings, estimate_tokens, load_session, run_session
from minilib.tokens import (
    count_cjk,
    estimate_message_tokens,
    estimate_text_tokens,
)


def test_ascii_counts_four_characters_a_token_rounded_up():
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("abcd") == 1
    assert estimate_text_tokens("abcde") == 2
    assert estimate_text_tokens("a" * 400) == 100


def test_cjk_counts_one_token_a_character():
    assert estimate_text_tokens("上下文窗口") == 5
    assert (
        estimate_text_tokens("上下文 window") == 3 + 2
    )  # 3 CJK, then " window" is 7 others -> 2


def test_cjk_ranges_inclusive_at_both_ends():
    inside = [
        "\u3000",
        "\u303f",
        "\u3040",
        "\u30ff",
        "\u3400",
        "\u4dbf",
        "\u4e00",
        "\u9fff",
        "\uac00",
        "\ud7af",
        "\uff00",
        "\uffef",
    ]
    outside = [
        "\u2fff",
        "\u3100",
        "\u33ff",
        "\u4dc0",
        "\ua000",
        "\uabff",
        "\ud7b0",
        "\ufeff",
        "\ufff0",
        "…",
        "é",
        "—",
    ]
    assert [count_cjk(ch) for ch in inside] == [1] * len(inside)
    assert [count_cjk(ch) for ch in outside] == [0] * len(outside)
    assert (
        estimate_text_tokens("，。") == 2
    )  # full-width punctuation is in U+FF00-FFEF / U+3000-303F


def test_message_overhead_and_tool_calls():
    assert estimate_message_tokens({"role": "user", "content": ""}) == 4
    assert estimate_message_tokens({"role": "assistant", "content": None}) == 4
    message = assistant("abcd", "c1", "c2", name="read_file")
    assert estimate_message_tokens(message) == 4 + 1 + 2 * (8 + len("read_file"))


def test_a_list_rounds_each_message_on_its_own():
    # "a" alone is 1 token after rounding up, so two one-character messages cost
    # 2 x (4 + 1) = 10, not 4 + 4 + ceil(2 / 4) = 9 as one joined text would.
    assert estimate_tokens([{"role": "user", "content": "a"}] * 2) == 10
    messages = [
        {"role": "system", "content": "你好 agent"},  # 4 + 2 CJK + ceil(6 / 4)
        assistant("go", "c1"),  # 4 + ceil(2 / 4) + 8 + len("read_file")
        tool("c1", "x" * 33),  # 4 + ceil(33 / 4)
    ]
    assert estimate_tokens(messages) == (4 + 2 + 2) + (4 + 1 + 8 + 9) + (4 + 9)
    # the per-string cache must not leak between different strings of the same length
    assert estimate_tokens([{"role": "user", "content": "长" * 8}]) == 12
    assert estimate_tokens([{"role": "user", "content": "l" * 8}]) == 6


def test_wrong_inputs_get_a_clear_error():
    with pytest.raises(TypeError, match=r"takes a list of messages; for one message"):
        estimate_tokens({"role": "user", "content": "hi"})
    with pytest.raises(TypeError, match="message content must be a string, got list"):
        estimate_tokens([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    with pytest.raises(TypeError, match="a message must be a dict, got str"):
        estimate_tokens(["hi"])


def test_arguments_are_not_counted_and_emoji_fall_under_other():
    # What chapter 2 says of the rule: a 4,000-character argument costs nothing, and
    # emoji or Cyrillic are "other" characters (a quarter token each).
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "read_file", "arguments": "x" * 4000},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    assert estimate_message_tokens(message) == 4 + 8 + len("read_file")
    assert estimate_text_tokens("😀😀😀😀") == 1 and estimate_text_tokens("окно") == 1


def test_a_counter_of_one_message_where_a_list_counter_belongs_is_named():
    """Chapter 2's exercise 4: a per-message counter passed as count_tokens."""
    with pytest.raises(TypeError) as raised:
        run_session(load_session(), Settings(), count_tokens=estimate_message_tokens)
    assert str(raised.value).startswith(
        "count_tokens must take a list of messages and return an int, like "
        "estimate_tokens; given a one-message list it raised TypeError"
    )
    with pytest.raises(TypeError, match="count_tokens must be a function, got int"):
        ContextWindow(1200, [], 5)
    with pytest.raises(TypeError, match="; it returned str"):
        ContextWindow(1200, [], lambda messages: "12")
