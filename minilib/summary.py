"""Rolling summary: a closed group of old messages becomes one summary message.

The second, stronger line of defence: aging only shortens contents, but a long
session also pays 4 tokens of structure per message; a summary cuts the message
count. It replaces only the closed range (`minilib.ranges`): the protected head and
the last `protect_tail` messages are never touched, and no tool call is ever left
without its answer. "Rolling" means an earlier summary right after the head is
folded into the next one.

Beyond the article: a log with several user turns (Claude Code, Codex) stops
rolling at the second turn, since the article's range holds assistant and tool
messages only. `fold_user_turns=True` lets the range hold later user turns too, and
the system or developer messages a harness writes between them (Codex Desktop's
permission messages); the summarizer quotes them verbatim, and the head (the leading
system messages and the first task message) stays protected.

Example: with the last message protected, the two closed groups fold into one
summary (a stand-in summarizer that only counts what it folds).

    >>> def call(i):
    ...     return {"id": i, "type": "function",
    ...             "function": {"name": "read_file", "arguments": "{}"}}
    >>> messages = [{"role": "user", "content": "task"}]
    >>> for i in ("c1", "c2"):
    ...     messages += [{"role": "assistant", "content": "", "tool_calls": [call(i)]},
    ...                  {"role": "tool", "tool_call_id": i, "content": "ok"}]
    >>> messages.append({"role": "assistant", "content": "done"})
    >>> summary = RollingSummary(lambda folded: f"({len(folded)} messages)", 1)
    >>> result = summary.compress(messages)
    >>> result.affected_indexes
    [1, 2, 3, 4]
    >>> [message["content"] for message in result.messages]
    ['task', '[滚动摘要] 折叠了 4 条早期消息\\n(4 messages)', 'done']
"""

from dataclasses import dataclass
from typing import Callable, List, Mapping, Sequence

from .markers import SUMMARY_MARK
from .messages import check_int, named_if_malformed
from .ranges import closed_range
from .strategy import CompressionResult, unchanged
from .tokens import TokenCounter, estimate_tokens

Summarizer = Callable[[Sequence[Mapping]], str]


def summary_header(folded: int) -> str:
    """The summary message's first line (and its newline), before the summary text."""
    return f"{SUMMARY_MARK} 折叠了 {folded} 条早期消息\n"


@dataclass
class RollingSummary:
    """Replace the oldest closed range with one user-role summary message.

    `summarize` is the model adapter's summarize(messages) -> str: the scripted model
    gives a deterministic text; a real harness would make one LLM call there.
    """

    summarize: Summarizer
    protect_tail: int = 4
    count_tokens: TokenCounter = estimate_tokens
    fold_user_turns: bool = False
    name: str = "rolling_summary"

    def __post_init__(self):
        check_int("protect_tail", self.protect_tail)

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult:
        """A new list, the closed range folded into a summary; the input is unchanged."""
        span = closed_range(
            messages, self.protect_tail, fold_user_turns=self.fold_user_turns
        )
        if len(span) == 0:
            return unchanged(self.name, messages)
        folded = list(messages[span.start : span.stop])
        with named_if_malformed(messages):
            text = self.summarize(folded)
            summary = {"role": "user", "content": summary_header(len(folded)) + text}
            result: List[Mapping] = (
                list(messages[: span.start]) + [summary] + list(messages[span.stop :])
            )
            inflates = self.count_tokens(result) >= self.count_tokens(messages)
        if inflates:
            return unchanged(self.name, messages)  # a summary must never inflate
        call = {"purpose": "summary", "input": folded, "reply": text}
        return CompressionResult(self.name, result, list(span), [call])
