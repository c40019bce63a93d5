"""docs/grounded.md: what the recorded replay cannot show, what the grounded mode changes,
and what it measures on the six paths, with the summary's pointers and under the
age-after-seen rule.

Every number comes from running minilib (minilib.measure.grounding and
minilib.policies.registry); a test checks the committed page. Rewrite it after a change
to the grounded mode, a path or the data:
`python -m minilib.reports grounded --write docs/grounded.md`.
"""

import json
import re
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from ..measure.facts import count_states, probe, window_text
from ..measure.grounded_model import unknown_marker
from ..measure.grounding import run_grounded, session_grounding, threshold_to_finish
from ..policies.registry import ARTICLE, PATHS, default_facts, default_session, run_path
from ..window import Settings
from .markdown import markdown_table
from .six_paths_page import grounded_table

# The command the page names
COMMAND = "python -m minilib.reports grounded --write docs/grounded.md"

AGING_COLUMNS = (
    ("rule", "aging rule"),
    ("threshold", "threshold"),
    ("completes", "completes"),
    ("facts_right", "final answer: facts right"),
    ("lookup_rounds", "look-up rounds"),
    ("lookup_calls", "look-up calls"),
    ("tokens_sent", "tokens sent, all rounds"),
    ("extra_tokens", "extra tokens (vs not grounded)"),
    ("whole", "tool results ever sent whole"),
    ("rows", "notes rows ever sent whole (of 200)"),
)
DECLARATION_COLUMNS = (
    ("reply", "reply"),
    ("cite", "its words"),
    ("fact", "fact"),
    ("text", "fact text"),
    ("first", "first shown by"),
)
LOOKUP_COLUMNS = (
    ("path", "path"),
    ("lookups", "look-ups (round: fact, call; ✓ the reply then states it)"),
    ("unknown", "unknown markers (round: fact; ∅ no pointer in the window)"),
)
POINTER_COLUMNS = (
    ("threshold", "threshold"),
    ("pointers", "summary"),
    ("completes", "completes"),
    ("facts_right", "final answer: facts right"),
    ("lookup_calls", "look-up calls"),
    ("unknown", "unknown markers"),
    ("tokens_sent", "tokens sent, all rounds"),
    ("kept", "last window: facts kept"),
    ("traceable", "restorable by id"),
    ("lost", "lost"),
)
POINTER_THRESHOLDS = (1_200, 1_600, 2_000, 2_400)


# --- what the windows held -------------------------------------------------------------


def decisions(tracer) -> List[dict]:
    """The model calls that chose the next step (not summaries), each with its window."""
    return [c for c in tracer.events("model_call") if c["purpose"] == "decision"]


def notes_rows_sent(session, tracer) -> int:
    """How many rows of long_notes.txt some window sent holds whole."""
    rows = (session.workspace / "long_notes.txt").read_text(encoding="utf-8")
    texts = [window_text(d["input"]) for d in decisions(tracer)]
    return sum(1 for row in rows.splitlines() if any(row in text for text in texts))


def results_sent_whole(tracer) -> Tuple[int, int]:
    """(tool results some window sent holds whole, tool results of the run)."""
    cut = results_never_whole(tracer)
    return len(tracer.events("tool_call")) - len(cut), len(tracer.events("tool_call"))


def results_never_whole(tracer) -> List[str]:
    """What each tool result no window sent holds whole asked for (a path, or its id)."""
    texts = [window_text(d["input"]) for d in decisions(tracer)]
    return [
        json.loads(call["arguments"]).get("path", call["tool_call_id"])
        for call in tracer.events("tool_call")
        if not any(call["output"] in text for text in texts)
    ]


def last_window_states(session, facts, grounded) -> Dict[str, int]:
    """The fact probe on the last window a run sent: how many of the facts surfaced so
    far it keeps, how many only an id it names still leads back to, how many are lost."""
    tracer = grounded.run.tracer
    outputs = {c["tool_call_id"]: c["output"] for c in tracer.events("tool_call")}
    return count_states(probe(facts, decisions(tracer)[-1]["input"], outputs))


