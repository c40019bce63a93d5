"""Chapter 11's exercises: what a session cost, and what it would have cost."""

from functools import lru_cache

from . import EXERCISES, Exercise, exact, within

# Chapter 11: the session and sweep the chapter works on.
BILL_LOG = "entire-98-78b713483d-0.jsonl"
BILL_THRESHOLDS = tuple(range(100_000, 190_001, 10_000))


@lru_cache(maxsize=1)
def chapter_11_sweep():
    from ...session import DATA_DIR
    from ..bill_view import session_sweep

    path = DATA_DIR / "real" / "claude-code" / BILL_LOG
    return session_sweep(path, "claude-code", BILL_THRESHOLDS)


def _cache_read_dollars() -> float:
    from ...logs import load_log
    from ...measure.bill import record_bill
    from ...session import DATA_DIR

    log = load_log(DATA_DIR / "real" / "claude-code" / BILL_LOG)
    return record_bill(log).usd_by_kind()["cache_read"]


EXERCISES.update(
    {
        "11.1": Exercise(
            "the dollars the session's cache reads cost, to the cent",
            _cache_read_dollars,
            within(0.005),
            "sum the cache-read dollars of every call the record prices "
            "(`record_bill(...).usd_by_kind()`), not its cache-read tokens",
            "11.2",
        ),
        "11.2": Exercise(
            "the swept threshold at which the session is cheapest",
            lambda: chapter_11_sweep().cheapest.threshold,
            exact,
            "a lower threshold compacts more often, but each compaction shrinks "
            "every call after it: compare the bills of the whole sweep, "
            "`min(sweep.points, key=...)`",
            "11.4",
        ),
        "11.3": Exercise(
            "how many more facts the cheapest threshold loses than 160,000 does",
            lambda: (
                chapter_11_sweep().cheapest.facts_lost
                - chapter_11_sweep().at(160_000).facts_lost
            ),
            exact,
            "the facts lost are those the agent used after they left every window: "
            "read them off the two points (`sweep.at(threshold).facts_lost`) and "
            "subtract",
            "11.4",
        ),
    }
)
