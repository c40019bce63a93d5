"""The bill from a log's recorded usage: each call once, its counts as the provider
bills them, priced by the pinned price data; the same total as the peers that price
the same logs (ccusage on Claude Code's, pi's own price on pi's)."""

import json

import pytest

from minilib.cli.main import main
from minilib.logs import load_log
from minilib.measure import prices
from minilib.measure.bill import KINDS, price_counts, record_bill
from minilib.session import DATA_DIR

pytest.importorskip("genai_prices", reason="pricing needs genai-prices (Python 3.11+)")

LOGS = DATA_DIR / "logs"
REAL = DATA_DIR / "real"
PEERS = [
    row
    for row in json.loads((DATA_DIR / "peers" / "cost_peers.json").read_text())
    if "peer_usd" in row  # a log no peer prices (Codex's, Gemini's) is not here
]


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("peer", PEERS, ids=lambda p: p["log"].split("/")[-1])
def test_the_bill_from_the_record_is_the_peers_to_the_cent(peer):
    """The peers' totals were recorded by scripts/check_cost_peers.py, which ran
    ccusage itself (and read pi's own prices): the lab's bill must stay on them."""
    bill = record_bill(load_log(DATA_DIR.parent / peer["log"]))
    assert len(bill.calls) == peer["calls"] and not bill.unpriced
    # where they differed, the script found why: ccusage reads no line written with
    # spaces in its JSON, and agrees on a compact copy of the same lines
    expected = peer.get("peer_compact_usd", peer["peer_usd"])
    assert bill.total_usd == pytest.approx(expected, abs=0.005)


def test_pi_prices_every_call_as_the_lab_does():
    bill = record_bill(load_log(REAL / "pi" / "pi-mono-opus-4-5-two-compactions.jsonl"))
    for call in bill.calls:
        assert call.usd == pytest.approx(call.own_usd, abs=1e-9), call.key


def test_a_streamed_response_is_one_call_counted_from_its_last_line(tmp_path):
    """Claude Code writes a response's blocks as lines sharing one message id; only
    the last line holds its whole output (reading the first undercounts output)."""
    records = _lines(LOGS / "claude_code_session.jsonl")
    lines_of_first = [r for r in records if r.get("message", {}).get("id") == "msg_01"]
    assert len(lines_of_first) > 1
    lines_of_first[-1]["message"]["usage"]["output_tokens"] = 400
    log = load_log(_write(tmp_path / "streamed.jsonl", records))
    first = [call for call in log.billed if call.key == "msg_01"]
    assert len(first) == 1 and first[0].output == 400
    assert len(log.billed) == len(
        {r["message"]["id"] for r in records if "usage" in r.get("message", {})}
    )


def test_cache_writes_split_by_time_to_live_where_the_usage_splits_them(tmp_path):
    records = _lines(LOGS / "claude_code_session.jsonl")
    for record in records:
        usage = record.get("message", {}).get("usage")
        if usage and usage["cache_creation_input_tokens"]:
            written = usage["cache_creation_input_tokens"]
            usage["cache_creation"] = {
                "ephemeral_5m_input_tokens": written - min(written, 1000),
                "ephemeral_1h_input_tokens": min(written, 1000),
            }
    log = load_log(_write(tmp_path / "split.jsonl", records))
    written = [c for c in log.billed if c.cache_write_1h]
    assert written and all(
        c.cache_write_1h == min(1000, c.cache_write_1h + c.cache_write_5m)
        for c in written
    )
    plain = load_log(LOGS / "claude_code_session.jsonl")
    assert [c.prompt for c in log.billed] == [c.prompt for c in plain.billed]
    # a 1-hour write costs 2x the input price, a 5-minute one 1.25x
    assert record_bill(log).total_usd > record_bill(plain).total_usd


def test_a_subagents_calls_are_billed_but_are_not_the_conversations():
    log = load_log(
        REAL
        / "claude-code"
        / "claude-code-viewer-v1.0.98-sonnet-4-todo-app-subagents.jsonl"
    )
    outside = [c for c in log.billed if c.message is None]
    assert len(log.billed) == 170 and len(outside) == 161  # the file's distinct ids
    assert len(log.usage) == 170 - 161


