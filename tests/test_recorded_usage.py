"""What the API counted, read from the log and set beside the lab's count."""

import doctest
import json
import subprocess
import sys

import pytest

import minilib.measure.recorded_usage as recorded_usage
from minilib import Settings
from minilib.logs import LogFileError, parse_log
from minilib.logs.replay import replay_transcript
from minilib.measure.recorded_usage import format_usage, usage_rows, usage_summary
from minilib.session import DATA_DIR


def test_the_modules_example_runs():
    assert doctest.testmod(recorded_usage).failed == 0


def _claude_line(kind, message, **extra):
    return json.dumps({"type": kind, "message": message, **extra})


def _claude_session(usages):
    """go -> reply 1 (usage 1) -> more -> reply 2 (usage 2)."""
    lines = [_claude_line("user", {"role": "user", "content": "go " + "x" * 396})]
    for number, usage in enumerate(usages, 1):
        reply = {"id": f"m{number}", "role": "assistant", "content": "ok", "usage": usage}
        lines.append(_claude_line("assistant", reply))
        lines.append(_claude_line("user", {"role": "user", "content": "y" * 400}))
    return "\n".join(lines[:-1])


def test_claude_code_usage_is_the_whole_prompt_uncached_read_and_written():
    usages = [
        {"input_tokens": 4, "cache_creation_input_tokens": 1100, "output_tokens": 9},
        {
            "input_tokens": 3,
            "cache_read_input_tokens": 1100,
            "cache_creation_input_tokens": 110,
        },
    ]
    log = parse_log(_claude_session(usages), "s.jsonl")
    assert [
        (u.message, u.input_tokens, u.cache_read, u.cache_written) for u in log.usage
    ] == [
        (1, 1104, None, 1100),
        (3, 1213, 1100, 110),
    ]
    rows = usage_rows(log)
    # the lab's windows: 104 tokens (the task), then 104 + 5 ("ok") + 104
    assert [(r.round, r.recorded, r.counted) for r in rows] == [
        (0, 1104, 104),
        (1, 1213, 213),
    ]
    assert {r.overhead for r in rows} == {1000}  # 1,104 - 104, from the first call
    summary = usage_summary(rows)
    assert summary["median_abs_error_with_overhead"] == 0
    assert summary["median_abs_error"] == pytest.approx((1000 / 1104 + 1000 / 1213) / 2)
    assert summary["cache_read_total"] == 1100 and summary["cache_written_total"] == 1210
    assert "with the overhead +0% (p10 +0%, p90 +0%)" in format_usage(rows)


def test_a_response_written_over_several_lines_counts_its_usage_once():
    usage = {"input_tokens": 50}
    text = "\n".join(
        [
            _claude_line("user", {"role": "user", "content": "go"}),
            _claude_line(
                "assistant",
                {"id": "m1", "role": "assistant", "content": "a", "usage": usage},
            ),
            _claude_line(
                "assistant",
                {"id": "m1", "role": "assistant", "content": "b", "usage": usage},
            ),
        ]
    )
    assert [u.input_tokens for u in parse_log(text, "s").usage] == [50]


def test_a_usage_that_is_not_a_number_is_named():
    bad = _claude_session([{"input_tokens": "many"}])
    with pytest.raises(LogFileError, match=r"line 2: message\.usage: token counts"):
        parse_log(bad, "s.jsonl")


def _codex(*events):
    meta = {"type": "session_meta", "payload": {"id": "s", "cwd": "/w"}}
    lines = [meta]
    for number, event in enumerate(events):
        lines.append(
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": f"ask {number}"}],
                },
            }
        )
        lines.append(
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": f"answer {number}"}],
                },
            }
        )
        lines.append(
            {"type": "event_msg", "payload": {"type": "token_count", "info": event}}
        )
    return "\n".join(json.dumps(line) for line in lines)


def test_codex_takes_the_last_calls_usage_or_the_growth_of_the_total():
    last = {
        "last_token_usage": {"input_tokens": 900, "cached_input_tokens": 600},
        "total_token_usage": {"input_tokens": 900},
    }
    total = {"total_token_usage": {"input_tokens": 2000}}
    log = parse_log(_codex(last, total), "r.jsonl")
    assert [(u.input_tokens, u.cache_read) for u in log.usage] == [
        (900, 600),
        (1100, None),
    ]


