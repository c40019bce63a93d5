"""Grounded replay: the scripted agent answers the window it is sent, and the outcome is
measured.

The recorded replies of data/session.json are the same whatever the model is sent, so
a plain replay cannot tell whether compression cut a fact the task needed. In grounded
mode (`GroundedModel`, a stand-in for an LLM) each reply declares the planted facts it
rests on (data/grounding.json, written by scripts/make_grounding.py), the model checks
each is verbatim in its window, looks a missing one up once in an extra round, but only
with what its window still holds (an id, a path, a command or a phrase; never the
fact's own text), and marks what is still missing as `〔未知:<fact id>〕` in its reply.
This module reads the declarations, runs the article's pipeline in that mode
(`run_grounded`), and measures the outcome of a run (`grounded_outcome`): the facts the
final answer got right, the look-up rounds and calls it cost, the facts it marked
unknown, the extra tokens sent, whether it finished, and every tool call walked against
the window it was decided on (`ungrounded_calls`: none names a fact its window lacks).
"""

import json
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from ..loop import replay
from ..messages import read_json_file
from ..model import ScriptedModel
from ..session import (
    DATA_DIR,
    Session,
    SessionRun,
    run_baseline,
    session_run,
)
from ..tokens import TokenCounter, estimate_tokens
from ..trace import Tracer
from ..window import Settings, article_window
from .facts import Fact, load_facts, window_text
from .grounded_model import (
    LOOKUP_ID,
    RECALL,
    UNKNOWN_MARK,
    UNKNOWN_RE,
    FactUse,
    GroundedModel,
    GroundedStep,
    Grounding,
    Place,
    ungrounded_arguments,
    unknown_marker,
)

DEFAULT_GROUNDING = DATA_DIR / "grounding.json"
SEARCH_TOOLS = ("search_text", RECALL)  # their first output line is a header
LOOKUP_PREFIX = LOOKUP_ID.split("{")[0]


class GroundingFileError(ValueError):
    """A grounding file that does not fit its session or its facts; the
    text says where."""


def load_grounding(
    session: Session, facts: Sequence[Fact], path=DEFAULT_GROUNDING
) -> Grounding:
    """Read the declarations of `path` and check them against `session` and `facts`.

    Checked: one entry per scripted reply; every fact id is a planted fact, shown by a
    tool call of an earlier reply; every cite occurs exactly once in its reply and no
    two cites of a reply overlap; every form is a non-empty text of a planted fact;
    every place of a fact is a scripted call (its id, tool and arguments) and a file.
    """
    path = Path(path)
    data = read_json_file(path, "grounding", GroundingFileError)
    if not isinstance(data, dict) or not isinstance(data.get("replies"), list):
        raise GroundingFileError(f"{path}: expected an object with a list 'replies'")
    if data.get("unknown_marker") != UNKNOWN_MARK:
        raise GroundingFileError(
            f"{path}: unknown_marker must be {UNKNOWN_MARK!r} (the model writes it)"
        )
    if len(data["replies"]) != len(session.replies):
        raise GroundingFileError(
            f"{path}: declares {len(data['replies'])} replies; the session "
            f"{session.path.name} has {len(session.replies)}"
        )
    by_id = {fact.id: fact for fact in facts}
    called_before: List[str] = []
    uses = []
    for index, (entry, reply) in enumerate(zip(data["replies"], session.replies)):
        at = f"{path}: replies[{index}]"
        items = entry.get("uses_facts") if isinstance(entry, dict) else None
        if not isinstance(items, list):
            raise GroundingFileError(f"{at}.uses_facts must be a list")
        content = reply.get("content") or ""
        spans = []
        for number, item in enumerate(items):
            where = f"{at}.uses_facts[{number}]"
            fact, cite = (
                (item.get("fact"), item.get("cite"))
                if isinstance(item, dict)
                else (None, None)
            )
            if fact not in by_id:
                raise GroundingFileError(f"{where}.fact {fact!r} is not a planted fact")
            if by_id[fact].first_call not in called_before:
                raise GroundingFileError(
                    f"{where}: {fact} first shows in {by_id[fact].first_call}, "
                    "which no earlier reply calls"
                )
            if not isinstance(cite, str) or content.count(cite) != 1 or not cite:
                raise GroundingFileError(
                    f"{where}.cite {cite!r} must occur exactly once in the reply"
                )
            start = content.index(cite)
            spans.append((start, start + len(cite)))
        spans.sort()
        if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
            raise GroundingFileError(f"{at}: two cites overlap")
        uses.append(tuple(FactUse(item["fact"], item["cite"]) for item in items))
        called_before += [call["id"] for call in reply.get("tool_calls") or ()]
    return Grounding(
        {fact.id: fact.text for fact in facts},
        {fact.id: fact.first_call for fact in facts},
        tuple(uses),
        _places(data.get("places"), session, facts, path),
        _forms(data.get("forms"), by_id, path),
    )


