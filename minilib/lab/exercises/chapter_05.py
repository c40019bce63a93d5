"""Chapter 5's exercises: the state machine, one step at a time."""

from . import EXERCISES, Exercise, alike


def _session():
    from ...session import load_session

    return load_session()


def _rounds_through_the_summary() -> tuple:
    from ...session import Settings, run_session

    session = _session()
    return tuple(
        tuple(r.round for r in run_session(session, settings).rounds if r.summarized)
        for settings in (Settings(), Settings(threshold=900))
    )


def _what_aging_cuts_in_round_1() -> int:
    from ...session import Settings
    from ..stepper import round_walk

    walk = round_walk(_session(), Settings(), 1)
    aged = next(s for s in walk if s.state == "tool_result_aging")
    [index] = aged.compression.affected_indexes
    return index


def _what_round_9_folds_at_protect_tail_5() -> tuple:
    from ...session import Settings
    from ..stepper import round_walk

    walk = round_walk(_session(), Settings(protect_tail=5), 9)
    folded = next(s for s in walk if s.state == "rolling_summary")
    indexes = folded.compression.affected_indexes
    return min(indexes), max(indexes)


def _where_300_stops() -> tuple:
    from ...session import Settings, run_session

    run = run_session(_session(), Settings(threshold=300))
    return len(run.rounds), run.overflow.largest_index


def _three_strategies_at_300() -> tuple:
    from ...aging import ToolResultAging
    from ...loop import replay
    from ...model import ScriptedModel
    from ...policies import SlidingWindowTruncation
    from ...summary import RollingSummary
    from ...window import ContextWindow

    session = _session()
    model = ScriptedModel(session.replies)
    strategies = [
        ToolResultAging(),
        RollingSummary(model.summarize),
        SlidingWindowTruncation(2),
    ]
    run = replay(session.conversation(model), ContextWindow(300, strategies))
    dropped = sum(
        c.before_messages - c.after_messages
        for c in run.compressions
        if c.strategy == "sliding_window_truncation"
    )
    return run.overflow is not None, dropped


EXERCISES.update(
    {
        "5.1": Exercise(
            "(the rounds through the rolling summary at 1,200, at 900)",
            _rounds_through_the_summary,
            alike,
            "run the session at each threshold and keep the rounds whose "
            "`summarized` is true (`round_walk` shows the same state in each)",
            "5.4",
        ),
        "5.2": Exercise(
            "the index of the message aging cuts in round 1",
            _what_aging_cuts_in_round_1,
            alike,
            "step round 1 with `round_walk` and read the aging state's "
            "`compression.affected_indexes`: an index into the window, counted from 0",
            "5.2",
        ),
        "5.3": Exercise(
            "(the first and the last message the summary folds) in round 9 at "
            "protect_tail 5",
            _what_round_9_folds_at_protect_tail_5,
            alike,
            "the narrowing loop gives up the first candidate because a call in it is "
            "answered inside the protected tail; give the first and last index folded, "
            "not the half-open stop",
            "5.3",
        ),
        "5.4": Exercise(
            "(the round the run stops before at 300, the index of the largest message "
            "left)",
            _where_300_stops,
            alike,
            "a run that stops has as many rounds as it sent, and its `overflow` names "
            "the largest message left (`largest_index`)",
            "5.5",
        ),
        "5.5": Exercise(
            "(whether three strategies still overflow at 300, the messages truncation "
            "dropped in all)",
            _three_strategies_at_300,
            alike,
            "replay with all three strategies in order; add up `before_messages - "
            "after_messages` of the compressions truncation made",
            "5.1",
        ),
    }
)
