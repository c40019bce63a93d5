"""Rows as a markdown table, the one table format of the generated docs."""

from typing import Mapping, Sequence, Tuple

Columns = Sequence[Tuple[str, str]]  # (row key, column title)


def markdown_table(rows: Sequence[Mapping], columns: Columns) -> str:
    """A pipe table: the first two columns left-aligned (names), the rest right-aligned
    (numbers); whole numbers get thousands separators."""
    lines = [
        "| " + " | ".join(title for _, title in columns) + " |",
        "|" + "|".join("---" if i < 2 else "---:" for i in range(len(columns))) + "|",
    ]
    for row in rows:
        cells = [
            f"{row[key]:,}" if isinstance(row[key], int) else str(row[key])
            for key, _ in columns
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
