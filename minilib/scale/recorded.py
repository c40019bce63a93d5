"""A recorded conversation played back through the loop: its assistant messages are
the replies, the rest arrives between them. Agent logs (`minilib.logs.replay`) and
the generated long histories (`minilib.scale.histories`) are replayed with it.

Environment output (a user message marked `observation`) has no call id: it gets
`output_id` "env_<n>", its place in the log, which is what an aged copy's omission
line names.
"""

import copy
from typing import List, Mapping, Sequence, Tuple

from ..messages import is_observation
from ..tokens import tool_call_name


def fresh_copy(value):
    """A deep copy of a message: what `copy.deepcopy` gives for the dicts, lists and
    scalars a log holds, several times faster (a long replay copies every message
    twice); anything else goes to `copy.deepcopy`."""
    kind = type(value)
    if kind is dict:
        return {key: fresh_copy(item) for key, item in value.items()}
    if kind is list:
        return [fresh_copy(item) for item in value]
    if kind in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


def environment_id(index: int) -> str:
    """The trace id of the environment output at `index` in a log's messages."""
    return f"env_{index}"


def with_output_ids(messages: Sequence[Mapping]) -> List[Mapping]:
    """`messages`, each environment output without an id given one by its place (a copy
    of that message; the others are the same objects)."""
    return [
        dict(message, output_id=environment_id(index))
        if is_observation(message) and not message.get("output_id")
        else message
        for index, message in enumerate(messages)
    ]


class RecordedConversation:
    """A recorded log played back: its assistant messages are the replies, the rest
    arrives between them.

    Each tool output, and each environment output recorded as a user message, is
    traced in full when it arrives, so `recover_tool_output` finds whatever aging or a
    summary cut. Environment output has no call id: it gets `output_id` "env_<n>" (its
    place in the log), which is what an aged copy's omission line names.
    """

    def __init__(self, messages: Sequence[Mapping]):
        self.messages = with_output_ids([fresh_copy(dict(m)) for m in messages])
        self.replies = [
            index
            for index, message in enumerate(self.messages)
            if message["role"] == "assistant"
        ]

    def opening(self) -> List[dict]:
        return self.messages[: self.replies[0]] if self.replies else list(self.messages)

    def reply(self, window, step: int) -> dict:
        return fresh_copy(self.messages[self.replies[step]])

    def arrivals(self, reply: Mapping, step: int, tracer) -> Tuple[List[dict], bool]:
        start = self.replies[step] + 1
        end = (
            self.replies[step + 1] if step + 1 < len(self.replies) else len(self.messages)
        )
        arrived = [fresh_copy(message) for message in self.messages[start:end]]
        calls = {call["id"]: call for call in reply.get("tool_calls") or ()}
        for message in arrived:
            if tracer is not None and message["role"] == "tool":
                call = calls[message["tool_call_id"]]  # positional: a call of this reply
                tracer.tool_call(
                    step,
                    call["id"],
                    tool_call_name(call),
                    call["function"].get("arguments") or "{}",
                    message["content"],
                    message.get("error"),
                )
            elif tracer is not None and is_observation(message):
                tracer.tool_call(
                    step, message["output_id"], "environment", "{}", message["content"]
                )
        return arrived, step + 1 < len(self.replies)
