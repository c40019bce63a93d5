"""What the agent's own compactions kept, measured on its log, beside the lab's stand-in.

A log that records the agent's compactions (`LoadedLog.compactions`: Claude Code's
compact boundary and summary, Codex's `compacted`) holds what a real model wrote
in place of the history, and what the agent did next. For each compaction:

- **as recorded**: the round it came before (the log's assistant messages before
  it), its trigger and the tokens before it, read from the record's own fields
  (Claude Code: `compactMetadata.trigger` and `preTokens`; pi: `tokensBefore`, no
  trigger; Codex records no trigger, and the tokens are those of the last
  `token_count` event before it, the field named), beside the lab's count of the
  window it replaced (the article's estimate: without the system prompt and tool
  definitions a log does not hold) and the prompt of the last call before it as the
  log's usage records it, and the summary's size, estimated, or **opaque**
  when the record holds none to read (Codex compacting remotely keeps an encrypted
  item);
- **the facts after it**: the facts (`minilib.measure.fact_rule`) the agent wrote
  after the compaction, before the next one, that a tool had shown before it. Each
  is **held** (the replacement the model saw holds it verbatim), **re-read** (not
  held, but a tool output after the compaction showed it again before the agent
  wrote it: the calls and tokens of those outputs are the price of the summary's
  gap), or **neither** (written with no source in view: from memory, or by chance);
- **restorable**: of those not held, how many a way back the harness offers could
  bring back from the replacement (`minilib.measure.way_back`: a read-only call whose
  path or pattern the replacement names, or recall): the same rule the replayed
  policies are judged by;
- **the stand-in beside it**: the lab's deterministic summary
  (`BoundedSummarizer` over the scripted summary, the text the production policies'
  rows say "stand-in" for) of the same replaced history, given the same room as the
  real summary (its estimated tokens; `STANDIN_TOKENS` when the real one is opaque):
  the same facts, held by it or restorable from it. Its held count beside the real
  one says how far a stand-in row is from a real summary (on the real logs bundled,
  `real_compactions()`, the stand-in holds fewer).

Limits, said plainly: facts are text (`fact_rule` says its limits); "held" means
verbatim, so a summary that paraphrases a path does not hold it; re-read counts any
tool output that showed the fact again, a test run's as much as a file read; tokens
are the article's estimate.
"""

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..agents import HOMES
from ..messages import is_observation, output_id
from ..model import scripted_summary
from ..scale.bounded import MIN_BUDGET, BoundedSummarizer
from ..session import DATA_DIR
from ..tokens import estimate_message_tokens, estimate_text_tokens, estimate_tokens
from .used_facts import UsedFacts, WindowIndex, used_facts, way_back

# The stand-in's room when the real summary cannot be measured: 2.5% of a 200,000-token
# window, the length the lab's production policies give their stand-in summary.
STANDIN_TOKENS = 5_000
FATES = ("held", "reread", "neither")


@dataclass
class FactAfter:
    """One fact used after a compaction: its fate there, and the stand-in's."""

    fact: str
    kind: str
    round: int  # the round that first wrote it after the compaction
    fate: str  # held, reread or neither
    restorable: bool  # not held, but a way back the harness offers names it
    standin: str  # held, restorable or lost


@dataclass
class CompactionReport:
    """One compaction of a log, measured (see the module text); `as_dict()` is what
    `python -m minilib compactions --json` writes."""

    number: int
    round: int
    where: str
    trigger: Optional[str]
    tokens_before: Optional[int]
    tokens_before_field: str
    summary_tokens: Optional[int]  # None: opaque
    replaced: int
    # the lab's count of the window just before it (the head the harness keeps and
    # the history it replaced), by the article's estimate
    lab_tokens_before: int = 0
    # the whole prompt of the last call before it as the log's usage records it (the
    # system prompt and tools too): a third number beside the record's and the lab's
    last_call_tokens: Optional[int] = None
    facts: List[FactAfter] = field(default_factory=list)
    reread_calls: int = 0
    reread_tokens: int = 0
    standin_tokens: int = 0

    def count(self, fate: str) -> int:
        return sum(1 for fact in self.facts if fact.fate == fate)

    def as_dict(self) -> dict:
        document = asdict(self)
        document.update(
            opaque=self.summary_tokens is None,
            facts_after=len(self.facts),
            held=self.count("held"),
            reread=self.count("reread"),
            neither=self.count("neither"),
            restorable=sum(1 for f in self.facts if f.restorable),
            standin_held=sum(1 for f in self.facts if f.standin == "held"),
            standin_restorable=sum(1 for f in self.facts if f.standin == "restorable"),
        )
        return document


