"""Sliding-window truncation: drop the oldest closed groups, keep the head and the last messages.

The cheapest and the crudest path: what is dropped leaves no trace in the window,
not even a line saying something was there. It shares the rolling summary's
protection rules, because a cut that breaks them fails the next API call:
- the protected head (leading system messages and the first user message) stays;
- the last `protect_tail` messages stay, so the current chain of reasoning is verbatim;
- only a closed range goes: assistant/tool messages whose every tool call is answered
  inside it, so no tool call is split from its answers (parallel calls included).
`foldable_range` is that rule as a function; the summary-like paths (hierarchical
summary, external store) use it too, so all group-level paths cut the same range.
"""

from dataclasses import dataclass
from typing import Callable, List, Mapping, Sequence

from .messages import check_int
from .strategy import CompressionResult
from .summary import summary_range

CarriedTest = Callable[[Mapping], bool]


def _never(message: Mapping) -> bool:
    return False


def foldable_range(messages: Sequence[Mapping], protect_tail: int, carried: CarriedTest = _never) -> range:
    """The longest closed range after the protected head and before the protected tail.

    The rolling summary's range rule (`summary_range`), with `carried(message)`
    saying which earlier fold right after the head is folded again. Empty when
    nothing new may be cut.
    """
    return summary_range(messages, protect_tail, carried)


@dataclass
class SlidingWindowTruncation:
    """Keep the protected head and the last `protect_tail` messages; drop the closed range between.

    `protect_tail` is the window size: the smaller it is, the more is dropped.
    """

    protect_tail: int = 4
    name: str = "sliding_window_truncation"

    def __post_init__(self):
        check_int("protect_tail", self.protect_tail)

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult:
        """Return a new list without the oldest closed range; the input is not changed."""
        span = foldable_range(messages, self.protect_tail)
        if len(span) == 0:
            return CompressionResult(self.name, list(messages), [])
        kept: List[Mapping] = list(messages[:span.start]) + list(messages[span.stop:])
        return CompressionResult(self.name, kept, list(span))