def completes(run) -> str:
    if run.overflow is None:
        return "yes"
    return f"overflow at round {len(run.rounds)} (needs {run.overflow.tokens:,})"


# --- rows ------------------------------------------------------------------------------


def declaration_rows(grounding, facts) -> List[dict]:
    """One row per fact a reply rests on, with the words of the reply it backs."""
    by_id = {fact.id: fact for fact in facts}
    return [
        {
            "reply": index,
            "cite": f"{use.cite}",
            "fact": use.fact,
            "text": " or ".join(
                f"`{text}`"
                for text in (by_id[use.fact].text, *grounding.forms.get(use.fact, ()))
            ),
            "first": by_id[use.fact].first_call,
        }
        for index, uses in enumerate(grounding.uses)
        for use in uses
    ]


def lookup_text(lookup) -> str:
    """A look-up as the page shows it: round, fact, the call with its arguments."""
    arguments = ", ".join(
        f"{key}={value}" for key, value in json.loads(lookup.arguments).items()
    )
    found = " ✓" if lookup.found else ""
    return f"{lookup.round}: {lookup.fact}, {lookup.tool}({arguments}){found}"


def unknown_text(outcome) -> str:
    blind = set(outcome.no_pointer)
    return "; ".join(
        f"{r}: {fact}" + (" ∅" if (r, fact) in blind else "")
        for r, fact in outcome.unknown
    )


def lookup_rows(runs) -> List[dict]:
    """Per path, grounded: each look-up and each unknown marker, by round."""
    rows = []
    for key, run in runs.items():
        outcome = run.grounded
        looked = "; ".join(lookup_text(lk) for lk in outcome.lookups)
        marked = unknown_text(outcome)
        rows.append(
            {
                "path": PATHS[key].title,
                "lookups": looked or "-",
                "unknown": marked or "-",
            }
        )
    return rows


def aging_runs(session, thresholds: Sequence[int]) -> Dict[Tuple[int, bool], object]:
    """The article's pipeline, grounded, under both aging rules at each threshold."""
    return {
        (threshold, keep_unseen): run_grounded(
            session, Settings(threshold=threshold), keep_unseen=keep_unseen
        )
        for threshold in thresholds
        for keep_unseen in (False, True)
    }


def aging_rule_row(session, threshold: int, keep_unseen: bool, grounded) -> dict:
    """One grounded run of the article's pipeline under one aging rule."""
    run, outcome = grounded.run, grounded.outcome
    whole, results = results_sent_whole(run.tracer)
    return {
        "rule": "age after seen (keep_unseen)"
        if keep_unseen
        else "age at once (article)",
        "threshold": threshold,
        "completes": completes(run),
        "facts_right": outcome.facts_right,
        "lookup_rounds": outcome.lookup_rounds,
        "lookup_calls": outcome.lookup_calls,
        "tokens_sent": outcome.tokens_sent,
        "extra_tokens": f"{outcome.extra_tokens:+,}",
        "whole": f"{whole} of {results}",
        "rows": notes_rows_sent(session, run.tracer),
    }


# --- the page, section by section ------------------------------------------------------


def _heading() -> List[str]:
    return [
        "# Grounded replay: does compression cut the facts the task needs?",
        "",
        f"Generated by `{COMMAND}`; do not edit by hand. "
        "The article's settings throughout unless a row says "
        f"otherwise (threshold {ARTICLE.threshold:,} tokens, aging head "
        f"{ARTICLE.head_chars} / tail {ARTICLE.tail_chars} / min {ARTICLE.min_chars} "
        f"characters, protected tail {ARTICLE.protect_tail}).",
    ]