def _text(messages: Sequence[Mapping]) -> str:
    return "\n".join(message.get("content") or "" for message in messages)


def summary_text(compaction, history: Sequence[Mapping]) -> str:
    """What the compaction wrote: its replacement's messages that are not copies of
    the history's (Codex keeps earlier user messages beside the summary)."""
    earlier = {message.get("content") for message in history}
    return _text([m for m in compaction.replacement if m.get("content") not in earlier])


def replaced_history(log, number: int) -> List[Mapping]:
    """What the agent's window held just before compaction `number` (the head the
    harness keeps aside): since the start, or the previous replacement and what
    followed it."""
    compaction = log.compactions[number]
    if number == 0:
        return list(log.messages[compaction.kept : compaction.at])
    previous = log.compactions[number - 1]
    return list(previous.replacement) + list(log.messages[previous.at : compaction.at])


def recorded_fields(
    log, compaction, text: Optional[str] = None
) -> Tuple[Optional[str], Optional[int], str]:
    """(trigger, tokens before, the field the tokens came from) as the compaction's
    own record and the records before it say: in `text`, the log file's text, or
    the file `log.path` names."""
    path = getattr(log, "path", None)
    where = compaction.where.split(",")[0]
    if (text is None and path is None) or not where.startswith("line "):
        return None, None, "not recorded"
    try:
        if text is None:
            text = Path(path).read_text(encoding="utf-8")
        lines = text.splitlines()
        number = int(where.split()[1])
        record = json.loads(lines[number - 1])
    except (OSError, ValueError, IndexError):
        return None, None, "not recorded"
    for reader in compaction_readers():
        said = reader(record, lines[: number - 1])
        if said is not None:
            return said
    return None, None, "not recorded"


def compaction_readers() -> list:
    """Each agent's reader of what its compaction record says (`compaction_fields`
    of its home's readers: record, the lines before it -> (trigger, tokens before,
    the field) or None for a record not its own)."""
    return [
        module.compaction_fields
        for home in HOMES
        for module in map(home.module, home.readers)
        if hasattr(module, "compaction_fields")
    ]


def last_call_tokens(log, at: int) -> Optional[int]:
    """The input tokens the log's usage records for the last call answered before
    messages[at]; None where it records none."""
    before = [usage for usage in getattr(log, "usage", ()) if usage.message < at]
    return max(before, key=lambda usage: usage.message).input_tokens if before else None


def recorded_against_usage(log, text: Optional[str] = None) -> List[Tuple[int, int]]:
    """(the tokens before as the compaction's record says, the last call's as the
    log's usage says) for each compaction of `log` that records both: two records of
    one prompt, where a real log's should agree (the facts are not measured)."""
    pairs = []
    for compaction in log.compactions:
        _, before, _ = recorded_fields(log, compaction, text)
        last = last_call_tokens(log, compaction.at)
        if before is not None and last is not None:
            pairs.append((before, last))
    return pairs


def _positions(messages: Sequence[Mapping]):
    """Each output's place (id -> index) and each round's assistant message index."""
    outputs, rounds = {}, []
    for index, message in enumerate(messages):
        if message.get("role") == "tool" or is_observation(message):
            outputs.setdefault(output_id(message) or f"env_{index}", index)
        elif message.get("role") == "assistant":
            rounds.append(index)
    return outputs, rounds


