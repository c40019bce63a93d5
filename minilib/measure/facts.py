"""The fact-retention probe: which planted facts can the model still see, round by round?

A facts file declares strings planted in the session's tool results (file paths,
error codes, numbers, commands), each with the tool call whose output first shows
it. At each round the probe sorts every fact that has appeared so far into one of
four states, from best to worst:
- kept: verbatim somewhere in the window the model is sent;
- recallable: not in the window, but in the external store under an id the window
  names, so one `recall` call brings it back;
- traceable: not in the window, but the window still names a tool_call_id whose full
  output in the run log holds it (aging's omission line points there): a person
  auditing the run can find it, the model cannot;
- lost: nothing in the window leads back to it (the log still has it, but only a
  full search would find it).
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence

from ..messages import read_json_file

STATES = ("kept", "recallable", "traceable", "lost")
KINDS = ("path", "error_code", "number", "command", "status")


class FactsFileError(ValueError):
    """A facts file that cannot be used; the text names the file, the fact
    and the field."""


@dataclass(frozen=True)
class Fact:
    id: str
    kind: str
    text: str
    first_call: str  # the tool_call_id whose output first shows `text`
    note: str = ""


def load_facts(path) -> List[Fact]:
    """Read and check a facts file: {"facts": [{"id", "kind", "text", "first_call",
    "note"?}, ...]}."""
    path = Path(path)
    data = read_json_file(path, "facts", FactsFileError)
    items = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        raise FactsFileError(f"{path}: expected an object with a non-empty list 'facts'")
    facts, seen = [], set()
    for index, item in enumerate(items):
        at = f"{path}: facts[{index}]"
        if not isinstance(item, dict):
            raise FactsFileError(f"{at} must be an object")
        for key in ("id", "kind", "text", "first_call"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise FactsFileError(f"{at}.{key} is missing or not a non-empty string")
        if item["kind"] not in KINDS:
            raise FactsFileError(
                f"{at}.kind is {item['kind']!r}; expected one of {', '.join(KINDS)}"
            )
        if item["id"] in seen:
            raise FactsFileError(f"{at}.id {item['id']!r} is used by an earlier fact")
        seen.add(item["id"])
        facts.append(
            Fact(
                item["id"],
                item["kind"],
                item["text"],
                item["first_call"],
                item.get("note", ""),
            )
        )
    return facts


def check_facts(
    facts: Sequence[Fact], outputs: Mapping[str, str], order: Sequence[str]
) -> None:
    """Raise FactsFileError unless each fact is in its first_call's output and in no
    earlier one.

    `outputs` maps tool_call_id to the full tool output, `order` lists the ids
    in call order.
    """
    position = {call_id: number for number, call_id in enumerate(order)}
    for fact in facts:
        if fact.first_call not in position:
            raise FactsFileError(
                f"fact {fact.id}: first_call {fact.first_call!r} "
                "is not a tool call of the session"
            )
        if fact.text not in outputs[fact.first_call]:
            raise FactsFileError(
                f"fact {fact.id}: {fact.text!r} is not in the output of {fact.first_call}"
            )
        earlier = [
            c for c in order[: position[fact.first_call]] if fact.text in outputs[c]
        ]
        if earlier:
            raise FactsFileError(
                f"fact {fact.id}: {fact.text!r} first appears in {earlier[0]}, "
                f"not in {fact.first_call}"
            )


def window_text(messages: Iterable[Mapping]) -> str:
    """What the model reads of a window: every message's content. A fact is kept when
    its text is in here verbatim (the grounded scripted model checks the same)."""
    return "\n".join(message.get("content") or "" for message in messages)


def named_ids(messages: Sequence[Mapping], known_ids: Iterable[str]) -> set:
    """The tool_call_ids the window still names: in pairing fields or anywhere
    in a text."""
    text = window_text(messages)
    named = set()
    for message in messages:
        if message.get("tool_call_id"):
            named.add(message["tool_call_id"])
        named.update(call.get("id") for call in message.get("tool_calls") or ())
    named.update(call_id for call_id in known_ids if call_id in text)
    return named


def probe(
    facts: Sequence[Fact],
    window: Sequence[Mapping],
    outputs: Mapping[str, str],
    store=None,
) -> Dict[str, str]:
    """The state of each fact already surfaced (its first_call is in `outputs` and
    shows it); others are left out. A grounded run may make that call as a listing
    instead (its window had lost the path it reads): then the fact never surfaced.

    `outputs` maps each tool_call_id answered so far to its full output (the trace's
    copy); `store` is the ExternalStore of a run that has one.
    """
    text = window_text(window)
    ids = named_ids(window, outputs)
    states = {}
    for fact in facts:
        if fact.text not in outputs.get(fact.first_call, ""):
            continue
        if fact.text in text:
            states[fact.id] = "kept"
        elif store is not None and any(
            key in ids and fact.text in stored for key, stored in store.items()
        ):
            states[fact.id] = "recallable"
        elif any(fact.text in outputs[call_id] for call_id in ids if call_id in outputs):
            states[fact.id] = "traceable"
        else:
            states[fact.id] = "lost"
    return states


def count_states(
    states: Mapping[str, str], total: Optional[int] = None
) -> Dict[str, int]:
    """How many facts are in each state (and, with `total`, how many have
    not appeared yet)."""
    counts = {state: sum(1 for s in states.values() if s == state) for state in STATES}
    if total is not None:
        counts["not_yet"] = total - len(states)
    return counts
