"""Tool-result aging: an overlong tool message keeps a header, its head and its tail.

The cheapest compression and the first line of defence: only the content of tool
messages changes, so the message count, the roles and every tool_call_id pairing
stay exactly as they were. The header keeps what a model needs to reason about the
cut (how big the result was, whether it failed), and its marker makes aging
idempotent: an aged message is never aged again.

The article ages the newest result too, in the very round it arrives, so the model
never reads the middle of a long result, not even once. `keep_unseen=True` is the
production alternative (Anthropic's context editing and the OpenAI Agents SDK's
trimmer keep the most recent tool results): a result is aged only after the model
has been sent it once, that is when an assistant message follows it in the window.

Example: a 300-character result keeps 12 characters of head and 8 of tail.

    >>> print(aged_content("0123456789" * 30, head_chars=12, tail_chars=8,
    ...                    tool_call_id="c1"))
    [已老化] 原 300 字符 / 1 行
    012345678901
    ……(中段已省略 280 字符,完整内容见运行日志 tool_call_id=c1)……
    23456789
"""

from dataclasses import dataclass
from functools import lru_cache
from typing import List, Mapping, Optional, Sequence

from .markers import AGING_MARK, OMISSION_LINE, cut_content, is_aged, size_header
from .messages import check_int, is_observation, named_if_malformed, output_id
from .strategy import CompressionResult
from .tokens import TokenCounter, estimate_tokens


def aged_content(
    content: str,
    head_chars: int,
    tail_chars: int,
    tool_call_id: str = "",
    error_code: Optional[str] = None,
) -> str:
    """The aged form of a tool result: header, head, omission line, tail.

    The entry point for a text of your own, so it checks its arguments."""
    if not isinstance(content, str):
        raise ValueError(f"content must be a string, got {type(content).__name__}")
    check_int("head_chars", head_chars)
    check_int("tail_chars", tail_chars)
    header = size_header(AGING_MARK, content, error_code)
    return cut_content(
        content, header, head_chars, tail_chars, OMISSION_LINE, tool_call_id
    )


def _cut(content: str, head_chars: int, tail_chars: int, tool_call_id, code) -> str:
    """What aged_content returns, without the checks (the strategy checked its own
    settings once). Each time a long replay compresses, aging is offered the same
    results again, many of them too short to shrink: the same arguments then give back
    the same text (the same object, so the counter's own cache knows its count too)."""
    arguments = (content, head_chars, tail_chars, tool_call_id, code)
    if isinstance(code, (str, int, type(None))):  # the usual codes: remembered
        return _remembered_cut(*arguments)
    return _remembered_cut.__wrapped__(*arguments)


@lru_cache(maxsize=16384)
def _remembered_cut(content, head_chars, tail_chars, tool_call_id, code) -> str:
    header = size_header(AGING_MARK, content, code)
    return cut_content(
        content, header, head_chars, tail_chars, OMISSION_LINE, tool_call_id
    )


def first_unseen(messages: Sequence[Mapping]) -> int:
    """Where the messages the model has not been sent yet begin: just after the last
    assistant message (0 when there is none). Everything from there on arrived after
    the model's latest reply."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "assistant":
            return index + 1
    return 0


@dataclass
class ToolResultAging:
    """Age every overlong tool message, wherever it is, the newest included.

    Overlong means more than `min_chars` characters.
    Protecting recent messages would not help here: early in a session a single
    huge result is the whole problem, and cutting its content breaks no pairing.
    Beyond the article, a message whose aged form would not be smaller (by the
    counter in use) is left alone: aging must never inflate the window.
    With `keep_unseen=True` (off by default: the article's rule) a result the model
    has not been sent yet, one that no assistant message follows, is left whole.
    """

    head_chars: int = 160
    tail_chars: int = 120
    min_chars: int = 240
    count_tokens: TokenCounter = estimate_tokens
    name: str = "tool_result_aging"
    keep_unseen: bool = False

    def __post_init__(self):
        check_int("head_chars", self.head_chars)
        check_int("tail_chars", self.tail_chars)
        check_int("min_chars", self.min_chars)
        if not isinstance(self.keep_unseen, bool):
            raise ValueError(
                f"keep_unseen must be True or False, got {self.keep_unseen!r}"
            )

    def age_message(self, message: Mapping) -> Optional[dict]:
        """The aged copy of `message`; None if it may not be aged or would not shrink."""
        content = message.get("content") or ""
        if len(content) <= self.min_chars:  # first: most messages of a window are short
            return None
        is_output = message.get("role") == "tool" or is_observation(message)
        # a result the harness wrote for a call that never returned holds no output
        if not is_output or is_aged(message) or message.get("synthetic"):
            return None
        error = message.get("error") or {}
        tool_call_id = output_id(message)  # what the trace keeps the whole output under
        aged_text = _cut(
            content, self.head_chars, self.tail_chars, tool_call_id, error.get("code")
        )
        aged = dict(message, content=aged_text)
        if self.count_tokens([aged]) >= self.count_tokens([message]):
            return None
        return aged

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult:
        """A new list with every eligible tool message aged; the input is not changed.

        It trusts `messages`: the window checked them on entry."""
        with named_if_malformed(messages):
            result: List[Mapping] = list(messages)
            affected = []
            seen = first_unseen(messages) if self.keep_unseen else len(messages)
            for index, message in enumerate(messages[:seen]):
                content = message.get("content")
                short_or_aged = type(content) is str and (
                    len(content) <= self.min_chars or content.startswith(AGING_MARK)
                )
                if short_or_aged:  # most of a long window: no call needed to say so
                    continue
                aged = self.age_message(message)
                if aged is not None:
                    result[index] = aged
                    affected.append(index)
        return CompressionResult(self.name, result, affected)