def _what_the_replay_cannot_show(session, facts, grounding) -> List[str]:
    by_id = {fact.id: fact for fact in facts}
    final_uses = grounding.uses[-1]
    plain = run_grounded(session, grounded=False).run
    last_window = window_text(decisions(plain.tracer)[-1]["input"])
    absent = [u for u in final_uses if by_id[u.fact].text not in last_window]
    notes = (session.workspace / "long_notes.txt").read_text(encoding="utf-8")
    return [
        "",
        "## What the recorded replay cannot show",
        "",
        "The scripted model replays the session's recorded replies whatever it is "
        "sent, so compression never changes what the agent does. Its final answer "
        f"says “{session.replies[-1]['content']}”, yet the last window it was sent "
        f"holds {len(final_uses) - len(absent)} of the {len(final_uses)} planted facts "
        "that answer rests on; missing: "
        + ", ".join(f"{u.fact} (`{by_id[u.fact].text}`)" for u in absent)
        + ". The answer is right only because it was recorded, so no setting of the "
        "lab could show the article's claim — compression cuts redundant volume, not "
        "the facts the task needs — to be true or false.",
        "",
        "Deeper: aging cuts the newest tool result in the round it arrives, so the "
        "model never reads the middle of a long result, not even the one it just "
        f"asked for. Of the {len(notes.splitlines())} rows of long_notes.txt, "
        f"{notes_rows_sent(session, plain.tracer)} are "
        "ever in a window sent whole (the head and tail aging keeps).",
    ]


def named_uses(grounding) -> Tuple[list, list]:
    """The uses whose words are a `#number` of the fact's text, and those whose words
    are a declared form of it: (reply, use) pairs."""
    numbered, formed = [], []
    for index, uses in enumerate(grounding.uses):
        for use in uses:
            if use.cite in re.findall(r"#\d+", grounding.texts[use.fact]):
                numbered.append((index, use))
            if use.cite in grounding.forms.get(use.fact, ()):
                formed.append((index, use))
    return numbered, formed


