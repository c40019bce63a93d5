"""The command line, above the core: `python -m minilib run | compress FILE`.

It reads the bundled session or an agent log, replays it through the article's window
and prints the per-round table; see `main.py` for the commands and their flags.
"""

from .main import format_rounds, main

__all__ = ["format_rounds", "main"]
