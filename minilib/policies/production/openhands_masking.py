"""OpenHands' `ObservationMaskingCondenser`, as OpenHands sends its masked view.

What the real system does (OpenHands V0, commit d6fab190bfb55f07cc380993b45ec4f781706a92):
- the condenser (`openhands/memory/condenser/impl/observation_masking_condenser.py`)
  runs before every model call and keeps every event, but puts an
  `AgentCondensationObservation('<MASKED>')` in place of each observation that is not
  among the last `attention_window` events. The class defaults to 5; the setting users
  configure (`ObservationMaskingCondenserConfig`, `openhands/core/config/
  condenser_config.py`) defaults to 100 events, the lab's default.
- the view becomes messages in `openhands/memory/conversation_memory.py`
  (`ConversationMemory.process_events`). An agent's tool-calling action is held back
  until a tool message answers each of the calls its model response made; an
  observation becomes a tool message only through its `tool_call_metadata`. The
  masking observation carries none, so it is sent as a user message `<MASKED>` where
  the observation was, and the assistant message that made the call (its thought text
  and its calls) is never sent, nor are the unmasked results of its other calls.
  Consecutive user messages are separated by a blank line
  (`_apply_user_message_formatting`: `\\n\\n` before the later one's text).
- no token trigger: it runs on every call, so `window_tokens` changes nothing here (a
  window still too large overflows, and the runner says so).

How the lab counts events: an assistant message with k tool calls is k action events
(OpenHands records one action a call; a message without calls is one event); every
other message is one event. An observation is a tool message or environment output
recorded as a user message (`minilib.messages.is_observation`).

Where the lab differs: nothing of the masking itself. The masked view keeps pairing
(what remains is whole calls with their results), but it drops what the agent said
while calling: the thought text of a masked call goes with it.
Overhead: `DEFAULT_OVERHEAD_TOKENS` (docs/references.md).
"""

from typing import Dict, List, Mapping, Sequence

from ...messages import check_int, is_observation
from ...tokens import TokenCounter, estimate_tokens
from .base import Policy, Sent

ATTENTION_WINDOW = 100  # events
MASK = "<MASKED>"
SEPARATOR = "\n\n"  # before a user message that follows a user message


def is_masked_kind(message: Mapping) -> bool:
    """An observation in OpenHands' sense: a tool result or environment output."""
    return message.get("role") == "tool" or is_observation(message)


def events_in(message: Mapping) -> int:
    """How many events OpenHands records for one message."""
    if message.get("role") == "assistant":
        return max(1, len(message.get("tool_calls") or ()))
    return 1


class OpenHandsMaskingPolicy(Policy):
    key = "openhands-masking"
    title = "OpenHands observation masking"
    summary = (
        "Every call, each observation older than the last `attention_window` events "
        "is sent as a user message `<MASKED>`; the call that asked for it is not sent."
    )
    source = (
        "OpenHands @d6fab19: memory/condenser/impl/observation_masking_condenser.py, "
        "memory/conversation_memory.py; attention_window 100 in condenser_config.py"
    )
    main_parameter = "attention_window"
    DEFAULT_OVERHEAD_TOKENS = 10_000
    OVERHEAD_SOURCE = (
        "estimated: the CodeAct system prompt (system_prompt.j2) and tool definition "
        "files at OpenHands d6fab19, about 40,000 characters at 4 a token"
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        attention_window: int = ATTENTION_WINDOW,
        overhead_tokens=None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.attention_window = check_int("attention_window", attention_window, minimum=1)
        self.history: List[Mapping] = []
        self.ends: List[int] = []  # events up to and including each message
        self.masked: List[bool] = []  # per message of the history
        self.masked_before = 0  # messages before this index were looked at
        self.masks: Dict[int, Mapping] = {}  # index -> the `<MASKED>` message sent
        self.separated: Dict[tuple, Mapping] = {}  # a user message after a user message
        # Where the last render can resume: messages before `masked_before` are masked
        # or not for good, so what they render to, and the state after them, stay.
        self._resume: tuple = (0, [], None)  # (index, sent before it, waiting)

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        for message in history[len(self.history) :]:
            before = self.ends[-1] if self.ends else 0
            self.history.append(message)
            self.ends.append(before + events_in(message))
            self.masked.append(False)
        total = self.ends[-1] if self.ends else 0
        outside = total - self.attention_window  # events with an index below it
        index = self.masked_before
        while index < len(self.history) and self.ends[index] - 1 < outside:
            if is_masked_kind(self.history[index]):
                self.masked[index] = True
            index += 1
        self.masked_before = index
        return Sent(self.render())

    def render(self) -> List[Mapping]:
        """The messages `ConversationMemory` builds from the masked view (from where
        the last one left the part that no longer changes)."""
        start, before, waiting = self._resume
        sent: List[Mapping] = list(before)
        waiting = _copied(waiting)  # (assistant message, its call ids, results so far)
        settled = self.masked_before
        for index in range(start, len(self.history)):
            if index == settled:
                self._resume = (index, list(sent), _copied(waiting))
            message = self.history[index]
            role = message.get("role")
            if role == "assistant" and message.get("tool_calls"):
                ids = [call.get("id") for call in message["tool_calls"]]
                waiting = (message, ids, [], True)
                continue
            if self.masked[index]:
                mask = self.masks.setdefault(index, {"role": "user", "content": MASK})
                self.emit(sent, (index, True), mask)
                if role == "tool" and waiting is not None:
                    waiting = waiting[:3] + (False,)  # its call will never be sent
                continue
            if role == "tool" and waiting is not None:
                assistant, ids, results, whole = waiting
                results.append(message)
                if whole and len(results) == len(ids):
                    sent.append(assistant)
                    sent.extend(results)
                continue
            self.emit(sent, (index, False), message)
        if settled >= len(self.history):
            self._resume = (len(self.history), list(sent), _copied(waiting))
        return sent

    def emit(self, sent: List[Mapping], key: tuple, message: Mapping) -> None:
        """Append `message`, a blank line before it when it follows a user message."""
        if message.get("role") == "user" and sent and sent[-1].get("role") == "user":
            message = self.separated.setdefault(
                key, dict(message, content=SEPARATOR + (message.get("content") or ""))
            )
        sent.append(message)

    def parameters(self) -> dict:
        return {
            "attention_window": self.attention_window,
            "overhead_tokens": self.overhead_tokens,
        }


def _copied(waiting):
    """A call waiting for its results, with its own list of them."""
    return None if waiting is None else waiting[:2] + (list(waiting[2]),) + waiting[3:]
