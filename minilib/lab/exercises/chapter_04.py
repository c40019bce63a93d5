"""Chapter 4's exercises: the rolling summary."""

from . import EXERCISES, Exercise, alike


def _round_9_after_aging():
    """(the session, round 9's window after aging): the window the chapter folds."""
    from ...aging import ToolResultAging
    from ...session import Settings, load_session, window_before_round

    session = load_session()
    messages, _ = window_before_round(session, Settings(), 9)
    return session, ToolResultAging().compress(messages).messages


def _range_and_result_at_protect_tail_5() -> tuple:
    from ...model import ScriptedModel
    from ...ranges import closed_range
    from ...summary import RollingSummary
    from ...tokens import estimate_tokens

    session, after_aging = _round_9_after_aging()
    span = closed_range(after_aging, protect_tail=5)
    summary = RollingSummary(ScriptedModel(session.replies).summarize, protect_tail=5)
    folded = summary.compress(after_aging).messages
    return span.start, span.stop, len(folded), estimate_tokens(folded)


def _parallel_range_at_protect_tail_2() -> tuple:
    from ...ranges import closed_range
    from ..explore import parallel_calls_example

    messages = parallel_calls_example()
    span = closed_range(messages, protect_tail=2)
    together = next(
        i for i, m in enumerate(messages) if len(m.get("tool_calls") or ()) > 1
    )
    calls = len(messages[together]["tool_calls"])
    return span.stop, set(range(together, together + calls + 1)) <= set(span)


def _where_the_build_number_was() -> tuple:
    from ...session import Settings, load_session, run_session, window_before_round

    def holds(window) -> bool:
        return any("#412" in (m.get("content") or "") for m in window)

    session = load_session()
    run = run_session(session, Settings())
    rounds = tuple(
        call["step"]
        for call in run.tracer.events("model_call")
        if call["purpose"] == "decision" and holds(call["input"])
    )
    messages, window = window_before_round(session, Settings(), 9)
    states = [s for s in window.walk(messages, 9) if s.state != "measure"]
    removed_by = next(
        after.state
        for before, after in zip(states, states[1:])
        if holds(before.messages) and not holds(after.messages)
    )
    return rounds, removed_by


def _headline_summary_rules(answer, expected) -> bool:
    """A strategy class (or one made) that keeps every rule of the window, replaces
    `closed_range(messages, 4)` with one summary message holding the assistant's
    actions and no tool result, and sends fewer tokens than the rolling summary."""
    from ...markers import SUMMARY_MARK
    from ...policies import check_strategy
    from ...ranges import closed_range
    from ...tokens import estimate_tokens

    rolling_tokens, after_aging = expected
    try:
        strategy = answer() if isinstance(answer, type) else answer
        if check_strategy(strategy, [after_aging]):
            return False
        folded = strategy.compress(after_aging).messages
    except Exception:  # the student's class raised: not yet right
        return False
    span = closed_range(after_aging, 4)
    if len(folded) != len(after_aging) - len(span) + 1:
        return False
    summary = folded[span.start].get("content") or ""
    results = [m for m in after_aging[span.start : span.stop] if m["role"] == "tool"]
    return (
        summary.startswith(SUMMARY_MARK)
        and not any((m.get("content") or "").splitlines()[0] in summary for m in results)
        and estimate_tokens(folded) < rolling_tokens
    )


def _rolling_tokens_and_window() -> tuple:
    from ...model import ScriptedModel
    from ...summary import RollingSummary
    from ...tokens import estimate_tokens

    session, after_aging = _round_9_after_aging()
    rolling = RollingSummary(ScriptedModel(session.replies).summarize, protect_tail=4)
    return estimate_tokens(rolling.compress(after_aging).messages), after_aging


class HeadlineSummary:
    """A right answer to 4.4: the assistant's actions, one line each, no result."""

    name = "headline_summary"

    def compress(self, messages):
        from ...markers import SUMMARY_MARK
        from ...ranges import closed_range
        from ...strategy import CompressionResult

        span = closed_range(messages, 4)
        if not span:
            return CompressionResult(self.name, list(messages), [])
        actions = [
            f"- {m['content']}"
            for m in messages[span.start : span.stop]
            if m["role"] == "assistant"
        ]
        text = f"{SUMMARY_MARK} 折叠了 {len(span)} 条早期消息\n" + "\n".join(actions)
        summary = {"role": "user", "content": text}
        kept = list(messages[: span.start]) + [summary] + list(messages[span.stop :])
        return CompressionResult(self.name, kept, list(span))


EXERCISES.update(
    {
        "4.1": Exercise(
            "(the range's start, its stop, the messages after the summary, their "
            "tokens) at protect_tail 5",
            _range_and_result_at_protect_tail_5,
            alike,
            "ranges are half-open: the stop is the first message left out; the "
            "protected tail of 5 keeps a result whose call then cannot be folded "
            "either; count the window the summary returns with `estimate_tokens`",
            "4.3",
        ),
        "4.2": Exercise(
            "(where the range ends, whether the two-call message and both its results "
            "are in it) at protect_tail 2",
            _parallel_range_at_protect_tail_2,
            alike,
            "run `closed_range(parallel, protect_tail=2)`: its stop is the first "
            "message it leaves out; then look for the message with two calls and the "
            "two results after it",
            "4.4",
        ),
        "4.3": Exercise(
            "(the rounds whose window held #412, the step of round 9 that removed it)",
            _where_the_build_number_was,
            alike,
            "look in every decision call's `input` for the text, and walk round 9 "
            "state by state: the step is named as the walk names it",
            "4.5",
        ),
        "4.4": Exercise(
            "a summary strategy that keeps the actions and no result, and saves more "
            "than the rolling summary",
            _rolling_tokens_and_window,
            _headline_summary_rules,
            "pass the class (or one made); it must fold exactly `closed_range(messages, "
            "4)` into one message that starts with `SUMMARY_MARK`, quote no result's "
            "first line, and pass `check_strategy`",
            "4.3",
            lambda: HeadlineSummary,
        ),
    }
)
