"""`python -m minilib cost LOG [--calibration FILE] [--json FILE]`: what the session
cost, priced as its provider bills it from the usage the log records (by model and by
kind of token); with a calibration, also what the lab predicts it cost from the log's
messages alone (minilib.measure.bill, minilib.measure.predicted_bill)."""

import argparse
import json
from pathlib import Path

from ..logs.replay import TranscriptFileError, load_transcript
from ..measure.bill import bill_rows, format_bill, record_bill
from ..measure.calibration import CalibrationError, load_calibration
from ..measure.prices import PricesUnavailable
from ..trace import write_text_safely
from .common import DONE, add_max_mb_argument, fail

DESCRIPTION = (
    "Price a session from the usage its log records, call by call, as the provider "
    "bills it: uncached input, cache reads, cache writes (5-minute and 1-hour) and "
    "output, at the model's price on the day of the call (the genai-prices package's "
    "data, offline). With --calibration, also the bill the lab predicts from the log's "
    "messages alone, beside the record."
)


def add_parser(commands) -> argparse.ArgumentParser:
    command = commands.add_parser(
        "cost",
        help="what the session cost, from its recorded usage (and predicted)",
        description=DESCRIPTION,
    )
    command.add_argument("file", type=Path, help="an agent log that records usage")
    command.add_argument(
        "--calibration",
        type=Path,
        default=None,
        metavar="FILE",
        help="also predict the bill from the log's messages with this calibration "
        "(`calibrate LOG --out FILE`)",
    )
    command.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the totals and a row a call as JSON (default: print only)",
    )
    add_max_mb_argument(command)
    return command


def main(args) -> int:
    try:
        log = load_transcript(args.file, max_bytes=args.max_mb * 1024 * 1024)
        calibration = (
            load_calibration(args.calibration) if args.calibration is not None else None
        )
    except (TranscriptFileError, CalibrationError) as error:
        return fail(f"error: {error}")
    if not log.billed:
        return fail(
            f"error: {args.file}: the log records no usage, so there is no bill to "
            "read; a log of Claude Code, Codex, pi or opencode records it per call"
        )
    try:
        bill = record_bill(log)
    except PricesUnavailable as error:
        return fail(f"error: {error}")
    print(log.describe().splitlines()[0])
    for line in format_bill(bill):
        print(line)
    document = {
        "log": str(args.file),
        "priced_with": bill.priced_with,
        "recorded": {"total_usd": bill.total_usd},
        "calls": bill_rows(bill),
    }
    if calibration is not None:
        from ..measure.predicted_bill import format_predicted, predicted_bill

        predicted = predicted_bill(log, calibration, bill)
        print()
        for line in format_predicted(predicted):
            print(line)
        document["predicted"] = {"total_usd": predicted.total_usd}
        by_reply = dict(zip(predicted.messages, predicted.rows))
        for row, call in zip(document["calls"], bill.calls):
            # a call outside the conversation is not predicted: taken as recorded
            row["predicted"] = by_reply.get(call.message) or row["recorded"]
    if args.json is not None:
        write_text_safely(args.json, json.dumps(document, indent=1) + "\n")
        print(f"wrote {args.json}")
    return DONE
