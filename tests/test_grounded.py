"""Grounded mode: the scripted agent checks its window for the facts each reply rests on.

Every expectation here is recomputed from the trace (the exact window of every model
call, every tool call with its full output) and the declarations in
data/grounding.json, not typed from a run; the only fixed numbers are the article's.
`check_grounded_trace` is the independent reading of a grounded run that the property
test (tests/test_grounded_properties.py) also applies at random thresholds; what a
reply or a look-up may say is checked by tests/test_grounded_window.py.
"""

import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from test_properties import assert_pairs_intact

from minilib import Settings, ToolResultAging, estimate_tokens, is_aged, run_session
from minilib.aging import first_unseen
from minilib.measure.facts import probe, window_text
from minilib.measure.grounded_model import (
    RECALL,
    UNKNOWN_RE,
    GroundedModel,
    plan_lookup,
    ungrounded_arguments,
    unknown_marker,
)
from minilib.measure.grounding import (
    GroundingFileError,
    article_pipeline,
    evidence,
    load_grounding,
    run_grounded,
    session_grounding,
    threshold_to_finish,
)
from minilib.model import ScriptedModel
from minilib.policies.registry import (
    PATHS,
    default_facts,
    run_baseline_probe,
    run_path,
)
from minilib.reports import COMPARISON_COLUMNS, GROUNDED_COLUMNS, comparison_rows
from minilib.session import DATA_DIR

ROOT = Path(__file__).resolve().parent.parent
LOOKUP = "lookup_"


@pytest.fixture(scope="module")
def grounding(session):
    return session_grounding(session, tuple(default_facts()))


def decisions(tracer):
    return [c for c in tracer.events("model_call") if c["purpose"] == "decision"]


def places_before(grounding, replies, fact, reply, rerouted=()):
    """The places of `fact` shown by the script's calls before `reply`, newest first;
    not those of calls made as a listing instead (`rerouted`)."""
    made = {
        c["id"]
        for r in replies[:reply]
        for c in r.get("tool_calls") or ()
        if c["id"] not in rerouted
    }
    return tuple(reversed([p for p in grounding.places[fact] if p.call in made]))


def window_plan(grounding, replies, fact, reply, window, rerouted=()):
    """The look-up the rule allows for `fact` before `reply` in `window`, or None."""
    cites = [u.cite for u in grounding.uses[reply] if u.fact == fact]
    places = places_before(grounding, replies, fact, reply, rerouted)
    return plan_lookup(places, cites, window, grounding.recall)


def check_grounded_trace(tracer, grounding, replies, threshold=None):
    """Read a grounded run from its trace alone and check every rule of the mode.

    Returns what it read: the look-ups [(round, reply, fact, call)], the markers
    [(round, fact)], the text of the final reply (None when there is none), and for
    each look-up round whether the next window holds it answered.
    """
    tool_calls = {c["tool_call_id"]: c for c in tracer.events("tool_call")}
    reply, prepared, looked = 0, False, Counter()
    lookups, markers, final, paired = [], [], None, []
    rerouted = set()  # scripted calls made as a listing instead
    for step, decision in enumerate(decisions(tracer)):
        sent, answer = decision["input"], decision["reply"]
        assert_pairs_intact(sent)  # no call without its answer in any window sent
        if threshold is not None:
            assert estimate_tokens(sent) <= threshold
        text = window_text(sent)
        uses = grounding.uses[reply]
        missing = list(
            dict.fromkeys(u.fact for u in uses if not grounding.shows(u.fact, text))
        )
        due = [f for f in missing if looked[f] < grounding.lookups_per_fact]
        plans = {
            f: window_plan(grounding, replies, f, reply, sent, rerouted) for f in due
        }
        calls = answer.get("tool_calls") or []
        if calls and all(c["id"].startswith(LOOKUP) for c in calls):
            assert not prepared, "one look-up round per reply"
            asked = [f for f in due if plans[f] is not None]
            assert len(calls) == len(asked) and asked, (
                "it looks up exactly what is missing, due, and has a pointer"
            )
            for fact, call in zip(asked, calls):
                plan = plans[fact]
                assert (call["function"]["name"], call["function"]["arguments"]) == (
                    plan.name,
                    plan.arguments,
                )
                if plan.name == RECALL:
                    assert grounding.recall
                traced = tool_calls[call["id"]]  # an ordinary, traced tool call ...
                assert traced["step"] == step  # ... of this round
                assert not grounding.shows(fact, answer["content"])
                looked[fact] += 1
                lookups.append((step, reply, fact, call["id"]))
            prepared = True
            continue
        # a scripted reply: it only goes on without looking when nothing due has a
        # pointer in the window
        assert prepared or all(plan is None for plan in plans.values())
        content = answer.get("content") or ""
        for use in uses:
            assert (unknown_marker(use.fact) in content) == (use.fact in missing)
        assert set(UNKNOWN_RE.findall(content)) == set(missing)
        restored = content
        for use in uses:
            restored = restored.replace(unknown_marker(use.fact), use.cite)
        assert restored == replies[reply]["content"]
        for made, scripted in zip(
            answer.get("tool_calls") or [],
            replies[reply].get("tool_calls") or [],
            strict=True,
        ):
            assert made["id"] == scripted["id"]
            if made == scripted:  # made as scripted: its window shows what it names
                assert not ungrounded_arguments(grounding, scripted, text)
                continue
            # made as a listing: the scripted call named a fact its window lacks, and
            # the listing names a folder of its path that the window names, or the top
            assert ungrounded_arguments(grounding, scripted, text)
            rerouted.add(made["id"])
            folder = json.loads(made["function"]["arguments"])["path"]
            path = json.loads(scripted["function"]["arguments"]).get("path", ".")
            assert made["function"]["name"] == "list_dir"
            assert folder == "." or (
                path.startswith(folder + "/") and f"{folder}/" in text
            )
        markers += [(step, fact) for fact in missing]
        prepared = False
        reply += 1
        if reply == len(replies):
            final = content
    # each look-up round is answered whole, right after it, in the next window sent
    rounds = decisions(tracer)
    for step in sorted({s for s, _, _, _ in lookups}):
        if step + 1 < len(rounds):
            paired.append(answered_next(rounds[step]["reply"], rounds[step + 1]["input"]))
    assert all(count <= grounding.lookups_per_fact for count in looked.values())
    ids = [call_id for _, _, _, call_id in lookups]
    assert len(ids) == len(set(ids))
    return lookups, markers, final, paired


