"""The rows of a corpus sweep on disk, by the file's suffix: JSON lines (a row a line,
appended and flushed as each session's rows arrive) or Parquet (a row group a
session, the file closed whatever stops the run, so an interrupted run still leaves a
table). A rerun reads the keys already there and skips those sessions."""

import json
from pathlib import Path
from typing import List, Optional, Set

# The columns of every row, in order, and their types (Parquet needs them fixed).
COLUMNS = {
    "path": "string",
    "key": "string",
    "error": "string",
    "agent": "string",
    "model": "string",
    "policy": "string",
    "threshold": "int64",
    "bill_usd": "float64",
    "compaction_usd": "float64",
    "compactions": "int64",
    "facts_lost": "int64",
    "facts_used": "int64",
    "calls": "int64",
    "stopped_at": "int64",
    "recorded_usd": "float64",
    "held_out_error": "float64",
}


def parquet(path: Path) -> bool:
    return Path(path).suffix in (".parquet", ".pq")


def done_keys(path: Optional[Path]) -> Set[str]:
    """The sessions (by `key`) a table already holds."""
    return {row["key"] for row in read_rows(path) if row.get("key")}


def read_rows(path: Optional[Path]) -> List[dict]:
    if path is None or not Path(path).exists():
        return []
    if parquet(path):
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:  # a line an interrupted run left half written
            continue
    return rows


def complete(row: dict) -> dict:
    """`row` with every column, None where it has no value (a failed session's)."""
    return {name: row.get(name) for name in COLUMNS}


class RowWriter:
    """Appends each session's rows as they arrive; `close` leaves a readable table."""

    def __init__(self, path: Optional[Path]):
        self.path = None if path is None else Path(path)
        self._stream = None
        self._writer = None
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if parquet(self.path):
            self._open_parquet()
        else:
            self._stream = open(self.path, "a", encoding="utf-8")

    def _open_parquet(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._schema = pa.schema([(name, kind) for name, kind in COLUMNS.items()])
        kept = read_rows(self.path)  # a Parquet file is not appended to: rewritten
        self._partial = self.path.with_suffix(self.path.suffix + ".partial")
        self._writer = pq.ParquetWriter(self._partial, self._schema)
        if kept:
            self._write_parquet(kept)

    def _write_parquet(self, rows: List[dict]) -> None:
        import pyarrow as pa

        table = pa.Table.from_pylist([complete(r) for r in rows], schema=self._schema)
        self._writer.write_table(table)

    def write(self, rows: List[dict]) -> None:
        if self.path is None or not rows:
            return
        if self._writer is not None:
            self._write_parquet(rows)
        else:
            self._stream.write("".join(json.dumps(complete(r)) + "\n" for r in rows))
            self._stream.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._partial.replace(self.path)
            self._writer = None
        if self._stream is not None:
            self._stream.close()
            self._stream = None
