"""Grounded mode is no oracle: nothing the model writes states a fact its window lacks.

Read from the trace alone, for every model decision of a grounded run: the text of the
reply (a look-up round's or a scripted one's) names a planted fact only when the window
sent to that call holds the fact, or the reply marks it unknown; no tool call, the
script's own or a look-up, reads with a planted fact (a path, a pattern) the window does
not hold; and every look-up call's arguments are built from that window: every path, id
or phrase they name is in the window's text. A fact is named by
its verbatim text, any other form the grounding declares for it (the configuration
writes `tool_timeout_s = 30`), or a `#number` in its text (`#58`, `#412`).

Checked on the article's pipeline and on every path that runs grounded, at the
article's threshold and a few others, with age-after-seen where it finishes, and with
the summary's pointers on.
"""

import json
import re

import pytest

from minilib.measure.facts import window_text
from minilib.measure.grounded_model import UNKNOWN_RE
from minilib.measure.grounding import run_grounded, session_grounding
from minilib.policies.registry import PATHS, default_facts, run_baseline_probe, run_path
from minilib.window import Settings

LOOKUP = "lookup_"
THRESHOLDS = (900, 1_200, 1_600, 2_400)


@pytest.fixture(scope="module")
def grounding(session):
    return session_grounding(session, tuple(default_facts()))


def fact_forms(grounding, fact):
    """The verbatim texts that state `fact`: its planted text and its declared forms."""
    return (grounding.texts[fact], *grounding.forms.get(fact, ()))


def fact_names(grounding, fact):
    """What names `fact` in a text: its forms and the `#numbers` of its text."""
    return (*fact_forms(grounding, fact), *re.findall(r"#\d+", grounding.texts[fact]))


def argument_strings(call):
    """The raw JSON arguments of a call and every string value in them."""
    raw = call["function"]["arguments"]
    values = json.loads(raw)
    return [raw, *(v for v in values.values() if isinstance(v, str))]


def unescaped(pattern):
    """A search pattern as the text it matches literally (the model escapes what a
    regular expression would read as syntax)."""
    return re.sub(r"\\(.)", r"\1", pattern)


def check_window_only(tracer, grounding):
    """Fail on the first reply or look-up that states a fact its window does not hold.

    Returns how many decisions and look-up calls it read."""
    decisions = [c for c in tracer.events("model_call") if c["purpose"] == "decision"]
    calls_read = 0
    for step, decision in enumerate(decisions):
        text = window_text(decision["input"])
        reply = decision["reply"]
        content = reply.get("content") or ""
        said = UNKNOWN_RE.sub("", content)
        marked = set(UNKNOWN_RE.findall(content))
        for fact in grounding.texts:
            if any(form in text for form in fact_forms(grounding, fact)):
                continue  # the window holds it: the model may state it
            for name in fact_names(grounding, fact):
                assert name not in said or fact in marked, (
                    f"round {step}: the reply names {fact} ({name!r}), which its "
                    f"window does not hold: {content}"
                )
        for call in reply.get("tool_calls") or ():
            calls_read += 1
            strings = argument_strings(call)
            what = "look-up" if call["id"].startswith(LOOKUP) else "scripted call"
            for fact in grounding.texts:
                if any(form in text for form in fact_forms(grounding, fact)):
                    continue
                for form in fact_forms(grounding, fact):
                    assert not any(form in s for s in strings), (
                        f"round {step}: {what} {call['id']} asks with {fact} "
                        f"({form!r}), which its window does not hold: {strings[0]}"
                    )
            if not call["id"].startswith(LOOKUP):
                continue  # a scripted call's other arguments are the script's
            # every value it passes is a string the window shows: an id, a path, a
            # phrase (a search pattern read literally)
            name = call["function"]["name"]
            for key, value in json.loads(call["function"]["arguments"]).items():
                literal = (name, key) == ("search_text", "pattern")
                shown = unescaped(value) if literal else value
                assert shown in text, (
                    f"round {step}: look-up {call['id']} passes {key}={value!r}, "
                    "which is not in its window"
                )
    return len(decisions), calls_read