def answered_next(lookup_reply, window):
    """Whether the next window holds the look-up message with its answers right after
    it (True), or has folded it away whole (False); anything else fails."""
    ids = [call["id"] for call in lookup_reply["tool_calls"]]
    calls = lookup_reply["tool_calls"]
    at = [i for i, m in enumerate(window) if m.get("tool_calls") == calls]
    if not at:
        assert not any(m.get("tool_call_id") in ids for m in window)
        return False
    answers = window[at[0] + 1 : at[0] + 1 + len(ids)]
    assert sorted(m.get("tool_call_id") for m in answers) == sorted(ids)
    return True


def tokens_sent(tracer):
    return sum(estimate_tokens(d["input"]) for d in decisions(tracer))


# --- off by default
# -----------------------------------------------------------------------


def test_off_every_path_and_the_cli_trace_are_the_plain_replay(session):
    for key in PATHS:
        plain = run_path(key)
        assert plain.grounded is None and plain.keep_unseen is False
        sent = [d["reply"] for d in decisions(plain.tracer)]
        assert sent == session.replies[: len(sent)]
    assert run_grounded(session, grounded=False).run.tracer.to_jsonl() == (
        run_session(session).tracer.to_jsonl()
    )


# --- the baseline
# ------------------------------------------------------------------------


def test_the_baseline_gets_every_fact_right_with_no_extra_call(session, grounding):
    baseline = run_baseline_probe(grounded=True)
    outcome = baseline.grounded
    assert outcome.finished and outcome.right == outcome.declared
    assert outcome.declared == tuple(u.fact for u in grounding.uses[-1])
    assert outcome.lookup_calls == outcome.lookup_rounds == 0 and not outcome.unknown
    assert outcome.extra_tokens == 0
    plain = run_baseline_probe()
    assert baseline.tracer.to_jsonl() == plain.tracer.to_jsonl()
    check_grounded_trace(baseline.tracer, grounding, session.replies)


# --- the article's settings
# --------------------------------------------------------------


