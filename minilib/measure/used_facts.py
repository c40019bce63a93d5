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
- **restorable**: it is gone, but a tool of the harness could bring it back
  (`minilib.measure.way_back`): the harness declares a recall tool and the window
  names an output that showed it, or a read-only call (read a file, search, list a
  folder) showed it and what that call needs (the path, the pattern) is still in the
  window. The report says what re-reading would cost: the tokens of that output;
- **lost**: no tool of the harness leads back to it. An omission line's id alone is
  not a way back where no recall tool is declared.

A fact's fate over a run is the worst of its uses (lost, then restorable, then kept).

Limits, said plainly: a fact is matched as text, so a fact the agent wrote in other
words (a count spelt out, a path shortened) is not a use; a fact the user or the
system prompt named before any tool showed it is not counted (it did not come from a
tool); one- and two-digit numbers without a unit are left out (`fact_rule` says
its limits); and "restorable" means the way back is open, not that the agent would
have taken it (and only the latest eight outputs that showed a fact are looked for).

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
    >>> classify(uses[0], WindowIndex(log[:2] + [aged]))  # no recall tool: an id alone
    'lost'
    >>> classify(uses[0], WindowIndex(log[:2] + [aged]), used_facts(log, recall=True))
    'restorable'
"""

import json
import os
import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..messages import is_observation, output_id
from ..tokens import estimate_message_tokens
from .cache import shared_prefix, window_change
from .fact_rule import facts, facts_near
from .way_back import MIN_POINTER, log_declares_recall, read_only

FATES = ("kept", "restorable", "lost")  # best to worst
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
    """Every use of a log, and the ways back to each output (for `classify`): its
    tokens, the read-only call that showed it (what that call needs in the window to
    run again), and whether the harness declares a recall tool."""

    uses: List[FactUse]
    rereads: Dict[str, Tuple[str, ...]] = field(default_factory=dict)  # id -> needs
    tokens: Dict[str, int] = field(default_factory=dict)  # output id -> its tokens
    recall: bool = False
    # what each message holds of the strings judging asks about, found once for every
    # run judged with these uses (`FactMeter`)
    held: Optional["Held"] = field(default=None, compare=False, repr=False)

    def asked(self) -> List[str]:
        """The strings judging a window asks about: each fact used, what each
        re-read needs, and, with a recall tool, each output's id."""
        strings = [use.fact for use in self.uses]
        strings += [need for needs in self.rereads.values() for need in needs]
        if self.recall:
            strings += [source for use in self.uses for source in use.sources]
        return strings

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
    return _decoded_arguments(raw) if isinstance(raw, str) else str(raw)


@lru_cache(maxsize=16_384)  # every window sent holds the same calls again
def _decoded_arguments(raw: str) -> str:
    try:
        parsed = json.loads(raw)
    except ValueError:
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


def used_facts(messages: Sequence[Mapping], recall: Optional[bool] = None) -> UsedFacts:
    """`facts_used`, with the ways back `classify` needs. `recall`: whether the
    harness offers a recall tool (by default: whether the log calls one)."""
    return _used_facts(messages, recall)


