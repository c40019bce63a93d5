"""Aider's chat history and LLM history: what the model saw, and what was sent."""

from pathlib import Path

import pytest

from minilib import Settings
from minilib.logs import LogFileError, load_log, parse_log
from minilib.logs.replay import replay_transcript
from minilib.measure.sent import compare_sent, sent_table

FIXTURES = Path(__file__).resolve().parent.parent / "data" / "logs"
CHAT = FIXTURES / "aider.chat.history.md"
LLM = FIXTURES / "aider.llm.history"


def test_the_chat_history_reads_the_last_run_turns_replies_and_added_output():
    log = load_log(CHAT)
    users = [m["content"] for m in log.messages if m["role"] == "user"]
    assert users[0] == (
        "Invoice.total() ignores the discount field.\n"
        "Apply it after summing the lines, rounded to cents."
    )
    assert "What does ledgerly/invoice.py do?" not in users  # the first run
    # the lint errors answered yes, without aider's status and question lines
    assert log.messages[2] == {
        "role": "user",
        "content": "ledgerly/invoice.py:31:38: F821 undefined name 'Decimal'",
        "observation": True,
    }
    run = log.messages[4]
    assert run["observation"] and run["content"].startswith(
        "I ran this command:\n\npytest -q tests/test_invoice.py\n\nAnd got this output:"
    )
    assert "1 failed, 29 passed" in run["content"]
    assert "Add the output" not in run["content"]
    # a reply no user turn prompted: aider had reflected the failed edit back
    failed = log.messages[7]
    assert failed["observation"]
    assert failed["content"].startswith("# 1 SEARCH/REPLACE block failed to match!")
    assert "did not conform" not in failed["content"]
    # SEARCH/REPLACE edits stay in the reply's text, `>>>>>>> REPLACE` included
    assert log.messages[1]["content"].endswith(">>>>>>> REPLACE\n```")
    assert not any("Tokens:" in (m["content"] or "") for m in log.messages)
    assert "/tokens" not in users and "/add ledgerly/invoice.py" not in users


def test_chat_history_commands_clear_and_file_adds():
    text = (
        "# aider chat started at 2024-09-04 10:00:00\n\n"
        "#### Rename parse() to parse_line().  \n\n"
        "I need utils/text.py to do that.\n\n"
        "> utils/text.py  \n"
        "> Add file to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y  \n\n"
        "Renamed in both files.\n\n"
        "#### /clear  \n\n"
        "#### /ask Is anything else calling parse()?  \n\n"
        "No, only the tests.\n\n"
        "#### /run make lint  \n"
        "> Add 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: y  \n"
        "> Added 3 lines of output to the chat.  \n\n"
        "#### <blank>  \n"
    )
    log = parse_log(text, "chat.md")
    assert [(m["role"], m["content"]) for m in log.messages] == [
        ("user", "Is anything else calling parse()?"),
        ("assistant", "No, only the tests."),
        ("user", ""),
    ]
    reasons = [why for _, why in log.skipped]
    assert reasons.count("before /clear or /reset: the model no longer saw it") == 5
    assert "command output added to the chat, but not written to the history file" in (
        reasons
    )
    before = parse_log(text.split("#### /clear")[0], "chat.md")
    assert before.messages[2] == {
        "role": "user",
        "content": "I added these files to the chat: utils/text.py\n"
        "Let me know if there are others we should add.",
        "observation": True,
    }


def test_the_llm_history_replays_every_main_call_weak_calls_skipped():
    log = load_log(LLM)
    assert log.messages[0]["content"].startswith("Act as an expert software developer.")
    assert log.messages[-1]["content"].startswith("Yes: `sum` of no lines is `0`")
    weak = "weak-model call (a commit message): not part of the conversation"
    assert ("line 103", weak) in log.skipped
    assert not any("commit message" in (m["content"] or "") for m in log.messages)
    assert [(w.call, w.line) for w in log.sent_windows] == [(1, 1), (3, 118), (4, 238)]
    assert log.rounds == len(log.sent_windows) == 3  # every main call is a round
    # aider's own "Ok" to the files it sends is no model call: the first window is
    # aider's rebuild, its files and "Ok" what the model saw before the request
    [rebuilt] = log.compactions
    assert rebuilt.rebuilt and rebuilt.where == "line 1" and rebuilt.replaced == 0
    assert [m["role"] for m in rebuilt.replacement] == ["user", "assistant"]
    assert log.messages[3]["observation"]  # lint errors, in aider's own words
    assert "\n\n" in log.messages[0]["content"]  # a 'SYSTEM ' line is an empty line


