"""Chapter 9's exercises: at production scale, 1,000 tool calls."""

from . import EXERCISES, Exercise, alike

BUDGETS = (8_000, 4_000, 2_000)
UNBOUNDED_THRESHOLDS = range(32_000, 40_001, 1_000)


def _largest_summary_by_budget() -> tuple:
    from ..scale_view import scale_run

    return tuple(
        max(scale_run(1000, threshold=32_000, budget=budget).summary)
        for budget in BUDGETS
    )


def _first_threshold_the_unbounded_summary_survives() -> int:
    from ..scale_view import scale_run

    return next(
        t
        for t in UNBOUNDED_THRESHOLDS
        if scale_run(1000, threshold=t, bounded=False).overflow is None
    )


def _summaries_at_190k() -> tuple:
    from ..scale_view import scale_run

    run = scale_run(1000, threshold=190_000)
    return run.rounds, sum(1 for tokens in run.summary if tokens)


EXERCISES.update(
    {
        "9.1": Exercise(
            "(the largest summary at budgets 8,000, 4,000 and 2,000)",
            _largest_summary_by_budget,
            alike,
            "run `scale_run(1000, threshold=32_000, budget=b)` for each budget and "
            "take `max(run.summary)`: the whole summary message, its header included",
            "9.3",
        ),
        "9.2": Exercise(
            "the first threshold, in steps of 1,000 from 32,000, at which the "
            "unbounded summary gets through",
            _first_threshold_the_unbounded_summary_survives,
            alike,
            "with `bounded=False`, step up from 32,000 and stop at the first run whose "
            "`overflow` is None",
            "9.2",
        ),
        "9.3": Exercise(
            "(the rounds governed, the rounds with a summary in their window) at 190,000",
            _summaries_at_190k,
            alike,
            "read `run.rounds`, and count the rounds whose `summary` holds any "
            "tokens; then ask what aging alone leaves of a thousand results",
            "9.1",
        ),
    }
)