def _used_facts(
    messages: Sequence[Mapping], recall: Optional[bool], every_line: bool = False
) -> UsedFacts:
    """`used_facts`. A fact counts only where the agent writes it, so an output is
    read (by the one fact rule) only on the lines that hold a string the agent
    writes, and only where that can change a use (`_read_outputs`): the same uses
    as reading every line (`every_line`, which tests/test_used_facts_lines.py
    compares it with)."""
    written_facts = {}  # index of an assistant message -> the facts it writes
    said = {}  # index of a person's or the system's message -> the facts it names
    needs = set()  # what any read-only call needs to run again
    for index, message in enumerate(messages):
        if message.get("synthetic"):
            continue
        role = message.get("role")
        if role == "assistant":
            written_facts[index] = candidate_facts(written_text(message))
            for call in message.get("tool_calls") or ():
                needs.update(read_only(call) or ())
        elif role != "tool" and not is_observation(message):
            said[index] = candidate_facts(message.get("content") or "")
    wanted = {fact for found in written_facts.values() for fact, _ in found}
    # One scan of each output finds where a written fact may be and, for judging
    # windows later (`Held`), which facts and needs it holds.
    search = None
    if wanted and not every_line and not any("\n" in fact for fact in wanted):
        try:
            search = Strings(
                (s for s in wanted | needs if s and "\n" not in s), marked=wanted
            )
        except (RecursionError, re.error, OverflowError):  # too deep a tree: read all
            search = None
    seen: dict = {}
    if search is not None:
        named = {fact for found in said.values() for fact, _ in found}
        read = _read_outputs(messages, search, written_facts, named, seen)
    shown: Dict[str, Dict[str, None]] = {}  # fact -> ids of the outputs showing it
    given = set()  # facts a person or the system prompt named before any tool did
    calls: Dict[str, Optional[Tuple[str, ...]]] = {}  # call id -> re-read needs
    used = UsedFacts(
        [], recall=log_declares_recall(messages) if recall is None else recall
    )
    round_number = -1
    for index, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content") or ""
        if message.get("synthetic"):  # a result the harness wrote: no tool showed it
            continue
        if role == "tool" or is_observation(message):
            source = output_id(message) or f"env_{index}"
            used.tokens[source] = estimate_message_tokens(message)
            if calls.get(source):
                used.rereads[source] = calls[source]
            if search is None:
                found = [] if not wanted else candidate_facts(content)
            else:
                found = read.get(index, ())
            for fact, _ in found:
                if fact in wanted and fact not in given:
                    # a dict keeps the order shown, without repeats
                    shown.setdefault(fact, {})[source] = None
        elif role == "assistant":
            round_number += 1
            for call in message.get("tool_calls") or ():
                calls[call.get("id")] = read_only(call)
            written = set()
            for fact, kind in written_facts[index]:
                if fact in shown and fact not in written:
                    written.add(fact)
                    sources = tuple(shown[fact])[-MAX_SOURCES:]
                    used.uses.append(FactUse(fact, kind, round_number, sources))
        else:  # system or a person: named here, a fact is not the tools' to show
            given.update(fact for fact, _ in said[index] if fact not in shown)
    used.held = Held(used.asked(), seen if not used.recall else None)
    return used


def _read_outputs(
    messages: Sequence[Mapping],
    search: "Strings",
    written_facts: Mapping[int, List[Tuple[str, str]]],
    named: set,
    seen: dict,
) -> Dict[int, List[Tuple[str, str]]]:
    """The facts of each output (by its index) that a use can rest on, read from the
    last output back. A use takes the latest `MAX_SOURCES` outputs that showed its
    fact: an output followed, before the next message writing a fact, by that many
    outputs showing it cannot be one of them (nor the only one), so it is not read
    for that fact. A fact a person or the system names is read everywhere (whether a
    tool showed it first decides whether it counts). What each output holds goes to
    `seen`, for `Held`."""
    writes: Dict[str, List[int]] = {}  # fact -> the indices of messages writing it
    for index in sorted(written_facts):
        for fact, _ in written_facts[index]:
            places = writes.setdefault(fact, [])
            if not places or places[-1] != index:
                places.append(index)
    shows: Dict[Tuple[str, int], int] = {}  # (fact, next write) -> outputs after
    read: Dict[int, List[Tuple[str, str]]] = {}
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("synthetic") or not (
            message.get("role") == "tool" or is_observation(message)
        ):
            continue
        content = message.get("content") or ""
        holds, spans = search.scan(content)
        if not message.get("tool_calls"):
            seen[id(message)] = (message, holds)
        needed = set()
        for fact in holds.intersection(writes):
            if fact in named:
                needed.add(fact)
                continue
            places = writes[fact]
            after = bisect_left(places, index)
            if after < len(places) and shows.get((fact, places[after]), 0) < MAX_SOURCES:
                needed.add(fact)
        places_needed = [span for span in spans if needed.intersection(span[2])]
        if not places_needed:
            continue
        found = _facts_shown(content, sorted(places_needed), needed)
        read[index] = found
        for fact in {fact for fact, _ in found}.intersection(writes):
            places = writes[fact]
            after = bisect_left(places, index)
            if after < len(places):
                key = (fact, places[after])
                shows[key] = shows.get(key, 0) + 1
    return read