def test_every_read_of_the_articles_run_is_grounded(session, grounding):
    """The walk reads every tool call of the run (the script's 13 and the look-ups);
    the run itself reports none ungrounded, and the one read the script makes with a
    fact its window has lost (round 6 reads docs/release_checklist.md, which reply 4
    marks unknown) is made as a listing of the folder the window still names."""
    grounded = run_grounded(session)
    outcome = grounded.outcome
    decisions, calls = check_window_only(grounded.run.tracer, grounding)
    made = grounded.run.tracer.events("tool_call")
    assert calls == len(made) == outcome.tool_calls == 13 + outcome.lookup_calls
    assert outcome.ungrounded == ()
    assert outcome.rerouted == (
        (6, "call_05", "read_file docs/release_checklist.md", "list_dir docs"),
    )
    assert (6, "path-checklist") in outcome.unknown
    listing = next(call for call in made if call["tool_call_id"] == "call_05")
    assert listing["output"].startswith(
        session.tools.call("list_dir", '{"path": "docs"}').content
    )


def test_the_declared_names_are_planted_text(grounding):
    """The forms and #numbers the check reads are real: each form is a declared form of
    a planted fact, each #number a part of one."""
    assert grounding.forms, "the grounding declares the configuration's form"
    for fact, forms in grounding.forms.items():
        assert fact in grounding.texts and all(forms)
    assert {"#58", "#412"} <= {
        name for fact in grounding.texts for name in fact_names(grounding, fact)
    }


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_the_articles_pipeline_states_only_what_its_window_holds(
    threshold, session, grounding
):
    run = run_grounded(session, Settings(threshold=threshold)).run
    decisions, _ = check_window_only(run.tracer, grounding)
    assert decisions


def test_with_pointers_and_after_seen_it_states_only_what_its_window_holds(
    session, grounding
):
    pointers = run_grounded(session, pointers=True).run
    check_window_only(pointers.tracer, grounding)
    after_seen = run_grounded(session, Settings(threshold=10_273), keep_unseen=True).run
    assert after_seen.overflow is None
    check_window_only(after_seen.tracer, grounding)


@pytest.mark.parametrize("key", list(PATHS))
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_every_path_states_only_what_its_window_holds(key, threshold, grounding):
    run = run_path(key, threshold=threshold, grounded=True)
    check_window_only(run.tracer, grounding.with_recall(key == "store"))


def test_no_compression_holds_every_fact_it_states(grounding):
    check_window_only(run_baseline_probe(grounded=True).tracer, grounding)


def test_the_check_catches_an_oracle(session, grounding):
    """The recorded final answer, which names #412, and a search for #412's own text,
    both fail the check in the window the plain replay sends with the final answer."""
    run = run_grounded(session, grounded=False).run
    final = [c for c in run.tracer.events("model_call") if c["purpose"] == "decision"][-1]
    fact = "num-nightly-412"
    assert not grounding.shows(fact, window_text(final["input"]))

    class Forged:
        def __init__(self, reply):
            self._events = [dict(final, reply=reply)]

        def events(self, kind):
            return self._events if kind == "model_call" else []

    with pytest.raises(AssertionError, match="names num-nightly-412"):
        check_window_only(Forged(final["reply"]), grounding)
    arguments = json.dumps({"pattern": grounding.texts[fact]})
    searched = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "lookup_01",
                "type": "function",
                "function": {"name": "search_text", "arguments": arguments},
            }
        ],
    }
    with pytest.raises(AssertionError, match="asks with num-nightly-412"):
        check_window_only(Forged(searched), grounding)
    # the script's own read of a path its window lost is caught the same way
    window = window_text(final["input"])
    lost = next(
        fact
        for fact in grounding.texts
        if fact.startswith("path-") and not grounding.shows(fact, window)
    )
    read = dict(searched["tool_calls"][0], id="call_05")
    read["function"] = {
        "name": "read_file",
        "arguments": json.dumps({"path": grounding.texts[lost]}),
    }
    with pytest.raises(AssertionError, match=f"scripted call call_05 asks with {lost}"):
        check_window_only(Forged(dict(searched, tool_calls=[read])), grounding)
