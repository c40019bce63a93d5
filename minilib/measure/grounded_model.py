"""A scripted model that answers the window it is sent: the grounded mode.

A recorded reply does not depend on what the model is sent, so on its own a replay
cannot show whether compression cut a fact the agent needed. `GroundedModel` makes the
script answer the window it gets: each reply declares the planted facts it rests on,
and before replying the model checks that each is in the window verbatim (in its
planted text or a form the grounding declares, e.g. the configuration's
`tool_timeout_s = 30`). It is a stand-in for an LLM: the script decides what the agent
does, the window decides what it may say.

The rule for a missing fact: the model may look it up only with what its window still
holds, never with the fact's own text (a model that no longer holds `#412` cannot
search for it). What it reads of a window is the text of its messages, as the fact
probe does. It knows which of its own earlier calls showed the fact (the grounding's
`places`: the call, and the file the fact stands in), and it knows the words it means
to say (the cite of the fact in its scripted reply). From those, the first pointer its
window holds gives the look-up, every argument copied from the window's text:

1. an id: when the harness has an external store (`recall`) and the window's text
   names the call that showed the fact (an omission line, a store header, the store's
   index, a summary), `recall(id=<that id>, grep=<phrase>)`, or the whole output when
   no phrase is left;
2. a path and a phrase: the window names the file the fact stands in, and one of the
   words the reply cites for the fact is still in the window:
   `search_text(pattern=<phrase>, path=<file>)`;
3. a phrase: `search_text(pattern=<phrase>)` over the workspace;
4. a command: the window still names the path or the pattern of the call that showed
   the fact: that call again (re-read the file, re-run the search).

A phrase is an ASCII word of the cite (`nightly`, `#58`, `tool_timeout_s`, `60`) that the
window holds, the longest first. An aging omission line names the call's id too, but it
points a person at the run log: without a store no tool reads a result back by id, so
there an id alone is no pointer. A fact with no pointer left is not looked up; it is
unknown. A look-up is an extra round
of its own before the reply (one per reply, at most one look-up per fact in a run), and
its result is compressed like any other: aging may cut the fact from it again. What is
still missing when the reply is given is replaced in it by `〔未知:<fact id>〕`. A
grounded replay thus takes at most twice the script's rounds (28 for the bundled 14
replies; the loop's `max_steps` is 50).

The same rule holds for what the model reads: a scripted call whose arguments state a
planted fact (a path, a pattern) the window it is sent does not show is not made as
scripted. The reply has already marked the fact unknown, so the model cannot name it
either: it lists the deepest folder of that path the window still names (`docs/` in a
listing, or a path under it), or the workspace's top when it names none
(`ungrounded_arguments`, `listing_instead`). The call keeps its id, so the replay goes on
as scripted.

`pointers=True` (off by default: the summary stays the article's) makes the model's
summary quote, for each call it folds, the call's id and arguments, so the paths, patterns
and ids of folded calls stay in the window as pointers.
"""

import copy
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..messages import check_int
from ..model import ScriptedModel, scripted_summary
from .facts import window_text

UNKNOWN_MARK = "〔未知:{fact}〕"
UNKNOWN_RE = re.compile(r"〔未知:([^〕]+)〕")
RECALL = "recall"
SEARCH = "search_text"
LISTING = "list_dir"
LOOKUP_ID = "lookup_{number:02d}"  # ids of the look-up calls, apart from the script's
# The words of a cite a search may use: ASCII runs with a letter, digit or '#' in them
# (paths, codes, names, numbers); CJK text, spaces and '=' separate them.
PHRASE = re.compile(r"[A-Za-z0-9_#./-]*[A-Za-z0-9#][A-Za-z0-9_#./-]*")
LITERAL_SPECIALS = re.compile(r"([.^$*+?{}\[\]\\|()])")
# A word of the window stands on its own: no ASCII word character, path or id character
# right before it, none right after it but a final '.' (the end of a sentence).
BEFORE, AFTER = r"(?<![A-Za-z0-9_#./~-])", r"(?![A-Za-z0-9_#/~-])"
POINTER_MARK = "〔指向 {calls}〕"  # what `pointers=True` adds to a folded action