def test_at_the_articles_settings_it_looks_up_what_the_window_lost(session, grounding):
    grounded = run_grounded(session)
    run, outcome = grounded.run, grounded.outcome
    lookups, markers, final, paired = check_grounded_trace(
        run.tracer, grounding, session.replies, Settings().threshold
    )
    # chapter 4.5: the plain replay's final window has lost #412, yet its answer cites
    # it; grounded, the agent notices and looks it up before answering
    plain_final = decisions(run_session(session).tracer)[-1]["input"]
    assert grounding.texts["num-nightly-412"] not in window_text(plain_final)
    final_reply = len(session.replies) - 1
    assert ("num-nightly-412", final_reply) in {(f, r) for _, r, f, _ in lookups}
    # the outcome is what the trace shows
    assert [(lk.round, lk.reply, lk.fact, lk.tool_call_id) for lk in outcome.lookups] == [
        (s, r, f, c) for s, r, f, c in lookups
    ]
    assert list(outcome.unknown) == markers
    assert outcome.final_reply == final
    uses = grounding.uses[final_reply]
    assert outcome.right == tuple(
        u.fact for u in uses if u.cite in final and unknown_marker(u.fact) not in final
    )
    assert outcome.lookup_rounds == len({s for s, _, _, _ in lookups})
    assert len(decisions(run.tracer)) == len(session.replies) + outcome.lookup_rounds
    assert outcome.tokens_sent == tokens_sent(run.tracer)
    assert outcome.plain_tokens_sent == tokens_sent(run_session(session).tracer)
    assert outcome.extra_tokens == outcome.tokens_sent - outcome.plain_tokens_sent > 0
    assert outcome.finished and run.overflow is None
    assert paired and all(paired)  # every look-up answered in the window after it
    # the rounds table: a look-up round has no baseline round
    lookup_rounds = {s for s, _, _, _ in lookups}
    assert [r.round for r in run.rounds if r.baseline_tokens is None] == sorted(
        lookup_rounds
    )


def test_the_middle_of_the_notes_is_never_sent_unless_looked_up(session, grounding):
    notes = (session.workspace / "long_notes.txt").read_text(encoding="utf-8")
    rows = notes.splitlines()

    def rows_sent(tracer):
        """Indexes of the notes rows some window sent holds whole, by first window."""
        first = {}
        for step, decision in enumerate(decisions(tracer)):
            text = window_text(decision["input"])
            for index, row in enumerate(rows):
                if row in text:
                    first.setdefault(index, step)
        return first

    # aging cuts the newest result in the round it arrives: only the rows its head and
    # tail keep are ever sent, the middle of long_notes.txt never is
    plain = rows_sent(run_session(session).tracer)
    round_1 = window_text(decisions(run_session(session).tracer)[1]["input"])
    assert set(plain) == {i for i, row in enumerate(rows) if row in round_1}
    assert len(plain) < len(rows) // 10
    # grounded, the model cannot reach the middle either: it may only re-read the file
    # its window names (it holds no phrase of the rows it needs), and aging cuts the
    # re-read in the round it arrives, like the first read
    tracer = run_grounded(session).run.tracer
    reread = [
        c
        for c in tracer.events("tool_call")
        if c["tool_call_id"].startswith(LOOKUP) and c["name"] == "read_file"
    ]
    assert any(json.loads(c["arguments"])["path"] == "long_notes.txt" for c in reread)
    assert set(rows_sent(tracer)) == set(plain)


@pytest.mark.parametrize("key", list(PATHS))
def test_every_path_grounded_is_consistent_with_its_trace(key, session, grounding):
    run = run_path(key, grounded=True)
    plain = run_path(key)
    recall = grounding.with_recall(key == "store")
    lookups, markers, final, paired = check_grounded_trace(
        run.tracer, recall, session.replies, run.threshold
    )
    outcome = run.grounded
    assert outcome.lookup_calls == len(lookups) and list(outcome.unknown) == markers
    assert outcome.finished == (run.overflow is None) == (final is not None)
    if final is None:
        assert outcome.right == ()
    assert outcome.extra_tokens == tokens_sent(run.tracer) - tokens_sent(plain.tracer)
    tools = {lk.tool for lk in outcome.lookups}
    assert tools <= ({RECALL} if key == "store" else {"search_text", "read_file"})
    assert len(run.rounds) <= 2 * len(session.replies)  # replay's max_steps fits


def test_at_most_one_lookup_per_fact_and_markers_when_none_is_left(session, grounding):
    none_left = replace(grounding, lookups_per_fact=0)
    model = GroundedModel(session.replies, none_left)
    from minilib.loop import replay
    from minilib.trace import Tracer
    from minilib.window import article_window

    tracer = Tracer()
    replay(session.conversation(model), article_window(model.summarize), tracer=tracer)
    lookups, markers, final, paired = check_grounded_trace(
        tracer, none_left, session.replies
    )
    assert lookups == [] and model.steps[-1].unknown
    # with no look-up at all the replies are the script's, marked where facts are gone
    assert len(decisions(tracer)) == len(session.replies)
    assert {f for _, f in markers} == {
        f
        for step, decision in enumerate(decisions(tracer))
        for f in grounding.texts
        if unknown_marker(f) in (decision["reply"].get("content") or "")
    }


