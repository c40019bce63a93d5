"""SWE-agent files without `message_type`: observations told by the trajectory's
structure, not read as a person's turns."""

import json
from pathlib import Path

from minilib import Settings
from minilib.logs import load_log, parse_log
from minilib.logs.replay import replay_transcript

FIXTURES = Path(__file__).resolve().parent.parent / "data" / "logs"
UNTYPED = FIXTURES / "sweagent_no_message_type.traj"


def history():
    return json.loads(UNTYPED.read_text(encoding="utf-8"))


def test_outputs_after_actions_are_observations_and_the_task_is_not():
    log = load_log(UNTYPED)
    assert log.messages[1]["content"].startswith("We're currently solving")
    assert "observation" not in log.messages[1]
    assert [i for i, m in enumerate(log.messages) if m.get("observation")] == [3, 5, 7]
    assert log.messages[3]["content"].startswith("[File: /repo/textkit/slug.py")


def test_observations_are_aged_so_the_replay_can_cut_them():
    log = load_log(UNTYPED)
    run = replay_transcript(log.messages, Settings(threshold=600))
    assert run.overflow is None and run.compressions


def test_a_user_message_no_step_produced_stays_a_persons_turn():
    doc = history()
    doc["history"][5]["content"] = "Please also handle underscores."
    log = parse_log(json.dumps(doc), "traj")
    assert not log.messages[5].get("observation")
    assert log.messages[7].get("observation")
    assert (
        "history[5]",
        "user message after an action that no trajectory step output matches",
    ) in log.notes


def test_without_a_trajectory_position_alone_decides():
    doc = history()
    doc["trajectory"] = []
    log = parse_log(json.dumps(doc), "traj")
    assert [i for i, m in enumerate(log.messages) if m.get("observation")] == [3, 5, 7]
    assert log.notes == [
        ("field 'history'", "no message_type: outputs told by position after an action")
    ]
    assert log.skipped == []


def test_a_second_task_message_before_any_action_is_not_an_observation():
    doc = history()
    doc["history"].insert(2, {"role": "user", "content": "Hint: look at textkit/slug.py"})
    log = parse_log(json.dumps(doc), "traj")
    assert not log.messages[2].get("observation")


def test_files_with_message_type_keep_their_reading():
    log = load_log(FIXTURES / "sweagent_text.traj")
    assert not any(why.startswith("no message_type") for _, why in log.notes)
