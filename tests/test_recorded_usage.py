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
    run = replay_transcript(log, Settings(threshold=100_000))
    rows = usage_rows(log, run)
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
    assert "with the overhead 0%" in format_usage(rows)


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


def test_compress_sets_the_recorded_usage_beside_its_count(tmp_path):
    path = DATA_DIR / "logs" / "codex_rollout.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "minilib", "compress", str(path), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "recorded usage: 2 calls; the API counted 15,800 input tokens" in done.stdout
    document = json.loads((tmp_path / "rounds.json").read_text(encoding="utf-8"))
    assert document["recorded_usage"]["calls"] == 2
    assert [row["recorded"] for row in document["recorded_usage"]["rows"]] == [9100, 6700]


@pytest.mark.parametrize(
    "name, expected",
    [
        # Gemini CLI's `tokens.input` holds its cached part; pi's `input` does not
        ("gemini_session.json", [(1, 5120, 0, None)]),
        ("pi_session.jsonl", [(1, 2210, 0, 0)]),
    ],
)
def test_gemini_and_pi_record_their_calls_usage(name, expected):
    from minilib.logs import load_log

    log = load_log(DATA_DIR / "logs" / name)
    assert [
        (u.message, u.input_tokens, u.cache_read, u.cache_written) for u in log.usage
    ] == expected
