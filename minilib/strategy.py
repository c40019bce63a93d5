"""What every compression strategy returns, so the window can run any ordered list of them."""

from dataclasses import dataclass, field
from typing import List, Mapping


@dataclass
class CompressionResult:
    """The outcome of one strategy on one message list.

    `messages` is a new list (the input is never changed); `affected_indexes` are the
    positions in the *input* list that were rewritten or folded away; `model_calls`
    records any model call the strategy made (a summary), so it can be traced.
    """

    strategy: str
    messages: List[Mapping]
    affected_indexes: List[int]
    model_calls: List[dict] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.affected_indexes)
