"""OpenHands' `ObservationMaskingCondenser`: observations outside a recent attention
window are masked.

What the real system does: before every model call, OpenHands condenses its view of
the event stream; this condenser keeps every event but replaces the content of each
observation (a tool's or the environment's output) that is not among the last
`attention_window` events with the text `<MASKED>`. Actions, messages and the recent
observations are untouched. It has no token trigger: it runs on every call, whatever
the window, so `window_tokens` changes nothing here (a window that is still too large
overflows, and the runner says so). The condenser class defaults to 5; OpenHands'
configuration (`ObservationMaskingCondenserConfig`, the documented setting) defaults
`attention_window` to 100 events, the lab's default. Source: OpenHands,
`openhands/memory/condenser/impl/observation_masking_condenser.py` and
`openhands/core/config/condenser_config.py` (docs/references.md).

Where the lab differs:
- events are approximated by messages: OpenHands records an assistant message with k
  tool calls as k action events, so its window of 100 events reaches back a little
  less far than the lab's 100 messages when calls run in parallel;
- a masked tool result keeps answering its call (pairing kept); OpenHands substitutes
  a condensation observation carrying the same text.

The masked part only grows (a message once outside the window stays outside), so the
window is updated with what is new each round.
"""

from typing import List, Mapping, Sequence

from ...messages import check_int, is_observation
from ...tokens import TokenCounter, estimate_tokens
from .base import Policy, Sent

ATTENTION_WINDOW = 100  # events (messages, in the lab)
MASK = "<MASKED>"


def is_masked_kind(message: Mapping) -> bool:
    """An observation in OpenHands' sense: a tool result or environment output."""
    return message.get("role") == "tool" or is_observation(message)


class OpenHandsMaskingPolicy(Policy):
    key = "openhands-masking"
    title = "OpenHands observation masking"
    summary = (
        "Every call, each observation older than the last `attention_window` events "
        "becomes `<MASKED>`; pairing kept."
    )
    source = (
        "OpenHands ObservationMaskingCondenser; attention_window 100 in "
        "ObservationMaskingCondenserConfig"
    )
    main_parameter = "attention_window"

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        attention_window: int = ATTENTION_WINDOW,
    ):
        super().__init__(window_tokens, count_tokens)
        self.attention_window = check_int("attention_window", attention_window, minimum=1)
        self.view: List[Mapping] = []
        self.masked_before = 0  # messages before this index are outside the window

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        self.view.extend(history[len(self.view) :])
        outside = max(0, len(self.view) - self.attention_window)
        for index in range(self.masked_before, outside):
            if is_masked_kind(self.view[index]):
                self.view[index] = dict(self.view[index], content=MASK)
        self.masked_before = max(self.masked_before, outside)
        return Sent(list(self.view))

    def parameters(self) -> dict:
        return {"attention_window": self.attention_window}
