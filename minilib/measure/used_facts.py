"""Facts the agent used, read from its own log, and what a compressed window left of them.

The article says compression cuts redundant volume, "not the facts the task needs to
go on". On any log that can be checked without planting anything: a **fact** is what
`minilib.measure.fact_rule` says (a path, a file:line, a code identifier, a number of
three digits or with a unit, a hash, an error code, a `key=value` setting: one rule
of the measure's own, which no policy uses to choose what to keep), and a fact **the
agent used** is one that a tool result or an environment output showed first and
that the agent later wrote itself, in its reply or in a call's arguments (their
values, not the tool protocol's field names). Each such writing is a **use**, at the
round of the reply that writes it.

A replay is then judged at each use, on the window that round actually sent:

- **kept**: the fact is in the window verbatim (a message's text or a call's
  arguments): the agent could have written it from what it was sent;
- **restorable**: it is gone, but the window still names where it was: the id of an
  output that showed it (a tool result's pairing id, an omission line, a summary) or
  a string argument of the call that produced it (the path read, the command run),
  so one look-up brings it back;
- **lost**: nothing in the window leads back to it.

A fact's fate over a run is the worst of its uses (lost, then restorable, then kept).

Limits, said plainly: a fact is matched as text, so a fact the agent wrote in other
words (a count spelt out, a path shortened) is not a use; a fact the user or the
system prompt named before any tool showed it is not counted (it did not come from a
tool); one- and two-digit numbers without a unit are left out (`fact_rule` says
its limits); and "restorable" means a pointer is left,
not that the agent would have followed it (and only the latest eight outputs that
showed a fact are looked for).

Example: a result shows a path, the agent writes it at round 1; a window that lost
the result's text but kept its id can bring it back, one with neither cannot.

    >>> log = [
    ...     {"role": "user", "content": "find the config"},
    ...     {"role": "assistant", "content": "", "tool_calls": [{"id": "c1",
    ...      "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "conf/app.toml"},
    ...     {"role": "assistant", "content": "It is conf/app.toml."},
    ... ]
    >>> uses = facts_used(log)
    >>> [(use.fact, use.round, use.sources) for use in uses]
    [('conf/app.toml', 1, ('c1',))]
    >>> aged = dict(log[2], content="[cut] full output under tool_call_id=c1")
    >>> classify(uses[0], WindowIndex(log[:2] + [aged]))
    'restorable'
    >>> classify(uses[0], WindowIndex(log[:1]))  # folded away, nothing names it
    'lost'
"""

import json
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Sequence, Tuple

from ..messages import is_observation, output_id
from .cache import shared_prefix
from .fact_rule import facts

FATES = ("kept", "restorable", "lost")  # best to worst
MIN_POINTER = 4  # a call argument shorter than this ("ls", "1") points at nothing
# A use remembers the latest outputs that showed its fact: the likeliest still named.
MAX_SOURCES = 8


@dataclass(frozen=True)
class FactUse:
    """The agent wrote `fact` at `round`; `sources` are the outputs that showed it
    before (their ids), `kind` one of the bounded summary's fact kinds."""

    fact: str
    kind: str
    round: int
    sources: Tuple[str, ...]


@dataclass
class UsedFacts:
    """Every use of a log, and what points back at each output (for `classify`)."""

    uses: List[FactUse]
    pointers: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # id -> args

    @property
    def facts(self) -> List[str]:
        """The distinct facts used, in the order first used."""
        return list(dict.fromkeys(use.fact for use in self.uses))


def candidate_facts(text: str) -> List[Tuple[str, str]]:
    """The facts `text` names, with their kinds (`minilib.measure.fact_rule`)."""
    return facts(text)


def arguments_text(call: Mapping) -> str:
    """What a call's arguments say: the values of its JSON arguments, one a line (a
    path, a command, an edit's new text, decoded), not the tool protocol's field names
    (`file_path`, `old_string`); the raw arguments when they are not JSON."""
    raw = (call.get("function") or {}).get("arguments") or ""
    try:
        parsed = json.loads(raw)
    except (TypeError, ValueError):
        return raw
    return "\n".join(_values(parsed))