def test_openai_cached_input_is_part_of_the_input_not_added_to_it():
    log = load_log(LOGS / "codex_rollout.jsonl")
    assert [c.prompt for c in log.billed] == [u.input_tokens for u in log.usage]
    assert any(c.cache_read for c in log.billed)
    assert all(c.cache_write_5m == c.cache_write_1h == 0 for c in log.billed)


def test_a_request_over_200k_pays_the_long_context_price_for_every_token():
    below = dict.fromkeys(KINDS, 0) | {"input": 200_000}
    above = dict.fromkeys(KINDS, 0) | {"input": 200_001}
    cheap = price_counts("claude-sonnet-4-5", "anthropic", below)
    dear = price_counts("claude-sonnet-4-5", "anthropic", above)
    assert not cheap.tiered and dear.tiered
    assert dear.usd / cheap.usd == pytest.approx(2.0, rel=1e-4)  # $6 not $3 a million
    # the kinds of a tiered call add up to its price
    mixed = dict(
        input=10, cache_read=240_000, cache_write_5m=5_000, cache_write_1h=0, output=900
    )
    call = price_counts("claude-sonnet-4-5", "anthropic", mixed)
    assert sum(call.usd_by_kind.values()) == pytest.approx(call.usd)


def test_cost_prints_the_bill_and_writes_its_json(tmp_path, capsys):
    path = REAL / "claude-code" / "entire-98-78b713483d-0.jsonl"
    out = tmp_path / "cost.json"
    assert main(["cost", str(path), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    document = json.loads(out.read_text())
    total = document["recorded"]["total_usd"]
    assert f"${total:,.2f} over 97 calls" in printed
    assert len(document["calls"]) == 97
    row = document["calls"][0]["recorded"]
    assert set(row) == {*KINDS, "usd"}
    assert sum(c["recorded"]["usd"] for c in document["calls"]) == pytest.approx(total)


def test_cost_of_a_log_without_usage_says_so_in_one_line(capsys):
    assert main(["cost", str(LOGS / "openai_chat.json")]) == 2
    error = capsys.readouterr().err.strip()
    assert "records no usage" in error and "\n" not in error


def test_without_the_price_package_cost_says_so_in_one_line(monkeypatch, capsys):
    def missing():
        raise prices.PricesUnavailable(
            f"pricing needs the optional package {prices.PACKAGE}"
        )

    monkeypatch.setattr(prices, "_package", missing)
    assert main(["cost", str(LOGS / "pi_session.jsonl")]) == 2
    error = capsys.readouterr().err.strip()
    assert "error: pricing needs the optional package genai-prices" in error
    assert "\n" not in error


# The predicted bill: each call's prompt as the calibrated count predicts it, split
# as the client's cache splits it, its output counted from its reply.


def _predicted(path):
    from minilib.measure.calibration import calibrate
    from minilib.measure.predicted_bill import predicted_bill

    log = load_log(path)
    return log, predicted_bill(log, calibrate(log), record_bill(log))


def test_a_call_that_only_appended_reads_what_the_last_call_sent():
    from minilib.measure.predicted_bill import CacheBehaviour, SentCall, split_prompt

    behaviour = CacheBehaviour("anthropic", 300.0, 0.0, 8, 30_000)
    counts = split_prompt(SentCall(120_000, 100_000, 60.0, 500), behaviour, False)
    assert counts == {
        "input": 8,
        "cache_read": 99_992,
        "cache_write_5m": 20_000,
        "cache_write_1h": 0,
        "output": 500,
    }
    idle = split_prompt(SentCall(120_000, 100_000, 301.0, 500), behaviour, False)
    assert idle["cache_read"] == 0 and idle["cache_write_5m"] == 120_000 - 8
    hourly = CacheBehaviour("anthropic", 3600.0, 1.0, 8, 30_000)
    kept = split_prompt(SentCall(120_000, 100_000, 301.0, 500), hourly, False)
    assert kept["cache_read"] == 99_992 and kept["cache_write_1h"] == 20_000
    # OpenAI's automatic cache: reads are part of the prompt, 128-token blocks, no
    # writes billed
    automatic = CacheBehaviour("openai", 600.0, 0.0, 0, 5_000)
    openai = split_prompt(SentCall(50_000, 40_000, 30.0, 100), automatic, False)
    assert openai["cache_read"] == 40_000 - 40_000 % 128
    assert openai["input"] + openai["cache_read"] == 50_000
    assert openai["cache_write_5m"] == openai["cache_write_1h"] == 0


def test_a_call_answering_a_person_is_billed_as_the_share_of_such_calls_that_missed():
    from dataclasses import replace

    from minilib.measure.predicted_bill import CacheBehaviour, SentCall, split_prompt

    behaviour = CacheBehaviour("anthropic", 300.0, 0.0, 0, 20_000)
    missing = replace(behaviour, turn_miss_share=0.25, turn_miss_read=20_000)
    turn = SentCall(120_000, 100_000, 60.0, 500, turn_start=True)
    hit = split_prompt(turn, behaviour, False)
    blended = split_prompt(turn, missing, False)
    assert hit["cache_read"] == 100_000
    assert blended["cache_read"] == round(0.75 * 100_000 + 0.25 * 20_000)
    assert blended["cache_write_5m"] == round(0.75 * 20_000 + 0.25 * 100_000)
    assert sum(blended[k] for k in ("input", "cache_read", "cache_write_5m")) == 120_000
    # a call inside a turn, or one after the cache expired, is not blended
    inside = SentCall(120_000, 100_000, 60.0, 500)
    assert split_prompt(inside, missing, False) == hit
    late = SentCall(120_000, 100_000, 400.0, 500, turn_start=True)
    assert split_prompt(late, missing, False) == split_prompt(late, behaviour, False)


def _billed(message, prompt, read):
    from minilib.logs.base import BilledCall

    return BilledCall(
        key=f"m{message}",
        model="claude-sonnet-4-5",
        provider="anthropic",
        input=0,
        cache_read=read,
        cache_write_5m=prompt - read,
        cache_write_1h=0,
        output=10,
        where="",
        message=message,
    )


def test_the_share_of_turns_that_missed_is_fitted_on_turns_inside_the_ttl():
    from minilib.measure.predicted_bill import CacheBehaviour

    calls = [
        _billed(1, 20_000, 0),
        _billed(3, 30_000, 20_000),  # inside a turn: not counted
        _billed(5, 40_000, 30_000),  # a person's turn, read all
        _billed(7, 50_000, 15_000),  # a person's turn, missed
        _billed(9, 60_000, 0),  # a person's turn after an hour: expired, not counted
    ]
    gaps = {5: 40.0, 7: 30.0, 9: 3_600.0}
    behaviour = CacheBehaviour.fitted(calls, 0, gaps)
    assert behaviour.turn_miss_share == 0.5 and behaviour.turn_miss_read == 15_000
    assert CacheBehaviour.fitted(calls, 0).turn_miss_share == 0.0


def test_billing_a_persons_turns_as_their_share_of_misses_brings_the_bill_nearer():
    """On pi's Sonnet session, nearly half the calls that answer a person read
    nothing from the cache: priced as all hits, the second half is far under the
    record; priced by the first half's share of misses, it is near it."""
    from dataclasses import replace

    from minilib.measure.predicted_bill import errors_by_kind

    _, predicted = _predicted(REAL / "pi" / "pi-mono-sonnet-4-5-large-session.jsonl")
    assert predicted.behaviour.turn_miss_share > 0.2
    start = predicted.held_out_from
    blended = errors_by_kind(predicted, start)["usd_total"]
    plain = predicted.priced_as(replace(predicted.behaviour, turn_miss_share=0.0))
    assert plain.recorded == predicted.recorded and plain.held_out_from == start
    assert abs(blended) < 0.10 < abs(errors_by_kind(plain, start)["usd_total"])


def test_the_predicted_bill_reads_nothing_of_the_calls_own_usage(tmp_path):
    """The prompts come from the messages, the cache behaviour from the first half
    of the record: a copy whose second half records no usage predicts the same."""
    source = REAL / "claude-code" / "entire-d7-0360ee0899-0.jsonl"
    log, full = _predicted(source)
    records = _lines(source)
    ids = list(dict.fromkeys(c.key for c in log.billed))
    blinded = set(ids[len(ids) // 2 :])  # the second half of the calls
    for record in records:
        message = record.get("message", {})
        if "usage" in message and message.get("id") in blinded:
            message["usage"] = {k: 0 for k in message["usage"] if k.endswith("tokens")}
    blind = load_log(_write(tmp_path / "blind.jsonl", records))
    from minilib.measure.calibration import calibrate
    from minilib.measure.predicted_bill import predicted_bill

    second = predicted_bill(blind, calibrate(log), None)
    start = full.held_out_from
    assert second.counts[start:] == full.counts[start:]


def test_the_predicted_bill_is_judged_on_the_calls_the_fit_did_not_see():
    from minilib.measure.predicted_bill import errors_by_kind

    _, predicted = _predicted(REAL / "claude-code" / "entire-94-de498254e2-0.jsonl")
    held = errors_by_kind(predicted, predicted.held_out_from)
    assert held["calls"] == len(predicted.counts) - predicted.held_out_from
    assert held["cache_read"] < 0.05 and abs(held["usd_total"]) < 0.10


def test_cost_with_a_calibration_writes_both_bills(tmp_path, capsys):
    source = REAL / "pi" / "pi-mono-opus-4-5-two-compactions.jsonl"
    calibration = tmp_path / "c.json"
    main(["calibrate", str(source), "--out", str(calibration)])
    out = tmp_path / "cost.json"
    assert (
        main(["cost", str(source), "--calibration", str(calibration), "--json", str(out)])
        == 0
    )
    printed = capsys.readouterr().out
    document = json.loads(out.read_text())
    assert document["predicted"]["total_usd"] > 0
    assert f"${document['predicted']['total_usd']:,.2f}" in printed
    conversation = [c for c in document["calls"] if c["in_conversation"]]
    assert all(set(c["predicted"]) == {*KINDS, "usd"} for c in conversation)


# What it would have cost: every policy priced (compare --cost), and one policy at
# each threshold of a range (sweep).


def test_compare_cost_prices_every_row_and_sets_the_record_beside(tmp_path, capsys):
    source = REAL / "claude-code" / "entire-d7-0360ee0899-0.jsonl"
    out = tmp_path / "rows.json"
    assert main(["compare", str(source), "--cost", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert all(row["bill_usd"] > 0 for row in rows)
    assert all("rounds_sent" not in row for row in rows)  # per-round lists left out
    recorded = record_bill(load_log(source)).total_usd
    assert f"the record: ${recorded:,.2f}" in printed
    own = next(row for row in rows if row["policy"] == "claude-code")
    # the agent's own row at its own threshold is near what the provider billed
    assert own["bill_usd"] == pytest.approx(recorded, rel=0.10)


def test_the_sweep_runs_one_policy_at_each_threshold(tmp_path, capsys):
    from minilib.policies.production.sweep import parse_range

    assert parse_range("100k:120k:10k") == [100_000, 110_000, 120_000]
    for bad in ("100k:90k:10k", "1:2", "a:b:c", "100k:200k:0"):
        with pytest.raises(ValueError):
            parse_range(bad)
    source = REAL / "claude-code" / "entire-98-78b713483d-0.jsonl"
    out = tmp_path / "sweep.json"
    argv = ["sweep", str(source), "--policy", "claude-code", "--threshold"]
    assert main([*argv, "120k:180k:20k", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert [r["threshold"] for r in rows] == [120_000, 140_000, 160_000, 180_000]
    # a lower threshold compacts at least as often
    compactions = [r["compactions"] for r in rows]
    assert compactions == sorted(compactions, reverse=True) and compactions[0] > 1
    cheapest = min(rows, key=lambda r: r["bill_usd"])
    assert f"at {cheapest['threshold']:,} this session would have cost" in printed
    # the row at a threshold is compare's row with that threshold
    from minilib.cli.compare import row_counting
    from minilib.policies.production.sweep import sweep_log

    log = load_log(source)
    again = sweep_log(log, "claude-code", [140_000], row_counting(log))
    assert again[0].as_dict() == rows[1]


def test_a_policy_with_no_threshold_is_refused_by_name(capsys):
    source = REAL / "claude-code" / "entire-d7-0360ee0899-0.jsonl"
    argv = ["sweep", str(source), "--policy", "swe-agent-last-n", "--threshold"]
    assert main([*argv, "1:2:1"]) == 2
    error = capsys.readouterr().err
    assert "swe-agent-last-n compresses by no token threshold" in error
