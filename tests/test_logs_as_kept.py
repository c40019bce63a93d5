"""Logs as their harness keeps them: constructed fixtures (data/logs/as_kept/) of what a
harness writes beside the model's own turns, each read and replayed through the
production window with its guarantees (every call answered right after it, the head
kept, the window under the threshold or a stated stop)."""

import pytest
from test_logs import check_pairing

from minilib import Settings
from minilib.logs.replay import load_transcript, replay_transcript
from minilib.model import scripted_summary
from minilib.ranges import closed_range, why_not_closed
from minilib.scale.bounded import BoundedSummarizer, parse_line
from minilib.session import DATA_DIR
from minilib.tokens import estimate_tokens

KEPT = DATA_DIR / "logs" / "as_kept"
DEVELOPER = KEPT / "codex_desktop_developer_turns.jsonl"


def replayed_within_guarantees(log, threshold):
    """The replay at `threshold` (production window), after checking what each model
    call was sent: paired, the head kept, within the threshold."""
    run = replay_transcript(log, Settings(threshold=threshold, fold_user_turns=True))
    head = [m for m in log.messages[:3] if m["role"] in ("system", "user")]
    windows = [
        c["input"] for c in run.tracer.events("model_call") if c["purpose"] == "decision"
    ]
    assert len(windows) == len(run.rounds)
    for window in windows:
        check_pairing(window)
        assert estimate_tokens(window) <= threshold
        if not log.compactions:
            assert window[: len(head)] == head
    if run.overflow is None:
        assert len(run.rounds) == log.rounds
    else:  # a stop only where the protected content alone does not fit, said so
        said = str(run.overflow)
        assert "Protected content: head (system + task" in said
        assert (
            run.overflow.head_tokens
            + run.overflow.kept_tokens
            + (run.overflow.summary_tokens)
            > threshold
        )
    return run


# --- developer and system messages between user turns ---------------------------------


def test_developer_messages_between_turns_are_read_in_place():
    log = load_transcript(DEVELOPER)
    roles = "".join(m["role"][0] for m in log.messages)
    assert roles == "ssuuatatatatasuatatatasuata"
    later = [i for i, m in enumerate(log.messages) if m["role"] == "system" and i > 1]
    assert [log.messages[i]["content"].split(">")[0] for i in later] == [
        "<permissions instructions",
        "<collaboration instructions",
    ]


def test_a_system_message_after_the_head_folds_only_with_later_user_turns():
    log = load_transcript(DEVELOPER)
    messages = log.messages
    system = next(i for i, m in enumerate(messages) if m["role"] == "system" and i > 1)
    end = system + 3  # the developer message, the next user turn, one call
    while messages[end]["role"] == "tool":
        end += 1
    # after the head (two system messages, the environment context) and the task
    assert why_not_closed(messages, 4, end) == f"message {system} is a system message"
    assert why_not_closed(messages, 4, end, fold_user_turns=True) is None
    # the head's own system messages never are in a range: it starts after them
    assert closed_range(messages, 4, fold_user_turns=True).start == 3


def test_the_summary_quotes_a_folded_system_message_whole():
    message = {"role": "system", "content": "<permissions instructions>never ask"}
    text = scripted_summary([message])
    assert text == "- 系统: <permissions instructions>never ask"
    # condensed, it is counted beside the user turns, and read back as counted
    summarizer = BoundedSummarizer(32)
    turns = [
        {"role": "user", "content": "next task " * 20},
        message,
        {"role": "assistant", "content": "ok " * 40},
    ]
    condensed = summarizer(turns)
    first = condensed.splitlines()[0]
    assert first.startswith("- ⋯ earlier (")
    state = parse_line(first)
    assert (state.user_turns, state.system_messages) == (1, 1)


@pytest.mark.parametrize("threshold", [600, 1200, 8000, 32000])
def test_a_log_with_developer_messages_between_turns_replays_to_its_end(threshold):
    log = load_transcript(DEVELOPER)
    run = replayed_within_guarantees(log, threshold)
    assert run.overflow is None and len(run.rounds) == log.rounds == 11
    if threshold == 600:  # the developer messages were folded, quoted whole
        summaries = [
            c["reply"]
            for c in run.tracer.events("model_call")
            if c["purpose"] == "summary"
        ]
        assert any("- 系统: <permissions instructions>" in s for s in summaries)
