"""Command line: `python -m minilib run` replays the bundled session like the article's
terminal card;
`python -m minilib compress FILE` replays a recorded transcript (JSON or JSONL) the same
way, by default through the production window (the bounded summary behind FastWindow,
later user turns folded; `--article` for the article's pipeline). `run --grounded`
replays the grounded script (the agent looks up what its window lacks) and prints the
outcome under the table; `--keep-unseen` ages a tool result only after the model has
seen it."""

import argparse
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

from ..logs import MAX_LOG_BYTES
from ..logs.replay import (
    ARTICLE,
    PRODUCTION,
    TranscriptFileError,
    TranscriptRun,
    load_transcript,
    replay_transcript,
    user_turn_advice,
    with_output_ids,
)
from ..measure.cache import CACHE_PRICES, DEFAULT_PRICES
from ..measure.costs import ESTIMATED, measure_replay
from ..measure.grounding import GroundingFileError, run_grounded
from ..measure.tokenizers import TokenizerUnavailable, message_counter
from ..reports.costs import format_costs, write_report
from ..reports.rounds import format_grounded, format_rounds, format_summary
from ..scale.bounded import MIN_BUDGET, MIN_DEFAULT_BUDGET
from ..session import (
    DEFAULT_SESSION,
    SessionFileError,
    SessionRun,
    load_session,
    run_session,
)
from ..tokens import estimate_message_tokens, estimate_tokens
from ..trace import write_text_safely
from ..window import Settings


def write_outputs(run: SessionRun, out: Path, grounded: Optional[dict] = None) -> None:
    run.tracer.write_jsonl(out / "trace.jsonl")
    document = {
        "settings": run.settings.__dict__,
        "rounds": run.rounds_as_dicts(),
        "final_messages": len(run.final_messages),
        "final_tokens": run.final_tokens,
        "overflow": str(run.overflow) if run.overflow else None,
    }
    if grounded is not None:
        document["grounded"] = grounded
    if isinstance(run, TranscriptRun):  # a log: which window replayed it
        document["window"] = run.window
        document["summary_budget"] = run.summary_budget
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    write_text_safely(out / "rounds.json", text)


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number, got {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return value


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value == 0:
        raise argparse.ArgumentTypeError("expected a number >= 1, got 0")
    return value


def _summary_budget(text: str) -> int:
    value = _non_negative(text)
    if value < MIN_BUDGET:  # below it not even the condensed line fits
        raise argparse.ArgumentTypeError(
            f"expected a number >= {MIN_BUDGET}, got {value}"
        )
    return value


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad flag is one line on stderr (no usage dump) and
    exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_settings_arguments(command: argparse.ArgumentParser) -> None:
    defaults = Settings()
    command.add_argument(
        "--threshold",
        type=_positive,
        default=defaults.threshold,
        help="window budget in tokens (default %(default)s, the article's)",
    )
    command.add_argument(
        "--head-chars",
        type=_non_negative,
        default=defaults.head_chars,
        help="characters an aged tool result keeps from its start (default %(default)s)",
    )
    command.add_argument(
        "--tail-chars",
        type=_non_negative,
        default=defaults.tail_chars,
        help="characters an aged tool result keeps from its end (default %(default)s)",
    )
    command.add_argument(
        "--min-chars",
        type=_non_negative,
        default=defaults.min_chars,
        help="a tool result this short or shorter is never aged (default %(default)s)",
    )
    command.add_argument(
        "--protect-tail",
        type=_non_negative,
        default=defaults.protect_tail,
        help="the last messages the summary never folds (default %(default)s)",
    )
    command.add_argument(
        "--out",
        type=Path,
        default=Path("out"),
        help="folder for trace.jsonl and rounds.json (default %(default)s)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m minilib", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = commands.add_parser(
        "run", help="replay the session with and without compression"
    )
    _add_settings_arguments(run)
    run.add_argument(
        "--session",
        type=Path,
        default=DEFAULT_SESSION,
        help="session file (JSON; default: the bundled session)",
    )
    run.add_argument(
        "--grounded",
        action="store_true",
        help="the scripted agent checks its window for the facts each reply rests on, "
        "looks up what is missing, and the outcome is printed under the table "
        "(default: off)",
    )
    run.add_argument(
        "--keep-unseen",
        action="store_true",
        help="age a tool result only after the model has seen it (default: off; the "
        "article ages the newest result at once)",
    )
    compress = commands.add_parser(
        "compress",
        help="replay a recorded transcript round by round",
        description="Replay an agent's log round by round. By default through the "
        "production window, which suits a real agent session: aging, then a rolling "
        "summary bounded to a quarter of the threshold (at least "
        f"{MIN_DEFAULT_BUDGET} tokens), behind FastWindow, with later user turns "
        "folded (quoted whole). --article replays the article's exact pipeline "
        "instead: its unbounded summary, user turns not folded.",
    )
    compress.add_argument(
        "file",
        type=Path,
        help="transcript: a JSON list of messages, an object with "
        "'messages', or JSONL (.jsonl)",
    )
    _add_settings_arguments(compress)
    compress.add_argument(
        "--max-mb",
        type=_positive,
        default=MAX_LOG_BYTES // (1024 * 1024),
        help="refuse a log larger than this many megabytes (default %(default)s)",
    )
    compress.add_argument(
        "--article",
        action="store_true",
        help="replay through the article's pipeline (aging, then its unbounded "
        "summary) instead of the production window (default: off); user turns are "
        "then not folded unless --fold-user-turns is given",
    )
    compress.add_argument(
        "--summary-budget",
        type=_summary_budget,
        default=None,
        help="the production window's summary budget in tokens (default: a quarter of "
        f"the threshold, at least {MIN_DEFAULT_BUDGET})",
    )
    compress.add_argument(
        "--fold-user-turns",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="let the summary fold later user turns too, quoted whole (default: on in "
        "the production window, off with --article: the article's rule folds "
        "assistant and tool messages only)",
    )
    compress.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        default="estimate",
        help="count tokens with the article's estimate (default) or a real tokenizer "
        "(o200k: o200k_base, cl100k: cl100k_base; needs the optional bpe-openai): the "
        "window is governed with that count, and the report shows the estimate beside it",
    )
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
    compress.add_argument(
        "--full-history",
        action="store_true",
        help="replay the whole history through the agent's own compactions; by default "
        "(off) a compaction the log records replaces the history, as the model saw it",
    )
    compare = commands.add_parser(
        "compare",
        help="replay a log under every production policy, one row each",
        description="Replay an agent's log under the compression policies production "
        "agents run (the article's, Claude Code's, Codex's, the Anthropic API's, "
        "OpenHands', SWE-agent's, Gemini CLI's, opencode's, the OpenAI Agents SDK's, "
        "LangChain's) and print one row a policy: rounds completed, tokens sent, the "
        "facts the agent used that were kept, restorable or lost, the prompt cache, "
        "windows that broke pairing and summary calls added. Where a policy calls an "
        "LLM to summarise, the lab's deterministic summary stands in.",
    )
    compare.add_argument("file", type=Path, help="the agent's log (any known shape)")
    compare.add_argument(
        "--policies",
        type=_policy_list,
        default=None,
        help="comma-separated policy keys (default: all of them)",
    )
    compare.add_argument(
        "--window",
        type=_positive,
        default=200_000,
        help="the model's context window in tokens; each policy derives its own "
        "trigger from it (default %(default)s)",
    )
    compare.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        default="estimate",
        help="count tokens with the article's estimate (default) or a real tokenizer",
    )
    compare.add_argument(
        "--cache-prices",
        choices=sorted(CACHE_PRICES),
        default=DEFAULT_PRICES,
        help="the cache cost's price table (default %(default)s)",
    )
    compare.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the rows as JSON (default: off)",
    )
    compare.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep each policy's trace in DIR/<policy>/trace.jsonl (default: off)",
    )
    compare.add_argument(
        "--max-mb",
        type=_positive,
        default=MAX_LOG_BYTES // (1024 * 1024),
        help="refuse a log larger than this many megabytes (default %(default)s)",
    )
    return parser


