"""Chapter 6's exercises: the long-session lab."""

from . import EXERCISES, Exercise, exact
from . import article_runs as _runs


def _smallest_threshold_that_finishes() -> int:
    from ..dashboard import SLIDERS

    session, _, run_session, settings = _runs()
    spec = next(spec for spec in SLIDERS if spec.name == "threshold")
    grid = range(spec.minimum, spec.maximum + 1, spec.step)
    return next(
        t for t in grid if run_session(session, settings(threshold=t)).overflow is None
    )


def _round_1_without_head_or_tail() -> int:
    session, _, run_session, settings = _runs()
    return (
        run_session(session, settings(head_chars=0, tail_chars=0)).rounds[1].tokens_after
    )


def _where_min_chars_5000_stops() -> int:
    session, _, run_session, settings = _runs()
    return len(run_session(session, settings(min_chars=5000)).rounds)


def _summaries_by_protected_tail() -> tuple:
    session, _, run_session, settings = _runs()
    return tuple(
        sum(r.summarized for r in run_session(session, settings(protect_tail=t)).rounds)
        for t in (0, 4, 8)
    )


EXERCISES.update(
    {
        "6.1": Exercise(
            "the smallest threshold on the slider's grid that runs to the end",
            _smallest_threshold_that_finishes,
            exact,
            "step the threshold up the slider's grid from its minimum and stop at "
            "the first run whose `overflow` is None",
            "6.5",
        ),
        "6.2": Exercise(
            "the tokens round 1 sends with head_chars and tail_chars at 0",
            _round_1_without_head_or_tail,
            exact,
            "read `rounds[1].tokens_after` of that run: what was sent, not the "
            "window before compression",
            "6.3",
        ),
        "6.3": Exercise(
            "the round before which the run with min_chars 5,000 stops",
            _where_min_chars_5000_stops,
            exact,
            "a run that stops has as many rounds as it sent: `len(run.rounds)`",
            "6.5",
        ),
        "6.4": Exercise(
            "(rounds with a summary at protect_tail 0, 4, 8)",
            _summaries_by_protected_tail,
            exact,
            "count the rounds whose `summarized` is true in each of the three runs",
            "6.3",
        ),
    }
)
