"""Every production policy on the 1,000-call generated log, every number as it was.

The log is the one chapter 10 and `bench/bench_policies.py` use
(`generate_history(1000, user_turns=10)`, 753 rounds), written as an OpenAI chat JSON
list and read back as `python -m minilib compare` reads it. `compare_policies` runs all
policies on it and every row (every key, every number, exactly) must equal the golden
file under tests/golden/ (the rows as `--json` writes them, gzipped), written by the
code before the replay was made faster: a speed-up may change how a number is
computed, never the number.

Three runs: `compare_policies`' own defaults (the article's estimate, a 200,000-token
window), and the count the command uses on such a log (what each call sent) at its
default window (200,000) and at 32,000, where several policies stop early; each in one
process and in two, as the command runs by default.

Regenerate (only when a number is meant to change, and say why in the commit):
    python tests/test_compare_golden.py
"""

import gzip
import json
import sys
from pathlib import Path

import pytest

from minilib.logs import load_transcript
from minilib.measure.calibration import sent_counter
from minilib.policies.production import POLICIES
from minilib.policies.production.compare import compare_policies
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

GOLDEN = Path(__file__).resolve().parent / "golden"
CALLS, USER_TURNS = 1000, 10
# name: (count with the command's counter?, window)
RUNS = {
    "estimate_200k": (False, 200_000),
    "command_200k": (True, 200_000),
    "command_32k": (True, 32_000),
}


def golden_path(name: str) -> Path:
    return GOLDEN / f"compare_{CALLS}calls_{name}.json.gz"


def write_log(folder: Path) -> Path:
    path = folder / f"openai_{CALLS}calls_{USER_TURNS}turns.json"
    messages = list(generate_history(CALLS, user_turns=USER_TURNS).messages)
    path.write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
    return path


def rows_for(log, name: str, processes: int = 1) -> list:
    """The rows as the golden file holds them (through JSON, as `--json` writes)."""
    command, window = RUNS[name]
    count_tokens = sent_counter(log) if command else estimate_tokens
    rows = compare_policies(
        log.messages, None, window, count_tokens, agent_log=log, processes=processes
    )
    return json.loads(json.dumps(rows, ensure_ascii=False))


def same(actual, expected, where: str) -> None:
    """Equal, and of the same JSON types (an int is not a float here)."""
    assert type(actual) is type(expected), f"{where}: {actual!r} != {expected!r}"
    if isinstance(expected, dict):
        assert list(actual) == list(expected), f"{where}: keys differ"
        for key in expected:
            same(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), f"{where}: lengths differ"
        for index, (a, e) in enumerate(zip(actual, expected)):
            same(a, e, f"{where}[{index}]")
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    return load_transcript(write_log(tmp_path_factory.mktemp("golden")))


# two processes: one finds the facts while the other replays (the command's default)
@pytest.mark.parametrize("processes", [1, 2])
@pytest.mark.parametrize("name", list(RUNS))
def test_every_row_as_golden(log, name, processes):
    expected = json.loads(gzip.decompress(golden_path(name).read_bytes()))
    actual = rows_for(log, name, processes)
    assert [row["policy"] for row in actual] == list(POLICIES)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        same(got, want, want["policy"])


def main() -> int:
    import tempfile

    GOLDEN.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        log = load_transcript(write_log(Path(folder)))
        for name in RUNS:
            text = json.dumps(rows_for(log, name), ensure_ascii=False, indent=1)
            # mtime 0: the same rows give the same bytes
            data = gzip.compress((text + "\n").encode("utf-8"), mtime=0)
            golden_path(name).write_bytes(data)
            print(f"wrote {golden_path(name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