def _forms(forms, by_id, path) -> dict:
    if not isinstance(forms, dict):
        raise GroundingFileError(f"{path}: forms must be an object (fact id -> texts)")
    for fact, texts in forms.items():
        if fact not in by_id:
            raise GroundingFileError(f"{path}: forms[{fact!r}] is not a planted fact")
        if not isinstance(texts, list) or not all(
            isinstance(t, str) and t for t in texts
        ):
            raise GroundingFileError(
                f"{path}: forms[{fact!r}] must be a list of non-empty texts"
            )
    return {fact: tuple(texts) for fact, texts in forms.items()}


def _places(places, session: Session, facts: Sequence[Fact], path) -> dict:
    calls = {
        call["id"]: (call["function"]["name"], call["function"]["arguments"])
        for reply in session.replies
        for call in reply.get("tool_calls") or ()
    }
    found = {}
    for fact in facts:
        items = (places or {}).get(fact.id) if isinstance(places, dict) else None
        at = f"{path}: places[{fact.id!r}]"
        if not isinstance(items, list) or not items:
            raise GroundingFileError(f"{at} must list where the session shows the fact")
        for number, item in enumerate(items):
            keys = ("call", "name", "arguments", "file")
            if not isinstance(item, dict) or not all(
                isinstance(item.get(key), str) and item[key] for key in keys
            ):
                raise GroundingFileError(f"{at}[{number}] needs {', '.join(keys)}")
            if calls.get(item["call"]) != (item["name"], item["arguments"]):
                raise GroundingFileError(
                    f"{at}[{number}]: {item['call']} is not a scripted call "
                    "with that tool and those arguments"
                )
        found[fact.id] = tuple(Place(*(item[key] for key in keys)) for item in items)
    return found


@lru_cache(maxsize=4)
def session_grounding(session: Session, facts: Tuple[Fact, ...]) -> Grounding:
    """The bundled declarations, checked once per session and facts."""
    return load_grounding(session, facts)


def evidence(name: str, output: str) -> str:
    """The part of a tool output that shows something: a search or a recall without its
    header line (which repeats the pattern asked for); any other output whole."""
    return output.partition("\n")[2] if name in SEARCH_TOOLS else output


def strip_markers(text: str) -> str:
    return UNKNOWN_RE.sub("", text)


def cited(text: str, use: FactUse) -> bool:
    """The reply still says what `use` cites: its words are there, not its marker."""
    return unknown_marker(use.fact) not in text and use.cite in strip_markers(text)


@dataclass(frozen=True)
class Lookup:
    """One look-up call: the round that made it, the reply it prepared, the fact, the
    call (its tool and JSON arguments, copied from the window), the pointer of the
    window it used ("id", "path", "phrase" or "command"), and whether the reply it
    prepared then stated the fact (`found`)."""

    round: int
    reply: int
    fact: str
    tool_call_id: str
    tool: str
    arguments: str = ""
    pointer: str = ""
    found: bool = False


