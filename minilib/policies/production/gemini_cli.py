"""Gemini CLI: at half the model's token limit, a `<state_snapshot>` of the older 70%.

What Gemini CLI does (`chatCompressionService.ts`). Before a turn, when the last prompt
reached `COMPRESSION_TOKEN_THRESHOLD` (0.5) of the model's token limit, it first cuts
tool outputs to a shared budget: walking from the newest back, function responses are
kept whole while their tokens fit in `COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET`
(50,000); each older one that does not fit is saved to a file and replaced by its last
30 lines under `Output too large. For full output see: <file>`. It then splits the
history so the newest `COMPRESSION_PRESERVE_THRESHOLD` (30%) stays: the split may only
fall on a user turn that is not a function response (or after a final model answer);
with no such turn past the 70% mark it takes the last one before it, and at the first
turn it compresses nothing. The older part goes to the model, which writes a
`<state_snapshot>` and then checks it in a second call; the history becomes the
snapshot (a user message), the model's "Got it. Thanks for the additional context!",
and the newer part. A compression that would make the history larger is dropped, and
from then on Gemini CLI only cuts tool outputs. Sources: google-gemini/gemini-cli
`packages/core/src/services/chatCompressionService.ts`; docs/references.md.

Where the lab differs:
- the split is measured in the lab's tokens where Gemini CLI counts the characters of
  each JSON-encoded content; the trigger compares the window about to be sent, where
  Gemini CLI compares the last prompt's count.
- tool messages and environment output recorded as user messages (observations) are
  function responses; a system message is Gemini's system instruction, never split.
- a session with one user turn has no split point past its start: Gemini CLI compresses
  nothing there, and neither does the lab (such a session runs until it overflows).
- 50,000 is a number for a 200k window: below 200k it is scaled with the window (Gemini
  models have larger windows still). Newer Gemini CLI versions cut an old output to its
  first 20% and last 80% of a character budget instead of its last 30 lines.
- the snapshot is the lab's stand-in (`stand_in = True`), at most `summary_tokens` long
  (default 2.5% of the window); each compression counts two summary calls (the snapshot
  and its check).
"""

from typing import List, Mapping, Optional, Sequence

from ...messages import check_int, is_observation
from ...scale.bounded import MIN_BUDGET
from ...summary import summary_header
from ...tokens import TokenCounter, estimate_tokens, tool_call_name
from .base import KeptHistory, Policy, Sent, stand_in_summarizer, system_head

ACKNOWLEDGEMENT = "Got it. Thanks for the additional context!"
OUTPUT_FILE = ".gemini/tmp/tool-outputs/{name}_{number}.txt"
WINDOW_OF_THE_NUMBERS = 200_000
CALLS_PER_COMPRESSION = 2  # the snapshot, then the call that checks it


def is_function_response(message: Mapping) -> bool:
    return message.get("role") == "tool" or is_observation(message)


def is_split_point(message: Mapping) -> bool:
    """A user turn that is not a function response."""
    return message.get("role") == "user" and not is_observation(message)


def find_split_point(sizes: Sequence[int], messages: Sequence[Mapping], fraction: float):
    """The index of the oldest message to keep (Gemini CLI's `findCompressSplitPoint`):
    the first user turn at or past `fraction` of the total size, else the last one
    before it (0: compress nothing), or everything after a final model answer."""
    target = sum(sizes) * fraction
    last, cumulative = 0, 0
    for index, message in enumerate(messages):
        if is_split_point(message):
            if cumulative >= target:
                return index
            last = index
        cumulative += sizes[index]
    if messages and messages[-1].get("role") == "assistant":
        if not messages[-1].get("tool_calls"):
            return len(messages)
    return last


