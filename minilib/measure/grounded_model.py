"""A scripted model that answers the window it is sent: the grounded mode.

A recorded reply does not depend on what the model is sent, so on its own a replay
cannot show whether compression cut a fact the agent needed. `GroundedModel` makes the
script answer the window it gets: each reply declares the planted facts it rests on,
and before replying the model checks that each is in the window verbatim. A missing
fact is looked up once (`recall` when the harness has an external store and the window
names the call, else the cheapest workspace call that shows it), in an extra round of
its own; what is still missing after that is replaced in the reply by
`〔未知:<fact id>〕`. One look-up round per reply at most, so a grounded replay takes at
most twice the script's rounds (28 for the bundled 14 replies; the loop's `max_steps`
is 50).
"""

import copy
import json
import re
from dataclasses import dataclass, replace
from typing import Dict, List, Mapping, Sequence, Tuple

from ..messages import check_int
from ..model import ScriptedModel
from .facts import named_ids, window_text

UNKNOWN_MARK = "〔未知:{fact}〕"
UNKNOWN_RE = re.compile(r"〔未知:([^〕]+)〕")
RECALL = "recall"
LOOKUP_ID = "lookup_{number:02d}"  # ids of the look-up calls, apart from the script's


def unknown_marker(fact_id: str) -> str:
    """What replaces the words of a reply that rest on a fact the model cannot see."""
    return UNKNOWN_MARK.format(fact=fact_id)


@dataclass(frozen=True)
class FactUse:
    """A reply rests on a planted fact: `cite` is the words of the reply it backs."""

    fact: str
    cite: str


@dataclass(frozen=True)
class Grounding:
    """What the grounded mode knows, all read from data (minilib.measure.grounding).

    `texts` and `first_calls`: each planted fact's verbatim text and the tool call
    whose output first shows it; `uses`: for each scripted reply, the facts it rests
    on; `lookups`: for each fact, the cheapest workspace call that shows it again
    ({"name", "arguments"}). `recall`: the harness has an external store with a
    `recall` tool. `lookups_per_fact`: how often one fact may be looked up in a run.
    """

    texts: Mapping[str, str]
    first_calls: Mapping[str, str]
    uses: Tuple[Tuple[FactUse, ...], ...]
    lookups: Mapping[str, Mapping[str, str]]
    recall: bool = False
    lookups_per_fact: int = 1

    def __post_init__(self):
        check_int("lookups_per_fact", self.lookups_per_fact)

    def with_recall(self, recall: bool = True) -> "Grounding":
        return replace(self, recall=recall)


@dataclass(frozen=True)
class GroundedStep:
    """One model call in grounded mode.

    `call` is the model call's number (the replay's round), `reply` the scripted reply
    it served or prepared, `missing` the declared facts not in the window it was sent.
    A look-up round has `lookups` ((fact, tool_call_id) pairs); a scripted reply has
    `unknown`, the facts its text now marks as unknown.
    """

    call: int
    reply: int
    missing: Tuple[str, ...]
    lookups: Tuple[Tuple[str, str], ...] = ()
    unknown: Tuple[str, ...] = ()

    @property
    def is_lookup(self) -> bool:
        return bool(self.lookups)


def mark_unknown(content: str, uses: Sequence[FactUse], missing: Sequence[str]) -> str:
    """`content` with the cite of every use of a missing fact replaced by its marker.

    Spans are found in the original text, so a marker never creates a cite."""
    spans = sorted((content.index(use.cite), use) for use in uses if use.fact in missing)
    parts, at = [], 0
    for start, use in spans:
        parts += [content[at:start], unknown_marker(use.fact)]
        at = start + len(use.cite)
    return "".join(parts) + content[at:]


class GroundedModel(ScriptedModel):
    """Replays a session's replies, each checked against the window it is sent (see the
    module's text). `steps` lists every call it made, look-up rounds included."""

    def __init__(self, replies: Sequence[Mapping], grounding: Grounding):
        super().__init__(replies)
        if len(grounding.uses) != len(self.replies):
            raise ValueError(
                f"the grounding declares {len(grounding.uses)} replies; "
                f"the script has {len(self.replies)}"
            )
        self.grounding = grounding
        self.steps: List[GroundedStep] = []
        self.looked_up: Dict[str, int] = {}  # fact id -> look-ups so far
        self._prepared = False  # the current reply had its look-up round

    def complete(self, messages: Sequence[Mapping]) -> dict:
        if self.calls >= len(self.replies):
            return super().complete(messages)  # raises ScriptEndedError
        grounding, index = self.grounding, self.calls
        uses = grounding.uses[index]
        text = window_text(messages)
        missing = tuple(
            dict.fromkeys(u.fact for u in uses if grounding.texts[u.fact] not in text)
        )
        if not self._prepared:
            todo = [
                fact
                for fact in missing
                if self.looked_up.get(fact, 0) < grounding.lookups_per_fact
            ]
            if todo:
                self._prepared = True
                return self._lookup_round(messages, index, missing, todo)
        self._prepared = False
        reply = copy.deepcopy(self.replies[index])
        if missing:
            reply["content"] = mark_unknown(reply.get("content") or "", uses, missing)
        self.steps.append(GroundedStep(len(self.steps), index, missing, (), missing))
        self.calls += 1
        return reply

    def _lookup_round(self, messages, index, missing, todo) -> dict:
        """An extra model decision: one look-up call for each fact in `todo`."""
        named = named_ids(messages, set(self.grounding.first_calls.values()))
        calls, pairs = [], []
        for fact in todo:
            self.looked_up[fact] = self.looked_up.get(fact, 0) + 1
            call_id = LOOKUP_ID.format(number=sum(self.looked_up.values()))
            name, arguments = self.lookup_call(fact, named)
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
            pairs.append((fact, call_id))
        self.steps.append(GroundedStep(len(self.steps), index, missing, tuple(pairs)))
        return {
            "role": "assistant",
            "content": f"回答前核对：窗口里已没有 {'、'.join(todo)} 的原文，先查回来。",
            "tool_calls": calls,
        }

    def lookup_call(self, fact: str, named_in_window=()) -> Tuple[str, str]:
        """(tool name, JSON arguments) of the look-up for `fact`: `recall` of the call
        that first showed it when the harness has a store and the window still names
        that call, else the workspace look-up the data declares."""
        first = self.grounding.first_calls[fact]
        if self.grounding.recall and first in named_in_window:
            grep = self.grounding.texts[fact]
            return RECALL, json.dumps({"id": first, "grep": grep}, ensure_ascii=False)
        lookup = self.grounding.lookups[fact]
        return lookup["name"], lookup["arguments"]
