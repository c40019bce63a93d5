"""`python -m minilib calibrate LOG [--out FILE]`: fit how the API's tokens relate to
the lab's count of what each call sent, from the log's recorded usage, and say how well
the fit predicts the calls it was not fitted on (minilib.measure.calibration)."""

import argparse
from pathlib import Path

from ..logs.replay import TranscriptFileError, load_transcript
from ..measure.calibration import calibrate, format_calibration
from .common import DONE, add_max_mb_argument, fail

DESCRIPTION = (
    "Fit, from a log's recorded usage, how many tokens the API counted for each token "
    "of the lab's count of what a call sent (its messages, call arguments and the "
    "thinking the model keeps), and the fixed overhead of every call (system prompt "
    "and tool definitions); one fit a model. Prints the error a call in-sample and "
    "held out (fitted on the first half of the calls, measured on the second)."
)


def add_parser(commands) -> argparse.ArgumentParser:
    command = commands.add_parser(
        "calibrate",
        help="fit the lab's count to the API's, from a log's recorded usage",
        description=DESCRIPTION,
    )
    command.add_argument("file", type=Path, help="an agent log that records usage")
    command.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the calibration as JSON, for compress/compare --calibration FILE "
        "(default: print only)",
    )
    add_max_mb_argument(command)
    return command


def main(args) -> int:
    try:
        log = load_transcript(args.file, max_bytes=args.max_mb * 1024 * 1024)
    except TranscriptFileError as error:
        return fail(f"error: {error}")
    calibration = calibrate(log)
    print(log.describe().splitlines()[0])
    print(format_calibration(calibration))
    if calibration is not None and args.out is not None:
        calibration.write(args.out)
        print(f"wrote {args.out}")
    return DONE
