"""`python -m minilib compress FILE`: replay a recorded transcript (JSON or JSONL)
round by round, by default through the production window (the bounded summary behind
FastWindow, later user turns folded; `--article` for the article's pipeline), and
print what was read, the per-round table and, with `--report DIR`, what compression
cost the agent."""

import argparse
from pathlib import Path
from typing import Optional

from ..logs.replay import (
    ARTICLE,
    PRODUCTION,
    LoadedLog,
    TranscriptFileError,
    TranscriptRun,
    load_transcript,
    replay_transcript,
    user_turn_advice,
    with_output_ids,
)
from ..measure.cache import CACHE_PRICES, DEFAULT_PRICES
from ..measure.calibration import (
    CalibrationError,
    format_predicted_calls,
    logged_events,
    predicted_calls,
)
from ..measure.compactions import measure_compactions
from ..measure.costs import measure_replay
from ..measure.recorded_usage import counted_usage_rows, format_usage, usage_summary
from ..measure.tokenizers import TokenizerUnavailable
from ..measure.way_back import log_declares_recall
from ..reports.compactions import format_compactions
from ..reports.costs import format_costs, write_report
from ..reports.rounds import format_rounds, format_summary
from ..scale.bounded import MIN_DEFAULT_BUDGET
from ..tokens import estimate_message_tokens, estimate_tokens
from ..window import Settings
from .common import (
    DONE,
    OUTPUT_FILES,
    OVERFLOW,
    add_count_arguments,
    add_max_mb_argument,
    add_settings_arguments,
    fail,
    settings_from,
    summary_budget,
    write_and_say,
)
from .counting import counting_for, window_lines

DESCRIPTION = (
    "Replay an agent's log round by round. By default through the production window, "
    "which suits a real agent session: aging, then a rolling summary bounded to a "
    f"quarter of the threshold (at least {MIN_DEFAULT_BUDGET} tokens), behind "
    "FastWindow, with later user turns folded (quoted whole). --article replays the "
    "article's exact pipeline instead: its unbounded summary, user turns not folded."
)


def add_parser(commands) -> argparse.ArgumentParser:
    compress = commands.add_parser(
        "compress",
        help="replay a recorded transcript round by round",
        description=DESCRIPTION,
    )
    compress.add_argument(
        "file",
        type=Path,
        help="transcript: a JSON list of messages, an object with "
        "'messages', or JSONL (.jsonl)",
    )
    add_settings_arguments(compress, threshold_default=None)
    add_max_mb_argument(compress)
    _add_window_arguments(compress)
    _add_report_arguments(compress)
    compress.add_argument(
        "--full-history",
        action="store_true",
        help="replay the whole history through the agent's own compactions; by default "
        "(off) a compaction the log records replaces the history, as the model saw it",
    )
    compress.add_argument(
        "--strict",
        action="store_true",
        help="refuse a log with a gap a real run left (an unanswered call, a result "
        "with no call, a message between calls and results, a damaged JSONL line, an "
        "unknown content part) instead of repairing it as a harness would before its "
        "next call (default: off; each repair is named in the output and rounds.json)",
    )
    return compress


def _add_window_arguments(compress: argparse.ArgumentParser) -> None:
    """Which window replays the log, and how it counts tokens."""
    compress.add_argument(
        "--article",
        action="store_true",
        help="replay through the article's pipeline (aging, then its unbounded "
        "summary) instead of the production window (default: off); user turns are "
        "then not folded unless --fold-user-turns is given",
    )
    compress.add_argument(
        "--summary-budget",
        type=summary_budget,
        default=None,
        help="the production window's summary budget in tokens (default: a quarter of "
        f"the threshold, at least {MIN_DEFAULT_BUDGET})",
    )
    compress.add_argument(
        "--fold-user-turns",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="let the summary fold later user turns too, and the system messages a "
        "harness writes between them, quoted whole (default: on in "
        "the production window, off with --article: the article's rule folds "
        "assistant and tool messages only)",
    )
    add_count_arguments(compress)


def _add_report_arguments(compress: argparse.ArgumentParser) -> None:
    compress.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="DIR",
        help="also measure what compression cost the agent and write DIR/report.json "
        "and DIR/cut.csv: the facts it used that were kept, restorable or lost, the "
        "prompt cache reused and written, each tool output's fate (default: off)",
    )
    compress.add_argument(
        "--cache-prices",
        choices=sorted(CACHE_PRICES),
        default=DEFAULT_PRICES,
        help="the price table the report's cache cost uses, in multiples of the input "
        "price (default %(default)s: read 0.1x, write 1.25x)",
    )