def _raw_lines(name):
    text = (DATA_DIR / "logs" / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_compress_sets_the_recorded_usage_beside_its_count(tmp_path):
    name = "codex_rollout.jsonl"
    recorded = [  # what the file's token_count events say of each call
        line["payload"]["info"]["last_token_usage"]["input_tokens"]
        for line in _raw_lines(name)
        if line["type"] == "event_msg" and line["payload"]["type"] == "token_count"
    ]
    done = subprocess.run(
        [sys.executable, "-m", "minilib", "compress", str(DATA_DIR / "logs" / name)]
        + ["--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (
        f"recorded usage: {len(recorded)} calls; the API counted "
        f"{sum(recorded):,} input tokens in all"
    ) in done.stdout
    document = json.loads((tmp_path / "rounds.json").read_text(encoding="utf-8"))
    assert document["recorded_usage"]["calls"] == len(recorded) == 2
    assert [row["recorded"] for row in document["recorded_usage"]["rows"]] == recorded


def test_gemini_and_pi_record_their_calls_usage():
    from minilib.logs import load_log

    gemini = json.loads((DATA_DIR / "logs" / "gemini_session.json").read_text("utf-8"))
    tokens = [m["tokens"] for m in gemini["messages"] if "tokens" in m]
    # Gemini CLI's `tokens.input` holds its cached part; pi's `input` does not
    log = load_log(DATA_DIR / "logs" / "gemini_session.json")
    assert [(u.input_tokens, u.cache_read) for u in log.usage] == [
        (t["input"], t["cached"]) for t in tokens
    ]
    usages = [
        line["message"]["usage"]
        for line in _raw_lines("pi_session.jsonl")
        if isinstance(line.get("message"), dict) and "usage" in line["message"]
    ]
    log = load_log(DATA_DIR / "logs" / "pi_session.jsonl")
    assert [(u.input_tokens, u.cache_read, u.cache_written) for u in log.usage] == [
        (u["input"] + u["cacheRead"] + u["cacheWrite"], u["cacheRead"], u["cacheWrite"])
        for u in usages
    ]


def _bundled_with_usage():
    from minilib.logs import load_log

    found = []
    for path in sorted((DATA_DIR / "logs").rglob("*")):
        try:
            log = load_log(path)
        except (LogFileError, OSError):
            continue  # the damaged and foreign fixtures
        if log.usage:
            found.append((path.relative_to(DATA_DIR / "logs").as_posix(), log))
    return found


def test_the_bundled_logs_with_usage_are_the_ones_their_usage_is_made_for():
    made = _make_usage_module()
    assert sorted(name for name, _ in _bundled_with_usage()) == sorted(made.FILES)


def _make_usage_module():
    import importlib.util

    path = DATA_DIR.parent / "scripts" / "make_usage.py"
    if not path.exists():
        pytest.skip("the data scripts are in a checkout only")
    spec = importlib.util.spec_from_file_location("make_usage", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, log", _bundled_with_usage(), ids=lambda v: str(v)[:40])
def test_the_as_recorded_replay_is_within_ten_percent_of_the_recorded_usage(name, log):
    run = replay_transcript(log, Settings(threshold=10**9))  # follows the agent only
    rows = usage_rows(log)
    assert len(rows) == len(log.usage)
    # the lab's count of each call's window is the as-recorded replay's baseline
    assert [r.counted for r in rows] == [
        run.rounds[r.round].baseline_tokens for r in rows
    ]
    errors = sorted(abs(r.error_with_overhead) for r in rows)
    assert usage_summary(rows)["median_abs_error_with_overhead"] <= 0.10, (name, errors)
    # without the overhead the lab's window is far from what the API counted
    assert usage_summary(rows)["median_abs_error"] > 0.5


def test_call_arguments_and_the_tool_loops_thinking_are_what_else_a_window_sent():
    def assistant(number, thinking, call_input):
        blocks = [{"type": "thinking", "thinking": thinking, "signature": "s"}]
        blocks.append(
            {"type": "tool_use", "id": f"t{number}", "name": "Read", "input": call_input}
        )
        return _claude_line(
            "assistant",
            {
                "id": f"m{number}",
                "role": "assistant",
                "content": blocks,
                "usage": {"input_tokens": 5000},
            },
        )

    def result(number):
        block = {"type": "tool_result", "tool_use_id": f"t{number}", "content": "z" * 40}
        return _claude_line("user", {"role": "user", "content": [block]})

    lines = [
        _claude_line("user", {"role": "user", "content": "first task"}),
        assistant(1, "a" * 400, {"path": "x" * 36}),  # thinking 100, arguments 12
        result(1),
        assistant(2, "b" * 800, {"path": "y" * 36}),  # thinking 200, arguments 12
        result(2),
        _claude_line("user", {"role": "user", "content": "second task"}),
        assistant(3, "c" * 40, {"path": "w" * 36}),
    ]
    log = parse_log("\n".join(lines), "s.jsonl")
    rows = usage_rows(log)
    arguments = len(json.dumps({"path": "x" * 36})) // 4  # 12 tokens by the text rule
    assert [r.sent_extra for r in rows] == [
        0,  # the first call sent no earlier reply
        arguments + 100,  # the loop under way: call 1's arguments and thinking
        2 * arguments,  # a new user turn: the thinking of the loop before it dropped
    ]


def test_the_first_call_after_a_compaction_shows_what_the_harness_re_attached():
    log = dict(_bundled_with_usage())["claude_code_compacted.jsonl"]
    rows = usage_rows(log)
    after = [r for r in rows if r.after_compaction]
    compaction_round = sum(
        1 for m in log.messages[: log.compactions[0].at] if m["role"] == "assistant"
    )
    assert [r.round for r in after] == [compaction_round]
    summary = usage_summary(rows)
    assert summary["after_compaction"] == [
        {
            "round": compaction_round,
            "unexplained": after[0].recorded
            - after[0].counted
            - after[0].sent_extra
            - after[0].overhead,
        }
    ]
    assert summary["after_compaction"][0]["unexplained"] > 0


def test_the_lab_reuses_the_window_the_call_before_sent_and_the_overhead():
    log = dict(_bundled_with_usage())["claude_code_session.jsonl"]
    rows = usage_rows(log)
    assert rows[0].lab_reused == 0
    for before, row in zip(rows, rows[1:]):
        assert row.lab_reused == before.counted + row.overhead
    recorded, lab = (sum(r.cache_read for r in rows), sum(r.lab_reused for r in rows))
    assert abs(lab - recorded) / recorded < 0.05  # the prefix model agrees with the reads


def test_the_usage_of_the_bundled_logs_is_what_its_script_makes():
    pytest.importorskip("bpe_openai")
    assert _make_usage_module().main(["--check"]) == 0


def test_the_usage_page_is_what_the_lab_computes():
    from minilib.reports import usage_page

    page = DATA_DIR.parent / "docs" / "recorded_usage.md"
    if not page.exists():
        pytest.skip("the docs are in a checkout only")
    text = usage_page.build_markdown()
    assert page.read_text(encoding="utf-8") == text
    for name, _, summary, _ in usage_page.bundled_rows():  # every log with usage, a row
        assert f"| `{name}` |" in text
        assert summary["median_abs_error_with_overhead"] <= 0.10


def test_compress_report_keeps_the_recorded_usage(tmp_path):
    from minilib.logs import load_log
    from minilib.measure.calibration import sent_counter
    from minilib.measure.recorded_usage import counted_usage_rows

    path = DATA_DIR / "logs" / "claude_code_compacted.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "minilib", "compress", str(path)]
        + ["--report", str(tmp_path / "report"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    # counted as a real log is: what each call sent, arguments and thinking included
    log = load_log(path)
    rows = counted_usage_rows(log, sent_counter(log))
    expected = json.loads(json.dumps(usage_summary(rows)))
    assert document["recorded_usage"] == expected
    assert "after a compaction (round 4)" in done.stdout


def test_opencode_records_each_steps_usage():
    from minilib.logs import load_log

    path = DATA_DIR / "logs" / "opencode_export.json"
    export = json.loads(path.read_text("utf-8"))
    steps = [  # every step-finish part's tokens, in file order
        part["tokens"]
        for message in export["messages"]
        for part in message["parts"]
        if part.get("type") == "step-finish"
    ]
    log = load_log(path)
    assert [(u.input_tokens, u.cache_read, u.cache_written) for u in log.usage] == [
        (t["input"] + t["cache"]["read"] + t["cache"]["write"], t["cache"]["read"], 0)
        for t in steps
    ]
    assert len({u.message for u in log.usage}) == len(steps)  # a step a model call


def test_opencode_messages_hold_their_last_steps_tokens_and_their_steps_cost():
    """opencode sets a message's tokens to each finished step's in turn and adds up the
    steps' costs; the export's totals agree with its steps, so a reader of either reads
    one story."""
    export = json.loads((DATA_DIR / "logs" / "opencode_export.json").read_text("utf-8"))
    assistants = [m for m in export["messages"] if m["info"]["role"] == "assistant"]
    checked = 0
    for message in assistants:
        steps = [p for p in message["parts"] if p.get("type") == "step-finish"]
        if not steps:  # an error or an interruption: no step ever finished
            assert message["info"]["tokens"]["input"] == 0
            assert message["info"]["cost"] == 0
            continue
        assert message["info"]["tokens"] == steps[-1]["tokens"]
        assert message["info"]["cost"] == pytest.approx(sum(s["cost"] for s in steps))
        checked += 1
    assert checked >= 1 and len(assistants) > checked  # both kinds are in the file


def test_with_the_tokenizer_the_usage_was_made_with_only_the_unseen_part_is_left():
    pytest.importorskip("bpe_openai")
    from minilib.measure.recorded_usage import counted_usage_rows
    from minilib.measure.tokenizers import message_counter

    made = _make_usage_module()
    counter = message_counter("o200k_base")
    for name, log in _bundled_with_usage():
        rows = counted_usage_rows(log, counter)
        agent = made.FILES[name]
        # the overhead found from the first call is the one the usage was made with
        assert rows[0].overhead == made.OVERHEAD[agent], name
        compacted = False  # what the harness re-attached stays in the calls after it
        for row in rows:
            compacted = compacted or row.after_compaction
            unseen = row.recorded - row.counted - row.sent_extra - row.overhead
            expected = made.REATTACHED.get(agent, 0) if compacted else 0
            assert unseen == expected, (name, row.round)
