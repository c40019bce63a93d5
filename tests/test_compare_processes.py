"""`compare_policies` over more than one process gives the rows one process gives.

The 1,000-call golden rows are held in both ways by tests/test_compare_golden.py; here,
every bundled log (their agents' own rows among them, and the traces), a policy that
fails, and a forked process that dies before it sends what it made.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_policies_compare import KEYS, READABLE

from minilib.logs.replay import with_output_ids
from minilib.measure.used_facts import used_as_data, used_facts, used_from_data
from minilib.policies.production import POLICIES, processes
from minilib.policies.production.compare import (
    PolicyMeasurement,
    PolicyRows,
    compare_policies,
)
from minilib.policies.production.processes import usable_processes
from minilib.trace import read_jsonl

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(
    usable_processes(2) < 2, reason="needs fork and two cores to test two processes"
)


@pytest.mark.parametrize("name", sorted(READABLE))
def test_two_processes_give_every_bundled_logs_rows_as_one_does(name):
    log = READABLE[name]
    one = compare_policies(log.messages, KEYS, 32_000, agent_log=log)
    two = compare_policies(log.messages, KEYS, 32_000, agent_log=log, processes=2)
    assert two == one


def test_two_processes_write_the_same_traces(tmp_path):
    log = READABLE["m3_release_check.json"]
    keys = KEYS[:6]
    compare_policies(log.messages, keys, 3_000, trace_folder=tmp_path / "one")
    compare_policies(
        log.messages, keys, 3_000, trace_folder=tmp_path / "two", processes=2
    )
    for key in keys:
        one = read_jsonl(tmp_path / "one" / key / "trace.jsonl")
        assert len(one) > 2, key
        assert read_jsonl(tmp_path / "two" / key / "trace.jsonl") == one, key


def test_the_facts_sent_to_another_process_hold_what_they_held():
    """Through JSON, as chapter 10's stored rows keep them."""
    log = READABLE["m3_release_check.json"]
    messages = with_output_ids(log.messages)
    found = used_facts(messages)
    data = json.loads(json.dumps(used_as_data(found, messages)))
    again = used_from_data(data, messages)
    assert (again.uses, again.rereads, again.tokens, again.recall) == (
        found.uses,
        found.rereads,
        found.tokens,
        found.recall,
    )
    assert again.held.strings == found.held.strings
    for message in messages:
        assert set(again.held(message)) == set(found.held(message))
        assert again.held.named(message) == found.held.named(message)


class Failing(POLICIES["article"]):
    """The article's policy, failing at its tenth round."""

    key = "article"

    def send(self, history, step):
        if step == 9:
            raise KeyError("the tenth round failed")
        return super().send(history, step)


def only_forked_processes_take_policies(monkeypatch):
    """This process takes none: every row and error comes from the forked one."""
    parent, take = os.getpid(), processes._take
    monkeypatch.setattr(
        processes,
        "_take",
        lambda taken, from_end=False: (
            None if os.getpid() == parent else take(taken, from_end)
        ),
    )


def test_rows_made_in_another_process_come_back_in_order(monkeypatch):
    log = READABLE["m3_release_check.json"]
    expected = compare_policies(log.messages, KEYS, 32_000, agent_log=log)
    only_forked_processes_take_policies(monkeypatch)
    assert compare_policies(log.messages, KEYS, 32_000, agent_log=log, processes=2) == (
        expected
    )


def test_a_policy_that_fails_in_another_process_fails_the_call(monkeypatch):
    log = READABLE["m3_release_check.json"]
    monkeypatch.setitem(POLICIES, "article", Failing)
    only_forked_processes_take_policies(monkeypatch)
    keys = ["swe-agent-last-n", "article", "codex"]
    with pytest.raises(KeyError, match="the tenth round failed"):
        compare_policies(log.messages, keys, 200_000, processes=2)


def test_a_process_that_dies_leaves_its_policies_to_this_one(monkeypatch):
    log = READABLE["m3_release_check.json"]
    expected = compare_policies(log.messages, KEYS, 32_000)
    parent = os.getpid()
    find_facts = PolicyRows.find_facts

    def dies_when_forked(self):
        if os.getpid() != parent:
            os._exit(3)  # killed before it sent the facts or a row
        return find_facts(self)

    monkeypatch.setattr(PolicyRows, "find_facts", dies_when_forked)
    assert compare_policies(log.messages, KEYS, 32_000, processes=2) == expected


def test_no_more_processes_than_cores_and_one_when_asked_for_one():
    assert usable_processes(1) == 1
    assert 1 <= usable_processes(64) <= len(os.sched_getaffinity(0))


REAL = sorted((ROOT / "data" / "real").rglob("*.jsonl"))


@pytest.mark.parametrize("path", REAL, ids=lambda path: path.name)
def test_the_command_writes_the_same_rows_on_every_real_log_with_one_job_or_two(
    path, tmp_path
):
    """As the command runs on a real log: at its model's window, its own agent
    counted as calibrated and replayed as the version that wrote it."""
    written = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"rows_{jobs}.json"
        done = subprocess.run(
            [sys.executable, "-m", "minilib", "compare", str(path)]
            + ["--jobs", jobs, "--json", str(out)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert done.returncode == 0, done.stderr
        written[jobs] = out.read_text(encoding="utf-8")
    assert written["2"] == written["1"]


def test_replays_wait_for_the_facts_rather_than_keep_too_many_windows(monkeypatch):
    """Past the room for waiting windows, a replay waits for the facts and measures
    the rest of its windows as it sends them: the same rows."""
    log = READABLE["m3_release_check.json"]
    expected = compare_policies(log.messages, KEYS, 32_000, agent_log=log)
    parent, take = os.getpid(), processes._take
    found = PolicyMeasurement.facts_found
    mid_replay = []  # facts given to a replay under way, with windows waiting

    def facts_found(measurement, used):
        if measurement.run is None and measurement.waiting_messages:
            mid_replay.append(measurement.waiting_messages)
        found(measurement, used)

    monkeypatch.setattr(processes, "MAX_WAITING_MESSAGES", 40)
    monkeypatch.setattr(PolicyMeasurement, "facts_found", facts_found)
    # the forked process only finds the facts: this one replays every policy
    monkeypatch.setattr(
        processes,
        "_take",
        lambda taken, from_end=False: (
            take(taken, from_end) if os.getpid() == parent else None
        ),
    )
    rows = compare_policies(log.messages, KEYS, 32_000, agent_log=log, processes=2)
    assert rows == expected
    # once, in the first replay, just past the room; every later one had the facts
    assert len(mid_replay) == 1 and 40 < mid_replay[0] < 80
