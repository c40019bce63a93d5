"""The OpenAI Agents SDK cookbook's `TrimmingSession`: only the last N user turns.

What the real system does: the cookbook "Context Engineering - Short-Term Memory
Management with Sessions" implements a session (`SessionABC`) that keeps only the last
`max_turns` user turns (default 8), a turn being a user message and every item after
it (assistant replies, tool calls, tool results) up to the next user message. It trims
on every write and read: walking back from the end, it finds the `max_turns`-th user
message and keeps everything from there; with fewer user messages it keeps all. Whole
turns are kept, so a tool result never loses its call. The agent's instructions (the
system prompt) are not session items and are always sent. There is no token trigger and
no token limit: `window_tokens` changes nothing. When the kept turns (or a single turn)
are larger than the window, the session sends them anyway and the runner records the
overflow; the cookbook itself lists "token spikes still possible" among trimming's
costs. A coding agent's session is one user turn (the task) followed by hundreds of
tool calls, so there the session never trims: it sends the whole history. Source: the
OpenAI cookbook, examples/agents_sdk/session_memory (docs/references.md).

Where the lab differs: a user message that is environment output
(`minilib.messages.is_observation`, as SWE-agent records it) is not a user turn: in the
Agents SDK such output is a tool result item, not a user message. Leading system
messages stand for the agent's instructions and are always sent.
"""

from typing import List, Mapping, Optional, Sequence

from ...messages import check_int, is_observation
from ...tokens import TokenCounter, estimate_tokens
from .base import Policy, Sent

MAX_TURNS = 8


def starts_turn(message: Mapping) -> bool:
    """A user message that a person wrote (a turn of the session)."""
    return message.get("role") == "user" and not is_observation(message)


class OpenAITrimmingSessionPolicy(Policy):
    key = "openai-agents-trimming"
    title = "OpenAI Agents SDK TrimmingSession (cookbook)"
    summary = (
        "Keeps the last `max_turns` user turns whole (a user message and all that "
        "follows it); no token limit, so one large turn is sent as it is."
    )
    source = "OpenAI cookbook, Agents SDK session memory: TrimmingSession, max_turns 8"
    main_parameter = "max_turns"

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        max_turns: int = MAX_TURNS,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.max_turns = check_int("max_turns", max_turns, minimum=1)
        self.instructions: List[Mapping] = []  # leading system messages
        self.seen = 0
        self.turns: List[int] = []  # index of each user turn's first message

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        for index in range(self.seen, len(history)):
            message = history[index]
            if index == len(self.instructions) and message.get("role") == "system":
                self.instructions.append(message)
            elif starts_turn(message):
                self.turns.append(index)
        self.seen = len(history)
        start = len(self.instructions)
        if len(self.turns) >= self.max_turns:
            start = self.turns[-self.max_turns]
        return Sent(self.instructions + list(history[start:]))

    def parameters(self) -> dict:
        return {"max_turns": self.max_turns}
