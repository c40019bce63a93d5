"""Property test: grounded runs keep the window's invariants, any path or aging rule.

At random thresholds (from far below the article's to past the uncompressed session)
each grounded run is read back from its trace by `check_grounded_trace`: every window
sent is within the threshold and has no call without its answer; a look-up round asks
for exactly the declared facts its window lacks, may still look up and holds a pointer
to, each fact at most once, each call traced in its own round and built by the rule
from that window; a scripted reply carries a marker exactly for the facts still
missing. `check_window_only` adds that no reply or look-up states a fact its window
does not hold. A run ends with the final reply or an overflow, within twice the
script's rounds.
"""

from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_grounded import check_grounded_trace, decisions
from test_grounded_window import check_window_only
from test_properties import PROFILE

from minilib.measure.grounding import session_grounding
from minilib.policies.registry import PATHS, default_facts, run_path
from minilib.session import load_session

SESSION = load_session()
GROUNDING = session_grounding(SESSION, tuple(default_facts()))
GROUNDED_PROFILE = settings(PROFILE, max_examples=100)


@GROUNDED_PROFILE
@given(
    st.sampled_from(sorted(PATHS)),
    st.one_of(st.integers(1, 1_000), st.integers(1_000, 2_500), st.integers(1, 20_000)),
    st.booleans(),
)
def test_grounded_runs_keep_the_windows_invariants(path, threshold, keep_unseen):
    run = run_path(path, threshold=threshold, grounded=True, keep_unseen=keep_unseen)
    grounding = GROUNDING.with_recall(path == "store")
    lookups, markers, final, _ = check_grounded_trace(
        run.tracer, grounding, SESSION.replies, threshold
    )
    check_window_only(run.tracer, grounding)
    outcome = run.grounded
    event("finished" if outcome.finished else "overflow")  # --hypothesis-show-statistics
    event(f"look-ups: {'none' if not lookups else 'some'}")
    assert outcome.finished == (run.overflow is None) == (final is not None)
    if run.overflow is not None:
        assert run.overflow.tokens > threshold and outcome.right == ()
    assert len(decisions(run.tracer)) <= 2 * len(SESSION.replies)
    assert outcome.lookup_calls == len(lookups) <= len(GROUNDING.texts)
    assert set(outcome.right) <= set(outcome.declared)
    assert list(outcome.unknown) == markers
