"""Reading an output only on the lines that can hold a fact the agent wrote gives the
same facts and the same uses as reading all of it.

`fact_rule.facts_near` reads a text only around the places asked about, one stretch
between line breaks no fact runs across at a time; `used_facts` asks about the places
where a string the agent writes occurs. Both are checked against the whole reading
on every bundled text and log, the real sessions and generated ones, and on texts
made to put a fact across a line break."""

import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minilib.logs.replay import load_transcript, with_output_ids
from minilib.measure.fact_rule import facts, facts_near, find_facts
from minilib.measure.used_facts import _used_facts, used_facts
from minilib.scale.histories import generate_history
from minilib.session import DATA_DIR

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_helpers import SCALE_PROFILE  # noqa: E402
from test_fact_rule import every_bundled_text  # noqa: E402

# Facts across a line break (a setting's "=", a number's unit), and breaks beside them
# that no fact crosses.
ACROSS = (
    "a\nkey_x\n= 3\nfoo 300\nms bar\nz",
    "timeout_s =\n30 and REPEAT=\n3, v=1\nx, 12\n MB, 4\nmsg, 0x1f\nKB",
    "deadbeef1\nms\n\u0663\u0660\u0660\nms\n=\n=x_y=8\n--max-mb\n=5",
    "line\n42, exit code\n2, [Errno\n7], 2026-11-02\n10:00, 1,342\nbytes",
)


# the fixtures that exist to be refused (a damaged file, one of no known shape)
REFUSED = {"damaged.jsonl", "unknown_shape.json"}


def log_paths():
    folders = (DATA_DIR / "logs", DATA_DIR / "transcripts")
    paths = [
        path
        for folder in folders
        for path in sorted(folder.iterdir())
        if path.is_file() and path.name not in REFUSED
    ]
    return paths + sorted((DATA_DIR / "real").glob("*/*.jsonl"))


def real_texts():
    texts = []
    for path in sorted((DATA_DIR / "real").glob("*/*.jsonl")):
        texts += [m.get("content") or "" for m in load_transcript(path).messages]
    return texts


def line_starts(text):
    return [0] + [index + 1 for index, c in enumerate(text) if c == "\n"]


def test_a_text_read_line_by_line_names_the_facts_read_whole():
    texts = every_bundled_text() + real_texts() + list(ACROSS)
    across = 0
    for text in texts:
        expected = facts(text)
        assert facts_near(text, [(s, s) for s in line_starts(text)]) == expected
        across += sum("\n" in fact for fact, _ in expected)
    assert across >= 6  # facts that do run across a line break were among them


def test_the_lines_asked_about_give_the_facts_whole_reading_finds_there():
    rng = random.Random(7)
    texts = [t for t in every_bundled_text() + list(ACROSS) if "\n" in t]
    for text in texts:
        spans = sorted(
            (start, start + rng.randrange(0, 30))
            for start in rng.sample(range(len(text)), min(len(text), 5))
        )
        spans = [(start, min(end, len(text))) for start, end in spans]
        near = facts_near(text, spans)
        found = find_facts(text)
        # each span's facts are there, in the order the whole reading names them
        for start, end in spans:
            inside = [(f.fact, f.kind) for f in found if start <= f.start < end]
            assert all(fact in near for fact in inside)
        listed = iter([(f.fact, f.kind) for f in found])
        assert all(fact in listed for fact in near)  # a subsequence of the whole


@given(
    st.text(
        alphabet=st.sampled_from(list("ab_x0123=\n .:/-\"'mskMB#vZ") + ["\u0663"]),
        max_size=60,
    )
)
@settings(SCALE_PROFILE, max_examples=400)
def test_any_text_read_line_by_line_names_the_facts_read_whole(text):
    assert facts_near(text, [(s, s) for s in line_starts(text)]) == facts(text)


@pytest.mark.parametrize("path", log_paths(), ids=lambda path: path.name)
def test_the_uses_are_those_of_every_line_read(path):
    log = load_transcript(path)
    messages = with_output_ids(log.messages)
    assert used_facts(messages) == _used_facts(messages, None, every_line=True)


@pytest.mark.parametrize("calls, turns", [(60, 1), (300, 4)])
def test_the_uses_of_a_generated_session_are_those_of_every_line_read(calls, turns):
    messages = with_output_ids(list(generate_history(calls, user_turns=turns).messages))
    fast = used_facts(messages)
    assert fast.uses and fast == _used_facts(messages, None, every_line=True)


@pytest.mark.parametrize("name", ["claude_code_compacted.jsonl", "openai_chat.json"])
def test_what_each_message_holds_is_what_a_fresh_search_finds(name):
    """The holdings the scan of the outputs gave are those `Held` finds alone."""
    from minilib.measure.used_facts import Held

    for messages in (
        with_output_ids(load_transcript(DATA_DIR / "logs" / name).messages),
        with_output_ids(list(generate_history(200, user_turns=3).messages)),
    ):
        used = used_facts(messages)
        fresh = Held(used.asked())
        assert used.held.strings == fresh.strings
        for message in messages:
            assert set(used.held(message)) == set(fresh(message))
        assert any(used.held(message) for message in messages)
