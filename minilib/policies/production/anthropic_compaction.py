"""The Anthropic API's server-side compaction (`compact_20260112`): a compaction block
replaces everything before it.

What the API does. With `context_management.edits = [{"type": "compact_20260112"}]` (beta
header `compact-2026-01-12`), a request whose input exceeds the `trigger` (default
150,000 input tokens, at least 50,000) is compacted on the server: the model summarises
the conversation with a default prompt (`PROMPT`, or `instructions` in its place), the
response opens with a `compaction` block holding the summary, and the reply continues
from it. The client appends the response as usual; on later requests the API drops every
message block before the compaction block. The system prompt is not part of the messages
and stays. Source: Anthropic docs, "Compaction" (build-with-claude/compaction);
docs/references.md.

Where the lab differs:
- the block is carried as a user-role message in front of the reply it opened (the API
  carries it at the start of that assistant turn): the same text, one message's
  structure tokens more.
- 150,000 and 50,000 are numbers for a 200k window: below 200k both are scaled with
  the window (a `trigger` given explicitly is used as given, and must be at least the
  scaled minimum).
- the docs do not say what becomes of a request already over the model's window; the
  lab reads it as the API does any request: an input over the window is an overflow
  (a `ContextOverflowError`), compaction or not.
- the input the trigger counts is the messages plus `overhead_tokens`, the caller's
  system prompt and tools (0 by default: an API has no agent's prompt).
- the summary is the lab's stand-in (`stand_in = True`), at most `summary_tokens` long
  (default 2.5% of the window); `pause_after_compaction` and `instructions` change what
  the client does and what the summary says, not when it happens: the lab has neither.
"""

from typing import List, Mapping, Optional, Sequence

from ...messages import check_int
from ...scale.bounded import MIN_BUDGET
from ...summary import summary_header
from ...tokens import TokenCounter, estimate_tokens
from ...window import ContextOverflowError
from .base import KeptHistory, Policy, Sent, stand_in_summarizer, system_head

PROMPT = (
    "You have written a partial transcript for the initial task above. Please write a "
    "summary of the transcript. The purpose of this summary is to provide continuity so "
    "you can continue to make progress towards solving the task in a future context, "
    "where the raw history above may not be accessible and will be replaced with this "
    "summary. Write down anything that would be helpful, including the state, next "
    "steps, learnings etc. You must wrap your summary in a <summary></summary> block."
)
WINDOW_OF_THE_NUMBERS = 200_000


class RequestOverWindowError(ContextOverflowError):
    """A request over the model's window: the API compacts only a request it accepts."""

    def __str__(self) -> str:
        return (
            f"the request needs {self.tokens:,} tokens, over the model's "
            f"{self.threshold:,}, before the API could compact it (largest message: "
            f"#{self.largest_index}, {self.largest_role}, {self.largest_tokens:,} tokens)"
        )


class AnthropicCompactionPolicy(Policy):
    key = "anthropic-compaction"
    title = "Anthropic API: server-side compaction"
    summary = (
        "When the input passes the trigger (150k tokens), the API summarises it into a "
        "compaction block and drops everything before that block from then on."
    )
    source = (
        "Anthropic docs: Compaction (compact_20260112), "
        "platform.claude.com/docs/en/build-with-claude/compaction; docs/references.md"
    )
    main_parameter = "trigger"
    threshold_parameter = "trigger"
    stand_in = True
    PROMPT = PROMPT

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        trigger: Optional[int] = None,
        summary_tokens: Optional[int] = None,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        scale = min(1.0, window_tokens / WINDOW_OF_THE_NUMBERS)
        self.minimum_trigger = max(1, round(50_000 * scale))
        self.trigger = (
            round(150_000 * scale)
            if trigger is None
            else check_int("trigger", trigger, minimum=self.minimum_trigger)
        )
        self.summary_tokens = (
            max(MIN_BUDGET, window_tokens // 40)
            if summary_tokens is None
            else check_int("summary_tokens", summary_tokens, minimum=MIN_BUDGET)
        )
        self.trigger_tokens = self.trigger
        self.summarize = stand_in_summarizer(self.summary_tokens)
        self.kept = KeptHistory()
        self.tokens = 0
        self.block: Optional[Mapping] = None  # the latest compaction block

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        for message in self.kept.take_new(history):
            self.tokens += self.count_tokens([message])
        messages = self.kept.messages
        counted = self.tokens + self.overhead_tokens  # the request's input
        if counted <= self.trigger:
            return Sent(list(messages), 0)
        if counted > self.window_tokens:
            sizes = [self.count_tokens([m]) for m in messages]
            largest = max(range(len(sizes)), key=sizes.__getitem__)
            raise RequestOverWindowError(
                counted, self.window_tokens, messages, largest, sizes[largest]
            )
        head = system_head(messages)
        if head == len(messages):
            return Sent(list(messages), 0)  # nothing but the system prompt
        earlier = {"role": "user", "content": summary_header(0) + self.block_text()}
        folded: List[Mapping] = [
            earlier if m is self.block else m for m in messages[head:]
        ]
        self.block = {"role": "user", "content": self.summarize(folded)}
        messages[head:] = [self.block]
        self.tokens = sum(self.count_tokens([m]) for m in messages)
        self.compacted(step, counted)
        return Sent(list(messages), 1)

    def block_text(self) -> str:
        return "" if self.block is None else self.block["content"]

    def parameters(self) -> dict:
        return {
            "trigger": self.trigger,
            "summary_tokens": self.summary_tokens,
            "overhead_tokens": self.overhead_tokens,
        }