def main(args, replay=replay_transcript) -> int:
    """Replay the log with `replay` (the command line passes its own, so a caller can
    substitute it), print the table and the report; return the exit status."""
    window = ARTICLE if args.article else PRODUCTION
    fold_user_turns = args.fold_user_turns
    if fold_user_turns is None:  # a real agent session has many user turns
        fold_user_turns = window == PRODUCTION
    if (clash := _writes_over_input(args)) is not None:
        return fail(
            f"error: --out {args.out} would write {clash.name} over the log being "
            "read; choose another folder"
        )
    if window == ARTICLE and args.summary_budget is not None:
        return fail(
            "error: --summary-budget is the production window's; the article's "
            "summary (--article) has no budget"
        )
    try:
        log, counting = _load_and_count(args)
        settings = settings_from(args, fold_user_turns, counting.threshold)
        count_tokens, counted_with = counting.count_tokens, counting.counted_with
        run = replay(
            log,
            settings,
            full_history=args.full_history,
            window=window,
            summary_budget=args.summary_budget,
            count_tokens=count_tokens,
        )
    except TokenizerUnavailable as error:
        return fail(f"error: --tokenizer {args.tokenizer}: {error}")
    except (TranscriptFileError, CalibrationError) as error:
        return fail(f"error: {error}")
    for line in window_lines(counting):
        print(line)
    if not run.rounds and run.overflow is not None:  # the protected head alone is over
        return fail(f"stopped: {run.overflow}", OVERFLOW)
    print_replay(log, run, counted_with, count_tokens, counting)
    write_and_say(
        run,
        args.out,
        log=log,
        count_tokens=count_tokens,
        predicted=predicted_inputs(log, run, counting),
    )
    if args.report is not None:
        print_report(args, log, run, settings, count_tokens, counted_with)
    if run.overflow is not None:
        fail(f"stopped: {run.overflow}", OVERFLOW)
        if advice := user_turn_advice(log, settings, run):
            fail(advice)
        return OVERFLOW
    return DONE


def _load_and_count(args):
    """The log, and how it is counted and at which window; a --threshold given
    replaces the window (and its overhead) as the budget of the messages: the
    replay's threshold is `counting.threshold` either way."""
    log = load_transcript(
        args.file, max_bytes=args.max_mb * 1024 * 1024, strict=args.strict
    )
    counting = counting_for(log, args.tokenizer, args.calibration, None)
    if args.threshold is not None:
        counting.window_why = "the threshold given on the command line"
        counting.window, counting.overhead = args.threshold, 0
    return log, counting


def _writes_over_input(args) -> Optional[Path]:
    """The output file that is the input file, if --out points at the input's folder."""
    source = args.file.resolve()
    return next(
        (args.out / n for n in OUTPUT_FILES if (args.out / n).resolve() == source), None
    )


def predicted_inputs(log, run: TranscriptRun, counting) -> Optional[list]:
    """Per round, what the calibration predicts the API counted as the call's input
    (`predicted_input_tokens`: from the log's messages alone, the number the printed
    table gives for a call with usage), the held-out fit's, the record and whether the
    held-out fit saw the call; and what the lab's own window would have sent (that
    prediction less what the lab's window saved that round). None when not
    calibrated."""
    if counting is None or counting.calibration is None:
        return None
    calibration = counting.calibration
    predictions = calibration.predictions(log)
    held_out = calibration.predictions(log, held_out=True)
    calls = {call.round: call for call in predicted_calls(log, calibration)}
    rows = []
    for r in run.rounds:
        if r.round not in predictions:
            rows.append({"predicted_input_tokens": None})
            continue
        call = calls.get(r.round)
        rows.append(
            {
                "predicted_input_tokens": predictions[r.round],
                "held_out_predicted_input_tokens": held_out[r.round],
                "recorded_input_tokens": call.recorded if call else None,
                "fit": call.fit if call else None,
                "predicted_input_tokens_after_lab_window": predictions[r.round]
                - (r.baseline_tokens - r.tokens_after),
            }
        )
    return rows


def print_replay(
    log: LoadedLog,
    run: TranscriptRun,
    counted_with: str,
    count_tokens=estimate_tokens,
    counting=None,
) -> None:
    """What was read (so a surprise in the table can be traced back), then the table."""
    print(log.describe())
    print(run.window_line())
    print(f"tokens: {counted_with}")
    for line in counting.lines if counting is not None else ():
        print(line)
    print()
    print(format_rounds(run))
    print()
    print(format_summary(run))
    if log.usage and counting is not None and counting.calibration is not None:
        print()
        print(format_predicted_calls(predicted_calls(log, counting.calibration)))
    elif log.usage:  # what the API counted, where the log records it
        print()
        print(format_usage(counted_usage_rows(log, count_tokens), logged_events(log)))


def print_report(
    args,
    log: LoadedLog,
    run: TranscriptRun,
    settings: Settings,
    count_tokens,
    counted_with: str,
) -> None:
    """`--report DIR`: what compression cost the agent, printed and written."""
    costs = measure_replay(
        run,
        with_output_ids(log.messages),
        getattr(count_tokens, "per_message", estimate_message_tokens),
        rounds_total=log.rounds,
        counted_with=counted_with,
        prices=args.cache_prices,
        recall=log_declares_recall(log),
    )
    print()
    print(format_costs(costs))
    extra = {
        "log": str(args.file),
        "window": run.window,
        "summary_budget": run.summary_budget,
        "settings": settings.__dict__,
    }
    if log.compactions:
        extra["compactions"] = print_compactions(log)
    if log.usage:  # printed with the replay above; the report keeps it too
        extra["recorded_usage"] = usage_summary(counted_usage_rows(log, count_tokens))
    write_report(costs, args.report, extra)
    print(f"wrote {args.report / 'report.json'} and {args.report / 'cut.csv'}")


def print_compactions(log: LoadedLog) -> list:
    """The report's section on the agent's own compactions (as `compactions` prints
    it); returns them as the report's JSON rows."""
    reports = measure_compactions(log)
    print()
    print(format_compactions(reports))
    return [report.as_dict() for report in reports]