def unknown_marker(fact_id: str) -> str:
    """What replaces the words of a reply that rest on a fact the model cannot see."""
    return UNKNOWN_MARK.format(fact=fact_id)


def literal_pattern(text: str) -> str:
    """A search_text pattern that matches `text` literally, escaping only what a regular
    expression would read as syntax (spaces and '#' stay as typed)."""
    return LITERAL_SPECIALS.sub(r"\\\1", text)


def call_arguments(**arguments) -> str:
    return json.dumps(arguments, ensure_ascii=False)


@dataclass(frozen=True)
class FactUse:
    """A reply rests on a planted fact: `cite` is the words of the reply it backs."""

    fact: str
    cite: str


@dataclass(frozen=True)
class Place:
    """Where a scripted call showed a fact: the call (its id, tool and JSON arguments)
    and the file of the workspace the fact stands in."""

    call: str
    name: str
    arguments: str
    file: str

    def command_keys(self) -> Tuple[str, ...]:
        """What the window must name to run this call again: its path or pattern."""
        values = json.loads(self.arguments)
        return tuple(v for k, v in values.items() if k in ("path", "pattern"))


@dataclass(frozen=True)
class Grounding:
    """What the grounded mode knows, all read from data (minilib.measure.grounding).

    `texts`, `forms` and `first_calls`: each planted fact's verbatim text, the other
    verbatim forms that state it, and the call whose output first shows it; `uses`: for
    each scripted reply, the facts it rests on; `places`: for each fact, every scripted
    call whose output shows it and the file it stands in, in call order. `recall`: the
    harness has an external store with a `recall` tool. `lookups_per_fact`: how often
    one fact may be looked up in a run.
    """

    texts: Mapping[str, str]
    first_calls: Mapping[str, str]
    uses: Tuple[Tuple[FactUse, ...], ...]
    places: Mapping[str, Tuple[Place, ...]]
    forms: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    recall: bool = False
    lookups_per_fact: int = 1

    def __post_init__(self):
        check_int("lookups_per_fact", self.lookups_per_fact)

    def with_recall(self, recall: bool = True) -> "Grounding":
        return replace(self, recall=recall)

    def shows(self, fact: str, text: str) -> bool:
        """`text` states `fact` verbatim: its planted text or one of its forms."""
        forms = (self.texts[fact], *self.forms.get(fact, ()))
        return any(form in text for form in forms)


@dataclass(frozen=True)
class LookupPlan:
    """One look-up the window allows: the tool call, and what in the window it used."""

    name: str
    arguments: str
    pointer: str  # "id", "path", "phrase" or "command"


@dataclass(frozen=True)
class GroundedStep:
    """One model call in grounded mode.

    `call` is the model call's number (the replay's round), `reply` the scripted reply
    it served or prepared, `missing` the declared facts not in the window it was sent.
    A look-up round has `lookups` ((fact, tool_call_id) pairs); a scripted reply has
    `unknown`, the facts its text now marks as unknown, `no_pointer`, those of them
    its window held no pointer to, and `rerouted`, the ids of its scripted calls made
    as a listing instead (their arguments named a fact the window does not show).
    """

    call: int
    reply: int
    missing: Tuple[str, ...]
    lookups: Tuple[Tuple[str, str], ...] = ()
    unknown: Tuple[str, ...] = ()
    no_pointer: Tuple[str, ...] = ()
    rerouted: Tuple[str, ...] = ()

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


def names(text: str, word: str) -> bool:
    """`text` holds `word` as a word of its own (`call_1` is not in `call_10`, `60` is
    not in `1600`)."""
    return re.search(BEFORE + re.escape(word) + AFTER, text) is not None


def phrases(cites: Sequence[str], text: str) -> List[str]:
    """The words of `cites` that `text` holds, longest first (then in cite order)."""
    words = dict.fromkeys(
        w for cite in cites for w in PHRASE.findall(cite) if names(text, w)
    )
    return sorted(words, key=lambda w: -len(w))


