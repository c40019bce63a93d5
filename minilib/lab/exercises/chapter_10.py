"""Chapter 10's exercises: what production agents do, on a long session."""

from functools import lru_cache

from . import EXERCISES, Exercise, alike

TEN_TURNS = "generated session, 1,000 tool calls, 10 user turns"
ONE_TASK = "generated session, 1,000 tool calls, one task"


@lru_cache(maxsize=2)
def _runs(name: str):
    from ..log_runs import LogRuns, log_messages

    return LogRuns(log_messages(name))


def _swe_agent_rounds_by_n() -> tuple:
    runs = _runs(TEN_TURNS)
    return tuple(runs.row("swe-agent-last-n", 32_000, n)["rounds"] for n in (3, 2, 1))


def _clear_at_least_changes() -> tuple:
    from ...policies.production.compare import measure_policy

    runs = _runs(TEN_TURNS)
    default = runs.row("anthropic-clear-tool-uses", 200_000)
    batched = measure_policy(
        runs.messages,
        "anthropic-clear-tool-uses",
        200_000,
        used=runs.used,
        clear_at_least=20_000,
    )
    return tuple(batched[key] - default[key] for key in ("tokens_sent", "cache_breaks"))


def _gemini_on_one_task() -> int:
    return _runs(ONE_TASK).row("gemini-cli", 200_000)["rounds"]


EXERCISES.update(
    {
        "10.1": Exercise(
            "(the rounds SWE-agent reaches at 32,000 with n = 3, 2, 1)",
            _swe_agent_rounds_by_n,
            alike,
            "`runs.row('swe-agent-last-n', 32_000, n)['rounds']` for each n, in "
            "that order",
            "10.2",
        ),
        "10.2": Exercise(
            "(tokens sent, cache breaks) with clear_at_least 20,000 less the default's",
            _clear_at_least_changes,
            alike,
            "run `measure_policy` with the setting and subtract the default row's "
            "`tokens_sent` and `cache_breaks`; the API looks at the whole request "
            "every call",
            "10.1",
        ),
        "10.3": Exercise(
            "the rounds Gemini CLI reaches at 200,000 on the one-task session",
            _gemini_on_one_task,
            alike,
            "`log_runs` (or `LogRuns(log_messages(name))`) of the one-task session, "
            "then its row for `gemini-cli` at 200,000",
            "10.1",
        ),
    }
)
