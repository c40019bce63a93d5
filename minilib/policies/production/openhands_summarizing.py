"""OpenHands' `LLMSummarizingCondenser`: past `max_size` events, the older half of the
view becomes one summary event.

What the real system does (OpenHands software-agent-sdk, commit
611629e6999ad398dc49c761721eefe18d5e6bd9): before every model call the condenser looks
at its view of the event stream. It condenses when the view has more than `max_size`
events or more tokens than the model accepts (the smaller of its own `max_tokens`,
default none, and the agent model's input limit). The default agent and the
sub-agents it spawns use `default_condenser()`, `max_size=80, keep_first=4`
(`llm_summarizing_condenser.py`, `openhands-tools/.../preset/default.py`), the lab's
defaults; the class's own defaults are 240 and 2 (the legacy OpenHands default was
100, with `keep_first` 1). It keeps the first `keep_first` events and a tail: for the
event count, `max_size // 2 - keep_first - 1` events, so the condensed view is half of
`max_size`; for tokens, the longest tail that leaves the view under half the token
limit. The events between become one summary event, written by a second LLM call from
the forgotten events (an earlier summary among them, so summaries roll) and inserted
where they were, as a user message. The view only cuts where no tool call is waiting
for its result (its tool-call matching property), so a call and its results are
forgotten or kept together. When too little would be forgotten (no events, or fewer
than `minimum_progress`, 10%, of the view) a count-only trigger waits for the next
call, while a token trigger forgets the whole view into one summary (a hard context
reset). Source: `openhands/sdk/context/condenser/llm_summarizing_condenser.py`,
`condenser/README.md` and `context/view/README.md` (docs/references.md).

Where the lab differs:
- events are approximated by messages: OpenHands records an assistant message with k
  tool calls as k action events, so a session with parallel calls reaches 240 events a
  little sooner than 240 messages;
- the summary is the lab's deterministic quoting summary (`stand_in_summarizer`), held
  to `SUMMARY_TOKENS` (a tenth of the window when that is less), standing in for the
  LLM's; each condensation counts as one summary call; the summary message carries the
  lab's summary mark so the next summary folds it in;
- the model's input limit is `window_tokens`, and the token trigger counts the
  overhead (the system prompt and tool definitions) with the view; thinking-block
  tool loops, which the view also keeps whole, do not occur in the lab's messages.
Overhead: `DEFAULT_OVERHEAD_TOKENS` (docs/references.md).
"""

from typing import List, Mapping, Optional, Sequence

from ...messages import check_int
from ...summary import summary_header
from ...tokens import TokenCounter, estimate_tokens
from .base import Policy, Sent, stand_in_summarizer

MAX_SIZE = 80  # events (messages, in the lab): default_condenser()
KEEP_FIRST = 4
CLASS_MAX_SIZE, CLASS_KEEP_FIRST = 240, 2  # LLMSummarizingCondenser's own defaults
MINIMUM_PROGRESS = 0.1
SUMMARY_TOKENS = 4_096  # the stand-in summary's budget: about one LLM answer
MIN_SUMMARY_TOKENS = 64


