"""Command line: `python -m minilib run` replays the bundled session like the article's
terminal card;
`python -m minilib compress FILE` replays a recorded transcript (JSON or JSONL) the same
way. `run --grounded` replays the grounded script (the agent looks up what its window
lacks) and prints the outcome under the table; `--keep-unseen` ages a tool result only
after the model has seen it."""

import argparse
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

from ..logs.replay import (
    TranscriptFileError,
    load_transcript,
    replay_transcript,
    user_turn_advice,
)
from ..measure.grounding import GroundedSessionRun, GroundingFileError, run_grounded
from ..session import (
    DEFAULT_SESSION,
    SessionFileError,
    SessionRun,
    load_session,
    run_session,
)
from ..window import Settings

COLUMNS = ("round", "baseline", "msgs", "before", "after", "msgs", "aging", "summary")


def _cell(value) -> str:
    """A number with thousands separators; "-" where there is none (a look-up round has
    no baseline round)."""
    return "-" if value is None else f"{value:,}"


def format_rounds(run: SessionRun) -> str:
    """The per-round table: baseline window beside the compressed one."""
    lines = ["{:>5}  {:>9} {:>5}  {:>7} {:>6} {:>5}  {:>5}  {:>7}".format(*COLUMNS)]
    for r in run.rounds:
        lines.append(
            "{:>5}  {:>9} {:>5}  {:>7,} {:>6,} {:>5}  {:>5}  {:>7}".format(
                r.round,
                _cell(r.baseline_tokens),
                _cell(r.baseline_messages),
                r.tokens_before,
                r.tokens_after,
                r.messages_after,
                "yes" if r.aged else "",
                "yes" if r.summarized else "",
            )
        )
    return "\n".join(lines)


def plural(count: int, noun: str) -> str:
    """'1 round', '8 rounds'."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def format_summary(run: SessionRun) -> str:
    counts = {}
    for compression in run.compressions:
        counts[compression.strategy] = counts.get(compression.strategy, 0) + 1
    last = run.rounds[-1] if run.rounds else None
    text = [
        f"model decisions: {run.model_decisions}, summary calls: {run.summary_calls}, "
        f"tool calls: {run.tool_calls}",
        f"compressions: aging in {plural(counts.get('tool_result_aging', 0), 'round')}, "
        f"summary in {counts.get('rolling_summary', 0)}",
    ]
    if last is not None and last.baseline_tokens:
        saved = 1 - last.tokens_after / last.baseline_tokens
        text.append(
            f"round {last.round}: {last.tokens_after:,} tokens sent against "
            f"{last.baseline_tokens:,} "
            f"without compression ({saved:.0%} less)"
        )
    text.append(
        f"final window: {len(run.final_messages)} messages, {run.final_tokens:,} tokens"
    )
    return "\n".join(text)


def format_grounded(grounded: GroundedSessionRun) -> str:
    """The grounded outcome, printed under the table."""
    outcome = grounded.outcome
    lines = [
        f"round {step.call}: look-up for reply {step.reply}: "
        + ", ".join(f"{fact} ({call_id})" for fact, call_id in step.lookups)
        for step in grounded.steps
        if step.is_lookup
    ]
    lost = f" (lost: {', '.join(outcome.lost)})" if outcome.lost else ""
    lines += [
        f"grounded: the final answer states {len(outcome.right)} of "
        f"{len(outcome.declared)} facts it rests on{lost}",
        f"look-ups: {outcome.lookup_rounds} extra rounds, {outcome.lookup_calls} extra "
        f"tool calls; tokens sent over all rounds {outcome.tokens_sent:,} against "
        f"{outcome.plain_tokens_sent:,} not grounded ({outcome.extra_tokens:+,})",
        f"finished: {'yes' if outcome.finished else 'no'}",
    ]
    if outcome.unknown:
        lines.append(
            "unknown markers: "
            + ", ".join(f"round {round_} {fact}" for round_, fact in outcome.unknown)
        )
    return "\n".join(lines)


def write_outputs(run: SessionRun, out: Path, grounded: Optional[dict] = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
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
    (out / "rounds.json").write_text(
        json.dumps(document, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )


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


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad flag is one line on stderr (no usage dump) and exit status
    2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _add_settings_arguments(command: argparse.ArgumentParser) -> None:
    defaults = Settings()
    command.add_argument(
        "--threshold",
        type=_positive,
        default=defaults.threshold,
        help="window budget in tokens",
    )
    command.add_argument("--head-chars", type=_non_negative, default=defaults.head_chars)
    command.add_argument("--tail-chars", type=_non_negative, default=defaults.tail_chars)
    command.add_argument("--min-chars", type=_non_negative, default=defaults.min_chars)
    command.add_argument(
        "--protect-tail", type=_non_negative, default=defaults.protect_tail
    )
    command.add_argument(
        "--out",
        type=Path,
        default=Path("out"),
        help="folder for trace.jsonl and rounds.json",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m minilib", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = commands.add_parser(
        "run", help="replay the session with and without compression"
    )
    _add_settings_arguments(run)
    run.add_argument(
        "--session", type=Path, default=DEFAULT_SESSION, help="session file (JSON)"
    )
    run.add_argument(
        "--grounded",
        action="store_true",
        help="the scripted agent checks its window for the facts each reply rests on, "
        "looks up what is missing, and the outcome is printed under the table",
    )
    run.add_argument(
        "--keep-unseen",
        action="store_true",
        help="age a tool result only after the model has seen it (the article ages "
        "the newest result at once)",
    )
    compress = commands.add_parser(
        "compress", help="replay a recorded transcript round by round"
    )
    compress.add_argument(
        "file",
        type=Path,
        help="transcript: a JSON list of messages, an object with "
        "'messages', or JSONL (.jsonl)",
    )
    _add_settings_arguments(compress)
    compress.add_argument(
        "--fold-user-turns",
        action="store_true",
        help="let the summary fold later user turns too (quoted whole); the article's "
        "rule folds assistant and tool messages only",
    )
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    settings = Settings(
        args.threshold,
        args.head_chars,
        args.tail_chars,
        args.min_chars,
        args.protect_tail,
        getattr(args, "fold_user_turns", False),
    )
    log = grounded = None
    try:
        if args.command == "compress":
            log = load_transcript(args.file)
            run = replay_transcript(log.messages, settings)
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
    except (SessionFileError, TranscriptFileError, GroundingFileError) as error:
        print(f"python -m minilib: error: {error}", file=sys.stderr)
        return 2
    if not run.rounds and run.overflow is not None:  # the protected head alone is over
        print(f"python -m minilib: stopped: {run.overflow}", file=sys.stderr)
        return 1
    if log is not None:  # what was read, so a surprise in the table can be traced back
        print(log.describe())
        print()
    print(format_rounds(run))
    print()
    print(format_summary(run))
    outcome = grounded.outcome if grounded is not None else None
    if outcome is not None:
        print()
        print(format_grounded(grounded))
    write_outputs(run, args.out, None if outcome is None else outcome.as_dict())
    print(f"wrote {args.out / 'trace.jsonl'} and {args.out / 'rounds.json'}")
    if run.overflow is not None:
        print(f"python -m minilib: stopped: {run.overflow}", file=sys.stderr)
        if log is not None and (advice := user_turn_advice(log.messages, settings, run)):
            print(f"python -m minilib: {advice}", file=sys.stderr)
        return 1
    return 0
