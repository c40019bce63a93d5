"""Sliding-window truncation: drop the oldest closed range, keep the head and the last
messages.

The cheapest and the crudest path: what is dropped leaves no trace in the window,
not even a line saying something was there. It cuts the same closed range as the
rolling summary (`minilib.ranges`), because a cut that splits a tool call from its
answers fails the next API call.
"""

from dataclasses import dataclass
from typing import List, Mapping, Sequence

from ..messages import check_int
from ..ranges import closed_range
from ..strategy import CompressionResult, unchanged


def _never(message: Mapping) -> bool:
    return False  # nothing truncation writes is carried: it writes nothing


@dataclass
class SlidingWindowTruncation:
    """Keep the protected head and the last `protect_tail` messages; drop the closed range
    between.

    `protect_tail` is the window size: the smaller it is, the more is dropped.
    """

    protect_tail: int = 4
    name: str = "sliding_window_truncation"

    def __post_init__(self):
        check_int("protect_tail", self.protect_tail)

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult:
        """Return a new list without the oldest closed range; the input is not changed."""
        span = closed_range(messages, self.protect_tail, _never)
        if len(span) == 0:
            return unchanged(self.name, messages)
        kept: List[Mapping] = list(messages[: span.start]) + list(messages[span.stop :])
        return CompressionResult(self.name, kept, list(span))
