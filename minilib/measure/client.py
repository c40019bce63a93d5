"""What an agent's client sent at each call: the conversation it held between calls.

A log holds the conversation; the client sent less. It cleared old results, dropped
calls when a session was resumed, replaced the history with a summary. `Client`
holds the conversation as the client did, each message with its count by every rule
it was given, and makes those changes where the log records them: every path that
asks what a call sent walks the same one (the calibrated count of a log, the replay
of an agent's own policy). An agent whose client also changed the conversation by a
rule of its own, unrecorded, has its own client in its home (`minilib.agents`), which
adds those rules.

A cleared result keeps its place and its call and reads `PLACEHOLDER`, so the pairing
of calls and results is never broken.

>>> from minilib.logs.base import make_call
>>> client = Client({"characters": lambda m: len(m.get("content") or "")})
>>> calls = [make_call(call_id, "Read", {}) for call_id in ("c1", "c2")]
>>> _ = client.add({"role": "assistant", "content": "", "tool_calls": calls})
>>> for call_id in ("c1", "c2"):
...     _ = client.add({"role": "tool", "tool_call_id": call_id, "content": "x" * 100})
>>> client.tokens["characters"], client.clear_calls({"c1"})
(200, [1])
>>> client.tokens["characters"] == 100 + len(PLACEHOLDER), client.messages[1]["content"]
(True, '[Old tool result content cleared]')
>>> client.drop_calls({"c2"})
>>> [len(m.get("tool_calls") or ()) for m in client.messages], len(client.messages)
([1, 0], 2)
"""

from collections import deque
from typing import Callable, Dict, List, Mapping, Sequence

from ..tokens import estimate_text_tokens, tool_call_name

PLACEHOLDER = "[Old tool result content cleared]"  # Claude Code's and opencode's words
MessageCounter = Callable[[Mapping], int]


class Client:
    """The conversation as an agent's client holds it between calls, counted by each
    rule of `counters` (name -> a count of one message). What a client does on its
    own, by its version, an agent's home adds (`minilib.agents`); this one follows
    only what the log records."""

    def __init__(self, counters: Mapping[str, MessageCounter]):
        self.counters = dict(counters)
        self.messages: List[Mapping] = []
        self.counts: List[Dict[str, int]] = []  # each message's count by each rule
        self.tokens = dict.fromkeys(self.counters, 0)  # the conversation's, by rule
        self.names: Dict[str, str] = {}  # call id -> tool name
        self.whole: deque = deque()  # places of compactable results, oldest first
        self.cleared = 0  # results cleared so far

    def count(self, message: Mapping) -> Dict[str, int]:
        return {rule: count(message) for rule, count in self.counters.items()}

    def add(self, message: Mapping) -> Dict[str, int]:
        """Append a message the conversation received; its counts."""
        counts = self.count(message)
        for rule, tokens in counts.items():
            self.tokens[rule] += tokens
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or ():
                self.names[call.get("id")] = tool_call_name(call)
        elif self.compactable(message):
            self.whole.append(len(self.messages))
        self.messages.append(message)
        self.counts.append(counts)
        return counts

    def compactable(self, message: Mapping) -> bool:
        """A result the client's own rules may clear (`whole` keeps their places):
        none, for a client the lab follows only as its log records."""
        return False

    def replace(self, place: int, message: Mapping) -> None:
        counts = self.count(message)
        for rule, tokens in counts.items():
            self.tokens[rule] += tokens - self.counts[place][rule]
        self.messages[place], self.counts[place] = message, counts

    def clear(self, places: Sequence[int]) -> List[int]:
        """Clear the results at `places` (those not cleared yet); the places cleared."""
        cleared = []
        for place in places:
            message = self.messages[place]
            if message.get("content") != PLACEHOLDER:
                self.replace(place, dict(message, content=PLACEHOLDER))
                cleared.append(place)
        if cleared:
            gone = set(cleared)
            self.whole = deque(place for place in self.whole if place not in gone)
            self.cleared += len(cleared)
        return cleared

    def clear_calls(self, call_ids) -> List[int]:
        """Clear the results of `call_ids` (a recorded clearing); the places cleared."""
        return self.clear(
            [
                place
                for place, message in enumerate(self.messages)
                if message.get("role") == "tool"
                and message.get("tool_call_id") in call_ids
            ]
        )

    def drop_calls(self, call_ids) -> None:
        """Take the calls `call_ids` and their results out of the conversation."""
        kept, counts, places = [], [], {}
        for place, message in enumerate(self.messages):
            if message.get("role") == "tool" and message.get("tool_call_id") in call_ids:
                for rule, tokens in self.counts[place].items():
                    self.tokens[rule] -= tokens
                continue
            calls = message.get("tool_calls") or ()
            if any(call.get("id") in call_ids for call in calls):
                fewer = [call for call in calls if call.get("id") not in call_ids]
                self.replace(place, dict(message, tool_calls=fewer))
            places[place] = len(kept)
            kept.append(self.messages[place])
            counts.append(self.counts[place])
        self.messages[:], self.counts[:] = kept, counts
        self.whole = deque(places[p] for p in self.whole if p in places)

    # What the client does on its own, by its version: nothing, for a client followed
    # only as its log records it.

    @staticmethod
    def text_rule(model: str) -> Callable[[str], int]:
        """How the text of what it sent is counted: the article's characters / 4."""
        return estimate_text_tokens

    @staticmethod
    def drops_resumed_calls(version: str) -> bool:
        """Whether a resume of this version sent fewer calls than the file holds."""
        return False

    @staticmethod
    def clears_by_token_rule(version: str) -> bool:
        """Whether this version cleared results by a rule it wrote no record of."""
        return False

    @staticmethod
    def warning_tokens(version: str, window: int) -> int:
        """The count above which its rule clears (with `clears_by_token_rule`)."""
        return window

    def token_microcompact(self) -> List[int]:
        """Clear what its rule clears; the places cleared."""
        return []

    @staticmethod
    def reattached(history: Sequence[Mapping]) -> List[dict]:
        """What the client re-attaches after compacting `history`."""
        return []

    @staticmethod
    def unrecorded_fall(version: str, window: int, before: int, after: int):
        """The words for a fall in the recorded count from `before` to `after` that the
        client made without a record of it, or None."""
        return None

    def keep_newest(self, keep: int) -> List[int]:
        """Clear all but the newest `keep` compactable results; the places cleared."""
        return self.clear(list(self.whole)[: max(0, len(self.whole) - keep)])

    def compacted(self, head: int, replacement: Sequence[Mapping]) -> None:
        """A compaction: the messages after the first `head` replaced."""
        for counts in self.counts[head:]:
            for rule, tokens in counts.items():
                self.tokens[rule] -= tokens
        del self.messages[head:], self.counts[head:]
        self.whole.clear()
        for message in replacement:
            self.add(message)