def plan_lookup(
    places: Sequence[Place],
    cites: Sequence[str],
    messages: Sequence[Mapping],
    recall: bool = False,
) -> Optional[LookupPlan]:
    """The look-up for a missing fact that the window `messages` allows (see the
    module's text), or None when it holds no pointer. `places` are the calls made so
    far that showed the fact, newest first; `cites` the reply's words for it."""
    text = window_text(messages)
    words = phrases(cites, text)
    if recall:
        for place in places:
            if names(text, place.call):
                grep = {"grep": words[0]} if words else {}
                return LookupPlan(RECALL, call_arguments(id=place.call, **grep), "id")
    if words:
        pattern = literal_pattern(words[0])
        for place in places:
            if names(text, place.file):
                arguments = call_arguments(pattern=pattern, path=place.file)
                return LookupPlan(SEARCH, arguments, "path")
        return LookupPlan(SEARCH, call_arguments(pattern=pattern), "phrase")
    for place in places:
        keys = place.command_keys()
        if keys and all(names(text, key) for key in keys):
            return LookupPlan(place.name, place.arguments, "command")
    return None


def pointer_summary(messages: Sequence[Mapping]) -> str:
    """The scripted summary, each folded action followed by the id and the arguments
    (paths, patterns) of its calls (`〔指向 call_01 long_notes.txt〕`): what
    `pointers=True` writes."""
    marked = []
    for message in messages:
        calls = message.get("tool_calls") or ()
        if message.get("role") == "assistant" and calls:
            shown = "; ".join(
                " ".join([str(call.get("id")), *map(str, call_values(call))])
                for call in calls
            )
            content = (message.get("content") or "") + POINTER_MARK.format(calls=shown)
            message = dict(message, content=content)
        marked.append(message)
    return scripted_summary(marked)


def ungrounded_arguments(
    grounding: Grounding, call: Mapping, text: str
) -> Tuple[str, ...]:
    """The planted facts the arguments of tool call `call` state (a path, a pattern)
    that the window's text `text` does not show: a call that names them cites what its
    window lacks."""
    values = [value for value in call_values(call) if isinstance(value, str)]
    return tuple(
        fact
        for fact in grounding.texts
        if any(grounding.shows(fact, value) for value in values)
        and not grounding.shows(fact, text)
    )


def listed_folder(path: str, text: str) -> str:
    """The deepest folder of `path` the window's text names (`docs/` in a listing, or
    a path under it), or the workspace's top (".") when it names none."""
    for parent in PurePosixPath(path).parents:
        folder = str(parent)
        if folder != "." and re.search(BEFORE + re.escape(folder) + "/", text):
            return folder
    return "."


def listing_instead(call: Mapping, text: str) -> dict:
    """`call` made with what the window holds: a listing of the folder of its path the
    window still names (see `listed_folder`); same id."""
    values = json.loads(call["function"]["arguments"])
    folder = listed_folder(str(values.get("path", ".")), text)
    function = {"name": LISTING, "arguments": call_arguments(path=folder)}
    return dict(call, function=function)


def call_values(call: Mapping) -> List:
    """The argument values of a tool call, in order ([] when they are not JSON)."""
    try:
        values = json.loads(call["function"]["arguments"])
    except (KeyError, TypeError, ValueError):
        return []
    return list(values.values()) if isinstance(values, dict) else []


