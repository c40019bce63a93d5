"""Write a generated docs page to a file or to stdout.

    python -m minilib.reports six-paths --write docs/six_paths.md [--no-tokenizers]
    python -m minilib.reports grounded --write docs/grounded.md
    python -m minilib.reports usage --write docs/recorded_usage.md
    python -m minilib.reports calibration --write docs/calibration.md

Without --write the page goes to stdout. `make data` rewrites every page; each page's
first lines name the command that writes it.
"""

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

from ..measure.tokenizers import INSTALL_HINT, available
from . import calibration_page, grounded_page, six_paths_page, usage_page

PROG = "python -m minilib.reports"
PAGES = {
    "six-paths": "docs/six_paths.md: the six compression paths on the bundled session",
    "grounded": "docs/grounded.md: the grounded replay on the six paths and aging rules",
    "usage": "docs/recorded_usage.md: the lab's count beside the usage the logs record",
    "calibration": "docs/calibration.md: the calibrated count on the real logs, held out",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    pages = parser.add_subparsers(dest="page", required=True)
    for name, about in PAGES.items():
        page = pages.add_parser(name, help=about, description=about)
        page.add_argument("--write", type=Path, help="write the page to this file")
    pages.choices["six-paths"].add_argument(
        "--no-tokenizers", action="store_true", help="leave out the real-tokenizer table"
    )
    return parser


def page_text(args: argparse.Namespace) -> Optional[str]:
    """The page's markdown; None (after saying why on stderr) when it cannot be built."""
    if args.page == "grounded":
        return grounded_page.build_markdown()
    if args.page == "usage":
        return usage_page.build_markdown()
    if args.page == "calibration":
        return calibration_page.build_markdown()
    include_tokenizers = not args.no_tokenizers
    if include_tokenizers and not available():
        print(
            f"{PROG} six-paths: the tokenizer table needs bpe-openai: {INSTALL_HINT}; "
            "or pass --no-tokenizers",
            file=sys.stderr,
        )
        return None
    return six_paths_page.build_markdown(include_tokenizers)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    text = page_text(args)
    if text is None:
        return 2
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(text, encoding="utf-8")
        print(f"wrote {args.write}")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