def _facts_shown(content: str, spans: List[tuple], needed: set) -> list:
    """The facts of `content` on the lines around `spans` ((start, end, the strings
    there), in order) as far as telling which of `needed` it shows takes: a string is
    shown where the fact rule names it on a line that holds it, so the lines of each
    string's first place are read, then, for a string not named there, those of its
    next place, and so on. Every string of `needed` the whole reading of those lines
    names is named (an output can hold one a hundred times; one line that names it
    tells). The facts read besides are what those lines name."""
    found: list = []
    missing = set(needed)
    while missing and spans:
        batch, rest, asked = [], [], set()
        for start, end, marks in spans:
            wanted = missing.intersection(marks)
            if not wanted:
                continue
            if wanted <= asked:  # each has a place in this batch: later, if needed
                rest.append((start, end, marks))
                continue
            asked.update(wanted)
            batch.append((start, end))
        named = facts_near(content, batch)
        found += named
        missing.difference_update(fact for fact, _ in named)
        spans = rest
    return found


def _tree(strings: List[str]) -> str:
    """The alternation of sorted, distinct, non-empty `strings`, sharing prefixes."""
    branches, start = [], 0
    while start < len(strings):
        first = strings[start][0]
        end = start
        while end < len(strings) and strings[end][0] == first:
            end += 1
        group = strings[start:end]
        common = os.path.commonprefix(group)
        rest = [string[len(common) :] for string in group]
        optional = rest[0] == ""  # sorted: the shared beginning is a string itself
        rest = [string for string in rest if string]
        branch = re.escape(common)
        if rest:
            branch += f"(?:{_tree(rest)})" + ("?" if optional else "")
        branches.append(branch)
        start = end
    return "|".join(branches)


class Strings:
    """Where any of `strings` occurs in a text, overlapping ones too (`scan`).

    One pattern, a tree of the strings' shared beginnings, finds the longest string
    at a place and goes on after it; for each string it finds, what that skips is
    known once: the strings inside it, and those that begin inside it and run past
    its end (looked for there). The places `scan` gives are those of the strings in
    `marked` (all of them by default). Raises RecursionError (or re.error) for a
    tree too deep to compile."""

    def __init__(self, strings: Iterable[str], marked: Optional[Iterable[str]] = None):
        self.strings = frozenset(strings)
        self._marked = self.strings if marked is None else frozenset(marked)
        self._sorted = sorted(self.strings)
        tree = _tree(self._sorted)
        self._search = re.compile(tree)
        self._inside: Dict[str, tuple] = {}  # string -> what finding it skips

    def scan(self, text: str):
        """(the strings `text` holds, [(start, end, the marked strings there)]: every
        occurrence of a marked string lies within one of those places)."""
        found, spans = set(), []
        marked = self._marked
        for match in self._search.finditer(text):
            string, at = match.group(), match.start()
            inside = self._inside.get(string)
            if inside is None:
                inside = self._inside[string] = self._skipped(string)
            if inside[2]:
                spans.append((at, match.end(), inside[2]))
            found.update(inside[0])
            end = match.end()
            if inside[1] and end < len(text):
                for offset, other in inside[1].get(text[end], ()):
                    if text.startswith(other, at + offset):
                        found.add(other)
                        if other in marked:
                            start = at + offset
                            spans.append((start, start + len(other), (other,)))
        return found, spans

    def _skipped(self, string: str):
        """The strings inside `string`; for those that begin inside it and run past
        its end, {the character they need after it: [(offset, string)]}; and the
        marked ones inside."""
        within = set()
        for place in range(len(string)):  # the longest at each place
            match = self._search.match(string, place)
            if match is None:
                continue
            longest = match.group()
            within.update(
                longest[:end]
                for end in range(1, len(longest) + 1)
                if longest[:end] in self.strings
            )
        past: Dict[str, List[Tuple[int, str]]] = {}
        ordered = self._sorted
        for offset in range(1, len(string)):
            tail = string[offset:]
            at = bisect_left(ordered, tail)
            while at < len(ordered) and ordered[at].startswith(tail):
                other = ordered[at]
                if len(other) > len(tail):
                    past.setdefault(other[len(tail)], []).append((offset, other))
                at += 1
        return tuple(within), past, tuple(self._marked.intersection(within))


