"""Command line: `python -m minilib run` replays the bundled session like the article's
terminal card;
`python -m minilib compress FILE` replays a recorded transcript (JSON or JSONL) the same
way, by default through the production window (the bounded summary behind FastWindow,
later user turns folded; `--article` for the article's pipeline). `run --grounded`
replays the grounded script (the agent looks up what its window lacks) and prints the
outcome under the table; `--keep-unseen` ages a tool result only after the model has
seen it. `compare FILE` replays a log under every production policy; `compactions FILE`
measures the compactions the agent's own harness recorded in it; `calibrate FILE`
fits the lab's count to the API's, from the usage the log records; `cost FILE` prices
the session as its provider billed it; `sweep FILE` what it would have cost at each
threshold of a policy."""

import os
import sys
from typing import Optional, Sequence

from ..logs.replay import replay_transcript
from ..reports.rounds import format_rounds, format_summary
from . import calibrate, compactions, compare, compress, cost, run, sweep
from .common import DONE, INTERNAL_ERROR, PROG, Parser, fail

__all__ = ["build_parser", "format_rounds", "format_summary", "main"]

# one module a command: each adds its parser and does its work
COMMANDS = {
    "run": run,
    "compress": compress,
    "compare": compare,
    "compactions": compactions,
    "calibrate": calibrate,
    "cost": cost,
    "sweep": sweep,
}


def build_parser() -> Parser:
    parser = Parser(prog=PROG, description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS.values():
        command.add_parser(commands)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "compress":  # the replay passes through here: one seam
            return compress.main(args, replay=replay_transcript)
        return COMMANDS[args.command].main(args)
    except BrokenPipeError:  # the reader stopped reading (`| head`): not a fault
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return DONE
    except Exception as error:  # a fault of the lab, not of the input: say so in one line
        return fail(
            f"internal error ({type(error).__name__}: {str(error)[:200]}); please "
            "report it with the command and the file",
            INTERNAL_ERROR,
        )