@dataclass(frozen=True)
class GroundedOutcome:
    """What grounding measured on one run.

    `declared`: the facts the final reply rests on; `right`: those it still cites
    verbatim (the rest carry the unknown marker, or there is no final reply);
    `finished`: the scripted final reply was given. `tokens_sent` sums the tokens of
    every window sent, look-up rounds included; `plain_tokens_sent` is the same run
    without grounding, so `extra_tokens` is what looking things up cost.
    """

    declared: Tuple[str, ...]
    right: Tuple[str, ...]
    finished: bool
    lookups: Tuple[Lookup, ...]
    lookup_rounds: int
    unknown: Tuple[Tuple[int, str], ...]  # (round, fact) of every marker written
    tokens_sent: int
    plain_tokens_sent: Optional[int] = None
    final_reply: str = ""
    # (round, fact) of the markers written with no pointer to the fact in the window
    no_pointer: Tuple[Tuple[int, str], ...] = ()
    # every tool call the model made, and (round, call id, fact) of those whose
    # arguments state a fact the window they were decided on does not show
    tool_calls: int = 0
    ungrounded: Tuple[Tuple[int, str, str], ...] = ()
    # (round, call id, scripted call, the call made) of each scripted call made as a
    # listing instead, its arguments naming a fact the window did not show
    rerouted: Tuple[Tuple[int, str, str, str], ...] = ()

    @property
    def lookup_calls(self) -> int:
        return len(self.lookups)

    @property
    def extra_tokens(self) -> Optional[int]:
        if self.plain_tokens_sent is None:
            return None
        return self.tokens_sent - self.plain_tokens_sent

    @property
    def facts_right(self) -> str:
        return f"{len(self.right)}/{len(self.declared)}"

    @property
    def lost(self) -> Tuple[str, ...]:
        """Declared facts the final answer does not state."""
        return tuple(fact for fact in self.declared if fact not in self.right)

    def as_dict(self) -> dict:
        return {
            "facts_right": len(self.right),
            "facts_declared": len(self.declared),
            "right": list(self.right),
            "lost": list(self.lost),
            "finished": self.finished,
            "lookup_rounds": self.lookup_rounds,
            "lookup_calls": self.lookup_calls,
            "lookups": [asdict(lookup) for lookup in self.lookups],
            "unknown": [list(pair) for pair in self.unknown],
            "no_pointer": [list(pair) for pair in self.no_pointer],
            "tool_calls": self.tool_calls,
            "ungrounded": [list(item) for item in self.ungrounded],
            "rerouted": [list(item) for item in self.rerouted],
            "tokens_sent": self.tokens_sent,
            "plain_tokens_sent": self.plain_tokens_sent,
            "extra_tokens": self.extra_tokens,
        }


def ungrounded_calls(grounding: Grounding, tracer: Tracer) -> Tuple[Tuple, ...]:
    """Every tool call of the model's decisions in `tracer`, walked against the window
    it was decided on: (round, tool_call_id, fact) of each whose arguments state a
    planted fact (a path, a pattern) that window does not show."""
    return tuple(
        (decision["step"], call["id"], fact)
        for decision in tracer.events("model_call")
        if decision["purpose"] == "decision"
        for call in decision["reply"].get("tool_calls") or ()
        for fact in ungrounded_arguments(grounding, call, window_text(decision["input"]))
    )


def call_text(name: str, arguments: str) -> str:
    """`read_file docs/x.md`: a call's tool and its argument values."""
    values = json.loads(arguments) if arguments else {}
    return " ".join([name, *map(str, values.values())])


def grounded_outcome(
    model: GroundedModel,
    tracer: Tracer,
    tokens_sent: int,
    plain_tokens_sent: Optional[int] = None,
) -> GroundedOutcome:
    """Measure a grounded run from its model's steps and its trace."""
    grounding = getattr(model, "grounding", None)
    if grounding is None:
        raise ValueError("the model ran without grounding: there is nothing to measure")
    final = len(model.replies) - 1
    finished = model.calls == len(model.replies)
    decisions = [c for c in tracer.events("model_call") if c["purpose"] == "decision"]
    text = (decisions[-1]["reply"].get("content") or "") if finished else ""
    uses = grounding.uses[final]
    names = {c["tool_call_id"]: c["name"] for c in tracer.events("tool_call")}
    marked = {(step.reply, fact) for step in model.steps for fact in step.unknown}
    made = {
        c["tool_call_id"]: call_text(c["name"], c["arguments"])
        for c in tracer.events("tool_call")
    }
    rerouted = tuple(
        (
            step.call,
            call_id,
            call_text(
                model.rerouted[call_id][0]["function"]["name"],
                model.rerouted[call_id][0]["function"]["arguments"],
            ),
            made.get(call_id, ""),
        )
        for step in model.steps
        for call_id in step.rerouted
    )
    answered = {step.reply for step in model.steps if not step.is_lookup}
    lookups = tuple(
        Lookup(
            step.call,
            step.reply,
            fact,
            call_id,
            names.get(call_id, ""),
            model.plans[call_id].arguments,
            model.plans[call_id].pointer,
            step.reply in answered and (step.reply, fact) not in marked,
        )
        for step in model.steps
        for fact, call_id in step.lookups
    )
    return GroundedOutcome(
        tuple(dict.fromkeys(use.fact for use in uses)),
        tuple(dict.fromkeys(use.fact for use in uses if finished and cited(text, use))),
        finished,
        lookups,
        sum(1 for step in model.steps if step.is_lookup),
        tuple((step.call, fact) for step in model.steps for fact in step.unknown),
        tokens_sent,
        plain_tokens_sent,
        text,
        tuple((step.call, fact) for step in model.steps for fact in step.no_pointer),
        len(made),
        ungrounded_calls(grounding, tracer),
        rerouted,
    )


