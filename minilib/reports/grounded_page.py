"""docs/grounded.md: what the recorded replay cannot show, what the grounded mode changes,
and what it measures on the six paths and under the age-after-seen rule.

Every number comes from running minilib (minilib.measure.grounding and
minilib.policies.registry); a test checks the committed page. Rewrite it after a change
to the grounded mode, a path or the data:
`python -m minilib.reports grounded --write docs/grounded.md`.
"""

import json
import re
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from ..measure.facts import window_text
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
    ("lookups", "look-ups"),
    ("unknown", "unknown markers"),
)
# A search's first line, which repeats the pattern it searched for.
SEARCH_HEADER = re.compile(r"\d+ (?:matches for|lines of \S+ contain) '")


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


def header_only(window, text: str) -> bool:
    """`text` is in `window` but only in lines that are a search's or a recall's header
    (which repeats what was searched for), or a summary's quote of one."""
    lines = [line for line in window_text(window).splitlines() if text in line]
    return bool(lines) and all(SEARCH_HEADER.search(line) for line in lines)


# --- rows ------------------------------------------------------------------------------


def declaration_rows(grounding, facts) -> List[dict]:
    """One row per fact a reply rests on, with the words of the reply it backs."""
    by_id = {fact.id: fact for fact in facts}
    return [
        {
            "reply": index,
            "cite": f"{use.cite}",
            "fact": use.fact,
            "text": f"`{by_id[use.fact].text}`",
            "first": by_id[use.fact].first_call,
        }
        for index, uses in enumerate(grounding.uses)
        for use in uses
    ]


def lookup_rows(runs) -> List[dict]:
    """Per path, grounded: each look-up and each unknown marker, by round."""
    rows = []
    for key, run in runs.items():
        outcome = run.grounded
        looked = "; ".join(
            f"round {lk.round}: {lk.fact} ({lk.tool})" for lk in outcome.lookups
        )
        marked = "; ".join(f"round {r}: {fact}" for r, fact in outcome.unknown)
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
        "completes": "yes"
        if run.overflow is None
        else f"overflow at round {len(run.rounds)} (needs {run.overflow.tokens:,})",
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


def _what_grounded_mode_changes(grounding) -> List[str]:
    declared = sum(len(uses) for uses in grounding.uses)
    replies_declaring = sum(1 for uses in grounding.uses if uses)
    return [
        "",
        "## What grounded mode changes",
        "",
        "`ScriptedModel(replies, grounding=...)` (off by default: the article's replay "
        "and every figure are unchanged, byte for byte). data/grounding.json, written "
        "by scripts/make_grounding.py, declares for each reply the planted facts "
        f"(data/facts.json ids) its words rest on: {declared} uses in "
        f"{replies_declaring} of the {len(grounding.uses)} replies. Before a reply the "
        "model checks each declared fact is verbatim in the window it was sent (the "
        "fact probe's test). For a missing fact it does what an agent would, in an "
        "extra model decision before its scripted reply: it calls `recall` when the "
        "harness has an external store and the window still names the call that "
        "showed the fact, else the cheapest workspace call that shows it again (the "
        "generator tries the first call again, a search for the fact's text in its "
        "file or in the workspace, and a search for its whole line, and keeps the "
        "fewest-token output whose hits show it). One look-up round per reply, at "
        "most one look-up per fact in a run; the calls are ordinary traced tool calls "
        "(ids `lookup_NN`) of their own round, paid in tokens like any other. What is "
        f"still missing is replaced in the reply by `{unknown_marker('<fact id>')}`.",
        "",
        "The facts the final answer states are counted from its text: a declared "
        "fact is *right* when the reply still has the words it backs, not its "
        "marker. *Extra tokens* are the tokens sent over all rounds (look-up rounds "
        "included) minus the same run without grounding.",
    ]


def _search_header_caveat(facts, grounding, article) -> List[str]:
    by_id = {fact.id: fact for fact in facts}
    final_window = decisions(article.run.tracer)[-1]["input"]
    echoed = [
        u.fact
        for u in grounding.uses[-1]
        if header_only(final_window, by_id[u.fact].text)
    ]
    if echoed:
        example = next(
            line.strip()
            for line in window_text(final_window).splitlines()
            if by_id[echoed[0]].text in line
        )
        how = (
            "In the article's pipeline grounded, the final reply's window holds "
            + ", ".join(f"{fact} (`{by_id[fact].text}`)" for fact in echoed)
            + f" only that way (e.g. `{example}`), and the fact probe counts it as "
            "kept, as the model does."
        )
    else:
        how = (
            "In the article's pipeline grounded, no fact of the final reply rests "
            "on that alone."
        )
    return [
        "",
        "One caveat, kept visible rather than engineered away: a search's first line "
        "repeats its pattern, and the rolling summary quotes a result by its first "
        "line, so a summarized look-up keeps the words it searched for in the window. "
        + how,
        "",
        "What each reply rests on (data/grounding.json):",
        "",
        markdown_table(declaration_rows(grounding, facts), DECLARATION_COLUMNS),
    ]


def _six_paths_grounded(article) -> List[str]:
    runs = {key: run_path(key, grounded=True) for key in PATHS}
    # a path that finishes yet loses a fact: its answer shows the unknown marker
    marked = next(
        (run for run in runs.values() if run.grounded.finished and run.grounded.lost),
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
        "earlier). A fact looked up early can be cut again before the final answer, "
        "and the one look-up round of a reply can itself push a fact out of the "
        "window; such facts end as markers.",
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
        + _search_header_caveat(facts, grounding, article)
        + _six_paths_grounded(article)
        + _age_after_seen(session)
    )
    return "\n".join(parts) + "\n"