class OpenHandsSummarizingPolicy(Policy):
    key = "openhands-summarizing"
    title = "OpenHands LLM summarizing condenser"
    summary = (
        "Past `max_size` events (or the model's token limit), the events after the "
        "first `keep_first` and before a recent tail become one summary event."
    )
    source = (
        "OpenHands software-agent-sdk @611629e LLMSummarizingCondenser as "
        "default_condenser() sets it: max_size 80, keep_first 4 (class: 240 and 2)"
    )
    DEFAULT_OVERHEAD_TOKENS = 10_000
    OVERHEAD_SOURCE = (
        "estimated: the SDK's terminal, file editor and task tracker tool definition "
        "files at 611629e (about 41,000 characters at 4 a token, code included) and "
        "its system prompt"
    )
    main_parameter = "max_size"
    stand_in = True
    PROMPT = (
        "OpenHands' summarizing prompt (condenser/prompts/summarizing_prompt.j2) asks "
        "for a context-aware state summary of the forgotten events, earlier summaries "
        "included, in sections: USER_CONTEXT, TASK_TRACKING, COMPLETED, PENDING, "
        "CURRENT_STATE, and for code CODE_STATE, TESTS, CHANGES, DEPS, "
        "VERSION_CONTROL_STATUS."
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        max_size: int = MAX_SIZE,
        keep_first: int = KEEP_FIRST,
        max_tokens: Optional[int] = None,
        minimum_progress: float = MINIMUM_PROGRESS,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.max_size = check_int("max_size", max_size, minimum=1)
        self.keep_first = check_int("keep_first", keep_first)
        if self.max_size // 2 - self.keep_first - 1 <= 0:
            raise ValueError(
                f"keep_first must be less than max_size // 2 - 1 to leave room for "
                f"condensation, got keep_first={keep_first}, max_size={max_size}"
            )
        self.max_tokens = (
            None if max_tokens is None else check_int("max_tokens", max_tokens, minimum=1)
        )
        if isinstance(minimum_progress, bool) or not (
            isinstance(minimum_progress, (int, float)) and 0 < minimum_progress < 1
        ):
            raise ValueError(
                f"minimum_progress must be between 0 and 1, got {minimum_progress!r}"
            )
        self.minimum_progress = minimum_progress
        self.token_limit = min(self.window_tokens, self.max_tokens or self.window_tokens)
        budget = max(MIN_SUMMARY_TOKENS, min(SUMMARY_TOKENS, self.window_tokens // 10))
        self.summarize = stand_in_summarizer(budget)
        self.view: List[Mapping] = []
        self.sizes: List[int] = []  # tokens of each message of the view
        self.total = 0
        self.seen = 0

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        for message in history[self.seen :]:
            self._append(message)
        self.seen = len(history)
        # A condensation ends the agent's step; the next step looks at the condensed
        # view again before it calls the model, so the lab condenses until the view is
        # within both limits (or no condensation shortens it).
        calls = 0
        while len(self.view) > self.max_size or self.counted() > self.token_limit:
            before = (len(self.view), self.total)
            counted = self.counted()
            if not self._condense(
                len(self.view) > self.max_size, counted > self.token_limit
            ):
                break
            calls += 1
            self.compacted(step, counted)
            if len(self.view) >= before[0] and self.total >= before[1]:
                break
        return Sent(list(self.view), calls)

    def counted(self) -> int:
        """The tokens the trigger counts: the view's and the overhead."""
        return self.total + self.overhead_tokens

    def parameters(self) -> dict:
        return {
            "max_size": self.max_size,
            "keep_first": self.keep_first,
            "max_tokens": self.max_tokens,
            "minimum_progress": self.minimum_progress,
            "overhead_tokens": self.overhead_tokens,
        }

    # --- condensing --------------------------------------------------------------------

    def _append(self, message: Mapping) -> None:
        size = self.count_tokens([message])
        self.view.append(message)
        self.sizes.append(size)
        self.total += size

    def _cuts(self) -> List[bool]:
        """cuts[i]: the view may be cut before message i (no call waits for a result)."""
        cuts, waiting = [True], set()
        for message in self.view:
            if message.get("role") == "assistant":
                waiting = {call.get("id") for call in message.get("tool_calls") or ()}
            elif message.get("role") == "tool":
                waiting.discard(message.get("tool_call_id"))
            else:
                waiting = set()
            cuts.append(not waiting)
        return cuts

    def _tail_for_tokens(self) -> int:
        """Events to keep after `keep_first` so the view loses more than its tokens over
        half the limit: what is left after the shortest prefix above that reduction."""
        reduction = self.counted() - self.token_limit // 2
        events = self.sizes[self.keep_first :]
        removed = 0
        for prefix, size in enumerate(events, start=1):
            removed += size
            if removed > reduction:
                return len(events) - prefix
        return 0

    def _condense(self, by_events: bool, by_tokens: bool) -> bool:
        """Forget the events between the head and the tail into one summary event;
        False when there is too little to forget and the trigger can wait."""
        tails = []
        if by_events:
            tails.append(self.max_size // 2 - self.keep_first - 1)
        if by_tokens:
            tails.append(self._tail_for_tokens())
        naive_end = len(self.view) - min(tails)
        cuts = self._cuts()
        start = next(
            i for i in range(min(self.keep_first, len(self.view)), len(cuts)) if cuts[i]
        )
        end = next(i for i in range(max(naive_end, start), len(cuts)) if cuts[i])
        if end - start < max(1, len(self.view) * self.minimum_progress):
            if not by_tokens:
                return False  # a soft trigger: try again on the next call
            start, end = 0, len(self.view)  # a hard context reset
        forgotten = self.view[start:end]
        text = summary_header(len(forgotten)) + self.summarize(forgotten)
        summary = {"role": "user", "content": text}
        self.view[start:end] = [summary]
        self.sizes[start:end] = [self.count_tokens([summary])]
        self.total = sum(self.sizes)
        return True
