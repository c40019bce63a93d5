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


def test_every_readable_session_is_within_the_ceiling_or_says_why(rows):
    for row in rows:
        assert "skipped" not in row, row
        if row["held_out"] > measure_corpus.CEILING:
            assert row["causes"] and "redacted" in row["causes"][0], row


def test_claude_codes_replay_matches_every_automatic_compaction_and_follows_compact(
    rows,
):
    claude = [r for r in rows if r["agent"] == "claude-code"]
    assert sum(r.get("auto", 0) for r in claude) >= 6
    assert all(r["auto_matched"] == r["auto"] for r in claude)
    assert all(r["manual_followed"] == r["manual"] for r in claude)
    assert not any(r["extra"] for r in claude if not r["auto"] and not r["manual"])


def test_the_docs_report_is_what_the_script_writes_now(rows):
    pytest.importorskip("genai_prices", reason="the report's bill column needs it")
    page = (ROOT / "docs" / "real_logs.md").read_text(encoding="utf-8")
    written = page.split(measure_corpus.START + "\n", 1)[1].split(measure_corpus.END)[0]
    assert written == measure_corpus.report(rows)
