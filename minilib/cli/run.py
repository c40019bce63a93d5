"""`python -m minilib run`: replay the bundled session like the article's terminal
card. `--grounded` replays the grounded script (the agent looks up what its window
lacks) and prints the outcome under the table; `--keep-unseen` ages a tool result
only after the model has seen it."""

import argparse
from pathlib import Path

from ..measure.grounding import GroundingFileError, run_grounded
from ..reports.rounds import format_grounded, format_rounds, format_summary
from ..session import DEFAULT_SESSION, SessionFileError, load_session, run_session
from .common import (
    DONE,
    OVERFLOW,
    add_settings_arguments,
    counter,
    fail,
    settings_from,
    write_and_say,
)


def add_parser(commands) -> argparse.ArgumentParser:
    run = commands.add_parser(
        "run", help="replay the session with and without compression"
    )
    add_settings_arguments(run)
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
    return run


def main(args) -> int:
    settings = settings_from(args, fold_user_turns=False)
    grounded = None
    try:
        if args.grounded or args.keep_unseen:
            grounded = run_grounded(
                load_session(args.session),
                settings,
                grounded=args.grounded,
                keep_unseen=args.keep_unseen,
            )
            run = grounded.run
        else:
            run = run_session(load_session(args.session), settings)
    except (SessionFileError, GroundingFileError) as error:
        return fail(f"error: {error}")
    if not run.rounds and run.overflow is not None:  # the protected head alone is over
        return fail(f"stopped: {run.overflow}", OVERFLOW)
    print(format_rounds(run))
    print()
    print(format_summary(run))
    print(f"tokens: {counter('estimate')[1]}")
    outcome = grounded.outcome if grounded is not None else None
    if outcome is not None:
        print()
        print(format_grounded(grounded))
    write_and_say(run, args.out, None if outcome is None else outcome.as_dict())
    if run.overflow is not None:
        return fail(f"stopped: {run.overflow}", OVERFLOW)
    return DONE
