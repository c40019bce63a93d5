"""What a log records that moves the count, read as the agent that wrote it meant it.
Each rule has a constructed fixture here (a bundled log changed in the one way the
rule is about), and where the project holds one, the real log that shows it."""

import json

from minilib.logs import load_log
from minilib.measure.compactions import measure_compactions
from minilib.session import DATA_DIR

LOGS = DATA_DIR / "logs"


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


ZERO_COUNT = {
    "type": "event_msg",
    "payload": {
        "type": "token_count",
        "info": {
            "total_token_usage": {"input_tokens": 0, "output_tokens": 0},
            "last_token_usage": {
                "input_tokens": 0,
                "cached_input_tokens": 0,
                "output_tokens": 0,
                "reasoning_output_tokens": 0,
                "total_tokens": 0,
            },
        },
    },
}


def test_a_codex_token_count_of_all_zeros_is_a_placeholder_not_a_call(tmp_path):
    """Codex writes a token_count that counts nothing before a call is counted: read
    as usage it gave a call 0 tokens, and a compaction '0 tokens before'."""
    source = LOGS / "codex_compacted.jsonl"
    records = []
    for record in _lines(source):
        if record["type"] == "compacted":
            records.append(dict(ZERO_COUNT, timestamp=record["timestamp"]))
        records.append(record)
    mutated = load_log(_write(tmp_path / "placeholder.jsonl", records))
    original = load_log(source)
    assert [(u.message, u.input_tokens) for u in mutated.usage] == [
        (u.message, u.input_tokens) for u in original.usage
    ]
    assert all(u.input_tokens > 0 for u in mutated.usage)
    assert sum("placeholder" in why for _, why in mutated.skipped) == 2
    before = [r.tokens_before for r in measure_compactions(mutated)]
    assert before == [r.tokens_before for r in measure_compactions(original)]
    assert before[0] == 10_680  # the last call counted before the first compaction
