"""A log's defaults: `compress` and `replay_transcript` govern with the production window
(the bounded summary behind FastWindow, later user turns folded); the article's
pipeline is one flag or keyword away; the baseline is counted once, as far as the
replay went."""

import json
from pathlib import Path

import pytest
from message_builders import NOT_LOGS

from minilib.cli.main import main
from minilib.logs import load_transcript, replay_transcript
from minilib.logs.replay import (
    RecordedConversation,
    _joined,
    baseline_rounds,
    log_window,
    sent_stretches,
    with_output_ids,
)
from minilib.loop import replay
from minilib.scale import FastWindow, generate_history
from minilib.session import DATA_DIR, Baseline
from minilib.tokens import estimate_tokens
from minilib.window import Settings

LOGS = DATA_DIR / "logs"
TRANSCRIPTS = DATA_DIR / "transcripts"
# Where the article's unbounded summary, at a 32k window, becomes the largest message
# of the generated 1,000-call session and the replay stops.
ARTICLE_ROUNDS_AT_32K = 648


@pytest.fixture(scope="module")
def long_log(tmp_path_factory) -> Path:
    """A generated 1,000-call coding session, written as an OpenAI chat JSON file."""
    path = tmp_path_factory.mktemp("long") / "session.json"
    messages = list(generate_history(1000, seed=0).messages)
    path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return path


