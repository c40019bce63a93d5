"""The command line, above the core: `python -m minilib run | compress | compare`.

It reads the bundled session or an agent log, replays it through the article's window
and prints the per-round table. One module a command (`run.py`, `compress.py`,
`compare.py`), what they share in `common.py`; `main.py` builds the parser and
dispatches.
"""

from .main import format_rounds, main

__all__ = ["format_rounds", "main"]