def _values(value) -> List[str]:
    if isinstance(value, dict):
        return [text for item in value.values() for text in _values(item)]
    if isinstance(value, list):
        return [text for item in value for text in _values(item)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def argument_strings(call: Mapping) -> Tuple[str, ...]:
    """The string values of a call's JSON arguments (a path, a command, a query), or
    the raw arguments when they are not a JSON object."""
    raw = (call.get("function") or {}).get("arguments") or ""
    try:
        parsed = json.loads(raw)
    except (TypeError, ValueError):
        return (raw,) if len(raw) >= MIN_POINTER else ()
    values = parsed.values() if isinstance(parsed, dict) else ()
    return tuple(v for v in values if isinstance(v, str) and len(v) >= MIN_POINTER)


def written_text(message: Mapping) -> str:
    """What an assistant message writes: its text and its calls' arguments."""
    parts = [message.get("content") or ""]
    parts += [arguments_text(call) for call in message.get("tool_calls") or ()]
    return "\n".join(parts)


def facts_used(messages: Sequence[Mapping]) -> List[FactUse]:
    """The uses in a log (chat-completions messages; environment outputs with an
    `output_id`, or numbered by their place), in order. A round is an assistant
    message."""
    return used_facts(messages).uses


def used_facts(messages: Sequence[Mapping]) -> UsedFacts:
    """`facts_used`, with the pointers `classify` needs: each output's producing
    call's argument strings."""
    shown: Dict[str, Dict[str, None]] = {}  # fact -> ids of the outputs showing it
    given = set()  # facts a person or the system prompt named before any tool did
    arguments: Dict[str, Tuple[str, ...]] = {}  # call id -> its argument strings
    pointers: Dict[str, Tuple[str, ...]] = {}
    uses: List[FactUse] = []
    round_number = -1
    for index, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content") or ""
        if role == "tool" or is_observation(message):
            source = output_id(message) or f"env_{index}"
            pointers[source] = arguments.get(source, ())
            for fact, _ in candidate_facts(content):
                if fact not in given:  # a dict keeps the order shown, without repeats
                    shown.setdefault(fact, {})[source] = None
        elif role == "assistant":
            round_number += 1
            for call in message.get("tool_calls") or ():
                arguments[call.get("id")] = argument_strings(call)
            written = set()
            for fact, kind in candidate_facts(written_text(message)):
                if fact in shown and fact not in written:
                    written.add(fact)
                    sources = tuple(shown[fact])[-MAX_SOURCES:]
                    uses.append(FactUse(fact, kind, round_number, sources))
        else:  # system or a person: named here, a fact is not the tools' to show
            given.update(
                fact for fact, _ in candidate_facts(content) if fact not in shown
            )
    return UsedFacts(uses, pointers)


class WindowIndex:
    """One window sent, indexed for `classify`: its text (contents and call
    arguments) and the output ids its messages carry."""

    def __init__(self, window: Iterable[Mapping]):
        self.text, self.ids = "", set()
        self.add(window)

    def add(self, messages: Iterable[Mapping]) -> "WindowIndex":
        """Index messages appended to the window (a round that only appended costs
        what it appended)."""
        parts = [self.text] if self.text else []
        for message in messages:
            parts.append(message.get("content") or "")
            for call in message.get("tool_calls") or ():
                self.ids.add(call.get("id"))
                parts.append(arguments_text(call))
            named = output_id(message)
            if named:
                self.ids.add(named)
        self.text = "\n".join(parts)
        return self

    def names(self, source: str) -> bool:
        """Whether the window names an output's id: in a pairing field, or in a text
        (an omission line, a summary) when the id is long enough to mean it."""
        return source in self.ids or (len(source) >= MIN_POINTER and source in self.text)


def classify(
    use: FactUse, window: WindowIndex, pointers: Mapping[str, Tuple[str, ...]] = None
) -> str:
    """kept, restorable or lost: what `window` (the one sent at the use's round)
    left of the fact."""
    if use.fact in window.text:
        return "kept"
    pointers = pointers or {}
    for source in use.sources:
        if window.names(source):
            return "restorable"
        if any(argument in window.text for argument in pointers.get(source, ())):
            return "restorable"
    return "lost"


@dataclass(frozen=True)
class FactFate:
    """One fact over a run: its worst fate, and the first round it had it."""

    fact: str
    kind: str
    fate: str
    round: int


class FactMeter:
    """Classifies a run's uses round by round, as its windows are sent: give it each
    window with `sent(step, window)`; `fates()` gives each fact's worst fate."""

    def __init__(self, used: UsedFacts):
        self.used = used
        self._by_round: Dict[int, List[FactUse]] = {}
        for use in used.uses:
            self._by_round.setdefault(use.round, []).append(use)
        self._worst: Dict[str, FactFate] = {}
        self._indexed: Tuple[List[Mapping], WindowIndex] = ([], WindowIndex(()))

    def sent(self, step: int, window: Sequence[Mapping]) -> List[Tuple[FactUse, str]]:
        """Judge the uses of round `step` against the window it sent."""
        uses = self._by_round.get(step)
        if not uses:
            return []
        window = list(window)
        last, index = self._indexed
        known = len(last)
        if known and shared_prefix(last, window) == known:
            index.add(window[known:])  # only appended since the last window judged
        else:
            index = WindowIndex(window)
        self._indexed = (window, index)
        judged = [(use, classify(use, index, self.used.pointers)) for use in uses]
        for use, fate in judged:
            worst = self._worst.get(use.fact)
            if worst is None or FATES.index(fate) > FATES.index(worst.fate):
                self._worst[use.fact] = FactFate(use.fact, use.kind, fate, use.round)
        return judged

    def fates(self) -> List[FactFate]:
        """Each fact used in the rounds sent so far, with its worst fate, in the order
        first used."""
        order = {fact: number for number, fact in enumerate(self.used.facts)}
        return sorted(self._worst.values(), key=lambda fate: order[fate.fact])

    def counts(self) -> Dict[str, int]:
        """facts_used and how many of them were kept, restorable and lost."""
        fates = self.fates()
        counts = {"facts_used": len(fates)}
        for fate in FATES:
            counts[f"facts_{fate}"] = sum(1 for f in fates if f.fate == fate)
        return counts