class Held:
    """Which of `strings` each message holds, in its text or a call's arguments:
    found once a message (a replay sends the log's messages again every round, and
    every policy sends the same ones). `seen` gives what a scan of the log found
    already, for messages without calls: {id(message): (message, the strings of its
    text, among more)}."""

    def __init__(self, strings: Iterable[str], seen: Optional[dict] = None):
        # a string across a line break may run across two parts: not one message's
        self.strings = frozenset(s for s in strings if s and "\n" not in s)
        # id(message) -> (it, the strings it holds, the ids it names): held, so its
        # id stays its own
        self._held: Dict[int, Tuple[Mapping, Tuple[str, ...], Tuple[str, ...]]] = {}
        self._texts: Dict[str, Tuple[str, ...]] = {}  # a text without calls -> held
        for key, (message, found) in (seen or {}).items():
            held = tuple(self.strings.intersection(found))
            self._held[key] = (message, held, _named(message))
        try:
            self._strings = Strings(self.strings) if self.strings else None
        except (RecursionError, re.error, OverflowError):
            self._strings = None  # too deep a tree: each string looked for alone

    def __call__(self, message: Mapping) -> Tuple[str, ...]:
        return self.both(message)[1]

    def named(self, message: Mapping) -> Tuple[str, ...]:
        """The ids a message names in pairing fields: its calls', its output's."""
        return self.both(message)[2]

    def both(self, message: Mapping):
        """(message, what it holds, what it names), found once."""
        known = self._held.get(id(message))
        if known is not None and known[0] is message:
            return known
        content = message.get("content") or ""
        calls = message.get("tool_calls") or ()
        held = None if calls else self._texts.get(content)  # a placeholder, again
        if held is None:
            found = set()
            for text in [content] + [arguments_text(call) for call in calls]:
                if self._strings is None:
                    found.update(s for s in self.strings if s in text)
                else:
                    found.update(self._strings.scan(text)[0])
            held = tuple(found)
            if not calls:
                self._texts[content] = held
        known = self._held[id(message)] = (message, held, _named(message))
        return known


def used_as_data(used: UsedFacts, messages: Sequence[Mapping]) -> dict:
    """`used` as plain data (JSON's types), for another process or a file that holds
    the same `messages` (a process forked after the log was read, a log generated
    again): what `Held` found in each message is given by the message's index, since
    a message's id means nothing elsewhere. `used_from_data` reads it back."""
    index_of = {id(message): index for index, message in enumerate(messages)}
    held = None
    if used.held is not None:
        found = {}
        for key, (message, strings, _) in used.held._held.items():
            index = index_of.get(key)
            if index is not None and messages[index] is message:
                found[index] = sorted(strings)
        # by place: the order messages were first looked at depends on the runs
        held = {str(index): found[index] for index in sorted(found)}
    return {
        "uses": [[u.fact, u.kind, u.round, list(u.sources)] for u in used.uses],
        "rereads": {source: list(needs) for source, needs in used.rereads.items()},
        "tokens": used.tokens,
        "recall": used.recall,
        "held": held,
    }


def used_from_data(data: Mapping, messages: Sequence[Mapping]) -> UsedFacts:
    """The `UsedFacts` that `used_as_data` wrote, on these `messages`."""
    used = UsedFacts(
        [
            FactUse(fact, kind, round, tuple(sources))
            for fact, kind, round, sources in data["uses"]
        ],
        {source: tuple(needs) for source, needs in data["rereads"].items()},
        dict(data["tokens"]),
        data["recall"],
    )
    if data["held"] is not None:
        seen = {}
        for index, strings in data["held"].items():
            message = messages[int(index)]
            seen[id(message)] = (message, strings)
        used.held = Held(used.asked(), seen)
    return used


def _named(message: Mapping) -> Tuple[str, ...]:
    named = [call.get("id") for call in message.get("tool_calls") or ()]
    output = output_id(message)
    return (*named, output) if output else tuple(named)