def compress(capsys, *args):
    status = main(["compress", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def last_round(report: str) -> int:
    rows = [line.split()[0] for line in report.splitlines() if line[:5].strip().isdigit()]
    return int(rows[-1])


def test_compress_completes_a_1000_call_log_at_32k_by_default(long_log, tmp_path, capsys):
    status, out, err = compress(capsys, long_log, "--threshold", 32000, "--out", tmp_path)
    assert status == 0, err
    assert (
        "window: production (aging, then a summary bounded to 8,000 tokens, behind "
        "FastWindow); later user turns and the system messages between them folded, "
        "quoted whole"
    ) in out.splitlines()
    assert last_round(out) == 752  # every assistant message of the log
    written = json.loads((tmp_path / "rounds.json").read_text(encoding="utf-8"))
    assert (written["window"], written["summary_budget"]) == ("production", 8000)


def test_compress_article_stops_a_1000_call_log_at_32k_where_it_always_did(
    long_log, tmp_path, capsys
):
    status, out, err = compress(
        capsys, long_log, "--threshold", 32000, "--article", "--out", tmp_path
    )
    assert status == 1
    assert "window: the article's pipeline (aging, then the unbounded summary)" in out
    assert last_round(out) == ARTICLE_ROUNDS_AT_32K - 1
    assert "Largest message left: #2 (user, 31,217 tokens)" in err


def test_a_codex_log_completes_without_fold_user_turns(tmp_path, capsys):
    log = LOGS / "codex_rollout.jsonl"
    assert sum(m["role"] == "user" for m in load_transcript(log).messages) >= 2
    status, out, err = compress(capsys, log, "--threshold", 500, "--out", tmp_path)
    assert status == 0, err
    status, out, err = compress(
        capsys, log, "--threshold", 500, "--article", "--out", tmp_path
    )
    assert status == 1 and "With --fold-user-turns" in err
    status, out, err = compress(
        capsys, log, "--threshold", 500, "--no-fold-user-turns", "--out", tmp_path
    )
    assert status == 1 and "later user turns not folded" in out


def multi_turn_session(turns: int) -> list:
    """A generated session with a person's turn before every few rounds, as a Codex or
    Claude Code session has."""
    messages = list(generate_history(120, seed=3).messages)
    replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    every = len(replies) // turns
    for number, index in reversed(list(enumerate(replies[every::every][: turns - 1]))):
        turn = f"turn {number + 2}: now check the next module, and keep the tests green"
        messages.insert(index, {"role": "user", "content": turn})
    return messages


def test_a_session_of_12_user_turns_completes_without_fold_user_turns(tmp_path, capsys):
    messages = multi_turn_session(12)
    assert sum(m["role"] == "user" for m in messages) == 12
    log = tmp_path / "turns.json"
    log.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    status, out, err = compress(capsys, log, "--threshold", 2000, "--out", tmp_path)
    assert status == 0, err
    assert last_round(out) == sum(m["role"] == "assistant" for m in messages) - 1
    status, out, err = compress(
        capsys, log, "--threshold", 2000, "--article", "--out", tmp_path
    )
    assert status == 1 and "the article's rule stopped it" in err


def test_the_defaults_are_the_production_window_folding_user_turns():
    messages = list(generate_history(10, seed=1).messages)
    run = replay_transcript(messages)
    assert run.window == "production" and run.settings == Settings(fold_user_turns=True)
    assert run.summary_budget == 320  # default_summary_budget(1200)
    article = replay_transcript(messages, window="article")
    assert article.settings == Settings() and article.summary_budget is None
    with pytest.raises(ValueError, match="window must be one of production, article"):
        replay_transcript(messages, window="fast")
    with pytest.raises(ValueError, match="summary_budget is the production window's"):
        replay_transcript(messages, window="article", summary_budget=400)


def test_the_help_names_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["compress", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    for default in (
        "By default through the production window",
        "a rolling summary bounded to a quarter of the threshold (at least 320 tokens), "
        "behind FastWindow, with later user turns folded (quoted whole)",
        "--article replays the article's exact pipeline",
        "default: on in the production window, off with --article",
    ):
        assert default in said


def test_summary_budget_is_the_production_windows(tmp_path, capsys):
    log = LOGS / "codex_rollout.jsonl"
    status, out, _ = compress(
        capsys, log, "--threshold", 2000, "--summary-budget", 64, "--out", tmp_path
    )
    assert status == 0 and "a summary bounded to 64 tokens" in out
    status, _, err = compress(
        capsys, log, "--article", "--summary-budget", 64, "--out", tmp_path
    )
    assert status == 2 and "--summary-budget is the production window's" in err


def bundled_logs():
    for path in sorted([*LOGS.rglob("*"), *TRANSCRIPTS.iterdir()]):
        if path.is_dir():
            continue
        if path.name in NOT_LOGS:  # not readable logs
            continue
        yield path


def full_recount(log, follow_compactions: bool) -> Baseline:
    """The baseline as it was counted before: an uncompressed replay that counts the
    whole list every round, to the end of the log."""
    messages = with_output_ids(log.messages)
    if follow_compactions:
        return Baseline.of(
            _joined(sent_stretches(messages, log.compactions), None, estimate_tokens)
        )
    return Baseline.of(replay(RecordedConversation(messages), None, max_steps=None))


@pytest.mark.parametrize("path", list(bundled_logs()), ids=lambda path: path.name)
def test_the_baseline_is_the_full_recount_for_every_round_that_ran(path):
    log = load_transcript(path)
    for follow in {False, bool(log.compactions)}:
        old = full_recount(log, follow)
        for window in ("production", "article"):
            for threshold in (400, 900, 100_000):
                run = replay_transcript(
                    log,
                    Settings(threshold=threshold),
                    window=window,
                    full_history=not follow and bool(log.compactions),
                )
                ran = len(run.rounds)
                assert [r.baseline_tokens for r in run.rounds] == list(old.tokens[:ran])
                assert [r.baseline_messages for r in run.rounds] == list(
                    old.messages[:ran]
                )


def test_the_baseline_stops_where_the_replay_stopped_and_recounts_an_unknown_counter():
    messages = with_output_ids(list(generate_history(30, seed=2).messages))
    whole = baseline_rounds([(messages, 0)], 10_000)
    first = baseline_rounds([(messages, 0)], 5)
    assert first.tokens == whole.tokens[:5] and first.messages == whole.messages[:5]

    def with_a_list_overhead(window):  # not a sum over messages: counted whole
        return estimate_tokens(window) + 3

    other = baseline_rounds([(messages, 0)], 10_000, with_a_list_overhead)
    assert other.tokens == tuple(tokens + 3 for tokens in whole.tokens)


def test_the_production_window_is_the_bounded_one_behind_fast_window():
    window, budget = log_window("production", Settings(threshold=32000))
    assert isinstance(window, FastWindow) and budget == 8000
    assert window.window.strategies[1].summarize.budget_tokens == budget
    article, none = log_window("article", Settings(threshold=32000))
    assert not isinstance(article, FastWindow) and none is None
