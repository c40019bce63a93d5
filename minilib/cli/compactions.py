"""`python -m minilib compactions FILE`: every compaction the agent's own harness
recorded in its log, measured: as recorded (round, trigger, tokens before, the
summary's size), what became of the facts the agent used after it (held by the
summary, re-read by a tool, neither), and what the lab's stand-in summary of the same
history keeps."""

import argparse
import json
from pathlib import Path

from ..logs.replay import TranscriptFileError, load_transcript
from ..measure.compactions import measure_compactions
from ..reports.compactions import format_compactions, record_falls
from ..trace import write_text_safely
from .common import DONE, add_max_mb_argument, fail

DESCRIPTION = (
    "Measure the compactions an agent's harness recorded in its log (Claude Code's "
    "compact boundary and summary, Codex's compacted record, pi's compaction entry): "
    "the round, trigger and tokens before each as recorded, beside the lab's count of "
    "the window it replaced, the summary's size (or that it is opaque), and of "
    "the facts the agent used after it that a tool had shown before it, how many the "
    "summary held, how many a tool re-read before use (and at what cost) and how many "
    "neither. Beside each, what the lab's stand-in summary of the same history keeps."
)


def add_parser(commands) -> argparse.ArgumentParser:
    compactions = commands.add_parser(
        "compactions",
        help="measure the agent's own compactions in its log",
        description=DESCRIPTION,
    )
    compactions.add_argument("file", type=Path, help="the agent's log (any known shape)")
    compactions.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write one object a compaction as JSON (default: off)",
    )
    add_max_mb_argument(compactions)
    return compactions


def main(args) -> int:
    """The compactions' lines, printed and, with --json, written."""
    try:
        log = load_transcript(args.file, max_bytes=args.max_mb * 1024 * 1024)
    except TranscriptFileError as error:
        return fail(f"error: {error}")
    reports = measure_compactions(log)
    print(log.describe())
    print()
    print(format_compactions(reports, record_falls(log)))
    if args.json is not None:
        rows = [report.as_dict() for report in reports]
        write_text_safely(
            args.json, json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
        )
        print(f"wrote {args.json}")
    return DONE
