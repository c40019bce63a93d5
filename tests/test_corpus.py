"""The held-out corpus (corpus/: real sessions from repositories the lab was not built
on): the targets the lab's model of an agent is held to, and docs/real_logs.md's
report of them, which must be what scripts/measure_corpus.py writes now."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import measure_corpus  # noqa: E402

CORPUS, REAL = ROOT / "corpus", ROOT / "data" / "real"


@pytest.fixture(scope="module")
def rows():
    return measure_corpus.measure_folders([CORPUS, REAL])


# The sessions the count misses by more than the ceiling, each for a reason its report
# names: two whose publisher replaced their text by placeholders, one where the record
# rises 29,101 tokens at one call with nothing in the log to say why, and one Gemini
# CLI session whose misses the log does not explain. A fix, or a new miss, shows here.
KNOWN_MISSES = {
    "localpush-019c8a4d.jsonl",
    "localpush-019c8a59.jsonl",
    "ccarchiver-30ea3608.jsonl",
    "mgemini-1d310a63.json",
}


def test_every_readable_session_is_within_the_ceiling_or_its_report_says_why(rows):
    assert all("skipped" not in row for row in rows)
    over = {r["file"] for r in rows if r["held_out"] > measure_corpus.CEILING}
    assert over == KNOWN_MISSES
    assert all(r["causes"] for r in rows if r["file"] in over)


def test_claude_codes_replay_matches_the_automatic_compactions_and_follows_compact(
    rows,
):
    claude = [r for r in rows if r["agent"] == "claude-code"]
    auto = sum(r.get("auto", 0) for r in claude)
    matched = sum(r.get("auto_matched", 0) for r in claude)
    assert auto >= 9 and matched / auto >= 0.85
    assert all(r["manual_followed"] == r["manual"] for r in claude)
    never = [r for r in claude if not r["auto"] and not r["manual"]]
    assert sum(1 for r in never if r["extra"]) <= 1


def test_the_docs_report_is_what_the_script_writes_now(rows):
    pytest.importorskip("genai_prices", reason="the report's bill column needs it")
    page = (ROOT / "docs" / "real_logs.md").read_text(encoding="utf-8")
    written = page.split(measure_corpus.START + "\n", 1)[1].split(measure_corpus.END)[0]
    assert written == measure_corpus.report(rows)
