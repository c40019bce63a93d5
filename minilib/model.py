"""The model adapter boundary, and a scripted model that replays a recorded session.

A model adapter has two methods: `complete(messages) -> assistant message` and
`summarize(messages) -> str`. The scripted model needs no API and gives the same
answers every time, so every number of the lab is reproducible. To use a real
model, implement the same two methods with LLM calls: the compression code does
not change.

A recorded reply does not depend on what the model is sent, so on its own the replay
cannot show whether compression cut a fact the agent needed. The grounded mode
(`ScriptedModel(replies, grounding=...)`, off by default) makes the script answer
the window it gets: each reply declares the planted facts it rests on, and before
replying the model checks that each is in the window verbatim. A missing fact is
looked up once (`recall` when the harness has an external store and the window
names the call, else the cheapest workspace call that shows it), in an extra round
of its own; what is still missing after that is replaced in the reply by
`〔未知:<fact id>〕`. One look-up round per reply at most, so a grounded replay takes
at most twice the script's rounds (28 for the bundled 14 replies; the loop's
`max_steps` is 50).
"""

import copy
import json
import re
from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .markers import AGING_MARK, is_summary
from .measure.facts import named_ids, window_text
from .messages import check_int, is_observation
from .tokens import tool_call_name


class ScriptEndedError(RuntimeError):
    """The loop asked the scripted model for more replies than the session holds."""


def first_line_of_result(content: str) -> str:
    """The first line of a tool result; for an aged one, the first line of its kept
    head."""
    lines = content.splitlines()
    if lines and lines[0].startswith(AGING_MARK) and len(lines) > 1 and lines[1].strip():
        return lines[1]
    return lines[0] if lines else ""


def scripted_summary(
    messages: Sequence[Mapping],
    more_from_result: Optional[Callable[[str, str], List[str]]] = None,
) -> str:
    """A deterministic summary that only quotes: no rewording, so nothing is invented.

    Each assistant action is quoted verbatim with the names of the tools it called,
    each tool result (or environment output) by its first line, a later user turn
    whole; an earlier summary is carried over line for line.
    `more_from_result(content, first_line)` may pick further lines of a result to quote
    (the hierarchical summary's "keep the facts" rule).
    """
    lines: List[str] = []
    names = {}
    for message in messages:
        content = message.get("content") or ""
        if is_summary(message):
            lines.extend(content.splitlines()[1:])  # drop its header, keep what it quoted
        elif message.get("role") == "assistant":
            calls = message.get("tool_calls") or []
            names.update({call.get("id"): tool_call_name(call) for call in calls})
            called = ", ".join(tool_call_name(call) for call in calls)
            lines.append(f"- {content}" + (f" → {called}" if called else ""))
        elif message.get("role") == "user" and not is_observation(message):
            lines.append(f"- 用户: {content}")  # a person's words are quoted whole
        elif message.get("role") in ("tool", "user"):
            name = names.get(message.get("tool_call_id"), "环境")
            first = first_line_of_result(content)
            lines.append(f"  {name} 回报: {first}")
            if more_from_result is not None:
                lines.extend(f"    {line}" for line in more_from_result(content, first))
    return "\n".join(lines)


# --- the grounded mode
# --------------------------------------------------------------------------------

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


class ScriptedModel:
    """Replays the assistant replies of a session, one per `complete` call.

    With `grounding` (off by default) it answers the window it is sent: see the
    module's text. `steps` then lists every call it made, look-up rounds included.
    """

    def __init__(self, replies: Sequence[Mapping], grounding: Optional[Grounding] = None):
        self.replies = [copy.deepcopy(dict(reply)) for reply in replies]
        self.calls = 0  # scripted replies given
        self.grounding = grounding
        if grounding is not None and len(grounding.uses) != len(self.replies):
            raise ValueError(
                f"the grounding declares {len(grounding.uses)} replies; the script has "
                f"{len(self.replies)}"
            )
        self.steps: List[GroundedStep] = []
        self.looked_up: Dict[str, int] = {}  # fact id -> look-ups so far
        self._prepared = False  # the current reply had its look-up round

    def complete(self, messages: Sequence[Mapping]) -> dict:
        if self.calls >= len(self.replies):
            raise ScriptEndedError(
                f"the script has {len(self.replies)} replies; call {self.calls + 1} has "
                "none"
            )
        if self.grounding is not None:
            return self._grounded(messages)
        reply = copy.deepcopy(self.replies[self.calls])
        self.calls += 1
        return reply

    def _grounded(self, messages: Sequence[Mapping]) -> dict:
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

    def summarize(self, messages: Sequence[Mapping]) -> str:
        return scripted_summary(messages)