class WindowIndex:
    """One window sent, indexed for `classify`: its text (contents and call
    arguments, one a line) and the output ids its messages carry.

    It keeps the text as its parts, one list a window, and remembers for each string
    asked about (`contains`) the first part that holds it or how many parts were
    looked through without it: a window that appended, or changed only its end
    (`replace_from`), is searched only where it is new."""

    def __init__(self, window: Iterable[Mapping] = ()):
        self._parts: List[str] = []
        self._message_parts: List[int] = []  # parts before each message's first
        self._message_ids: List[Tuple[str, ...]] = []
        self._dropped = False  # an empty text was dropped (as the joined text did)
        self.ids: Dict[str, int] = {}  # output id -> how many messages name it
        self._first: Dict[str, int] = {}  # string -> the first part holding it
        self._looked: Dict[str, int] = {}  # string -> parts looked through without it
        self._text: Optional[str] = None
        self.add(window)

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "\n".join(self._parts)
        return self._text

    def add(self, messages: Iterable[Mapping]) -> "WindowIndex":
        """Index messages appended to the window (a round that only appended costs
        what it appended)."""
        parts, ids = self._parts, self.ids
        if parts == [""]:  # an empty text is dropped before what is appended
            parts.clear()
            self._dropped = True
            self._looked.clear()  # it held nothing: look again from the start
        for message in messages:
            self._message_parts.append(len(parts))
            parts.append(message.get("content") or "")
            named = []
            for call in message.get("tool_calls") or ():
                named.append(call.get("id"))
                parts.append(arguments_text(call))
            output = output_id(message)
            if output:
                named.append(output)
            for name in named:
                ids[name] = ids.get(name, 0) + 1
            self._message_ids.append(tuple(named))
        self._text = None
        return self

    def replace_from(self, shared: int, window: Sequence[Mapping]) -> "WindowIndex":
        """The window is now `window`, whose first `shared` messages are the ones
        indexed: the same index `WindowIndex(window)` builds, from where it changed."""
        if self._dropped:  # the parts no longer line up with the messages
            self.__init__(window)
            return self
        ids = self.ids
        for named in self._message_ids[shared:]:
            for name in named:
                left = ids[name] - 1
                if left:
                    ids[name] = left
                else:
                    del ids[name]
        del self._message_ids[shared:]
        if shared < len(self._message_parts):
            kept = self._message_parts[shared]
            del self._message_parts[shared:]
            del self._parts[kept:]
            self._forget_from(kept)
        self.add(window[shared:])
        return self

    def _forget_from(self, kept: int) -> None:
        """Parts from `kept` on are gone: what was found there is not known now."""
        first, looked = self._first, self._looked
        for string in [s for s, at in first.items() if at >= kept]:
            del first[string]
            looked[string] = kept
        for string, count in looked.items():
            if count > kept:
                looked[string] = kept

    def contains(self, string: str) -> bool:
        """Whether `string` is in the window's text."""
        if "\n" in string or not string:  # may run across two parts: the whole text
            return string in self.text
        if string in self._first:
            return True
        parts = self._parts
        for index in range(self._looked.get(string, 0), len(parts)):
            if string in parts[index]:
                self._first[string] = index
                self._looked.pop(string, None)
                return True
        self._looked[string] = len(parts)
        return False

    def names(self, source: str) -> bool:
        """Whether the window names an output's id: in a pairing field, or in a text
        (an omission line, a summary) when the id is long enough to mean it."""
        return source in self.ids or (
            len(source) >= MIN_POINTER and self.contains(source)
        )


class HeldWindow:
    """A window that follows the windows a run sends (`update`), for `classify`: for
    each string of `held` it counts the messages holding it, and for each output id
    the messages naming it, as messages leave and join the window. Asking about a
    string then costs nothing, and a round costs what left and joined the window,
    however early it changed. A string `held` does not know is asked of a
    `WindowIndex` of the whole window."""

    def __init__(self, held: Held):
        self._held = held
        self._window: List[Mapping] = []
        # string -> messages holding it that joined, and that left (two counts, each
        # only added to, so a message's strings are counted in C)
        self._joined: Counter = Counter()
        self._left: Counter = Counter()
        # output id -> messages naming it that joined, and that left
        self._named: Counter = Counter()
        self._unnamed: Counter = Counter()
        self._whole: Optional[WindowIndex] = None

    def update(
        self, window: List[Mapping], shared: int, change: Optional[tuple] = None
    ) -> "HeldWindow":
        """The window is now `window` (a list no one changes), whose first `shared`
        messages are the last one's; `change`, what left it and what joined it
        (`window_change`), when the caller has found it."""
        left, joined = change or window_change(self._window, window, shared)
        if left:
            self._count(left, self._left, self._unnamed)
        self._count(joined, self._joined, self._named)
        self._window, self._whole = window, None
        return self

    def _count(self, messages: Sequence[Mapping], held: Counter, named: Counter):
        both = self._held.both
        found = [both(message) for message in messages]
        held.update(chain.from_iterable(each[1] for each in found))
        named.update(chain.from_iterable(each[2] for each in found))

    @property
    def ids(self) -> Dict[str, int]:
        """Output id -> how many messages of the window name it."""
        named = self._named - self._unnamed  # only the ids still named
        return dict(named)

    def contains(self, string: str) -> bool:
        """Whether `string` is in the window's text."""
        if string in self._held.strings:
            return self._joined[string] > self._left[string]
        if self._whole is None:
            self._whole = WindowIndex(self._window)
        return self._whole.contains(string)

    def names(self, source: str) -> bool:
        """`WindowIndex.names`."""
        return self._named[source] > self._unnamed[source] or (
            len(source) >= MIN_POINTER and self.contains(source)
        )