def _policy_list(text: str) -> list:
    from ..policies.production import POLICIES

    keys = [key.strip() for key in text.split(",") if key.strip()]
    unknown = [key for key in keys if key not in POLICIES]
    if not keys or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown policy {(unknown or [text])[0]!r}; expected some of "
            + ", ".join(POLICIES)
        )
    return keys


def _compare(args) -> int:
    """`python -m minilib compare`: one row a policy."""
    from ..policies.production.compare import compare_policies, format_comparison

    try:
        count_tokens, counted_with = _counter(args.tokenizer)
        log = load_transcript(args.file, max_bytes=args.max_mb * 1024 * 1024)
        rows = compare_policies(
            log.messages,
            args.policies,
            args.window,
            count_tokens,
            counted_with=counted_with,
            prices=args.cache_prices,
            trace_folder=args.out,
            agent_log=log,  # its own compactions, beside its policy's replay
        )
    except TokenizerUnavailable as error:
        print(
            f"python -m minilib: error: --tokenizer {args.tokenizer}: {error}",
            file=sys.stderr,
        )
        return BAD_INPUT
    except TranscriptFileError as error:
        print(f"python -m minilib: error: {error}", file=sys.stderr)
        return BAD_INPUT
    except ImportError as error:  # a policy's optional package (langchain-core)
        print(f"python -m minilib: error: {error}", file=sys.stderr)
        return BAD_INPUT
    print(log.describe())
    print(f"window: {args.window:,} tokens; tokens {counted_with}")
    print()
    print(format_comparison(rows))
    if args.json is not None:
        text = json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
        write_text_safely(args.json, text)
        print(f"wrote {args.json}")
    if args.out is not None:
        print(f"wrote {len(rows)} traces under {args.out}")
    return DONE


# --tokenizer: the article's estimate, or a real encoding (minilib.measure.tokenizers).
TOKENIZERS = {"estimate": None, "o200k": "o200k_base", "cl100k": "cl100k_base"}


