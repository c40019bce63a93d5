"""Chapter 08's costs section: the tables are the library's measurements."""

from minilib.lab.costs_view import (
    batching_frame,
    cache_rounds_frame,
    log_costs_frame,
    replay_costs,
)


def test_the_log_table_is_each_replays_report():
    frame = log_costs_frame(["m3_release_check.json", "coding_agent_fix.json"])
    for name in frame.index:
        report = replay_costs(name)[1].report()
        row = frame.loc[name]
        assert row["facts used"] == report["facts_used"]
        assert row["kept"] + row["restorable"] + row["lost"] == report["facts_used"]
        assert row["written again"] == report["cache_rewritten_tokens"]


def test_the_round_table_names_what_compressed_and_what_the_cache_did():
    run, costs = replay_costs("m3_release_check.json")
    frame = cache_rounds_frame("m3_release_check.json")
    assert list(frame.index) == [r.round for r in run.rounds]
    assert list(frame["tokens sent"]) == [r.tokens_after for r in run.rounds]
    assert (frame["reused"] + frame["written"]).tolist() == frame["tokens sent"].tolist()
    for round_, row in frame.iterrows():
        governed = run.rounds[round_]
        assert ("aging" in row["compressed by"]) == governed.aged
        assert ("summary" in row["compressed by"]) == governed.summarized
    # the article ages the newest result before it is ever sent whole: no rewrite
    aging_only = frame[frame["compressed by"] == "aging"]
    assert len(aging_only) > 0 and aging_only["written again"].sum() == 0


def test_batching_breaks_the_cache_less_often():
    frame = batching_frame(
        "generated session, 200 tool calls, 4 user turns",
        8_000,
        ("article-bounded", "article-batched"),
    )
    assert (
        frame.loc["article-batched", "cache breaks"]
        < frame.loc["article-bounded", "cache breaks"]
    )