def measure_compactions(
    log, used: Optional[UsedFacts] = None, text: Optional[str] = None
) -> List[CompactionReport]:
    """Every compaction `log` records (a LoadedLog), measured (see the module text);
    `text` is the log file's text when `log` was read from a string (an upload)."""
    used = used_facts(log.messages) if used is None else used
    outputs, rounds = _positions(log.messages)
    starts = [sum(1 for i in rounds if i < c.at) for c in log.compactions]
    reports = []
    for number, compaction in enumerate(log.compactions):
        if compaction.rebuilt:  # a harness that sends its window anew (Aider) kept all
            continue
        end = starts[number + 1] if number + 1 < len(starts) else len(rounds)
        history = replaced_history(log, number)
        trigger, tokens, source = recorded_fields(log, compaction, text)
        summary = summary_text(compaction, history)
        report = CompactionReport(
            number + 1,
            starts[number],
            compaction.where,
            trigger,
            tokens,
            source,
            estimate_text_tokens(summary) if summary.strip() else None,
            compaction.replaced,
            estimate_tokens(list(log.messages[: compaction.kept]) + history),
            last_call_tokens(log, compaction.at),
        )
        budget = max(MIN_BUDGET, report.summary_tokens or STANDIN_TOKENS)
        standin = BoundedSummarizer(budget, scripted_summary)(history)
        report.standin_tokens = estimate_text_tokens(standin)
        _judge(report, compaction, standin, (starts[number], end), log, used)
        reports.append(report)
    return reports


def _judge(report, compaction, standin, stretch, log, used) -> None:
    """Sort the facts used in the rounds of `stretch` that a tool showed before the
    compaction: held, re-read or neither; and what the stand-in keeps of them."""
    outputs, rounds = _positions(log.messages)
    real = WindowIndex(compaction.replacement)
    stand = WindowIndex([{"role": "user", "content": standin}])
    rereads: Dict[str, int] = {}  # output id -> its tokens
    seen = set()
    for use in used.uses:
        if not stretch[0] <= use.round < stretch[1] or use.fact in seen:
            continue
        shown = [outputs.get(source, len(log.messages)) for source in use.sources]
        before = _shown_before(use.fact, log.messages, compaction.at)
        if not before:
            continue
        seen.add(use.fact)
        again = [
            source
            for source, index in zip(use.sources, shown)
            if compaction.at <= index < rounds[use.round]
        ]
        fate = "held" if use.fact in real.text else "reread" if again else "neither"
        if fate == "reread":
            first = again[0]
            rereads[first] = estimate_message_tokens(log.messages[outputs[first]])
        kept_before = _before_only(use, outputs, compaction.at)
        restorable = fate != "held" and way_back(kept_before, real, used) is not None
        if use.fact in stand.text:
            in_standin = "held"
        elif way_back(kept_before, stand, used) is not None:
            in_standin = "restorable"
        else:
            in_standin = "lost"
        report.facts.append(
            FactAfter(use.fact, use.kind, use.round, fate, restorable, in_standin)
        )
    report.reread_calls = len(rereads)
    report.reread_tokens = sum(rereads.values())


def _shown_before(fact: str, messages: Sequence[Mapping], at: int) -> bool:
    return any(
        fact in (message.get("content") or "")
        for message in messages[:at]
        if message.get("role") == "tool" or is_observation(message)
    )


def _before_only(use, outputs: Mapping[str, int], at: int):
    """`use` with only the outputs shown before the compaction as its sources: the
    ways back the replacement could still name."""
    sources = tuple(s for s in use.sources if outputs.get(s, at) < at)
    return type(use)(use.fact, use.kind, use.round, sources)


def real_compactions() -> List[dict]:
    """Every compaction of the real logs bundled (data/real/), measured: one
    `CompactionReport.as_dict()` a compaction, without its fact lists, and the log it
    is in. scripts/make_real_compactions.py writes the file; measuring them again
    takes longer than a chapter's cell should."""
    path = DATA_DIR / "real_compactions.json"
    return json.loads(path.read_text(encoding="utf-8"))


def compaction_totals(rows: Sequence[Mapping]) -> dict:
    """Over compactions measured (`real_compactions()` rows): the facts used after
    them that a tool had shown before; how many the real summaries held, how many a
    tool showed again before the agent wrote them, and how many the stand-in, given
    the same room, held; those each held or left restorable; and in how many
    compactions the stand-in held fewer."""

    def total(name: str) -> int:
        return sum(row[name] for row in rows)

    return {
        "compactions": len(rows),
        "facts_after": total("facts_after"),
        "real_held": total("held"),
        "reread": total("reread"),
        "standin_held": total("standin_held"),
        "real_held_or_restorable": total("held") + total("restorable"),
        "standin_held_or_restorable": total("standin_held") + total("standin_restorable"),
        "standin_held_fewer": sum(row["standin_held"] < row["held"] for row in rows),
    }
