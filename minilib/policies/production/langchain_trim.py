"""LangChain's `trim_messages`, run as written: whole messages dropped from the start.

What the real system does: `langchain_core.messages.trim_messages` with
`strategy="last"` keeps the longest run of last messages whose tokens fit `max_tokens`
(a binary search over how many to keep, counted by the `token_counter` it is given);
with `include_system=True` the first message, when it is a system message, is always
kept and its tokens come off the budget. It cuts between any two messages: nothing
keeps a tool result with the call it answers, so a window may start with a tool result
whose call was dropped, which providers reject (a known bug; docs/references.md). The
lab runs it as written and the runner counts those broken windows without repairing
them. The first user message (the task) is dropped like any other message once it no
longer fits.

LangChain's docs recommend `start_on="human"` (with `include_system=True`) so that the
kept messages open on a human message and never on a tool result whose call was cut
(https://python.langchain.com/docs/how_to/trim_messages/, read December 2026). The
variant `langchain-trim-human` runs that: after the last messages that fit are chosen,
`trim_messages` drops the ones before the first human message among them. A coding
agent's log has one human message, the task, near its start: once the task no longer
fits, nothing after the system message opens on a human message, and the window is
the system message alone. The lab runs it as written and lets the numbers say so.

How the lab runs it: LangChain's rule, with the real function beside it, from the
optional package `langchain-core` (`pip install 'context-compression-lab[langchain]'`);
building the policy without it raises an ImportError that names the package. The
real function (`plain = True`): each new message of the log is converted once to a
LangChain message (system, human, AI with its tool calls, tool) and its tokens counted
once with the lab's counter (`count_tokens`, message by message); the counter given
to `trim_messages` adds those counts up, so the budget is the lab's count;
`trim_messages` returns the very message objects it was given, and each maps back to
the log's own message. Arguments that are not a JSON object become an invalid tool
call, as LangChain parses them. A replay would ask it again every round of a history
that only grew, so by default the lab keeps what it decides beside the history: the
running total of the counts, where the last messages that fit begin (never earlier
than the round before) and where the human messages are; a round costs what it
appended. That is `trim_messages`' own rule (the longest run of last messages whose
counts fit after the system message's, then, with `start_on`, from the first human
message in it), and tests/test_policies_incremental.py replays both on generated,
bundled and real logs: the same windows. `max_tokens` is the whole window
(`trim_messages` keeps no reserve of its own) less `overhead_tokens` (0 by default:
a library has no agent's prompt), so every window fits; what it costs is what it
drops, and the broken pairs.
"""

import importlib.util
import json
from bisect import bisect_left
from typing import Dict, List, Mapping, Optional, Sequence

from ...messages import check_int
from ...tokens import TokenCounter, estimate_tokens
from .base import Policy, Sent

PACKAGE = "langchain-core"
INSTALL = (
    "pip install 'context-compression-lab[langchain]' (or: pip install langchain-core)"
)


MISSING = (
    f"the langchain-trim policy runs LangChain's own trim_messages: install the "
    f"optional package {PACKAGE}: {INSTALL}"
)


def load_langchain():
    """The langchain_core names the policy uses, or an ImportError naming the package."""
    try:
        from langchain_core import messages
    except ImportError as error:
        raise ImportError(MISSING) from error
    return messages


def check_langchain() -> None:
    """An ImportError naming the package unless it is installed: without importing
    it (a tenth of a second or more, which a replay kept beside the history never
    needs)."""
    try:
        found = importlib.util.find_spec("langchain_core") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ImportError(MISSING)


def to_langchain(message: Mapping, messages):
    """The LangChain message for one chat-completions message."""
    role, content = message.get("role"), message.get("content") or ""
    if role == "system":
        return messages.SystemMessage(content)
    if role == "user":
        return messages.HumanMessage(content)
    if role == "tool":
        status = "error" if message.get("error") else "success"
        return messages.ToolMessage(
            content, tool_call_id=message.get("tool_call_id") or "", status=status
        )
    calls, invalid = [], []
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        name, arguments = function.get("name") or "", function.get("arguments") or "{}"
        try:
            args = json.loads(arguments)
        except ValueError:
            args = None
        if isinstance(args, dict):
            calls.append({"id": call.get("id"), "name": name, "args": args})
        else:
            invalid.append(
                {"id": call.get("id"), "name": name, "args": arguments, "error": None}
            )
    return messages.AIMessage(content, tool_calls=calls, invalid_tool_calls=invalid)