def _what_grounded_mode_changes(grounding) -> List[str]:
    declared = sum(len(uses) for uses in grounding.uses)
    replies_declaring = sum(1 for uses in grounding.uses if uses)
    numbered, formed = named_uses(grounding)
    examples = [f"reply {i} names `{use.cite}`" for i, use in numbered] + [
        f"reply {i} states `{use.cite}`, a form of `{grounding.texts[use.fact]}` "
        "the grounding declares"
        for i, use in formed
    ]
    return [
        "",
        "## What grounded mode changes",
        "",
        "`GroundedModel(replies, grounding)` is the scripted model as a stand-in for an "
        "LLM that only knows its window (off by default: the article's replay and every "
        "figure are unchanged, byte for byte). The script still decides what the agent "
        "does; the window decides what it may say. data/grounding.json, written by "
        "scripts/make_grounding.py, declares for each reply the planted facts "
        f"(data/facts.json ids) its words rest on: {declared} uses in "
        f"{replies_declaring} of the {len(grounding.uses)} replies. Every reply that "
        "names a fact declares it, by its text, a declared form or a `#number` of it"
        + (f" ({'; '.join(examples)})" if examples else "")
        + ". "
        "Before a reply the model checks each declared fact is verbatim in the window "
        "it was sent, in its text or a declared form (the fact probe's test, plus the "
        "forms). The script's own calls keep their recorded arguments: a reply whose "
        "words mark a path unknown still reads that path, so the check covers what "
        "the agent says and how it looks things up, not where the script goes.",
        "",
        "A missing fact may be looked up only with what the window still holds, never "
        "with the fact's own text: a model that no longer holds `#412` cannot search "
        "for it. The model knows which of its earlier calls showed the fact and the "
        "file it stands in (the grounding's `places`), and the words it means to say "
        "(the cite); every argument of its look-up is copied from the window's text. "
        "The first pointer the window holds gives the call:",
        "",
        "1. an id: on the store path (the harness has `recall`), the window names the "
        "call that showed the fact (a store header, the store's index): "
        "`recall(id=…, grep=<phrase>)`, or the whole output when no phrase is left;",
        "2. a path and a phrase: the window names the fact's file, and an ASCII word "
        "of the cite (`nightly`, `#58`, `tool_timeout_s`, `60`) is still in it: "
        "`search_text(pattern=<phrase>, path=<file>)`;",
        "3. a phrase alone: `search_text(pattern=<phrase>)` over the workspace;",
        "4. a command: the window names the path or pattern of the call that showed "
        "the fact: that call again (re-read the file, re-run the search).",
        "",
        "Elsewhere an aging omission line names the call's id too, but it points a "
        "person at the run log: no tool of those harnesses reads it, so an id alone is "
        "no pointer there. A fact with no pointer left is not looked up. One look-up "
        "round per reply, at most one look-up per fact in a run; the calls are "
        "ordinary traced tool calls (ids `lookup_NN`) of their own round, paid in "
        "tokens and compressed like any other result: aging cuts a re-read in the "
        "round it arrives, as it cut the first read. What is still missing is "
        f"replaced in the reply by `{unknown_marker('<fact id>')}`.",
        "",
        "The script's own reads follow the same rule. A scripted call whose arguments "
        "name a planted fact its window does not show (reply 4 reads "
        "`docs/release_checklist.md`, the path it has just marked unknown) is made as "
        "a listing of the deepest folder of that path the window still names "
        "(`list_dir docs`), or of the workspace's top when it names none; the call "
        "keeps its id, and a fact only that call would have shown (`NOT_FOUND`) never "
        "surfaces. tests/test_grounded_window.py reads every grounded run's trace and "
        "fails on a reply, a look-up or a scripted call that states or reads with a "
        "fact its window does not hold.",
        "",
        "The facts the final answer states are counted from its text: a declared "
        "fact is *right* when the reply still has the words it backs, not its "
        "marker. *Extra tokens* are the tokens sent over all rounds (look-up rounds "
        "included) minus the same run without grounding.",
    ]


def _declarations(facts, grounding) -> List[str]:
    return [
        "",
        "What each reply rests on (data/grounding.json):",
        "",
        markdown_table(declaration_rows(grounding, facts), DECLARATION_COLUMNS),
    ]


def _six_paths_grounded(article) -> List[str]:
    runs = {key: run_path(key, grounded=True) for key in PATHS}
    # a path that finishes yet loses a fact: its answer shows the unknown marker
    marked = next(
        (
            run
            for key, run in runs.items()
            if run.grounded.finished and run.grounded.lost and key != "rolling_summary"
        ),
        None,
    )
    parts = [
        "",
        "## The six paths at the article's settings, grounded",
        "",
        "`run_path(key, grounded=True)` for each path; `python -m minilib run "
        "--grounded` prints row 3 under its table. Rounds are the replay's (0 is the "
        "first model call); a look-up round is a round of its own.",
        "",
        grounded_table(),
        "",
        "A run that overflows gives no final answer (0 right). Grounding is not free: "
        "the look-up results take room, so a path that finishes without grounding "
        "may overflow with it (its extra tokens are then negative: it stopped "
        "earlier). A look-up that comes back cut (aging, the store's offload) or that "
        "is folded before the final answer leaves its fact unknown, and a fact "
        "looked up once is not looked up again.",
        "",
        markdown_table(lookup_rows(runs), LOOKUP_COLUMNS),
        "",
        "The article's pipeline, grounded, answers:",
        "",
        f"> {article.outcome.final_reply}",
    ]
    if marked is not None:
        parts += [
            "",
            f"{PATHS[marked.path].title}, grounded, answers:",
            "",
            f"> {marked.grounded.final_reply}",
        ]
    return parts