class GroundedModel(ScriptedModel):
    """Replays a session's replies, each checked against the window it is sent (see the
    module's text). `steps` lists every call it made, look-up rounds included, and
    `plans` the look-up each call id stands for."""

    def __init__(
        self, replies: Sequence[Mapping], grounding: Grounding, pointers: bool = False
    ):
        super().__init__(replies)
        if len(grounding.uses) != len(self.replies):
            raise ValueError(
                f"the grounding declares {len(grounding.uses)} replies; "
                f"the script has {len(self.replies)}"
            )
        self.grounding = grounding
        self.pointers = pointers
        self.steps: List[GroundedStep] = []
        self.plans: Dict[str, LookupPlan] = {}  # look-up call id -> its plan
        self.looked_up: Dict[str, int] = {}  # fact id -> look-ups so far
        # scripted call id -> (its scripted call, the facts its window did not show)
        self.rerouted: Dict[str, Tuple[Mapping, Tuple[str, ...]]] = {}
        self._prepared = False  # the current reply had its look-up round
        self._no_pointer: Tuple[str, ...] = ()  # due facts its window gave no pointer to

    def summarize(self, messages: Sequence[Mapping]) -> str:
        return pointer_summary(messages) if self.pointers else super().summarize(messages)

    def complete(self, messages: Sequence[Mapping]) -> dict:
        if self.calls >= len(self.replies):
            return super().complete(messages)  # raises ScriptEndedError
        grounding, index = self.grounding, self.calls
        uses = grounding.uses[index]
        text = window_text(messages)
        missing = tuple(
            dict.fromkeys(u.fact for u in uses if not grounding.shows(u.fact, text))
        )
        if not self._prepared:
            due = [
                fact
                for fact in missing
                if self.looked_up.get(fact, 0) < grounding.lookups_per_fact
            ]
            plans = [(fact, self.plan(fact, index, messages)) for fact in due]
            todo = [(fact, plan) for fact, plan in plans if plan is not None]
            self._no_pointer = tuple(fact for fact, plan in plans if plan is None)
            if todo:
                self._prepared = True
                return self._lookup_round(index, missing, todo)
        self._prepared = False
        reply = copy.deepcopy(self.replies[index])
        if missing:
            reply["content"] = mark_unknown(reply.get("content") or "", uses, missing)
        rerouted = self._ground_calls(reply, text)
        no_pointer = tuple(f for f in self._no_pointer if f in missing)
        step = GroundedStep(
            len(self.steps), index, missing, (), missing, no_pointer, rerouted
        )
        self.steps.append(step)
        self.calls += 1
        return reply

    def _ground_calls(self, reply: dict, text: str) -> Tuple[str, ...]:
        """Make each call of `reply` whose arguments name a fact the window's text does
        not show a listing instead (`listing_instead`); the ids of those calls."""
        rerouted = []
        calls = reply.get("tool_calls") or []
        for number, call in enumerate(calls):
            unseen = ungrounded_arguments(self.grounding, call, text)
            if unseen:
                self.rerouted[call["id"]] = (call, unseen)
                calls[number] = listing_instead(call, text)
                rerouted.append(call["id"])
        return tuple(rerouted)

    def places_so_far(self, fact: str, index: int) -> Tuple[Place, ...]:
        """The places of `fact` shown by calls of the replies before `index`, newest
        first: what the model itself called (not a call it made as a listing instead)."""
        made = {
            call["id"]
            for reply in self.replies[:index]
            for call in reply.get("tool_calls") or ()
            if call["id"] not in self.rerouted
        }
        places = [p for p in self.grounding.places.get(fact, ()) if p.call in made]
        return tuple(reversed(places))

    def plan(self, fact: str, index: int, messages) -> Optional[LookupPlan]:
        """The look-up the window `messages` allows for `fact` before reply `index`."""
        cites = [u.cite for u in self.grounding.uses[index] if u.fact == fact]
        places = self.places_so_far(fact, index)
        return plan_lookup(places, cites, messages, self.grounding.recall)

    def _lookup_round(self, index, missing, todo) -> dict:
        """An extra model decision: one look-up call for each fact in `todo`."""
        calls, pairs = [], []
        for fact, plan in todo:
            self.looked_up[fact] = self.looked_up.get(fact, 0) + 1
            call_id = LOOKUP_ID.format(number=len(self.plans) + 1)
            self.plans[call_id] = plan
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": plan.name, "arguments": plan.arguments},
                }
            )
            pairs.append((fact, call_id))
        self.steps.append(GroundedStep(len(self.steps), index, missing, tuple(pairs)))
        facts = "、".join(fact for fact, _ in todo)
        return {
            "role": "assistant",
            "content": f"回答前核对：窗口里已没有 {facts} 的原文，先查回来。",
            "tool_calls": calls,
        }
