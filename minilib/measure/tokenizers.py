"""Real tokenizers beside the estimate: o200k_base and cl100k_base, offline.

Optional: needs the `bpe-openai` package (`pip install -e '.[tokenizers]'`), whose
wheel ships both vocabularies, so nothing is downloaded at run time. Everything
else in minilib works without it; asking for a tokenizer without it raises
TokenizerUnavailable with the install command.

A real counter keeps the estimate's structure costs (4 tokens a message, 8 a tool
call) and replaces only the text rule, so a difference between the two is a
difference in how text is tokenized, nothing else. Unlike the estimate it also
counts a tool call's arguments, as a provider does.
"""

from functools import lru_cache
from typing import Callable, Iterable, Mapping

from ..tokens import MESSAGE_OVERHEAD, TOOL_CALL_OVERHEAD, TokenCounter, tool_call_name

ENCODINGS = ("o200k_base", "cl100k_base")
INSTALL_HINT = "pip install -e '.[tokenizers]'  (or: pip install bpe-openai)"


class TokenizerUnavailable(ImportError):
    """The optional tokenizer package is not installed, or the encoding is unknown."""


def available() -> bool:
    """True when bpe-openai can be imported."""
    try:
        import bpe_openai  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=None)
def _encoding(name: str):
    if name not in ENCODINGS:
        raise TokenizerUnavailable(
            f"unknown encoding {name!r}; expected one of {', '.join(ENCODINGS)}"
        )
    try:
        import bpe_openai
    except ImportError:
        raise TokenizerUnavailable(
            f"real tokenizer counts need the optional package bpe-openai: {INSTALL_HINT}"
        ) from None
    return bpe_openai.get_encoding(name)


def text_counter(name: str) -> Callable[[str], int]:
    """Tokens of one string under encoding `name` (special-token text counts
    as plain text)."""
    encoding = _encoding(name)

    @lru_cache(maxsize=4096)
    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=())) if text else 0

    return count


@lru_cache(maxsize=None)
def message_counter(name: str) -> TokenCounter:
    """A drop-in for `estimate_tokens`: message lists in, tokens under
    encoding `name` out."""
    count_text = text_counter(name)

    def count_message(message: Mapping) -> int:
        total = MESSAGE_OVERHEAD + count_text(message.get("content") or "")
        for call in message.get("tool_calls") or ():
            arguments = (call.get("function") or {}).get("arguments") or ""
            total += (
                TOOL_CALL_OVERHEAD
                + count_text(tool_call_name(call))
                + count_text(arguments)
            )
        return total

    def count_tokens(messages: Iterable[Mapping]) -> int:
        return sum(map(count_message, messages))

    count_tokens.__name__ = f"count_tokens_{name}"
    # A sum over messages: a window that tracks what each round appended
    # (FastWindow) counts only the new messages with it, and a summary's budget is
    # measured with the same text rule.
    count_tokens.per_message = count_message
    count_tokens.count_text = count_text
    count_message.counts_arguments = True  # what measure.recorded_usage adds otherwise
    return count_tokens
