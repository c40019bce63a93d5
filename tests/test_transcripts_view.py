"""Notebook 07's figure: a round aging and summarizing shows both markers, as computed."""

from minilib.lab.figures import MARKER_OFFSET
from minilib.lab.transcripts_view import (
    transcript_figure,
)
from minilib.logs import load_transcript, replay_transcript
from minilib.session import DATA_DIR

TRANSCRIPTS = DATA_DIR / "transcripts"


def markers(figure, name):
    trace = next(t for t in figure.data if t.name == name)
    return list(trace.x), list(trace.y), list(trace.text or ())


def test_aging_and_summary_of_one_round_are_drawn_side_by_side():
    messages = load_transcript(TRANSCRIPTS / "coding_agent_fix.json").messages
    run = replay_transcript(messages)
    figure = transcript_figure(run, messages)
    aged = [r for r in run.rounds if r.aged]
    summarized = [r for r in run.rounds if r.summarized]
    both = {r.round for r in aged if r.summarized}
    assert both, "the transcript has a round that does both (round 8)"
    x, y, text = markers(figure, "aging")
    aged_to = [
        c.after_tokens for c in run.compressions if c.strategy == "tool_result_aging"
    ]
    assert y == aged_to and text == [str(r.round) for r in aged]
    # in the round that does both, the triangle is above the star: aging, then the fold
    (round_both,) = both
    assert y[[r.round for r in aged].index(round_both)] > next(
        r.tokens_after for r in summarized if r.round == round_both
    )
    assert x == [r.round - MARKER_OFFSET if r.round in both else r.round for r in aged]
    x, y, text = markers(figure, "summary")
    assert y == [r.tokens_after for r in summarized]
    assert x == [
        r.round + MARKER_OFFSET if r.round in both else r.round for r in summarized
    ]
    aging = next(t for t in figure.data if t.name == "aging")
    assert "round %{text}" in aging.hovertemplate and "%{x}" not in aging.hovertemplate
    assert markers(figure, "aging")[0] == [
        r.round - MARKER_OFFSET if r.round in both else r.round for r in aged
    ]


def test_markers_of_different_rounds_stay_on_their_round():
    messages = load_transcript(TRANSCRIPTS / "cjk_refactor.jsonl").messages
    run = replay_transcript(messages)
    figure = transcript_figure(run, messages)
    both = {r.round for r in run.rounds if r.aged and r.summarized}
    assert markers(figure, "aging")[0] == [
        r.round - MARKER_OFFSET if r.round in both else r.round
        for r in run.rounds
        if r.aged
    ]
    assert markers(figure, "summary")[0] == [
        r.round + MARKER_OFFSET if r.round in both else r.round
        for r in run.rounds
        if r.summarized
    ]
