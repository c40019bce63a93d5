"""Rolling summary: a closed group of old assistant/tool messages becomes one summary message.

The second, stronger line of defence: aging only shortens contents, but a long
session also pays 4 tokens of structure per message; a summary cuts the message
count. Its rules are hard constraints:
- the protected head (leading system messages and the first user message) is never touched;
- the last `protect_tail` messages are never touched, so the model's current chain of
  reasoning stays verbatim;
- only a *closed* range is replaced: assistant/tool messages only, every tool call
  in it answered in it, so no tool call is ever left unanswered (parallel calls
  included) and no tool result is left without its call.
"Rolling" means an earlier summary right after the head is folded into the next one.
"""

from dataclasses import dataclass
from typing import Callable, Iterator, List, Mapping, NamedTuple, Optional, Sequence

from .messages import call_ids, check_int, protected_head_length, validate_messages
from .strategy import CompressionResult
from .tokens import TokenCounter, estimate_tokens

SUMMARY_MARK = "[滚动摘要]"

Summarizer = Callable[[Sequence[Mapping]], str]


def is_summary(message: Mapping) -> bool:
    return message.get("role") == "user" and (message.get("content") or "").startswith(SUMMARY_MARK)


class RangeCandidate(NamedTuple):
    """One step of the range-narrowing loop: the range [start, end) and why it is (not) closed."""

    start: int
    end: int
    closed: bool
    reason: str


def why_not_closed(messages: Sequence[Mapping], start: int, end: int,
                   carried: Callable[[Mapping], bool] = is_summary) -> Optional[str]:
    """Why messages[start:end] may not be replaced as one block, or None when it may.

    Closed means: only assistant/tool messages (an earlier fold at `start`, which
    `carried` recognises, is folded again), and every tool call in it answered in it.
    Every group-level path (summary, truncation, store) cuts only closed ranges.
    """
    calls, answers = set(), set()
    for index in range(start, end):
        message = messages[index]
        if index == start and carried(message):
            continue  # an earlier fold (a summary, a store index) is folded again
        role = message.get("role")
        if role not in ("assistant", "tool"):
            return f"message {index} is a {role} message"
        calls.update(call_ids(message))
        if role == "tool":
            answers.add(message.get("tool_call_id"))
    if calls - answers:
        return "unanswered tool call " + ", ".join(sorted(calls - answers))
    if answers - calls:
        return "tool result without its call " + ", ".join(sorted(answers - calls))
    return None


def range_candidates(messages: Sequence[Mapping], protect_tail: int,
                     carried: Callable[[Mapping], bool] = is_summary) -> Iterator[RangeCandidate]:
    """The narrowing loop, one candidate at a time, ending at the first closed range.

    The range starts right after the protected head (including an earlier fold there,
    which `carried` recognises) and ends before the protected tail; while it is not
    closed its end moves one message earlier. An empty range (nothing may be
    summarized) is the last candidate when no closed one exists.
    """
    validate_messages(messages)
    check_int("protect_tail", protect_tail)
    start = protected_head_length(messages)
    first_new = start + 1 if start < len(messages) and carried(messages[start]) else start
    end = len(messages) - protect_tail
    while end > first_new:
        reason = why_not_closed(messages, start, end, carried)
        yield RangeCandidate(start, end, reason is None, reason or "closed")
        if reason is None:
            return
        end -= 1
    yield RangeCandidate(start, start, False, "nothing left to summarize")


def summary_range(messages: Sequence[Mapping], protect_tail: int,
                  carried: Callable[[Mapping], bool] = is_summary) -> range:
    """The closed range a summary would replace (empty when there is none).

    Every group-level path (summary, truncation, store) cuts exactly this range.
    """
    *_, last = range_candidates(messages, protect_tail, carried)
    return range(last.start, last.end) if last.closed else range(last.start, last.start)


@dataclass
class RollingSummary:
    """Replace the oldest closed range with one user-role summary message.

    `summarize` is the model adapter's summarize(messages) -> str: the scripted model
    gives a deterministic text; a real harness would make one LLM call there.
    """

    summarize: Summarizer
    protect_tail: int = 4
    count_tokens: TokenCounter = estimate_tokens
    name: str = "rolling_summary"

    def __post_init__(self):
        check_int("protect_tail", self.protect_tail)

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult:
        """Return a new list with the closed range folded into a summary; the input is not changed."""
        span = summary_range(messages, self.protect_tail)
        if len(span) == 0:
            return CompressionResult(self.name, list(messages), [])
        folded = list(messages[span.start:span.stop])
        text = self.summarize(folded)
        summary = {"role": "user", "content": f"{SUMMARY_MARK} 折叠了 {len(folded)} 条早期消息\n{text}"}
        result: List[Mapping] = list(messages[:span.start]) + [summary] + list(messages[span.stop:])
        if self.count_tokens(result) >= self.count_tokens(messages):
            return CompressionResult(self.name, list(messages), [])  # a summary must never inflate
        call = {"purpose": "summary", "input": folded, "reply": text}
        return CompressionResult(self.name, result, list(span), [call])
