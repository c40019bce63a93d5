"""The rows chapter 10 reads instead of replaying (data/chapter10_rows.json.gz): a log
read from them computes any other row as a fresh one does, and a slider resting on
its policy's default asks for the default row. That the file is what
scripts/make_chapter10_rows.py writes now is checked with every data file
(tests/test_packaging.py)."""

import sys
from pathlib import Path

from minilib.lab.log_runs import LogRuns, log_messages, log_runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_chapter10_rows  # noqa: E402


def test_a_stored_log_computes_a_row_it_lacks_as_a_fresh_one_does():
    name = make_chapter10_rows.LAB
    stored = log_runs(name)
    fresh = LogRuns(log_messages(name))
    assert stored.facts_used == fresh.facts_used
    assert stored.baseline == fresh.baseline and stored.timestamps == fresh.timestamps
    # a window the file does not hold: replayed from the log, read only now
    assert stored.row("swe-agent-last-n", 8_000, 3) == fresh.row(
        "swe-agent-last-n", 8_000, 3
    )
    assert stored.row("codex", 32_000) == fresh.row("codex", 32_000)


def test_a_policy_given_its_default_sends_what_it_sends_by_default():
    """`LogRuns.row` takes a slider resting on the default for the default row."""
    from minilib.lab.log_runs import default_value
    from minilib.lab.policy_rows import available_policies
    from minilib.policies.production import POLICIES
    from minilib.policies.production.compare import measure_policy

    messages = LogRuns(log_messages(make_chapter10_rows.LAB)).messages
    for window in (32_000, 8_000):
        for key in available_policies():
            given = {POLICIES[key].main_parameter: default_value(key, window)}
            assert measure_policy(messages, key, window, **given) == measure_policy(
                messages, key, window
            ), (key, window)


def test_the_stored_facts_are_the_ones_the_log_holds():
    """A row not stored is measured with the facts read from the file: the ones
    `used_facts` finds in the log, each message holding what it holds."""
    from minilib.measure.used_facts import used_facts

    for name in (make_chapter10_rows.LONG, make_chapter10_rows.LAB):
        stored = log_runs(name)
        assert "facts" in stored._stored, name
        found = used_facts(stored.messages)
        read = stored.used
        assert (read.uses, read.rereads, read.tokens, read.recall) == (
            found.uses,
            found.rereads,
            found.tokens,
            found.recall,
        ), name
        assert read.held.strings == found.held.strings
        for message in stored.messages:
            assert set(read.held(message)) == set(found.held(message)), name
