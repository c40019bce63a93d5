"""The run log: one JSON record a line, with a running `seq`.

Every compression, every model call (decisions and summaries alike, with the exact
input messages and the reply) and every tool call (with its full, un-aged output)
is recorded. This is the "完整内容见运行日志" the aging line points to: whatever a
strategy cut can be found here again. No timestamps, so the same run gives a
byte-identical trace.

Example: two records, numbered in order.

    >>> tracer = Tracer()
    >>> _ = tracer.event("context_compression", {"step": 1, "strategy": "aging"})
    >>> _ = tracer.tool_call(1, "c1", "read_file", "{}", "the whole output", None)
    >>> [(record["seq"], record["event"]) for record in tracer.records]
    [(1, 'context_compression'), (2, 'tool_call')]
"""

import json
import os
from pathlib import Path
from typing import Iterable, List, Mapping, Optional

from .markers import is_marker_line


class Tracer:
    """Collects trace records in memory; `write_jsonl` saves them.

    Messages are recorded as shallow copies: minilib treats a message as a value
    (strategies write new dicts, never change one in place), so a copy of each dict
    is enough to freeze the window as it was, and a deep copy per model call would
    cost more than the rest of a replay.
    """

    def __init__(self):
        self.records: List[dict] = []

    def event(self, name: str, payload: Mapping) -> dict:
        record = {
            "type": "event",
            "event": name,
            "payload": dict(payload),
            "seq": len(self.records) + 1,
        }
        self.records.append(record)
        return record

    def model_call(
        self, step: int, purpose: str, input_messages: Iterable[Mapping], reply
    ) -> dict:
        frozen_reply = dict(reply) if isinstance(reply, Mapping) else reply
        return self.event(
            "model_call",
            {
                "step": step,
                "purpose": purpose,
                "input": [dict(message) for message in input_messages],
                "reply": frozen_reply,
            },
        )

    def tool_call(
        self,
        step: int,
        tool_call_id: str,
        name: str,
        arguments: str,
        output: str,
        error: Optional[Mapping] = None,
    ) -> dict:
        return self.event(
            "tool_call",
            {
                "step": step,
                "tool_call_id": tool_call_id,
                "name": name,
                "arguments": arguments,
                "output": output,
                "error": error,
            },
        )

    def events(self, name: str) -> List[dict]:
        """The payloads of every record of one event kind, in order."""
        return [record["payload"] for record in self.records if record["event"] == name]

    def to_jsonl(self) -> str:
        return "".join(json_line(record) for record in self.records)

    def write_jsonl(self, path) -> Path:
        """Write the trace; a failed write leaves the previous file as it was."""
        return write_text_safely(path, self.to_jsonl())


def json_line(record: Mapping) -> str:
    """One record as a line of UTF-8 JSON. A string with a lone surrogate (JSON allows
    the escape; UTF-8 cannot hold it) keeps its escape, so the line is still lossless."""
    line = json.dumps(record, ensure_ascii=False) + "\n"
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, ensure_ascii=True) + "\n"
    return line


def write_text_safely(path, text: str) -> Path:
    """Write `text` to `path` through a temporary file moved into place, so the file is
    either the old one or the whole new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
    return path


def read_jsonl(path) -> List[dict]:
    """Trace records from a JSONL file; a bad line is named by file and line number."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(
                    f"{path}: line {number} is not valid JSON ({error.msg})"
                ) from None
    return records


class ToolOutputNotFound(KeyError):
    """No tool_call record with that id in the trace (a KeyError, with
    a readable text)."""

    def __str__(self):
        return str(self.args[0])


def recover_tool_output(
    records: Iterable[Mapping],
    tool_call_id: str,
    *,
    step: Optional[int] = None,
    like: Optional[str] = None,
) -> str:
    """The full, un-aged output of one tool call, found in the trace by its id.

    `records` is `Tracer.records` or what `read_jsonl` returned. Agents reuse call ids
    in later turns; when an id answers several calls, say which: the round it was made
    in (`step`), or the window's cut copy of it (`like`: the output that holds every
    line the copy kept).
    """
    if not isinstance(tool_call_id, str) or not tool_call_id:
        raise ValueError(f"tool_call_id must be a non-empty string, got {tool_call_id!r}")
    found = []
    for number, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(
                f"trace record {number} must be a dict, got {type(record).__name__}"
            )
        payload = record.get("payload")
        if (
            record.get("event") == "tool_call"
            and isinstance(payload, Mapping)
            and payload.get("tool_call_id") == tool_call_id
            and (step is None or payload.get("step") == step)
        ):
            if not isinstance(payload.get("output"), str):
                raise ValueError(
                    f"trace record {number} (seq {record.get('seq')}): "
                    "payload.output is missing"
                )
            found.append(payload)
    if like is not None:
        exact = [p for p in found if p["output"] == like]
        kept = [line for line in like.splitlines() if line and not is_marker_line(line)]
        found = exact or [p for p in found if all(line in p["output"] for line in kept)]
    if not found:
        where = "" if step is None else f" in round {step}"
        raise ToolOutputNotFound(
            f"no tool_call record with tool_call_id {tool_call_id!r}{where} in the trace"
        )
    if len(found) > 1 and len({p["output"] for p in found}) > 1:
        rounds = ", ".join(str(p.get("step")) for p in found)
        raise ToolOutputNotFound(
            f"tool_call_id {tool_call_id!r} answers {len(found)} calls "
            f"(rounds {rounds}); pass step= or like= to say which"
        )
    return found[0]["output"]
