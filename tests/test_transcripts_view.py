"""Notebook 07's views: a round aging and summarizing shows both markers, as computed;
the cut list has every output of the log, by its place, and what became of it."""

from minilib import Settings
from minilib.lab.figures import MARKER_OFFSET
from minilib.lab.transcripts_view import (
    CUT_COLUMNS,
    NOT_REACHED,
    transcript_baseline,
    transcript_figure,
    what_was_cut,
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


def test_what_was_cut_lists_every_output_by_its_place_in_the_log():
    messages = load_transcript(TRANSCRIPTS / "cjk_refactor.jsonl").messages
    run = replay_transcript(messages, Settings(threshold=500))  # stops in round 2
    assert run.overflow is not None
    cut = what_was_cut(run, messages)
    assert list(cut.index) == [i for i, m in enumerate(messages) if m["role"] == "tool"]
    stopped_at = [i for i, m in enumerate(messages) if m["role"] == "assistant"][
        len(run.rounds)
    ]
    late = cut[cut.index > stopped_at]
    assert set(late["fate"]) == {NOT_REACHED} and not late["recoverable"].any()
    early = cut[cut.index < stopped_at]
    assert NOT_REACHED not in set(early["fate"]) and early["recoverable"].all()
    kept = [m for m in run.final_messages if m["role"] == "tool"]
    assert len(early[early["fate"].isin(["verbatim", "aged"])]) == len(kept)


def test_what_was_cut_of_a_log_without_outputs_is_an_empty_table():
    messages = [
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Hello."},
    ]
    cut = what_was_cut(replay_transcript(messages), messages)
    assert cut.empty and list(cut.columns) == CUT_COLUMNS


def test_a_long_log_gets_a_round_axis_whose_labels_fit_its_panel():
    """Chapter 7 draws logs of 66 and 146 rounds: a label for every round smeared into
    one grey band. The axis labels every round of a short session and as many as fit
    a panel of a long one."""
    from types import SimpleNamespace

    from minilib.lab.figures import round_axis
    from minilib.lab.style import ROUND_PANEL_WIDTH

    def axis(rounds):
        return round_axis(SimpleNamespace(tokens=[0] * rounds), 1)

    assert axis(14)["dtick"] == 1  # the article's session: every round
    for rounds in (66, 146, 753):
        step = axis(rounds)["dtick"]
        labels = rounds // step + 1
        widest = len(str(rounds - 1)) * 12 * 0.55  # plotly's 12 px digits
        assert labels * widest < ROUND_PANEL_WIDTH, (rounds, step)
        assert 5 <= labels <= 20, (rounds, step)  # still a scale to read rounds from


def test_a_long_logs_lines_have_no_marker_per_round_and_keep_their_marks():
    """A marker per round while the rounds are a marker apart in the narrowest panel;
    a longer log's lines are plain lines (its markers would merge), and its aging,
    summary and overflow marks stay markers."""
    from minilib.lab.figures import per_round_markers
    from minilib.lab.style import ROUND_MARKER_SPACING, ROUND_PANEL_WIDTH
    from minilib.scale.histories import generate_history

    lines = ("baseline", "compressed", "baseline messages", "compressed messages")
    short = load_transcript(TRANSCRIPTS / "coding_agent_fix.json").messages
    messages = list(generate_history(60).messages)
    for log, expected in ((short, "lines+markers"), (messages, "lines")):
        run = replay_transcript(log, Settings(threshold=4000))
        figure = transcript_figure(run, log)
        rounds = len(figure.data[0].x)
        assert per_round_markers(rounds) == (expected == "lines+markers")
        modes = {t.name: t.mode for t in figure.data}
        assert {modes[name] for name in lines} == {expected}, rounds
        assert {modes[name] for name in ("aging", "summary", "overflow")} == {"markers"}
    limit = ROUND_PANEL_WIDTH // ROUND_MARKER_SPACING
    assert per_round_markers(limit) and not per_round_markers(limit + 1)


def test_a_long_logs_token_panel_is_on_a_log_scale_and_says_so():
    """Against a long log's uncompressed windows the compressed line lay flat on a linear
    axis; past LOG_SCALE_RATIO the panel is on a log scale, labelled within its range."""
    from minilib.lab.style import LOG_SCALE_RATIO
    from minilib.scale.histories import generate_history

    messages = list(generate_history(120).messages)
    run = replay_transcript(messages, Settings(threshold=4_000))  # production window
    largest = max(transcript_baseline(messages).tokens)
    assert largest > LOG_SCALE_RATIO * max(r.tokens_after for r in run.rounds)
    axis = transcript_figure(run, messages).layout.yaxis
    assert axis.type == "log" and axis.title.text == "tokens (estimate, log scale)"
    low, high = (10**end for end in axis.range)
    assert axis.tickvals and all(low <= tick <= high for tick in axis.tickvals)
    assert max(axis.tickvals) * 2.5 >= largest  # a label near the top of the data
    # a short log stays linear
    short = load_transcript(TRANSCRIPTS / "coding_agent_fix.json").messages
    short_run = replay_transcript(short, Settings(threshold=1_200), window="article")
    assert transcript_figure(short_run, short).layout.yaxis.type in (None, "linear")


def test_a_share_saved_never_rounds_up_to_all_of_it():
    from minilib.reports.rounds import saved_percent

    assert saved_percent(1 - 1_813 / 480_715) == "99.6%"
    assert saved_percent(0.96) == "96%" and saved_percent(1.0) == "100%"