class GeminiCliPolicy(Policy):
    key = "gemini-cli"
    title = "Gemini CLI: state snapshot at 50%"
    summary = (
        "At half the token limit, cuts old tool outputs to a 50k budget and replaces the "
        "older 70% of the history (split at a user turn) with a <state_snapshot>."
    )
    source = (
        "google-gemini/gemini-cli: packages/core/src/services/chatCompressionService.ts; "
        "docs/references.md"
    )
    main_parameter = "compression_threshold"
    stand_in = True
    PROMPT = (
        "Not quoted. Gemini CLI's compression prompt asks the model to reason in a "
        "scratchpad, then write a <state_snapshot> XML block (overall goal, key "
        "knowledge, file system state, recent actions, current plan)."
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        compression_threshold: float = 0.5,
        preserve_threshold: float = 0.3,
        function_response_budget: Optional[int] = None,
        truncate_lines: int = 30,
        summary_tokens: Optional[int] = None,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.compression_threshold = _fraction(
            "compression_threshold", compression_threshold, upper_inclusive=True
        )
        self.preserve_threshold = _fraction("preserve_threshold", preserve_threshold)
        scale = min(1.0, window_tokens / WINDOW_OF_THE_NUMBERS)
        self.function_response_budget = (
            round(50_000 * scale)
            if function_response_budget is None
            else check_int("function_response_budget", function_response_budget)
        )
        self.truncate_lines = check_int("truncate_lines", truncate_lines, minimum=1)
        self.summary_tokens = (
            max(MIN_BUDGET, window_tokens // 40)
            if summary_tokens is None
            else check_int("summary_tokens", summary_tokens, minimum=MIN_BUDGET)
        )
        self.trigger_tokens = self.compression_threshold * window_tokens
        self.summarize = stand_in_summarizer(self.summary_tokens)
        self.kept = KeptHistory()
        self.tokens = 0
        self.files = 0  # outputs saved to a file so far
        self.failed = False  # a compression made the history larger: cut outputs only
        self.snapshot: Optional[Mapping] = None
        self.earlier = ""

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        for message in self.kept.take_new(history):
            self.tokens += self.count_tokens([message])
        calls = 0
        if self.tokens >= self.trigger_tokens:
            calls = self.compress()
        return Sent(list(self.kept.messages), calls)

    def compress(self) -> int:
        """One compression attempt; the summary calls it made."""
        messages = self.kept.messages
        head = system_head(messages)
        contents = messages[head:]
        cut = self.cut_to_budget(contents)
        if self.failed:  # summarising failed before: only the cut, if it helps
            tokens = sum(self.count_tokens([m]) for m in messages[:head] + cut)
            if tokens < self.tokens:
                messages[head:], self.tokens = cut, tokens
            return 0
        sizes = [self.count_tokens([m]) for m in cut]
        split = find_split_point(sizes, cut, 1 - self.preserve_threshold)
        if split == 0:
            return 0  # nothing before the first turn to compress
        earlier = {"role": "user", "content": summary_header(0) + self.earlier}
        older = [earlier if m is self.snapshot else m for m in contents[:split]]
        text = self.summarize(older)
        snapshot = {
            "role": "user",
            "content": f"<state_snapshot>\n{text}\n</state_snapshot>",
        }
        rebuilt = messages[:head] + [
            snapshot,
            {"role": "assistant", "content": ACKNOWLEDGEMENT},
        ]
        rebuilt += cut[split:]
        tokens = sum(self.count_tokens([m]) for m in rebuilt)
        if tokens > self.tokens:
            self.failed = True  # the compression inflated the history: dropped
        else:
            messages[:], self.tokens = rebuilt, tokens
            self.snapshot, self.earlier = snapshot, text
        return CALLS_PER_COMPRESSION

    def cut_to_budget(self, contents: Sequence[Mapping]) -> List[Mapping]:
        """Function responses kept whole, newest first, while they fit the budget;
        each older one that does not fit cut to its last lines."""
        names, name_at = {}, {}  # the tool each function response answers
        for index, message in enumerate(contents):
            if message.get("role") == "assistant":
                calls = message.get("tool_calls") or ()
                names = {call.get("id"): tool_call_name(call) for call in calls}
            elif message.get("role") == "tool":
                name_at[index] = names.get(message.get("tool_call_id"))
        used, cut = 0, list(contents)
        for index in range(len(cut) - 1, -1, -1):
            message = cut[index]
            if not is_function_response(message):
                continue
            tokens = self.count_tokens([message])
            if used + tokens > self.function_response_budget:
                message = cut[index] = self.truncated(message, name_at.get(index))
                tokens = self.count_tokens([message])
            used += tokens
        return cut

    def truncated(self, message: Mapping, name: Optional[str]) -> Mapping:
        """The output's last lines, and the file the whole output was saved to."""
        self.files += 1
        path = OUTPUT_FILE.format(name=name or "shell", number=self.files)
        content = message.get("content") or ""
        lines = content.split("\n")
        if len(lines) > 1:
            shown = "\n" + "\n".join(lines[-self.truncate_lines :])
        else:
            shown = content[-4000:]
        return dict(
            message, content=f"Output too large. For full output see: {path}\n...{shown}"
        )

    def parameters(self) -> dict:
        return {
            "compression_threshold": self.compression_threshold,
            "preserve_threshold": self.preserve_threshold,
            "function_response_budget": self.function_response_budget,
            "truncate_lines": self.truncate_lines,
            "summary_tokens": self.summary_tokens,
        }


def _fraction(name: str, value, upper_inclusive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not 0 < value < 1 and not (upper_inclusive and value == 1):
        bounds = "(0, 1]" if upper_inclusive else "(0, 1)"
        raise ValueError(f"{name} must be in {bounds}, got {value!r}")
    return float(value)