def test_comparison_rows_gain_the_grounded_columns_only_when_grounded():
    plain_rows = comparison_rows(
        {"rolling_summary": run_path("rolling_summary")}, run_baseline_probe()
    )
    assert all("facts_right" not in row for row in plain_rows)
    runs = {key: run_path(key, grounded=True) for key in ("rolling_summary", "store")}
    rows = comparison_rows(runs, run_baseline_probe(grounded=True))
    for row, run in zip(rows[1:], runs.values()):
        assert row["facts_right"] == run.grounded.facts_right
        assert row["lookup_calls"] == run.grounded.lookup_calls
        assert row["extra_tokens"] == run.grounded.extra_tokens
    declared = len(run_baseline_probe(grounded=True).grounded.declared)
    assert rows[0]["facts_right"] == f"{declared}/{declared}"
    assert rows[0]["lookup_calls"] == rows[0]["extra_tokens"] == 0
    assert {key for key, _ in GROUNDED_COLUMNS} <= set(rows[0])
    assert {key for key, _ in COMPARISON_COLUMNS} <= set(rows[0])


def test_cli_grounded_prints_the_outcome_under_the_table(tmp_path, session):
    done = subprocess.run(
        [sys.executable, "-m", "minilib", "run", "--grounded", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    written = json.loads((tmp_path / "rounds.json").read_text(encoding="utf-8"))
    outcome = run_grounded(session).outcome
    assert written["grounded"] == json.loads(json.dumps(outcome.as_dict()))
    table = done.stdout.split("\n\n")[0].splitlines()
    assert len(table) == 1 + len(written["rounds"])
    assert (
        f"grounded: the final answer states {len(outcome.right)} of "
        f"{len(outcome.declared)} facts" in done.stdout
    )
    assert f"({outcome.extra_tokens:+,})" in done.stdout
    for lookup in outcome.lookups:
        assert f"{lookup.fact} ({lookup.tool_call_id})" in done.stdout


def test_cli_keep_unseen_at_the_articles_threshold_stops_in_round_1(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "minilib",
            "run",
            "--grounded",
            "--keep-unseen",
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "4,276 tokens" in done.stderr
    assert "finished: no" in done.stdout


# --- pointers: the summary quotes the ids and arguments of what it folds
# ------------------------------------------------------------------


def test_pointers_are_off_by_default_and_name_every_folded_call(session, grounding):
    plain = run_grounded(session)
    assert plain.pointers is False
    summaries = [
        c for c in plain.run.tracer.events("model_call") if c["purpose"] != "decision"
    ]
    assert summaries and not any("〔指向" in c["reply"] for c in summaries)
    with pytest.raises(ValueError, match="grounded mode"):
        run_grounded(session, grounded=False, pointers=True)
    pointed = run_grounded(session, Settings(threshold=1_600), pointers=True)
    for call in pointed.run.tracer.events("model_call"):
        if call["purpose"] == "decision":
            continue
        folded = [
            c["id"]
            for m in call["input"]
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or ()
        ]
        assert all(f"〔指向 {call_id} " in call["reply"] for call_id in folded)

    # what the ids buy: every fact the final window lacks is still traceable, by an id
    # it names, where without pointers some are lost
    def final_states(run):
        tracer = run.run.tracer
        outputs = {c["tool_call_id"]: c["output"] for c in tracer.events("tool_call")}
        return probe(default_facts(), decisions(tracer)[-1]["input"], outputs)

    without = final_states(run_grounded(session, Settings(threshold=1_600)))
    assert "lost" in without.values()
    assert "lost" not in final_states(pointed).values()
    check_grounded_trace(pointed.run.tracer, grounding, session.replies, 1_600)


# --- keep_unseen: aging waits until the model has been sent a result
# ------------------------------------------------------------------


def test_the_pipeline_without_the_option_is_the_articles(session):
    model = ScriptedModel(session.replies)
    window = article_pipeline(model.summarize, Settings(), estimate_tokens, False)
    assert window.strategies[0] == ToolResultAging()
    plain = run_grounded(session, grounded=False).run.tracer.to_jsonl()
    assert plain == run_session(session).tracer.to_jsonl()


def test_every_result_is_sent_whole_in_the_round_after_it_arrives(session):
    threshold, finished = threshold_to_finish(session, grounded=False)
    run = finished.run
    assert run.overflow is None and threshold > Settings().threshold
    decisions = [c for c in run.tracer.events("model_call") if c["purpose"] == "decision"]
    outputs = {c["tool_call_id"]: c["output"] for c in run.tracer.events("tool_call")}
    checked = 0
    for decision in decisions:
        sent = decision["input"]
        for message in sent[first_unseen(sent) :]:
            if message["role"] == "tool":
                assert not is_aged(message)
                assert message["content"] == outputs[message["tool_call_id"]]
                checked += 1
    assert checked == len(outputs)  # every result, once, whole
    # and aging still happens once a result has been seen
    assert any(c.strategy == "tool_result_aging" for c in run.compressions)


def test_at_the_articles_threshold_the_first_result_overflows_round_1(session):
    run = run_grounded(session, keep_unseen=True, grounded=False).run
    baseline_round_1 = run_session(session).rounds[1].baseline_tokens
    assert baseline_round_1 == 4_276  # the article's round-1 window before aging
    assert run.overflow is not None and len(run.rounds) == 1
    assert run.overflow.tokens == baseline_round_1 > Settings().threshold
    assert run.overflow.largest_role == "tool"


def test_the_threshold_to_finish_is_the_first_one_that_fits_the_largest_result(session):
    threshold, finished = threshold_to_finish(session, grounded=False)
    # one token less and the run overflows, needing exactly that threshold
    short = run_grounded(
        session, Settings(threshold=threshold - 1), grounded=False, keep_unseen=True
    ).run
    assert short.overflow is not None and short.overflow.tokens == threshold
    # it is the window of the round after the largest result arrived, sent whole
    largest = max(finished.run.tracer.events("tool_call"), key=lambda c: len(c["output"]))
    assert largest["tool_call_id"] == "call_03"  # logs/build.log
    assert max(r.tokens_after for r in finished.run.rounds) == threshold


# --- the declarations
# --------------------------------------------------------------------


def test_every_place_shows_its_fact_in_the_file_it_names(session, grounding):
    """The pointers the model may follow are where the session showed each fact: the
    call's output shows it (not only in a search's header), in the file named; the
    first place is the fact's first call; every reply that names a fact declares it."""
    for fact, places in grounding.places.items():
        assert places[0].call == grounding.first_calls[fact]
        for place in places:
            output = session.tools.call(place.name, place.arguments).content
            shown = evidence(place.name, output)
            assert grounding.shows(fact, shown)
            if place.name == "search_text":
                assert any(
                    line.startswith(place.file + ":") and grounding.shows(fact, line)
                    for line in shown.splitlines()
                )
            else:
                assert json.loads(place.arguments)["path"] == place.file
    for index, reply in enumerate(session.replies):
        content = reply.get("content") or ""
        declared = {use.fact for use in grounding.uses[index]}
        for fact, text in grounding.texts.items():
            named = grounding.shows(fact, content) or any(
                number in content for number in re.findall(r"#\d+", text)
            )
            assert not named or fact in declared, (index, fact)


def _write(tmp_path, change):
    document = json.loads((DATA_DIR / "grounding.json").read_text(encoding="utf-8"))
    change(document)
    path = tmp_path / "grounding.json"
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["replies"].pop(), "declares 13 replies; the session"),
        (
            lambda d: d["replies"][3]["uses_facts"].append(
                {"fact": "x", "cite": "E2BIG"}
            ),
            "'x' is not a planted fact",
        ),
        (
            lambda d: d["replies"][3]["uses_facts"][0].update(cite="nowhere"),
            "must occur exactly once in the reply",
        ),
        (
            lambda d: d["replies"][1]["uses_facts"].append(
                {"fact": "num-1-of-3", "cite": "构建"}
            ),
            "first shows in call_10, which no earlier reply calls",
        ),
        (lambda d: d["places"].pop("code-e2big"), r"places\['code-e2big'\] must list"),
        (
            lambda d: d["places"]["code-e2big"][0].update(arguments="{}"),
            "call_01 is not a scripted call with that tool",
        ),
        (lambda d: d["forms"].update(x=["y"]), r"forms\['x'\] is not a planted fact"),
        (lambda d: d.update(unknown_marker="??"), "unknown_marker must be"),
    ],
)
def test_a_bad_grounding_file_is_named(tmp_path, session, change, message):
    with pytest.raises(GroundingFileError, match=message):
        load_grounding(session, default_facts(), _write(tmp_path, change))


def test_docs_grounded_is_what_the_report_computes():
    from minilib.reports.grounded_page import build_markdown

    assert (ROOT / "docs" / "grounded.md").read_text(encoding="utf-8") == build_markdown()
