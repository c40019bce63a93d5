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
"""

from dataclasses import dataclass
from typing import ClassVar, List, Mapping, Sequence

from ...messages import check_int
from ...model import scripted_summary
from ...scale.bounded import BoundedSummarizer
from ...summary import Summarizer
from ...tokens import TokenCounter, estimate_text_tokens, estimate_tokens


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
    stand_in: ClassVar[bool] = False  # True when an LLM summary is stood in for
    PROMPT: ClassVar[str] = ""  # the real system's summary prompt, where it has one

    def __init__(self, window_tokens: int, count_tokens: TokenCounter = estimate_tokens):
        self.window_tokens = check_int("window_tokens", window_tokens, minimum=1)
        self.count_tokens = count_tokens

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