def test_the_replay_sends_exactly_the_window_aider_sent_at_every_call():
    log = load_log(LLM)
    run = replay_transcript(log, Settings(threshold=100_000))
    windows = [
        [{"role": m["role"], "content": m["content"]} for m in call["input"]]
        for call in run.tracer.events("model_call")
        if call["purpose"] == "decision"
    ]
    assert windows == [sent.messages for sent in log.sent_windows]


def test_the_sent_windows_line_up_with_the_replay():
    log = load_log(LLM)
    run = replay_transcript(log, Settings(threshold=5000))
    rows = compare_sent(log, run)
    assert [(row.call, row.round) for row in rows] == [(1, 0), (3, 1), (4, 2)]
    # this aider kept every turn: the replay rebuilds exactly the windows it sent
    assert all(row.sent_tokens == row.replayed_tokens for row in rows)
    # a replay that stopped (the added file alone nearly fills 1,050) has no later round
    stopped = replay_transcript(log, Settings(threshold=1000))
    assert stopped.overflow is not None
    assert [row.replayed_tokens is None for row in compare_sent(log, stopped)] == [
        False,
        True,
        True,
    ]
    table = sent_table(rows)
    assert table.splitlines()[0].split() == [
        "call",
        "line",
        "sent",
        "replayed",
        "compressed",
    ]
    # a window aider sent for a reply the conversation no longer holds: no round
    log.sent_windows[0] = log.sent_windows[0]._replace(reply="summarized away")
    assert compare_sent(log, run)[0].round is None


def test_a_damaged_llm_history_block_is_named_by_its_line():
    text = LLM.read_text(encoding="utf-8").splitlines()
    text[5] = "this line lost its role prefix"
    with pytest.raises(LogFileError) as error:
        parse_log("\n".join(text), "llm.history")
    assert str(error.value) == (
        "llm.history: line 6: a line of a TO LLM block must start with SYSTEM, USER or "
        "ASSISTANT (or be a '-------' separator)"
    )
    with pytest.raises(LogFileError, match=r"^x: line 3: LLM RESPONSE without a TO LLM"):
        parse_log(
            "TO LLM 2024-09-03T14:03:02\nLLM RESPONSE 2024-09-03T14:03:03\n"
            "LLM RESPONSE 2024-09-03T14:03:04\n",
            "x",
        )


def test_only_weak_model_calls_is_an_error():
    text = (
        "TO LLM 2024-09-03T14:03:10\n-------\n"
        "SYSTEM Generate a commit message for those changes.\n-------\nUSER diff\n"
        "LLM RESPONSE 2024-09-03T14:03:11\nASSISTANT fix: a thing\n"
    )
    with pytest.raises(LogFileError, match="no main-model call, only weak-model ones"):
        parse_log(text, "x")


def _call(*messages, reply):
    lines = ["TO LLM 2024-09-03T14:03:02"]
    for role, text in messages:
        lines += ["-------"] + [f"{role} {line}" for line in text.splitlines()]
    return lines + ["LLM RESPONSE 2024-09-03T14:03:09", f"ASSISTANT {reply}"]


def test_a_window_aider_rebuilt_mid_session_replaces_what_the_model_saw():
    # after an edit aider sends the file's new text: the window does not go on from
    # the one before, so the replay follows the rebuild rather than the old copy
    system, ok = ("SYSTEM", "Act as an expert."), ("ASSISTANT", "Ok.")
    text = "\n".join(
        _call(system, ("USER", "file: x = 1"), ok, ("USER", "Make x 2."), reply="Done.")
        + _call(
            system,
            ("USER", "file: x = 2"),
            ok,
            ("USER", "Make x 2."),
            ("ASSISTANT", "Done."),
            ("USER", "Now 3."),
            reply="Done again.",
        )
    )
    log = parse_log(text, "h.llm.history")
    assert log.rounds == 2
    assert [c.rebuilt for c in log.compactions] == [True, True]
    assert [m["content"] for m in log.compactions[1].replacement] == [
        "file: x = 2",
        "Ok.",
        "Make x 2.",
        "Done.",
    ]
    run = replay_transcript(log, Settings(threshold=10_000))
    windows = [
        [m["content"] for m in call["input"]]
        for call in run.tracer.events("model_call")
        if call["purpose"] == "decision"
    ]
    assert windows[1] == [
        "Act as an expert.",
        "file: x = 2",
        "Ok.",
        "Make x 2.",
        "Done.",
        "Now 3.",
    ]
