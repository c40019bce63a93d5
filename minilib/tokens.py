"""Deterministic token estimate: the article's character-level rule.

CJK characters count 1 token each, every other character 1/4 token (rounded up per
message), each message costs 4 tokens of structure and each tool call 8 tokens plus
the length of its function name. It does not match any vendor tokenizer; what it
buys is that the same messages always give the same number, so traces can be
compared round by round. Every strategy takes the counter as a parameter, so a
real tokenizer can replace it.

Example: two CJK characters and ten others, then the 4 tokens of a message.

    >>> estimate_text_tokens("读取 notes.txt")  # 2 + ceil(10 / 4)
    5
    >>> estimate_tokens([{"role": "user", "content": "读取 notes.txt"}])
    9
"""

import re
from collections.abc import Mapping  # typing's Mapping is 3x slower in isinstance
from functools import lru_cache
from typing import Callable, Iterable, Optional

MESSAGE_OVERHEAD = 4
TOOL_CALL_OVERHEAD = 8

# CJK punctuation, kana, CJK extension A, unified ideographs, Hangul, full-width forms.
CJK_RANGES = (
    ("\u3000", "\u303f"),
    ("\u3040", "\u30ff"),
    ("\u3400", "\u4dbf"),
    ("\u4e00", "\u9fff"),
    ("\uac00", "\ud7af"),
    ("\uff00", "\uffef"),
)
_CJK_RE = re.compile("[" + "".join(f"{lo}-{hi}" for lo, hi in CJK_RANGES) + "]")

TokenCounter = Callable[[Iterable[Mapping]], int]


def count_cjk(text: str) -> int:
    """Number of characters of `text` that fall in the CJK ranges."""
    if text.isascii():  # the common case for tool output, and 10x faster than the regex
        return 0
    return len(_CJK_RE.findall(text))


# Replays count the same strings every round; a str caches its hash.
@lru_cache(maxsize=16384)
def estimate_text_tokens(text: str) -> int:
    """Tokens of one string: CJK characters 1 each, others 4 to a token, rounded up."""
    cjk = count_cjk(text)
    return cjk + (len(text) - cjk + 3) // 4


def tool_call_name(call: Mapping) -> str:
    """The function name of a tool call in the chat-completions shape."""
    return (call.get("function") or {}).get("name") or ""


def estimate_message_tokens(
    message: Mapping, count_text: Callable[[str], int] = estimate_text_tokens
) -> int:
    """Tokens of one message, structure overhead and tool calls included, its text by
    `count_text` (the article's rule unless told).

    A call's arguments are not counted: the article's rule counts only its name.
    """
    if not isinstance(message, Mapping):
        raise TypeError(f"a message must be a dict, got {type(message).__name__}")
    content = message.get("content") or ""
    if not isinstance(content, str):
        raise TypeError(f"message content must be a string, got {type(content).__name__}")
    total = MESSAGE_OVERHEAD + count_text(content)
    for call in message.get("tool_calls") or ():
        total += TOOL_CALL_OVERHEAD + len(tool_call_name(call))
    return total


def estimate_tokens(messages: Iterable[Mapping]) -> int:
    """Tokens of a whole message list: the number the window compares
    with its threshold."""
    if isinstance(messages, Mapping):
        raise TypeError(
            "estimate_tokens takes a list of messages; for one message, "
            "pass [message] or use estimate_message_tokens"
        )
    return sum(estimate_message_tokens(message) for message in messages)


# Counters known to be a plain sum over messages, and the count of one message they sum.
ADDITIVE_COUNTERS = {estimate_tokens: estimate_message_tokens}


def known_per_message(count_tokens) -> Optional[Callable[[Mapping], int]]:
    """The count of one message that `count_tokens` is a plain sum of, or None if that
    is not known. The estimate is one; a counter may say so with a `per_message`
    attribute (the real tokenizers' counters do). Knowing it lets a long window be
    counted by what changed instead of whole."""
    return getattr(count_tokens, "per_message", None) or ADDITIVE_COUNTERS.get(
        count_tokens
    )


def check_counter(count_tokens, name: str = "count_tokens") -> None:
    """Raise TypeError unless `count_tokens` takes a list of messages and returns an int.

    A counter of one message (like estimate_message_tokens) where a list counter is
    expected would otherwise fail deep inside a replay, rounds later.
    """
    if not callable(count_tokens):
        raise TypeError(f"{name} must be a function, got {type(count_tokens).__name__}")
    expected = (
        f"{name} must take a list of messages and return an int, like estimate_tokens"
    )
    try:
        counted = count_tokens([{"role": "user", "content": "probe"}])
    except Exception as error:
        raise TypeError(
            f"{expected}; given a one-message list it raised "
            f"{type(error).__name__}: {error}"
        ) from None
    if isinstance(counted, bool) or not isinstance(counted, int):
        raise TypeError(f"{expected}; it returned {type(counted).__name__}")