def pointer_rows(session, facts) -> List[dict]:
    """The article's pipeline grounded, the summary without and with pointers."""
    rows = []
    for threshold in POINTER_THRESHOLDS:
        for pointers in (False, True):
            grounded = run_grounded(
                session, Settings(threshold=threshold), pointers=pointers
            )
            outcome, states = (
                grounded.outcome,
                last_window_states(session, facts, grounded),
            )
            rows.append(
                {
                    "threshold": threshold,
                    "pointers": "ids and arguments" if pointers else "the article's",
                    "completes": completes(grounded.run),
                    "facts_right": outcome.facts_right,
                    "lookup_calls": outcome.lookup_calls,
                    "unknown": len(outcome.unknown),
                    "tokens_sent": outcome.tokens_sent,
                    "kept": states["kept"],
                    "traceable": states["traceable"],
                    "lost": states["lost"],
                }
            )
    return rows


def _summary_pointers(session, facts) -> List[str]:
    rows = pointer_rows(session, facts)
    return [
        "",
        "## Pointers in the summary",
        "",
        "The article's summary (minilib/summary.py, the scripted summarizer) quotes "
        "each folded action's words, the names of the tools it called and the first "
        "line of each result; the bounded summary (minilib/scale/bounded.py) condenses "
        "older actions into the paths, codes and numbers their text names. Neither "
        "names a tool_call_id, and neither quotes a call's arguments: a path survives "
        "only where the agent's own words say it (`读 logs/build.log`), a pattern "
        "only in a search's first line. `run_grounded(session, pointers=True)` "
        "(grounded mode only, off by default) makes the summary add to each folded "
        "action its calls' ids and arguments, e.g. `〔指向 call_01 long_notes.txt〕`. "
        "Below, the article's pipeline grounded with each summary; the last three "
        "columns are the fact probe on the last window sent, over the facts surfaced "
        "by then: kept verbatim, not kept but restorable by an id the window names "
        "(its full output is in the run log, or in a store), lost.",
        "",
        markdown_table(rows, POINTER_COLUMNS),
        "",
        pointer_findings(rows),
    ]


def pointer_findings(rows: Sequence[dict]) -> str:
    """What the pointer table shows, read from its rows."""
    pairs = list(zip(rows[::2], rows[1::2]))  # (the article's, with pointers)
    worst = max(row["lost"] for row, _ in pairs)
    none_lost = all(with_ids["lost"] == 0 for _, with_ids in pairs)
    overflows = [w for _, w in pairs if w["completes"] != "yes"]
    changed = [
        f"{a['facts_right']} → {w['facts_right']} at {a['threshold']:,}"
        for a, w in pairs
        if a["completes"] == w["completes"] == "yes"
        and a["facts_right"] != w["facts_right"]
    ]
    both = [(a, w) for a, w in pairs if a["completes"] == w["completes"] == "yes"]
    cost = [w["tokens_sent"] - a["tokens_sent"] for a, w in both]
    text = (
        (
            "With the pointers no surfaced fact is lost at any of these thresholds: "
            "each one the last window does not keep is restorable by an id it names "
            f"(the article's summary loses up to {worst}). "
        )
        if none_lost
        else "The pointers make cut facts restorable by an id the window names. "
    )
    text += (
        "For this model an id restores nothing (only the store path has a tool "
        "that reads a result back by id); what it can use are the paths and "
        "patterns the pointers keep, as the path and the phrase of a look-up. "
        "Facts right in the final answer, where both runs finish: "
        + ("; ".join(changed) if changed else "the same")
        + (
            f" (the same at the other thresholds). Where both finish, the pointers "
            f"cost {min(cost):+,} to {max(cost):+,} tokens over the run"
            if cost
            else ""
        )
    )
    if overflows:
        text += "; at " + ", ".join(
            f"{w['threshold']:,} the run with pointers does not finish ({w['completes']})"
            for w in overflows
        )
    return text + "."


