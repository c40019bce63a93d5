"""Codex CLI: every tool output cut to head + tail, then a handoff summary at 90%.

What Codex does. Each tool output is cut as it enters the history when it is over 10 KiB
or 256 lines: a header `Total output lines: N`, the head, a line saying what was cut
(`[... omitted K of N lines ...]`, or `[... output truncated to fit 10240 bytes ...]`
when the lines are few but long), the tail; at most 10 KiB survive. When the history
reaches the auto-compact limit, 90% of the context window (the setting
`model_auto_compact_token_limit` may only lower it: Codex takes the smaller), Codex
asks the model for a "handoff summary" (`PROMPT`, Codex's `templates/compact/prompt.md`)
and replaces the history with its initial context (the system prompt), the user's
messages, newest first up to 20,000 tokens (the one that crosses the budget cut to
fit), and the summary as a last user message that opens with `SUMMARY_PREFIX`
(`templates/compact/summary_prefix.md`).
Sources: openai/codex `codex-rs/core/src/compact.rs`, `context_manager/truncate.rs`;
docs/references.md.

Where the lab differs:
- environment output recorded as a user message (an observation) is cut like a tool
  output; user messages are the non-observation ones.
- 20,000 is a number for a 200k window: below 200k it is scaled with the window. The
  10 KiB / 256-line cut is per output and is not scaled.
- tokens of a user message are the lab's text estimate (Codex also estimates, at 4
  bytes a token); the message that crosses the budget keeps its head and tail and says
  how many tokens were cut.
- the summary is the lab's stand-in (`stand_in = True`), at most `summary_tokens` long
  (default 2.5% of the window), and it reads the whole history even past the window
  (Codex then drops its oldest items and retries). Newer Codex models use a token
  budget for the cut (`TruncationPolicy`); the lab keeps the byte/line rule.
"""

from typing import List, Mapping, Optional, Sequence

from ...messages import check_int, is_observation
from ...scale.bounded import MIN_BUDGET
from ...summary import summary_header
from ...tokens import TokenCounter, estimate_text_tokens, estimate_tokens
from .base import KeptHistory, Policy, Sent, stand_in_summarizer, system_head

SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process. You also have access to the state of the tools that were used by "
    "that language model. Use this to build on the work that has already been done and "
    "avoid duplicating work. Here is the summary produced by the other language model, "
    "use the information in this summary to  assist with your own analysis:"
)
PROMPT = (
    "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for "
    "another LLM that will resume the task.\n\n"
    "Include:\n"
    "- Goal / user objective\n"
    "- Current progress and key decisions made\n"
    "- Important context, constraints, or user preferences\n"
    "- What remains to be done (clear next steps)\n"
    "- Any critical data, examples, or references needed to continue\n\n"
    "Be concise, structured, and focused on helping the next LLM seamlessly continue "
    "the work.\n"
)
OMISSION_MARKER_LINES = 3  # "\n[... omitted K of N lines ...]\n\n"
WINDOW_OF_THE_NUMBERS = 200_000