def _counter(name: str):
    """The counter `--tokenizer name` governs with, and how its figures are labelled."""
    encoding = TOKENIZERS[name]
    if encoding is None:
        return estimate_tokens, ESTIMATED
    return message_counter(encoding), f"counted with {encoding}"


# Exit statuses: a script can tell a finished replay, a replay a context overflow
# stopped, input the lab cannot read, and a fault of the lab's own.
DONE, OVERFLOW, BAD_INPUT, INTERNAL_ERROR = 0, 1, 2, 3
OUTPUT_FILES = ("trace.jsonl", "rounds.json")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _compare(args) if args.command == "compare" else _run(args)
    except Exception as error:  # a fault of the lab, not of the input: say so in one line
        print(
            f"python -m minilib: internal error ({type(error).__name__}: "
            f"{str(error)[:200]}); please report it with the command and the file",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


def _writes_over_input(args) -> Optional[Path]:
    """The output file that is the input file, if --out points at the input's folder."""
    if getattr(args, "file", None) is None:
        return None
    source = args.file.resolve()
    return next(
        (args.out / n for n in OUTPUT_FILES if (args.out / n).resolve() == source), None
    )


def _run(args) -> int:
    window = ARTICLE if getattr(args, "article", False) else PRODUCTION
    fold_user_turns = getattr(args, "fold_user_turns", None)
    if fold_user_turns is None:  # a real agent session has many user turns
        fold_user_turns = args.command == "compress" and window == PRODUCTION
    settings = Settings(
        args.threshold,
        args.head_chars,
        args.tail_chars,
        args.min_chars,
        args.protect_tail,
        fold_user_turns,
    )
    log = grounded = None
    if (clash := _writes_over_input(args)) is not None:
        print(
            f"python -m minilib: error: --out {args.out} would write {clash.name} over "
            "the log being read; choose another folder",
            file=sys.stderr,
        )
        return BAD_INPUT
    count_tokens, counted_with = estimate_tokens, None
    try:
        if args.command == "compress":
            count_tokens, counted_with = _counter(args.tokenizer)
            if window == ARTICLE and args.summary_budget is not None:
                print(
                    "python -m minilib: error: --summary-budget is the production "
                    "window's; the article's summary (--article) has no budget",
                    file=sys.stderr,
                )
                return BAD_INPUT
            log = load_transcript(args.file, max_bytes=args.max_mb * 1024 * 1024)
            run = replay_transcript(
                log,
                settings,
                full_history=args.full_history,
                window=window,
                summary_budget=args.summary_budget,
                count_tokens=count_tokens,
            )
        elif args.grounded or args.keep_unseen:
            grounded = run_grounded(
                load_session(args.session),
                settings,
                grounded=args.grounded,
                keep_unseen=args.keep_unseen,
            )
            run = grounded.run
        else:
            run = run_session(load_session(args.session), settings)
    except TokenizerUnavailable as error:
        print(
            f"python -m minilib: error: --tokenizer {args.tokenizer}: {error}",
            file=sys.stderr,
        )
        return BAD_INPUT
    except (SessionFileError, TranscriptFileError, GroundingFileError) as error:
        print(f"python -m minilib: error: {error}", file=sys.stderr)
        return BAD_INPUT
    if not run.rounds and run.overflow is not None:  # the protected head alone is over
        print(f"python -m minilib: stopped: {run.overflow}", file=sys.stderr)
        return OVERFLOW
    if log is not None:  # what was read, so a surprise in the table can be traced back
        print(log.describe())
        print(run.window_line())
        print(f"tokens: {counted_with}")
        print()
    print(format_rounds(run))
    print()
    print(format_summary(run))
    if log is None:  # a log's report says it above the table
        print(f"tokens: {_counter('estimate')[1]}")
    outcome = grounded.outcome if grounded is not None else None
    if outcome is not None:
        print()
        print(format_grounded(grounded))
    write_outputs(run, args.out, None if outcome is None else outcome.as_dict())
    print(f"wrote {args.out / 'trace.jsonl'} and {args.out / 'rounds.json'}")
    if log is not None and args.report is not None:
        costs = measure_replay(
            run,
            with_output_ids(log.messages),
            getattr(count_tokens, "per_message", estimate_message_tokens),
            rounds_total=log.rounds,
            counted_with=counted_with,
            prices=args.cache_prices,
        )
        print()
        print(format_costs(costs))
        extra = {
            "log": str(args.file),
            "window": run.window,
            "summary_budget": run.summary_budget,
            "settings": settings.__dict__,
        }
        write_report(costs, args.report, extra)
        print(f"wrote {args.report / 'report.json'} and {args.report / 'cut.csv'}")
    if run.overflow is not None:
        print(f"python -m minilib: stopped: {run.overflow}", file=sys.stderr)
        if log is not None and (advice := user_turn_advice(log, settings, run)):
            print(f"python -m minilib: {advice}", file=sys.stderr)
        return OVERFLOW
    return DONE
