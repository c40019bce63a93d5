"""`python -m minilib sweep LOG --policy P --threshold FROM:TO:STEP [--json FILE]`:
what a session would have cost at each threshold of one policy, with the compactions
it would have made and the facts it would have lost (minilib.policies.production.sweep).
Given a folder, every session under it (minilib.corpus): `--out FILE` (Parquet or JSON
lines) gets a row a session and threshold as they arrive; `--jobs N` runs them on a
Dask LocalCluster, `--scheduler ADDRESS` on a running Dask cluster.
"""

import argparse
import json
import sys
from pathlib import Path

from ..logs.replay import TranscriptFileError, load_transcript
from ..measure.calibration import CalibrationError
from ..measure.predicted_bill import UnpricedModel
from ..policies.production.sweep import (
    format_sweep,
    parse_range,
    sweep_log,
    threshold_parameter,
)
from ..trace import write_text_safely
from .common import DONE, add_count_arguments, add_max_mb_argument, fail

DESCRIPTION = (
    "Replay one policy on a log at each threshold of a range and price each run as the "
    "provider bills it (the rows' one unit, the agent's prompt cache, its compaction "
    "calls): the bill, the compactions and the facts the agent used later that the "
    "windows lost, a line a threshold."
)


def add_parser(commands) -> argparse.ArgumentParser:
    command = commands.add_parser(
        "sweep",
        help="what a session would have cost at each threshold of a policy",
        description=DESCRIPTION,
    )
    command.add_argument(
        "file",
        type=Path,
        help="the agent's log (any known shape), or a folder: every session under it",
    )
    command.add_argument(
        "--policy",
        required=True,
        help="the policy to sweep, e.g. claude-code (its auto-compact trigger), codex "
        "(auto_compact_token_limit), anthropic-compaction (trigger)",
    )
    command.add_argument(
        "--threshold",
        required=True,
        metavar="FROM:TO:STEP",
        help="thresholds in tokens, TO included, e.g. 100k:180k:10k",
    )
    command.add_argument(
        "--window",
        type=int,
        default=None,
        help="the model's context window (default: the log's model's)",
    )
    command.add_argument("--agent-version", default=None, help=argparse.SUPPRESS)
    command.add_argument(
        "--json", type=Path, default=None, metavar="FILE", help="also write the rows"
    )
    command.add_argument(
        "--figure",
        type=Path,
        default=None,
        metavar="FILE.html",
        help="also write the plotly figure (needs the notebooks extra)",
    )
    command.add_argument(
        "--model",
        default=None,
        help="price the calls as this model (default: the model the log names)",
    )
    _add_folder_arguments(command)
    add_count_arguments(command)
    add_max_mb_argument(command)
    return command


def _add_folder_arguments(command: argparse.ArgumentParser) -> None:
    """How the sessions of a folder are run, and where their rows go."""
    command.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="one log: processes to replay in (default 1); a folder: a Dask "
        "LocalCluster of N worker processes (default: this process alone)",
    )
    command.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="a folder: run its sessions on the Dask cluster at ADDRESS "
        "(tcp://host:8786)",
    )
    command.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help="a folder: write a row a session and threshold as they arrive, "
        "Parquet (.parquet) or JSON lines (.jsonl); a rerun skips the sessions "
        "already in it",
    )


def main(args) -> int:
    from .compare import row_counting

    try:
        thresholds = parse_range(args.threshold)
        threshold_parameter(args.policy)
    except ValueError as error:
        return fail(f"error: --threshold/--policy: {error}")
    if args.file.is_dir():
        return folder_main(args, thresholds)
    try:
        log = load_transcript(args.file, max_bytes=args.max_mb * 1024 * 1024)
        counting = row_counting(
            log, args.tokenizer, args.calibration, args.window, args.agent_version
        )
        points = sweep_log(
            log, args.policy, thresholds, counting, args.jobs or 1, model=args.model
        )
    except (TranscriptFileError, CalibrationError, UnpricedModel) as error:
        return fail(f"error: {error}")
    except ImportError as error:  # the price data, or a policy's package
        return fail(f"error: {error}")
    recorded = None
    if log.billed:
        from ..measure.bill import record_bill

        recorded = record_bill(log).total_usd
    print(log.describe().splitlines()[0])
    print(f"{args.policy}, every run in the unit {counting.counted_with}")
    for line in format_sweep(points, args.policy, recorded):
        print(line)
    if args.json is not None:
        document = {
            "log": str(args.file),
            "policy": args.policy,
            "recorded_usd": recorded,
            "rows": [p.as_dict() for p in points],
        }
        write_text_safely(args.json, json.dumps(document, indent=1) + "\n")
        print(f"wrote {args.json}")
    if args.figure is not None:
        try:
            from ..lab.sweep_view import sweep_figure
        except ImportError as error:
            return fail(f"error: --figure needs the notebooks extra ({error})")
        sweep_figure(points, args.policy, recorded).write_html(
            str(args.figure), include_plotlyjs=True
        )
        print(f"wrote {args.figure}")
    return DONE


def folder_main(args, thresholds) -> int:
    """Every session under a folder: a row a session and threshold, then the totals."""
    from ..corpus.engine import format_totals, sweep_folder, totals_by_threshold
    from ..corpus.table import read_rows

    if args.out is not None and args.out.suffix not in (".parquet", ".pq", ".jsonl"):
        return fail(f"error: --out {args.out}: name a .parquet or a .jsonl file")
    try:
        run = sweep_folder(
            [args.file],
            args.policy,
            thresholds,
            args.out,
            args.model,
            args.jobs or 0,
            args.scheduler,
            progress_stream=sys.stderr,
        )
    except ImportError as error:
        return fail(f"error: {error}")
    except OSError as error:  # a scheduler that does not answer
        return fail(f"error: --scheduler {args.scheduler}: {error}")
    rows = read_rows(args.out) if args.out is not None else run.rows
    print(
        f"{args.file}: {run.measured:,} sessions measured now ({run.failed:,} could "
        f"not be read), {run.skipped:,} done before"
        + (f"; the table: {args.out}" if args.out is not None else "")
    )
    totals = totals_by_threshold(rows)
    for line in format_totals(totals):
        print(line)
    if args.figure is not None and totals:
        from ..lab.sweep_view import corpus_figure

        corpus_figure(totals, args.policy).write_html(str(args.figure))
        print(f"wrote {args.figure}")
    return DONE
