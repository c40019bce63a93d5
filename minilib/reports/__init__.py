"""Report rows as plain data, for the command line, the generated docs and the lab.

Standard library only: each report is rows of plain values (dicts) with the column
titles to show them under, or the text built from them. The command line prints
`rounds`; the lab turns the same rows into DataFrames and figures; the docs pages are
built here and written by `python -m minilib.reports`.

- `rounds`: a replay as text (the per-round table, the summary lines, the grounded
  outcome), as `python -m minilib run` prints it.
- `paths`: the six compression paths as rows (per run, per fact, per tokenizer).
- `costs`: a replay's measured costs (facts, prompt cache, outputs cut) as the lines
  and files `python -m minilib compress --report` prints and writes.
- `markdown`: rows as a markdown table.
- `six_paths_page`, `grounded_page`: docs/six_paths.md and docs/grounded.md.
"""

from .markdown import markdown_table
from .paths import (
    COMPARISON_COLUMNS,
    GROUNDED_COLUMNS,
    TOKENIZER_COLUMNS,
    comparison_rows,
    fact_rows,
    grounded_rows,
    kind_rows,
    tokenizer_rows,
)
from .rounds import format_grounded, format_rounds, format_summary, plural

__all__ = [
    "COMPARISON_COLUMNS",
    "GROUNDED_COLUMNS",
    "TOKENIZER_COLUMNS",
    "comparison_rows",
    "fact_rows",
    "format_grounded",
    "format_rounds",
    "format_summary",
    "grounded_rows",
    "kind_rows",
    "markdown_table",
    "plural",
    "tokenizer_rows",
]