# --- the article's pipeline, grounded
# -------------------------------------------------------------


def article_pipeline(summarize, settings: Settings, count_tokens, keep_unseen: bool):
    """The article's window; with `keep_unseen` its aging waits until a result was
    sent once."""
    window = article_window(summarize, settings, count_tokens)
    if keep_unseen:
        window.strategies[0] = replace(window.strategies[0], keep_unseen=True)
    return window


@dataclass
class GroundedSessionRun:
    """A run of the article's pipeline: the usual SessionRun, the model's
    steps, the outcome."""

    run: SessionRun
    steps: Tuple[GroundedStep, ...]
    outcome: Optional[GroundedOutcome]
    keep_unseen: bool
    pointers: bool = False


def _replay(session, settings, count_tokens, keep_unseen, grounding, pointers=False):
    model = (
        ScriptedModel(session.replies)
        if grounding is None
        else GroundedModel(session.replies, grounding, pointers)
    )
    window = article_pipeline(model.summarize, settings, count_tokens, keep_unseen)
    governed = replay(
        session.conversation(model), window, tracer=Tracer(), count_tokens=count_tokens
    )
    return model, governed


def run_grounded(
    session: Session,
    settings: Settings = Settings(),
    *,
    grounded: bool = True,
    keep_unseen: bool = False,
    pointers: bool = False,
    facts: Optional[Sequence[Fact]] = None,
    count_tokens: TokenCounter = estimate_tokens,
) -> GroundedSessionRun:
    """Replay `session` through the article's pipeline at `settings`, grounded.

    With `grounded=False` it is `run_session` (plus the `keep_unseen` choice); with
    it, the outcome holds the facts right, the look-ups and the extra tokens against
    the same pipeline without grounding. A round's baseline is the uncompressed run's
    at the same scripted reply; a look-up round has none (None). `pointers=True` (only
    grounded) makes the summary quote each folded call's id and arguments; the extra
    tokens are still measured against the article's pipeline, not grounded.
    """
    grounding = None
    if grounded:
        facts = tuple(load_facts(DATA_DIR / "facts.json") if facts is None else facts)
        grounding = session_grounding(session, facts)
    elif pointers:
        raise ValueError("pointers=True is an option of the grounded mode")
    model, governed = _replay(
        session, settings, count_tokens, keep_unseen, grounding, pointers
    )
    baseline = run_baseline(session, count_tokens)

    def baseline_round(number: int) -> Optional[int]:  # a look-up round has no baseline
        if not grounded:
            return number
        step = model.steps[number]
        return None if step.is_lookup else step.reply

    run = session_run(settings, governed, baseline, count_tokens, baseline_round)
    outcome = None
    if grounded:
        _, plain = _replay(session, settings, count_tokens, keep_unseen, None)
        outcome = grounded_outcome(
            model,
            governed.tracer,
            sum(r.tokens_after for r in governed.rounds),
            sum(r.tokens_after for r in plain.rounds),
        )
    steps = tuple(model.steps) if grounded else ()
    return GroundedSessionRun(run, steps, outcome, keep_unseen, pointers)


def threshold_to_finish(
    session: Session,
    settings: Settings = Settings(),
    *,
    keep_unseen: bool = True,
    grounded: bool = True,
    count_tokens: TokenCounter = estimate_tokens,
) -> Tuple[int, GroundedSessionRun]:
    """The threshold at which the run first finishes, raising it from `settings` to what
    each overflow needed (its `tokens`); and that run.

    The first such threshold on the way up, not a search of every smaller one.
    """
    threshold = settings.threshold
    while True:
        run = run_grounded(
            session,
            replace(settings, threshold=threshold),
            grounded=grounded,
            keep_unseen=keep_unseen,
            count_tokens=count_tokens,
        )
        if run.run.overflow is None:
            return threshold, run
        threshold = max(threshold + 1, run.run.overflow.tokens)