def way_back(
    use: FactUse, window: "WindowIndex | HeldWindow", used: Optional[UsedFacts] = None
) -> Optional[Tuple[str, int, str]]:
    """The cheapest way the harness offers to bring back a fact `window` lacks:
    ("recall" or "re-read", the tokens it would bring back, the output's id), or
    None."""
    if used is None:
        return None
    ways = []
    for source in use.sources:
        tokens = used.tokens.get(source, 0)
        if used.recall and window.names(source):
            ways.append((tokens, "recall", source))
        needs = used.rereads.get(source)
        if needs and all(window.contains(need) for need in needs):
            ways.append((tokens, "re-read", source))
    if not ways:
        return None
    tokens, way, source = min(ways)
    return way, tokens, source


def classify(use: FactUse, window: WindowIndex, used: Optional[UsedFacts] = None) -> str:
    """kept, restorable or lost: what `window` (the one sent at the use's round)
    left of the fact, and what `used`'s harness could bring back."""
    if window.contains(use.fact):
        return "kept"
    return "lost" if way_back(use, window, used) is None else "restorable"


@dataclass(frozen=True)
class FactFate:
    """One fact over a run: its worst fate, and the first round it had it; for a
    restorable one, the way back and the tokens it would bring back."""

    fact: str
    kind: str
    fate: str
    round: int
    way: str = ""
    tokens: int = 0
    via: str = ""  # the output it would come back from


class FactMeter:
    """Classifies a run's uses round by round, as its windows are sent: give it each
    window with `sent(step, window)`; `fates()` gives each fact's worst fate."""

    def __init__(self, used: UsedFacts):
        self.used = used
        self._by_round: Dict[int, List[FactUse]] = {}
        for use in used.uses:
            self._by_round.setdefault(use.round, []).append(use)
        self._worst: Dict[str, FactFate] = {}
        if used.held is None:  # shared by every meter judging with these uses
            used.held = Held(used.asked())
        self._window = HeldWindow(used.held)
        self._last: List[Mapping] = []  # the last window judged

    def sent(
        self,
        step: int,
        window: Sequence[Mapping],
        shared: Optional[int] = None,
        change: Optional[tuple] = None,
    ) -> List[Tuple[FactUse, str]]:
        """Judge the uses of round `step` against the window it sent. `shared`: how
        many messages it shares from the start with the last window given here, when
        the caller knows (the caller's own list then, which it does not change): every
        window is followed then, a round costing what left and joined it (`change`,
        when the caller has found it: `window_change`)."""
        uses = self._by_round.get(step)
        if shared is not None:
            index = self._window.update(window, shared, change)
            self._last = window
        elif not uses:
            return []
        else:
            window = list(window)
            index = self._window.update(window, shared_prefix(self._last, window))
            self._last = window
        if not uses:
            return []
        judged = []
        for use in uses:
            fate, back = "kept", ("", 0, "")
            if not index.contains(use.fact):
                back = way_back(use, index, self.used) or ("", 0, "")
                fate = "restorable" if back[0] else "lost"
            judged.append((use, fate))
            worst = self._worst.get(use.fact)
            if worst is None or FATES.index(fate) > FATES.index(worst.fate):
                self._worst[use.fact] = FactFate(
                    use.fact, use.kind, fate, use.round, *back
                )
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
        # what bringing the restorable facts back would add to the window: each
        # output they come back from, once
        counts["facts_restorable_tokens"] = sum(
            {f.via: f.tokens for f in fates if f.fate == "restorable"}.values()
        )
        return counts
