"""Chapter 8's exercises: six paths, one session."""

from functools import lru_cache

from . import EXERCISES, Exercise, alike

FACT = "num-argv-bytes"  # the planted fact "1,342,177 bytes"


@lru_cache(maxsize=1)
def _default_runs() -> dict:
    from ...policies import PATHS, run_path

    return {key: run_path(key) for key in PATHS}


def _where_the_byte_count_is() -> tuple:
    states = {key: run.final_states[FACT] for key, run in _default_runs().items()}
    verbatim = frozenset(key for key, state in states.items() if state == "kept")
    back = frozenset(key for key, state in states.items() if state == "recallable")
    return verbatim, back


def _hierarchical_past_rolling() -> tuple:
    from ...policies import run_path

    rolling = _default_runs()["rolling_summary"].final_count("kept")
    for key_lines in range(0, 13):
        run = run_path("hierarchical", key_lines)
        if run.final_count("kept") > rolling:
            return key_lines, run.extra_model_calls
    return None, None


def _store_with_no_protected_tail() -> tuple:
    from ...policies import run_path

    run = run_path("store", 0)
    return tuple(run.final_count(state) for state in ("kept", "recallable", "lost"))


EXERCISES.update(
    {
        "8.1": Exercise(
            "(the paths that show 1,342,177 bytes verbatim at the end, the paths that "
            "can give it back)",
            _where_the_byte_count_is,
            alike,
            "run every key of `PATHS` and read `final_states` for the fact's key; "
            "verbatim is the state `kept`, given back is `recallable` (an empty set "
            "is an answer)",
            "8.4",
        ),
        "8.2": Exercise(
            "(the smallest key_lines at which the hierarchical summary keeps more "
            "facts than the rolling one, its extra model calls there)",
            _hierarchical_past_rolling,
            alike,
            "compare `final_count('kept')` of `run_path('hierarchical', k)` for k "
            "from 0 with the rolling summary's, and read `extra_model_calls`",
            "8.4",
        ),
        "8.3": Exercise(
            "(facts kept verbatim, recallable, lost) by the store at protect_tail 0",
            _store_with_no_protected_tail,
            alike,
            "`run_path('store', 0)` and its `final_count` of each state",
            "8.5",
        ),
    }
)
