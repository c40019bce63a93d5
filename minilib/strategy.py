"""The strategy interface: what the window needs of anything that compresses.

A strategy is any object with a `name` and `compress(messages) -> CompressionResult`
that returns a new list and never changes its input. The window runs an ordered
list of them; `minilib.policies.check_strategy` runs the window's invariants on a new one.

Example: a result that changed something, and one that found nothing to cut.

    >>> messages = [{"role": "user", "content": "go"}]
    >>> CompressionResult("drop_all", [], affected_indexes=[0]).changed
    True
    >>> unchanged("tool_result_aging", messages).changed
    False
"""

from dataclasses import dataclass, field
from typing import List, Mapping, Protocol, Sequence, runtime_checkable


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


@runtime_checkable
class Strategy(Protocol):
    """One compression step of the window's pipeline."""

    name: str

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult: ...


def unchanged(name: str, messages: Sequence[Mapping]) -> CompressionResult:
    """The result of a strategy that found nothing it may cut."""
    return CompressionResult(name, list(messages), [])