class LangChainTrimPolicy(Policy):
    key = "langchain-trim"
    title = "LangChain trim_messages (strategy='last')"
    summary = (
        "Keeps the last messages that fit the window and the system message; cuts "
        "between any two messages, so tool results can lose their calls."
    )
    source = (
        "langchain_core.messages.trim_messages(strategy='last', include_system=True), "
        "run from the optional package langchain-core"
    )
    main_parameter = "max_tokens"
    threshold_parameter = "max_tokens"
    START_ON = None

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        max_tokens: Optional[int] = None,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.max_tokens = (
            self.window_tokens - self.overhead_tokens
            if max_tokens is None
            else check_int("max_tokens", max_tokens, minimum=1)
        )
        check_langchain()
        self.langchain = None  # imported for the plain walk only
        self.converted: List = []  # the log's messages as LangChain messages
        self.original: Dict[int, Mapping] = {}  # id(LangChain message) -> log message
        self.tokens: Dict[int, int] = {}  # id(LangChain message) -> the lab's count
        self.plain = False  # True: LangChain's own function every round
        self.seen = 0  # the history's messages counted so far
        self.system: Optional[int] = None  # the system message's count, kept always
        self.running = [0]  # running[k]: the counts of the first k others
        self.start = 0  # where the last others that fit begin, among the others
        self.humans: List[int] = []  # where the human messages are, among the others

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        if self.plain:
            return self.send_plain(history, step)
        if self.seen == 0 and history and history[0].get("role") == "system":
            self.system, self.seen = self.count_tokens([history[0]]), 1
        head = 0 if self.system is None else 1
        running = self.running
        for message in history[self.seen :]:
            if message.get("role") == "user":
                self.humans.append(len(running) - 1)
            running.append(running[-1] + self.count_tokens([message]))
        self.seen = len(history)
        budget = self.max_tokens
        if self.system is not None:
            budget = max(0, budget - self.system)
        total, start = running[-1], self.start
        while total - running[start] > budget:
            start += 1  # a longer history never fits from an earlier message
        self.start = start
        if self.START_ON == "human":
            first = bisect_left(self.humans, start)
            start = self.humans[first] if first < len(self.humans) else len(running) - 1
        return Sent([*history[:head], *history[head + start :]])

    def send_plain(self, history: Sequence[Mapping], step: int) -> Sent:
        """The window as LangChain's own `trim_messages` keeps it, asked of the whole
        history (converted once a message)."""
        if self.langchain is None:
            self.langchain = load_langchain()
            # The function itself: its decorator (which also makes a Runnable when
            # called without messages) imports LangChain's runnables, and LangSmith
            # with them, on its first call, about a second; given messages, it only
            # calls the function.
            trim = self.langchain.trim_messages
            self.trim_messages = getattr(trim, "__wrapped__", trim)
        for message in history[len(self.converted) :]:
            converted = to_langchain(message, self.langchain)
            self.converted.append(converted)
            self.original[id(converted)] = message
            self.tokens[id(converted)] = self.count_tokens([message])
        kept = self.trim_messages(
            self.converted,
            max_tokens=self.max_tokens,
            token_counter=self._count,
            strategy="last",
            include_system=True,
            start_on=self.START_ON,
        )
        return Sent([self.original[id(message)] for message in kept])

    def _count(self, messages: list) -> int:
        """The lab's count of LangChain messages: the sum of their messages' counts."""
        return sum(map(self.tokens.__getitem__, map(id, messages)))

    def parameters(self) -> dict:
        return {
            "max_tokens": self.max_tokens,
            "start_on": self.START_ON,
            "overhead_tokens": self.overhead_tokens,
        }


class LangChainTrimHumanPolicy(LangChainTrimPolicy):
    """`trim_messages` as LangChain's docs recommend it: the kept messages start on a
    human message."""

    key = "langchain-trim-human"
    title = "LangChain trim_messages (strategy='last', start_on='human')"
    summary = (
        "Keeps the last messages that fit the window, then drops those before the first "
        "human message: no orphaned tool result, but a coding agent's task goes too."
    )
    source = (
        "langchain_core.messages.trim_messages(strategy='last', include_system=True, "
        "start_on='human'), as LangChain's how-to guide recommends"
    )
    START_ON = "human"