def _lines(text: str) -> int:
    """Lines as Rust's `str::lines` counts them (a final newline opens no line)."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _segments(text: str) -> List[str]:
    """`text` split after each newline, newlines kept (Rust's `split_inclusive`)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _head(text: str, budget: int) -> str:
    """The longest prefix of at most `budget` UTF-8 bytes, cut at a character."""
    return text.encode()[: max(budget, 0)].decode("utf-8", "ignore")


def _tail(text: str, budget: int) -> str:
    """The longest suffix of at most `budget` UTF-8 bytes, cut at a character."""
    if budget <= 0:
        return ""
    return text.encode()[-budget:].decode("utf-8", "ignore")


def _size(text: str) -> int:
    return len(text.encode())


def truncate_output(
    content: str, max_bytes: int = 10 * 1024, max_lines: int = 256
) -> str:
    """`content` as Codex shows a tool output to the model: unchanged within
    `max_bytes` and `max_lines`, else a header, head and tail, and what was cut."""
    total = _lines(content)
    by_bytes, by_lines = _size(content) > max_bytes, total > max_lines
    if not by_bytes and not by_lines:
        return content
    if by_lines:
        body = _by_lines(content, total, max_bytes, max_lines)
        if by_bytes and _size(body) > max_bytes:
            body = _both(body, max_bytes)
    else:
        marker = f"\n[... output truncated to fit {max_bytes} bytes ...]\n\n"
        body = _head(content, min(max_bytes // 2, max_bytes - _size(marker))) + marker
        body += _tail(content, max_bytes - _size(body))
    return f"Total output lines: {total}\n\n{body}"


def _by_lines(content: str, total: int, max_bytes: int, max_lines: int) -> str:
    segments = _segments(content)
    available = max_lines
    if len(segments) > max_lines:
        available = max(max_lines - OMISSION_MARKER_LINES, 0)
    head_take = min(available // 2, len(segments))
    tail_take = min(available - head_take, len(segments) - head_take)
    omitted = len(segments) - head_take - tail_take
    head = "".join(segments[:head_take])
    tail = "".join(segments[len(segments) - tail_take :]) if tail_take else ""
    marker = f"\n[... omitted {omitted} of {total} lines ...]\n\n" if omitted else ""
    result = _head(head, min(max_bytes // 2, max_bytes - _size(marker))) + marker
    return result + _tail(tail, max_bytes - _size(result))


def _both(cut: str, max_bytes: int) -> str:
    """A line cut still over `max_bytes`: its head and tail halved around the marker."""
    segments = _segments(cut)
    at = next(
        (i for i, segment in enumerate(segments) if "[... omitted" in segment),
        len(segments) // 2,
    )
    head, tail = "".join(segments[:at]), "".join(segments[at + 1 :])
    marker = segments[at] if at < len(segments) else ""
    room = max(max_bytes - _size(marker), 0)
    head_budget = min(room // 2, _size(head))
    tail_budget = min(room - head_budget, _size(tail))
    return _head(head, head_budget) + marker + _tail(tail, tail_budget)


def _fit_tokens(text: str, budget: int) -> str:
    """`text` cut to about `budget` tokens: head, tail, and how many tokens were cut."""
    cut = estimate_text_tokens(text) - budget
    half = min(budget * 2, len(text) // 2)  # 4 characters a token, half at each end
    return f"{text[:half]}…{cut} tokens truncated…{text[len(text) - half :]}"


class CodexPolicy(Policy):
    key = "codex"
    title = "Codex CLI: output cut, handoff summary at 90%"
    summary = (
        "Cuts each tool output to 10 KiB / 256 lines (head + tail); at 90% of the window "
        "replaces the history with the user's messages and a handoff summary."
    )
    source = (
        "openai/codex: codex-rs/core/src/compact.rs, templates/compact/prompt.md, "
        "context_manager/truncate.rs; docs/references.md"
    )
    main_parameter = "auto_compact_token_limit"
    stand_in = True
    PROMPT = PROMPT

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        auto_compact_token_limit: Optional[int] = None,
        max_output_bytes: int = 10 * 1024,
        max_output_lines: int = 256,
        user_message_tokens: Optional[int] = None,
        summary_tokens: Optional[int] = None,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        ninety = window_tokens * 9 // 10
        if auto_compact_token_limit is None:
            self.auto_compact_token_limit = ninety
        else:
            limit = check_int(
                "auto_compact_token_limit", auto_compact_token_limit, minimum=1
            )
            self.auto_compact_token_limit = min(limit, ninety)  # only ever lowered
        self.max_output_bytes = check_int(
            "max_output_bytes", max_output_bytes, minimum=64
        )
        self.max_output_lines = check_int("max_output_lines", max_output_lines, minimum=8)
        scale = min(1.0, window_tokens / WINDOW_OF_THE_NUMBERS)
        self.user_message_tokens = (
            round(20_000 * scale)
            if user_message_tokens is None
            else check_int("user_message_tokens", user_message_tokens)
        )
        self.summary_tokens = (
            max(MIN_BUDGET, window_tokens // 40)
            if summary_tokens is None
            else check_int("summary_tokens", summary_tokens, minimum=MIN_BUDGET)
        )
        self.trigger_tokens = self.auto_compact_token_limit
        self.summarize = stand_in_summarizer(self.summary_tokens)
        self.kept = KeptHistory()
        self.tokens = 0
        self.summary_message: Optional[Mapping] = None
        self.earlier = ""

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        messages = self.kept.messages
        start = len(messages)
        self.kept.take_new(history)
        for place in range(start, len(messages)):
            message = messages[place]
            if message.get("role") == "tool" or is_observation(message):
                content = message.get("content") or ""
                cut = truncate_output(
                    content, self.max_output_bytes, self.max_output_lines
                )
                if cut != content:
                    message = messages[place] = dict(message, content=cut)
            self.tokens += self.count_tokens([message])
        compacted = self.tokens >= self.auto_compact_token_limit and self.compact()
        return Sent(list(messages), 1 if compacted else 0)

    def compact(self) -> bool:
        """The initial context, the user's recent messages, the handoff summary."""
        messages = self.kept.messages
        head = system_head(messages)
        if head == len(messages):
            return False
        users = [
            m["content"]
            for m in messages[head:]
            if m.get("role") == "user"
            and not is_observation(m)
            and m is not self.summary_message
        ]
        earlier = {"role": "user", "content": summary_header(0) + self.earlier}
        folded: List[Mapping] = [  # the earlier summary, as the stand-in reads its own
            earlier if m is self.summary_message else m for m in messages[head:]
        ]
        self.earlier = self.summarize(folded)
        self.summary_message = {
            "role": "user",
            "content": f"{SUMMARY_PREFIX}\n{self.earlier or '(no summary available)'}",
        }
        kept = [{"role": "user", "content": text} for text in self.recent_users(users)]
        messages[head:] = kept + [self.summary_message]
        self.tokens = sum(self.count_tokens([m]) for m in messages)
        return True

    def recent_users(self, users: List[str]) -> List[str]:
        """The user's messages, newest first, within the budget; oldest first again."""
        selected, remaining = [], self.user_message_tokens
        for text in reversed(users):
            if remaining <= 0:
                break
            tokens = estimate_text_tokens(text)
            if tokens <= remaining:
                selected.append(text)
                remaining -= tokens
            else:
                selected.append(_fit_tokens(text, remaining))
                break
        return selected[::-1]

    def parameters(self) -> dict:
        return {
            "auto_compact_token_limit": self.auto_compact_token_limit,
            "max_output_bytes": self.max_output_bytes,
            "max_output_lines": self.max_output_lines,
            "user_message_tokens": self.user_message_tokens,
            "summary_tokens": self.summary_tokens,
        }
