"""What the scale tests share: a deterministic hypothesis profile, and a quick replay."""

from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

from minilib import Tracer, replay

# Hypothesis caches Unicode tables on disk: keep them in build/, not in the checkout.
set_hypothesis_home_dir(Path(__file__).resolve().parent.parent / "build" / "hypothesis")

# Derandomized and without an example database, so every run sees the same cases.
SCALE_PROFILE = settings(
    max_examples=40,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def quick_replay(conversation, window, tracer=None):
    """`replay` to the end of the session, without its per-round statistics.

    replay counts the whole window twice a round for GovernedRound; these tests do
    not read those numbers, and at 1,000 calls the counting would cost more than the
    window. len is a stand-in counter: the window keeps its own.
    """
    return replay(
        conversation,
        window,
        tracer=Tracer() if tracer is None else tracer,
        count_tokens=len,
        max_steps=None,
    )
