"""What every production policy shares: the window it sends, and the history it keeps.

A production policy answers one question per model call: given the agent's whole
history so far (the log's messages before this round's reply, uncompressed), what
does the harness send? `Policy.send(history, step)` returns that window as a `Sent`.
The history only grows, round to round (the same list, appended to), so a policy can
remember what it did before: some compute their window from the history each time
(a view, as the Anthropic API's context editing or OpenHands' condensers do), others
keep a history of their own that they rewrite (Claude Code's and Codex's compaction
replace what came before with a summary); `KeptHistory` is that second kind's state.

A policy never raises for a window that is too large or that breaks pairing: it sends
what the real system would send, and the runner (`minilib.policies.production.run`)
counts it: an overflow ends the replay at that round, a broken window is counted.
Where the real system asks an LLM for a summary, `stand_in_summarizer` (the lab's
deterministic, quoting summary, condensed to a budget) stands in, and the policy says
so (`stand_in = True`); its own prompt is kept as text (`PROMPT`) to show.

What a trigger counts. A real trigger counts the API's input: the messages, and also
the system prompt and the tool definitions that ride on every call. The lab's
messages may not hold the system prompt (many logs do not record it) and never hold
the tool definitions, so each policy adds a fixed `overhead_tokens` to what its
trigger counts and to the window the runner checks against the model's context
window. Each agent's documented default is `DEFAULT_OVERHEAD_TOKENS` with its source
in `OVERHEAD_SOURCE`; like the policies' other token numbers it is a number for a
200k window and is scaled with the window below 200k. A value measured from a log
(the first call's recorded input beyond its messages) is passed as
`overhead_tokens=` and used as given. Policies with no agent behind them (an API, a
library) default to 0: the caller's own prompt and tools are unknown.

A policy that replaces its history (a compaction, a summary) records where it did in
`compactions`: one `Compaction(round, tokens_before)` each, the tokens its trigger
counted (overhead included) just before it, so a replay can be set beside the
compactions the agent itself recorded (`minilib.policies.production.compare`).
"""

from dataclasses import dataclass
from typing import ClassVar, List, Mapping, Optional, Sequence

from ...messages import check_int
from ...model import scripted_summary
from ...scale.bounded import BoundedSummarizer
from ...summary import Summarizer
from ...tokens import TokenCounter, estimate_text_tokens, estimate_tokens

WINDOW_OF_THE_NUMBERS = 200_000  # the window the documented token numbers are for


def scaled(tokens: int, window_tokens: int) -> int:
    """A documented number for a 200k window, scaled with a smaller window."""
    return round(tokens * min(1.0, window_tokens / WINDOW_OF_THE_NUMBERS))


@dataclass(frozen=True)
class Compaction:
    """A round before which the policy replaced its history, and the tokens its
    trigger counted just before (the overhead included)."""

    round: int
    tokens_before: int


@dataclass(frozen=True)
class Sent:
    """One model call's window as the policy sends it, and the summary calls it made
    to build it (each is one more model call, paid in tokens)."""

    messages: List[Mapping]
    summary_calls: int = 0


class Policy:
    """A production system's compression policy, replayed on a log.

    Subclasses set the class attributes and implement `send`. `window_tokens` is the
    model's context window; a policy derives its own trigger from it as the real
    system does. Parameters are the documented defaults, overridable by keyword.
    """

    key: ClassVar[str] = ""
    title: ClassVar[str] = ""
    summary: ClassVar[str] = ""  # what it does, in one sentence
    source: ClassVar[str] = ""  # where its behaviour and defaults are documented
    main_parameter: ClassVar[str] = ""  # the one a slider moves
    # the parameter that sets, in tokens, the count at which it compresses (what a
    # sweep of thresholds moves); "" for a policy with no such count
    threshold_parameter: ClassVar[str] = ""
    stand_in: ClassVar[bool] = False  # True when an LLM summary is stood in for
    PROMPT: ClassVar[str] = ""  # the real system's summary prompt, where it has one
    # the system prompt and tool definitions each call carries, at a 200k window
    DEFAULT_OVERHEAD_TOKENS: ClassVar[int] = 0
    OVERHEAD_SOURCE: ClassVar[str] = (
        "no agent: the caller's system prompt and tools are unknown (0 unless given)"
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        overhead_tokens: Optional[int] = None,
    ):
        self.window_tokens = check_int("window_tokens", window_tokens, minimum=1)
        self.count_tokens = count_tokens
        if overhead_tokens is None:
            overhead = scaled(self.DEFAULT_OVERHEAD_TOKENS, self.window_tokens)
        else:
            overhead = check_int("overhead_tokens", overhead_tokens)
        if overhead >= self.window_tokens:
            # said as what it is: the words a student reads beside a slider
            raise ValueError(
                f"the system prompt and tool definitions alone ({overhead:,} tokens, "
                f"overhead_tokens) fill the {self.window_tokens:,}-token window"
            )
        self.overhead_tokens = overhead
        self.compactions: List[Compaction] = []

    def compacted(self, step: int, tokens_before: int) -> None:
        """Record a compaction before round `step`."""
        self.compactions.append(Compaction(step, tokens_before))

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        raise NotImplementedError

    def parameters(self) -> dict:
        """The policy's parameters as set (documented defaults unless overridden)."""
        return {}


class KeptHistory:
    """The history a rewriting policy keeps: the log's messages as they arrive, with
    the policy's own changes (a summary in place of what it folded, cleared results)."""

    def __init__(self):
        self.messages: List[Mapping] = []
        self.seen = 0  # how many of the log's messages have arrived

    def take_new(self, history: Sequence[Mapping]) -> List[Mapping]:
        """Append what arrived since the last call; return it."""
        new = list(history[self.seen :])
        self.messages.extend(new)
        self.seen = len(history)
        return new


def system_head(messages: Sequence[Mapping]) -> int:
    """How many system messages open `messages`: what a compaction keeps as it is."""
    head = 0
    while head < len(messages) and messages[head].get("role") == "system":
        head += 1
    return head


def stand_in_summarizer(budget_tokens: int) -> Summarizer:
    """The lab's deterministic summary, condensed to `budget_tokens` of text: it stands
    in for the LLM a production policy would call (it quotes, it never invents)."""
    return BoundedSummarizer(budget_tokens, scripted_summary, estimate_text_tokens)
