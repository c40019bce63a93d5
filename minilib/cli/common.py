"""What every command of the command line shares: argparse types that reject a bad
value in one line, the window's settings flags, the token counter a `--tokenizer`
names, the exit statuses, and the files a replay writes."""

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

from ..logs import MAX_LOG_BYTES
from ..logs.base import repair_counts
from ..logs.replay import TranscriptRun
from ..measure.costs import ESTIMATED
from ..measure.recorded_usage import counted_usage_rows, usage_summary
from ..measure.tokenizers import message_counter
from ..scale.bounded import MIN_BUDGET
from ..session import SessionRun
from ..tokens import estimate_tokens
from ..trace import write_text_safely
from ..window import Settings

PROG = "python -m minilib"

# Exit statuses: a script can tell a finished replay, a replay a context overflow
# stopped, input the lab cannot read, and a fault of the lab's own.
DONE, OVERFLOW, BAD_INPUT, INTERNAL_ERROR = 0, 1, 2, 3
OUTPUT_FILES = ("trace.jsonl", "rounds.json")

# --tokenizer: the article's estimate, or a real encoding (minilib.measure.tokenizers).
TOKENIZERS = {"estimate": None, "o200k": "o200k_base", "cl100k": "cl100k_base"}


class Parser(argparse.ArgumentParser):
    """argparse, but a bad flag is one line on stderr (no usage dump) and
    exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number, got {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def positive(text: str) -> int:
    value = non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a number >= 1, got 0")
    return value


def summary_budget(text: str) -> int:
    value = non_negative(text)
    if value < MIN_BUDGET:  # below it not even the condensed line fits
        raise argparse.ArgumentTypeError(
            f"expected a number >= {MIN_BUDGET}, got {value}"
        )
    return value


def add_settings_arguments(
    command: argparse.ArgumentParser, threshold_default: Optional[int] = -1
) -> None:
    """The window's settings and the output folder (`run` and `compress`); a
    `threshold_default` of None leaves the threshold to the log (its agent's window)."""
    defaults = Settings()
    if threshold_default is None:
        threshold_help = (
            "window budget in tokens (default: the window of the model the log names, "
            "less the calibrated overhead; the article's "
            f"{defaults.threshold:,} for the article's own transcripts)"
        )
    else:
        threshold_default = defaults.threshold
        threshold_help = "window budget in tokens (default %(default)s, the article's)"
    command.add_argument(
        "--threshold", type=positive, default=threshold_default, help=threshold_help
    )
    command.add_argument(
        "--head-chars",
        type=non_negative,
        default=defaults.head_chars,
        help="characters an aged tool result keeps from its start (default %(default)s)",
    )
    command.add_argument(
        "--tail-chars",
        type=non_negative,
        default=defaults.tail_chars,
        help="characters an aged tool result keeps from its end (default %(default)s)",
    )
    command.add_argument(
        "--min-chars",
        type=non_negative,
        default=defaults.min_chars,
        help="a tool result this short or shorter is never aged (default %(default)s)",
    )
    command.add_argument(
        "--protect-tail",
        type=non_negative,
        default=defaults.protect_tail,
        help="the last messages the summary never folds (default %(default)s)",
    )
    command.add_argument(
        "--out",
        type=Path,
        default=Path("out"),
        help="folder for trace.jsonl and rounds.json (default %(default)s)",
    )


def add_max_mb_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--max-mb",
        type=positive,
        default=MAX_LOG_BYTES // (1024 * 1024),
        help="refuse a log larger than this many megabytes (default %(default)s)",
    )


def settings_from(
    args, fold_user_turns: bool, threshold: Optional[int] = None
) -> Settings:
    """The window settings the arguments give; `threshold`, where the command worked
    it out (from the log's window), in place of `--threshold`."""
    return Settings(
        args.threshold if threshold is None else threshold,
        args.head_chars,
        args.tail_chars,
        args.min_chars,
        args.protect_tail,
        fold_user_turns,
    )


def add_count_arguments(command: argparse.ArgumentParser) -> None:
    """How a log's tokens are counted (`compress` and `compare`)."""
    command.add_argument(
        "--tokenizer",
        choices=[*TOKENIZERS, "calibrated"],
        default="estimate",
        help="estimate: the article's rule over what each call sent (text, call "
        "arguments, the thinking the model keeps; the article's own rule for its "
        "transcripts); o200k / cl100k: a real OpenAI tokenizer (needs the optional "
        "bpe-openai); calibrated: fitted to this log's recorded usage, its held-out "
        "error printed (default %(default)s)",
    )
    command.add_argument(
        "--calibration",
        type=Path,
        default=None,
        metavar="FILE",
        help="count with a calibration `calibrate --out FILE` wrote (from this log or "
        "another of the same model); every round of rounds.json then has "
        "predicted_input_tokens",
    )


def counter(name: str):
    """The counter `--tokenizer name` governs with, and how its figures are labelled."""
    encoding = TOKENIZERS[name]
    if encoding is None:
        return estimate_tokens, ESTIMATED
    return message_counter(encoding), f"counted with {encoding}"


def fail(message: str, status: int = BAD_INPUT) -> int:
    """Say on one stderr line why the command stopped; return its exit status."""
    print(f"{PROG}: {message}", file=sys.stderr)
    return status


def write_outputs(
    run: SessionRun,
    out: Path,
    grounded: Optional[dict] = None,
    log=None,
    count_tokens=estimate_tokens,
    predicted: Optional[list] = None,
) -> None:
    """trace.jsonl and rounds.json; for a log (`log`, its LoadedLog), rounds.json
    also lists what the reader repaired (kind, count, first place) and whose run it is."""
    run.tracer.write_jsonl(out / "trace.jsonl")
    document = {
        "settings": run.settings.__dict__,
        "rounds": _with_predictions(run.rounds_as_dicts(), predicted),
        "final_messages": len(run.final_messages),
        "final_tokens": run.final_tokens,
        "overflow": str(run.overflow) if run.overflow else None,
    }
    if grounded is not None:
        document["grounded"] = grounded
    if isinstance(run, TranscriptRun):  # a log: which window replayed it
        document["window"] = run.window
        document["summary_budget"] = run.summary_budget
    if log is not None:
        document["repairs"] = repair_counts(log.repairs)
        document["run_of"] = log.run_of or None
        rows = counted_usage_rows(log, count_tokens)
        document["recorded_usage"] = {
            **usage_summary(rows),
            "rows": [{**row.__dict__} for row in rows],
        }
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    write_text_safely(out / "rounds.json", text)


def _with_predictions(rounds: list, predicted: Optional[list]) -> list:
    """Each round with what the calibration predicts of its call
    (`predicted_input_tokens` and its kin; None where not predicted)."""
    if predicted is None:
        return rounds
    return [dict(row, **values) for row, values in zip(rounds, predicted)]


def write_and_say(
    run: SessionRun,
    out: Path,
    grounded: Optional[dict] = None,
    log=None,
    count_tokens=estimate_tokens,
    predicted: Optional[list] = None,
) -> None:
    write_outputs(run, out, grounded, log, count_tokens, predicted)
    print(f"wrote {out / 'trace.jsonl'} and {out / 'rounds.json'}")
