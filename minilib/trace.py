"""The run log: one JSON record a line.

Every compression, every model call (decisions and summaries alike, with the exact
input messages and the reply) and every tool call (with its full, un-aged output)
is recorded. This is the "完整内容见运行日志" the aging line points to: whatever a
strategy cut can be found here again. No timestamps, so the same run gives a
byte-identical trace.

The first record names the format. A message is written once, as its own record with
an id ("m1", "m2", ... in the order messages first reach the model), and a model call
records its window as the list of those ids: writing the whole window again every
round would make a long session's trace rounds × window. A message that compression
rewrote (an aged copy, a summary) is a new message with its own id. Events
(compressions, model calls, tool calls, overflows) carry a running `seq`; message
records are numbered by their ids instead, so an event's `seq` does not depend on how
many messages came before it. `model_calls(records)` and `Tracer.events` give each
model call back with its window and reply as messages.

Example: the messages are written before the call that sends them.

    >>> tracer = Tracer()
    >>> task = {"role": "user", "content": "read the log"}
    >>> reply = {"role": "assistant", "content": "done"}
    >>> _ = tracer.model_call(0, "decision", [task], reply)
    >>> _ = tracer.tool_call(1, "c1", "read_file", "{}", "the whole output", None)
    >>> [r.get("id") or r.get("event") or r["type"] for r in tracer.records]
    ['trace', 'm1', 'm2', 'model_call', 'tool_call']
    >>> tracer.records[3]["payload"]
    {'step': 0, 'purpose': 'decision', 'input': ['m1'], 'reply': 'm2'}
    >>> tracer.events("model_call")[0]["input"]
    [{'role': 'user', 'content': 'read the log'}]
    >>> [(r["seq"], r["event"]) for r in event_records(tracer.records)]
    [(1, 'model_call'), (2, 'tool_call')]
"""

import json
import os
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Mapping, Optional, Tuple

from .markers import is_marker_line

TRACE_FORMAT = 2  # 1: every model call held its whole window (no header, no messages)


def trace_header() -> dict:
    """The first record of a trace: what format the records after it are in."""
    return {"type": "trace", "format": TRACE_FORMAT}


class Tracer:
    """Collects trace records in memory; `write_jsonl` saves them.

    A message is recorded once, when a model call first sends it (as input or as the
    reply), and known again by identity: minilib treats a message as a value
    (strategies write new dicts, never change one in place), so the same object in a
    later window is the same message, found in one dict lookup, where comparing
    contents would cost a walk of every text. The tracer keeps each message it has
    seen alive (an id() is only unique while its object lives) and a shallow copy of
    it as recorded; a message changed in place after all no longer equals that copy
    (one comparison of shared values) and is recorded again as a new message, so a
    rebuilt window is always the one that was sent.
    """

    def __init__(self):
        self.records: List[dict] = [trace_header()]
        self._events = 0
        self._known: Dict[int, Tuple[Mapping, str]] = {}  # id() -> (message, its id)
        self._recorded: Dict[str, dict] = {}  # message id -> the copy recorded

    def event(self, name: str, payload: Mapping) -> dict:
        self._events += 1
        record = {
            "type": "event",
            "event": name,
            "payload": dict(payload),
            "seq": self._events,
        }
        self.records.append(record)
        return record

    def message_id(self, message: Mapping) -> str:
        """The id of `message` in this trace, recording it first if it is new."""
        known = self._known.get(id(message))
        if known is not None and self._recorded[known[1]] == message:
            return known[1]
        if not isinstance(message, Mapping):
            raise TypeError(
                f"a traced message must be a dict, got {type(message).__name__}"
            )
        number = f"m{len(self._recorded) + 1}"
        frozen = dict(message)
        self._known[id(message)] = (message, number)
        self._recorded[number] = frozen
        self.records.append({"type": "message", "id": number, "message": frozen})
        return number

    def model_call(
        self, step: int, purpose: str, input_messages: Iterable[Mapping], reply
    ) -> dict:
        """Record one model call: its window as message ids, its reply as a message id
        (or, for a reply that is not a message, a summary's text, as `reply_text`)."""
        payload = {
            "step": step,
            "purpose": purpose,
            "input": [self.message_id(message) for message in input_messages],
        }
        if isinstance(reply, Mapping):
            payload["reply"] = self.message_id(reply)
        else:
            payload["reply_text"] = reply
        return self.event("model_call", payload)

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
        """The payloads of every record of one event kind, in order; a model call's
        `input` and `reply` are its messages (shared with the trace: read, do not
        change them)."""
        return [
            record["payload"]
            for record in event_records(self.records)
            if record["event"] == name
        ]

    def to_jsonl(self) -> str:
        return "".join(json_line(record) for record in self.records)

    def write_jsonl(self, path) -> Path:
        """Write the trace; a failed write leaves the previous file as it was."""
        return write_text_safely(path, self.to_jsonl())


def event_records(records: Iterable[Mapping]) -> Iterator[dict]:
    """The event records of a trace (`Tracer.records` or `read_jsonl`), in order, each
    model call's payload with its window (`input`) and `reply` as messages.

    Message records are read as they come (a message is always written before the
    first call that sends it); a trace of format 1, whose model calls held their
    messages, is read as it is.
    """
    messages: Dict[str, Mapping] = {}
    for number, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(
                f"trace record {number} must be a dict, got {type(record).__name__}"
            )
        if record.get("type") == "message":
            messages[record["id"]] = record["message"]
        elif "event" in record:
            if record["event"] == "model_call":
                record = {**record, "payload": _rebuilt(record, messages)}
            yield record


def model_calls(records: Iterable[Mapping]) -> List[dict]:
    """Every model call of a trace, in order: its payload with the window it was sent
    (`input`) and its `reply` as messages."""
    return [
        record["payload"]
        for record in event_records(records)
        if record["event"] == "model_call"
    ]


def window_of(records: Iterable[Mapping], call: Mapping) -> List[Mapping]:
    """The exact window one model call was sent: `call` is its record or payload as
    stored (input as ids). For every call at once, `model_calls` reads the trace once."""
    payload = call.get("payload", call)
    wanted = payload.get("input")
    if not isinstance(wanted, list):
        raise ValueError("call must be a model_call record or payload with an input list")
    ids = {item for item in wanted if isinstance(item, str)}
    messages = {
        record["id"]: record["message"]
        for record in records
        if isinstance(record, Mapping)
        and record.get("type") == "message"
        and record.get("id") in ids
    }
    return [_message(item, messages) for item in wanted]


def _rebuilt(record: Mapping, messages: Mapping[str, Mapping]) -> dict:
    payload = dict(record["payload"])
    payload["input"] = [_message(item, messages) for item in payload["input"]]
    if "reply_text" in payload:
        payload["reply"] = payload.pop("reply_text")
    else:
        payload["reply"] = _message(payload["reply"], messages)
    return payload


def _message(item, messages: Mapping[str, Mapping]) -> Mapping:
    """One window entry: a message id looked up, or (format 1) the message itself."""
    if isinstance(item, Mapping):
        return item
    try:
        return messages[item]
    except (KeyError, TypeError):
        raise ValueError(f"the trace has no message record {item!r}") from None


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