@dataclass(frozen=True)
class AgingRules:
    """The article's rule against age-after-seen at the threshold where the
    latter first finishes."""

    finish: int  # the lowest threshold age-after-seen finishes at, grounded
    finish_plain: int  # the same, not grounded
    largest: str  # what the largest tool result asked for
    rows: List[dict]  # both rules at the article's threshold and at `finish`
    at_once: object  # the grounded runs at `finish`
    after_seen: object


def aging_rules(session) -> AgingRules:
    finish, finished = threshold_to_finish(session, keep_unseen=True, grounded=True)
    finish_plain, _ = threshold_to_finish(session, keep_unseen=True, grounded=False)
    largest = max(finished.run.tracer.events("tool_call"), key=lambda c: len(c["output"]))
    runs = aging_runs(session, (ARTICLE.threshold, finish))
    return AgingRules(
        finish,
        finish_plain,
        json.loads(largest["arguments"]).get("path", largest["tool_call_id"]),
        [aging_rule_row(session, *key, run) for key, run in runs.items()],
        runs[(finish, False)],
        runs[(finish, True)],
    )


def _age_after_seen(session) -> List[str]:
    rules = aging_rules(session)
    finish, at_once, after_seen = rules.finish, rules.at_once, rules.after_seen
    right, right_seen = at_once.outcome.facts_right, after_seen.outcome.facts_right
    same_right = (
        f"{right} facts right"
        if right == right_seen
        else f"{right} and {right_seen} facts right"
    )
    whole_once, total_once = results_sent_whole(at_once.run.tracer)
    whole_seen, total_seen = results_sent_whole(after_seen.run.tracer)
    cut_at_once = ", ".join(results_never_whole(at_once.run.tracer)) or "nothing"
    paid = after_seen.outcome.tokens_sent - at_once.outcome.tokens_sent
    return [
        "",
        "## Age after seen: the production rule for the newest result",
        "",
        "`ToolResultAging(keep_unseen=True)` ages a tool result only once the model "
        "has been sent it (no assistant message after it means unseen), as "
        "Anthropic's context editing and the OpenAI Agents SDK's trimmer keep the "
        "most recent results. At the article's threshold it cannot work: round 1's "
        "newest result alone is over the threshold and nothing may cut it yet, so "
        "the window overflows. Raising the threshold to what each overflow needed "
        f"(`threshold_to_finish`) it first finishes at {finish:,} tokens grounded "
        f"({rules.finish_plain:,} not grounded): the window must hold the largest "
        f"single result ({rules.largest}) whole, {finish / ARTICLE.threshold:.1f} "
        "times the article's threshold. Side by side with the article's rule, the "
        "article's pipeline grounded:",
        "",
        markdown_table(rules.rows, AGING_COLUMNS),
        "",
        f"At {finish:,} tokens both rules finish with {same_right}. The article's rule "
        f"still cuts {cut_at_once} in the round it arrives ({whole_once} of "
        f"{total_once} results read whole); age-after-seen reads every one whole once "
        f"({whole_seen} of {total_seen}) and pays {paid:+,} tokens over the run for "
        "it, because every window until a result is seen carries it whole. Once seen, "
        "a result is aged like any other, so what a later reply needs is cut either "
        f"way: the article's rule makes {at_once.outcome.lookup_calls} look-up(s), "
        f"age-after-seen {after_seen.outcome.lookup_calls}.",
    ]


def build_markdown() -> str:
    """The whole page, every number computed on the bundled session."""
    session, facts = default_session(), default_facts()
    grounding = session_grounding(session, tuple(facts))
    article = run_grounded(session)
    parts = (
        _heading()
        + _what_the_replay_cannot_show(session, facts, grounding)
        + _what_grounded_mode_changes(grounding)
        + _declarations(facts, grounding)
        + _six_paths_grounded(article)
        + _summary_pointers(session, facts)
        + _age_after_seen(session)
    )
    return "\n".join(parts) + "\n"
