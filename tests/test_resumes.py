"""A Claude Code session quit and resumed: before 2.1.80 the resumed client rebuilt its
history along the lines' `parentUuid` links, and the parallel tool calls off that chain
were not sent again. The reader records where, the count and the agent's own replay
follow it for those versions, and a real log shows the drop it explains."""

import dataclasses
import json

import pytest

from minilib.agents.claude_code import behaviour as agent
from minilib.logs.replay import load_transcript
from minilib.measure.calibration import calibrate, call_points, predicted_calls
from minilib.policies.production.own_agent import own_agent_row
from minilib.session import DATA_DIR

RESUMED = DATA_DIR / "real" / "claude-code" / "entire-13-db96e5c261-0.jsonl"


def line(kind, uuid, parent, content, version="2.1.17", **more):
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=more.pop("message_id", uuid), model="claude-sonnet-4-5")
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "version": version,
        "message": message,
        **more,
    }


def use(call_id, path):
    return {
        "type": "tool_use",
        "id": call_id,
        "name": "Read",
        "input": {"file_path": path},
    }


def result(call_id, text):
    return [{"type": "tool_result", "tool_use_id": call_id, "content": text}]


def session(version_after="2.1.17", quit=True):
    """Two parallel reads as Claude Code writes them (one line a block; each result's
    parent is its call; the next reply continues from the first result), then /exit
    and a resumed turn."""
    lines = [
        line("user", "u1", None, "read both files"),
        line("assistant", "a1", "u1", [use("c1", "a.py")], message_id="m1"),
        line("assistant", "a2", "a1", [use("c2", "b.py")], message_id="m1"),
        line("user", "r2", "a2", result("c2", "b " * 400)),
        line("user", "r1", "a1", result("c1", "a " * 400)),
        line("assistant", "a3", "r1", [{"type": "text", "text": "Both read."}]),
    ]
    if quit:
        lines.append(line("user", "q", "a3", "<command-name>/exit</command-name>"))
        lines.append(
            line("user", "o", "q", "<local-command-stdout>Bye!</local-command-stdout>")
        )
    parent = "o" if quit else "a3"
    lines.append(line("user", "u2", parent, "go on", version=version_after))
    lines.append(
        line("assistant", "a4", "u2", [{"type": "text", "text": "Done."}], version_after)
    )
    return lines


def write(tmp_path, lines):
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_the_reader_records_the_calls_off_the_chain_the_resumed_client_continued(
    tmp_path,
):
    log = load_transcript(write(tmp_path, session()))
    # the second read (c2) and its result lie off u2's chain (u2, o, q, a3, r1, a1, u1)
    (resume,) = log.resumes
    assert resume.call_ids == ("c2",)
    assert resume.where == "line 9"
    first_after = log.messages[resume.at]
    assert first_after == {"role": "user", "content": "go on"}


def test_a_new_client_version_is_a_restart_too(tmp_path):
    log = load_transcript(write(tmp_path, session(quit=False, version_after="2.1.19")))
    assert [r.call_ids for r in log.resumes] == [("c2",)]


def test_the_reply_a_resumed_client_writes_itself_marks_a_restart(tmp_path):
    """A terminal closed without /exit leaves no command; the client that loads the
    session again answers the turn left open with a reply of its own (model
    `<synthetic>`, "No response requested.")."""
    lines = session(quit=False)
    lines[-2:-2] = [
        line("user", "open", "a3", "and the tests?"),
        line(
            "assistant",
            "syn",
            "open",
            [{"type": "text", "text": "No response requested."}],
        ),
    ]
    synthetic, resumed = lines[-3], lines[-2]
    synthetic["message"]["model"] = "<synthetic>"
    resumed["parentUuid"] = "syn"
    log = load_transcript(write(tmp_path, lines))
    (resume,) = log.resumes
    assert resume.call_ids == ("c2",)  # off the chain syn, open, a3, r1, a1, u1
    assert log.messages[resume.at]["content"] == "No response requested."
    # any other reply of the client's own is no restart
    synthetic["message"]["content"][0]["text"] = "API Error: 500"
    assert load_transcript(write(tmp_path, lines)).resumes == []


def test_a_session_never_quit_has_no_resume(tmp_path):
    assert load_transcript(write(tmp_path, session(quit=False))).resumes == []


def test_a_chain_through_a_parent_the_file_lacks_is_not_followed(tmp_path):
    lines = session()
    lines = [x for x in lines if x["uuid"] != "a1"]  # a line never written
    log = load_transcript(write(tmp_path, lines))
    (resume,) = log.resumes
    assert resume.call_ids == ()  # what the rebuild lost is not known: nothing dropped
    assert any("parentUuid" in why for _, why in log.notes)


def test_a_real_resume_is_predicted_where_the_record_drops():
    log = load_transcript(RESUMED, max_bytes=10**8)
    (resume,) = log.resumes
    assert agent.resume_drops_parallel_calls(log.agent_version)
    assert len(resume.call_ids) == 65
    calibration = calibrate(log)
    calls = predicted_calls(log, calibration)
    at = next(i for i, c in enumerate(calls) if any("resumed" in e for e in c.events))
    before, after = calls[at - 1], calls[at]
    recorded_drop = before.recorded - after.recorded
    predicted_drop = before.predicted - after.predicted
    assert recorded_drop > 25_000  # 104,515 -> 74,437
    assert abs(predicted_drop - recorded_drop) < 0.05 * recorded_drop
    assert abs(after.error) < 0.02
    # without the rebuild the calls after the resume are a third over the record
    unrebuilt = dataclasses.replace(log, resumes=[])
    fits = calibration.held_out_fits
    points = {p.round: p for p in call_points(unrebuilt, fits)}
    fit = next(iter(fits.values()))
    over = fit.overhead + fit.ratio * points[after.round].seen
    assert over > after.recorded * 1.3


def test_the_agents_own_row_follows_the_resume_for_the_version_that_wrote_it():
    log = load_transcript(RESUMED, max_bytes=10**8)
    row, _ = own_agent_row(log, 200_000)
    after = own_agent_row(log, 200_000, version="2.1.80")[0]
    calls = {c.round: c for c in predicted_calls(log, calibrate(log))}
    resumed_round = next(r for r, c in calls.items() if "resumed" in " ".join(c.events))
    before = max(r for r in calls if r < resumed_round)  # the last call before it
    tokens, unrebuilt = row["tokens_per_round"], after["tokens_per_round"]
    # 2.1.17 drops the 65 calls at the resume; 2.1.80 kept them
    assert tokens[resumed_round] < tokens[before] - 25_000
    assert unrebuilt[resumed_round] > unrebuilt[before]
    recorded = calls[resumed_round].recorded
    assert abs(tokens[resumed_round] - recorded) < 0.03 * recorded


@pytest.mark.parametrize("version", ["2.1.7", "2.1.79"])
def test_versions_before_2_1_80_drop_the_parallel_calls(version):
    assert agent.resume_drops_parallel_calls(version)


def test_compress_names_the_resume_on_the_call_where_the_record_drops(tmp_path, capsys):
    from minilib.cli.main import main

    assert main(["compress", str(RESUMED), "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "session resumed before messages[166] (line 365)" in printed
    rows = [x for x in printed.splitlines() if x.startswith("   48    74,437")]
    assert (
        len(rows) == 1
        and (
            "the session was resumed (its history rebuilt along parentUuid); "
            "2 SessionStart:resume hooks ran"
        )
        in rows[0]
    )
