"""minilib.aging: ToolResultAging keeps a result's head and tail under a size header."""

import pytest
from message_builders import assistant, tool

from minilib import (
    AGING_MARK,
    ToolResultAging,
    aged_content,
    estimate_tokens,
    is_aged,
)
from minilib.aging import first_unseen

LONG = "".join(f"line {n:03d}: some build output here\n" for n in range(100))


def history(content, error_code=None):
    return [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        assistant("read it", "c1"),
        tool("c1", content, error_code),
    ]


def test_header_head_omission_and_tail():
    aged = aged_content(LONG, 160, 120, "c1")
    header, rest = aged.split("\n", 1)
    assert header == f"{AGING_MARK} 原 {len(LONG)} 字符 / {len(LONG.splitlines())} 行"
    assert rest.startswith(LONG[:160])
    assert aged.endswith(LONG[-120:])
    omitted = len(LONG) - 280
    assert f"……(中段已省略 {omitted} 字符,完整内容见运行日志 tool_call_id=c1)……" in aged


def test_error_code_is_kept_in_the_header():
    aged = aged_content(LONG, 160, 120, "c1", error_code="NOT_FOUND")
    assert aged.splitlines()[0].endswith(" / 错误码 NOT_FOUND")
    result = ToolResultAging().compress(history(LONG, "NOT_FOUND"))
    assert result.messages[3]["content"].splitlines()[0].endswith("错误码 NOT_FOUND")
    assert result.messages[3]["error"]["code"] == "NOT_FOUND"


def test_ages_only_tool_messages_longer_than_min_chars():
    aging = ToolResultAging(min_chars=240)
    short = "x" * 240
    assert aging.compress(history(short)).affected_indexes == []
    assert aging.compress(history(LONG)).affected_indexes == [3]
    system_heavy = [{"role": "system", "content": LONG}] + history(LONG)[1:]
    assert aging.compress(system_heavy).affected_indexes == [
        3
    ]  # system content is never aged


def test_pairing_and_other_fields_are_kept_and_input_not_changed():
    messages = history(LONG)
    before = [dict(m) for m in messages]
    result = ToolResultAging().compress(messages)
    assert messages == before
    aged = result.messages[3]
    assert aged["tool_call_id"] == "c1" and aged["role"] == "tool"
    assert [m.get("role") for m in result.messages] == [m.get("role") for m in messages]
    assert estimate_tokens(result.messages) < estimate_tokens(messages)


def test_idempotent():
    once = ToolResultAging().compress(history(LONG)).messages
    twice = ToolResultAging().compress(once)
    assert twice.affected_indexes == [] and twice.messages == once
    assert is_aged(once[3])


def test_never_inflates_a_result_just_over_min_chars():
    content = "y" * 250
    aging = ToolResultAging()
    raw_tokens = estimate_tokens([tool("c1", content)])
    would_be = estimate_tokens([tool("c1", aged_content(content, 160, 120, "c1"))])
    assert would_be > raw_tokens  # the article's rule alone would make it bigger ...
    assert (
        aging.compress(history(content)).affected_indexes == []
    )  # ... so it is left alone


def test_ages_every_eligible_message_newest_included():
    messages = history(LONG) + [assistant("again", "c2"), tool("c2", LONG)]
    assert ToolResultAging().compress(messages).affected_indexes == [3, 5]


@pytest.mark.parametrize(
    "name,value", [("head_chars", -1), ("tail_chars", 1.5), ("min_chars", "240")]
)
def test_bad_parameters_are_named(name, value):
    with pytest.raises(ValueError, match=name):
        ToolResultAging(**{name: value})


# --- keep_unseen: age a result only once the model has been sent it
# ------------------------------------------------------------------


def test_first_unseen_is_just_after_the_last_assistant_message():
    system = {"role": "system", "content": "s"}
    user = {"role": "user", "content": "u"}
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    result = {"role": "tool", "tool_call_id": "c1", "content": "x" * 1000}
    assert first_unseen([system, user]) == 0
    assert first_unseen([system, user, call, result]) == 3
    assert first_unseen([system, user, call, result, {**call, "content": "ok"}]) == 5


def test_off_by_default_and_checked():
    assert ToolResultAging().keep_unseen is False
    assert ToolResultAging() == ToolResultAging(keep_unseen=False)
    with pytest.raises(ValueError, match="keep_unseen must be True or False"):
        ToolResultAging(keep_unseen="yes")


# --- errors
# --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: ToolResultAging(head_chars=-1), "head_chars must be >= 0, got -1"),
        (lambda: aged_content(42, 10, 10), "content must be a string, got int"),
        (lambda: aged_content("text", 10, -3), "tail_chars must be >= 0, got -3"),
    ],
)
def test_bad_arguments_are_named_with_their_value(make, expected):
    with pytest.raises(ValueError) as raised:
        make()
    assert str(raised.value) == expected
