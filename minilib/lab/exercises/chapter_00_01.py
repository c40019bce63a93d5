"""Chapters 0 and 1's exercises: the article's session, whole and compressed."""

from . import EXERCISES, Exercise, exact, share_within
from . import article_runs as _runs


def _aging_and_summary_at_2000() -> tuple:
    session, _, run_session, settings = _runs()
    run = run_session(session, settings(threshold=2000))
    return (
        sum(1 for r in run.rounds if r.aged),
        sum(1 for r in run.rounds if r.summarized),
    )


def _failed_call() -> tuple:
    _, baseline, _, _ = _runs()
    failed = next(m for m in baseline.final_messages if m.get("error"))
    return failed["tool_call_id"], failed["error"]["code"]


def _final_list() -> tuple:
    session, _, run_session, settings = _runs()
    run = run_session(session, settings())
    return run.final_tokens, len(run.final_messages)


def _message_tokens() -> list:
    from ...tokens import estimate_message_tokens

    _, baseline, _, _ = _runs()
    return [estimate_message_tokens(m) for m in baseline.final_messages]


def _largest_message() -> tuple:
    tokens = _message_tokens()
    largest = max(range(len(tokens)), key=tokens.__getitem__)
    return largest, tokens[largest] / sum(tokens)


def _first_round_over_16k() -> int:
    _, baseline, _, _ = _runs()
    return next(r for r, tokens in enumerate(baseline.tokens) if tokens > 16_000)


def _truncation_keeps() -> tuple:
    """(recent messages path 1 keeps within 1,200 tokens, tool results it drops)."""
    _, baseline, _, _ = _runs()
    tokens, messages = _message_tokens(), baseline.final_messages
    total, kept = sum(tokens[:2]), 0
    for size in reversed(tokens[2:]):
        if total + size > 1200:
            break
        total, kept = total + size, kept + 1
    gone = messages[2 : len(messages) - kept]
    return kept, sum(1 for m in gone if m["role"] == "tool")


EXERCISES.update(
    {
        "0.1": Exercise(
            "(rounds with aging, rounds with the summary) at a threshold of 2,000",
            _aging_and_summary_at_2000,
            exact,
            "count the rounds of `run_session(session, Settings(threshold=2000))` "
            "whose `aged` and whose `summarized` are true",
            "0.4",
        ),
        "0.2": Exercise(
            "(the failed call's id, its error code)",
            _failed_call,
            exact,
            "look for the final message that has an `error` dict; the id is its "
            "`tool_call_id`, the code its `error['code']`",
            "0.4",
        ),
        "0.3": Exercise(
            "(the final list's tokens, its messages) at the default settings",
            _final_list,
            exact,
            "the final list is the run's `final_messages`, counted in `final_tokens`: "
            "the last window sent plus the answer no round sends",
            "0.4",
        ),
        "1.1": Exercise(
            "(the largest message's number, its share of the list's tokens)",
            _largest_message,
            share_within(0.01),
            "count each final message with `estimate_message_tokens`; the share is "
            "the largest over the sum of all of them, as a fraction (0.5 is half)",
            "1.2",
        ),
        "1.2": Exercise(
            "the first round whose window is over 16,000 tokens",
            _first_round_over_16k,
            exact,
            "`run_baseline(session).tokens[r]` is round r's window: find the first "
            "over 16,000 (rounds count from 0)",
            "1.1",
        ),
        "1.3": Exercise(
            "(recent messages kept, tool results dropped) by path 1 at 1,200 tokens",
            _truncation_keeps,
            exact,
            "start from the system prompt and the task, add messages from the newest "
            "back, and stop at the first that does not fit: do not skip it",
            "1.4",
        ),
    }
)
