"""The run log: one JSON record a line.

Every compression, every model call (decisions and summaries alike, with the exact
input messages and the reply) and every tool call (with its full, un-aged output)
is recorded. This is the "完整内容见运行日志" the aging line points to: whatever a
strategy cut can be found here again. No timestamps, so the same run gives a
byte-identical trace.

Writing each call's whole window would make a long session's trace rounds × window
(a 1,000-call session at a 128k window: hundreds of megabytes). So the first record
names the format, and each message is written once, as its own record with an id
("m1", "m2", ... in the order messages first reach the model); a model call lists its
window by those ids. A message that compression rewrote (an aged copy, a summary) is a
new message with its own id. Three more savings, each exact:

- a call whose window is the last call's window plus new messages (a round that only
  appended) lists the new ones alone, with `input_extends`: the last call's `seq`;
- a tool result whose text is its tool_call event's output is written with
  `"content": null` and `content_from`: that event's `seq` (the output stays whole in
  the event, where `recover_tool_output` finds it);
- a reply that is not a message (a summary's text) is kept as `reply_text`.

Events (compressions, model calls, tool calls, overflows) carry a running `seq`;
message records are numbered by their ids instead, so an event's `seq` does not
depend on how many messages came before it. `event_records`, `model_calls`,
`window_of` and `Tracer.events` give each model call back with its whole window and
its reply as messages.

Example: round 1 sends round 0's window plus the reply and the tool's result.

    >>> tracer = Tracer()
    >>> task = {"role": "user", "content": "read the log"}
    >>> call = {"id": "c1", "type": "function", "function": {"name": "read_file"}}
    >>> reply = {"role": "assistant", "content": "", "tool_calls": [call]}
    >>> result = {"role": "tool", "tool_call_id": "c1", "content": "the whole log"}
    >>> _ = tracer.model_call(0, "decision", [task], reply)
    >>> _ = tracer.tool_call(0, "c1", "read_file", "{}", result["content"])
    >>> done = {"role": "assistant", "content": "done"}
    >>> _ = tracer.model_call(1, "decision", [task, reply, result], done)
    >>> [r.get("id") or r.get("event") or r["type"] for r in tracer.records]
    ['trace', 'm1', 'm2', 'model_call', 'tool_call', 'm3', 'm4', 'model_call']
    >>> tracer.records[0]
    {'type': 'trace', 'format': 2}
    >>> tracer.records[3]
    {'type': 'event', 'event': 'model_call', 'payload': {'step': 0, \
'purpose': 'decision', 'input': ['m1'], 'reply': 'm2'}, 'seq': 1}
    >>> tracer.records[5]
    {'type': 'message', 'id': 'm3', 'message': {'role': 'tool', \
'tool_call_id': 'c1', 'content': None}, 'content_from': 2}
    >>> tracer.records[7]["payload"]
    {'step': 1, 'purpose': 'decision', 'input_extends': 1, 'input': ['m2', 'm3'], \
'reply': 'm4'}
    >>> model_calls(tracer.records)[1]["input"] == [task, reply, result]
    True
"""

import json
import operator
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

    A tool result's text is already in its tool_call event, whole: a tool result whose
    content is that very string (the same object, as the loop and the log replay pass
    it) is written without it, `"content": null` and `"content_from"` naming the
    event's `seq`, so the largest texts of a session are written once, not twice.

    With `messages_are_values=True` the caller promises that no message it has sent is
    ever changed in place (the log replay behind FastWindow, which relies on it
    already): the part of a window that begins as the last one did is then matched by
    identity, a pointer comparison a message, instead of against the recorded copies.
    At a 200k window that comparison was a fifth of a long replay's time.
    """

    def __init__(self, messages_are_values: bool = False):
        self.messages_are_values = messages_are_values
        self.records: List[dict] = [trace_header()]
        self._events = 0
        self._known: Dict[int, Tuple[Mapping, str]] = {}  # id() -> (message, its id)
        self._recorded: Dict[str, dict] = {}  # message id -> the copy recorded
        # id() of a tool_call's output -> (the output, its call's id, the event's seq)
        self._outputs: Dict[int, Tuple[str, object, int]] = {}
        # The last model call: its seq, its window's ids, and what a window is matched
        # against: the copies those ids recorded (or, messages_are_values, the
        # messages sent).
        self._last_call: Optional[Tuple[int, List[str], List[Mapping]]] = None

    def event(self, name: str, payload: Mapping) -> dict:
        self._events += 1
        record = {
            "type": "event",
            "event": name,
            "payload": dict(payload),
            "seq": self._events,
        }
        self.records.append(record)
        output = record["payload"].get("output") if name == "tool_call" else None
        if isinstance(output, str):
            call_id = record["payload"].get("tool_call_id")
            self._outputs[id(output)] = (output, call_id, self._events)
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
        record = {"type": "message", "id": number, "message": frozen}
        traced = self._outputs.get(id(frozen.get("content")))
        if (
            traced is not None
            and traced[0] is frozen["content"]
            and traced[1] == (frozen.get("tool_call_id") or frozen.get("output_id"))
        ):
            record["message"] = dict(frozen, content=None)  # the same key order
            record["content_from"] = traced[2]
        self.records.append(record)
        return number

    def model_call(
        self, step: int, purpose: str, input_messages: Iterable[Mapping], reply
    ) -> dict:
        """Record one model call: its window as message ids, its reply as a message id
        (or, for a reply that is not a message, a summary's text, as `reply_text`)."""
        window, matched = self._window_ids(list(input_messages))
        payload = {"step": step, "purpose": purpose, "input": window}
        # A round that only appended sends the last call's window and what came after
        # it: only that tail is listed, or the id lists alone would grow with rounds ×
        # window. One comparison of shared strings, no longer than the last window.
        if self._last_call is not None:
            last_seq, last_window, _ = self._last_call
            if last_window and window[: len(last_window)] == last_window:
                payload = {
                    "step": step,
                    "purpose": purpose,
                    "input_extends": last_seq,
                    "input": window[len(last_window) :],
                }
        if isinstance(reply, Mapping):
            payload["reply"] = self.message_id(reply)
        else:
            payload["reply_text"] = reply
        record = self.event("model_call", payload)
        self._last_call = (record["seq"], window, matched)
        return record

    def _window_ids(self, sent: List[Mapping]) -> Tuple[List[str], List[Mapping]]:
        """The ids of a window's messages, and what the next window is matched against:
        the copies recorded for them (or, messages_are_values, the messages sent).

        The part that begins as the last call's window did is matched in one list
        comparison (identity first, then value, in C): each equal message is the one
        recorded, so only the messages after it are looked up one by one."""
        by_value = not self.messages_are_values
        ids: List[str] = []
        copies: List[Mapping] = []
        rest = sent
        if self._last_call is not None:
            _, last_window, last = self._last_call
            known = len(last)
            if known and len(sent) >= known and sent[:known] == last:
                ids, rest = list(last_window), sent[known:]
                copies = list(last) if by_value else []
            elif known:
                # A compressed window: most of its places still hold the message
                # recorded there (aging rewrites a few), compared in C; only the
                # others are looked up.
                same = list(map(operator.eq if by_value else operator.is_, sent, last))
                for index, equal in enumerate(same):
                    number = last_window[index] if equal else self.message_id(sent[index])
                    ids.append(number)
                    if by_value:
                        copies.append(self._recorded[number])
                rest = sent[len(same) :]
        for message in rest:
            number = self.message_id(message)
            ids.append(number)
            if by_value:
                copies.append(self._recorded[number])
        return ids, copies if by_value else sent

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

    def count(self, name: str, purpose: Optional[str] = None) -> int:
        """How many events of one kind (and, for model calls, one purpose) were
        recorded; reads no window back."""
        return sum(
            1
            for record in self.records
            if record.get("event") == name
            and (purpose is None or record["payload"].get("purpose") == purpose)
        )

    def events(self, name: str) -> List[dict]:
        """The payloads of every record of one event kind, in order; a model call's
        `input` and `reply` are its messages (shared with the trace: read, do not
        change them)."""
        if name != "model_call":  # only a model call's payload is rebuilt on reading
            return [
                record["payload"]
                for record in self.records
                if record.get("type") == "event" and record["event"] == name
            ]
        return [
            record["payload"]
            for record in event_records(self.records)
            if record["event"] == name
        ]

    def to_jsonl(self) -> str:
        return "".join(json_line(record) for record in self.records)

    def write_jsonl(self, path) -> Path:
        """Write the trace; a failed write leaves the previous file as it was. Written a
        line at a time, so a long session's trace never sits in memory as one text."""
        return write_lines_safely(path, map(json_bytes, self.records), binary=True)


def event_records(records: Iterable[Mapping]) -> Iterator[dict]:
    """The event records of a trace (`Tracer.records` or `read_jsonl`), in order, each
    model call's payload as it was sent: its whole window (`input`) and its `reply` as
    messages.

    The records are read in order: a message is written after the tool call whose
    output it holds and before the first call that sends it, and a window that extends
    the last call's comes right after that call. A trace of format 1, whose model calls
    held their messages, is read as it is.
    """
    reader = TraceReader()
    for number, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(
                f"trace record {number} must be a dict, got {type(record).__name__}"
            )
        event = reader.read(record)
        if event is not None:
            yield event


def model_calls(records: Iterable[Mapping]) -> List[dict]:
    """Every model call of a trace, in order: its payload with the window it was sent
    (`input`) and its `reply` as messages."""
    return [
        record["payload"]
        for record in event_records(records)
        if record["event"] == "model_call"
    ]


def window_of(records: Iterable[Mapping], call: Mapping) -> List[Mapping]:
    """The exact window one model call was sent. `call` is its model_call record (found
    by its `seq`) or payload, as stored: its input as message ids. Each call costs a
    read of the trace; `model_calls` gives every window in one."""
    payload = call.get("payload", call)
    if not isinstance(payload, Mapping) or not isinstance(payload.get("input"), list):
        raise ValueError("call must be a model_call record or payload with an input list")
    seq = call.get("seq") if "payload" in call else None
    reader = TraceReader()
    for record in records:
        if not isinstance(record, Mapping):
            continue
        event = reader.read(record)
        if event is not None and event["event"] == "model_call":
            if (
                (seq is not None and record.get("seq") == seq)
                or record is call
                or (record.get("payload") is payload)
            ):
                return event["payload"]["input"]
    if "input_extends" in payload:  # a tail alone: the window it extends was not met
        raise ValueError(
            f"the call extends the window of seq {payload['input_extends']!r}, "
            "which is not in the trace"
        )
    return [reader.message(item) for item in payload["input"]]


class TraceReader:
    """Reads a trace's records in order, keeping what later records refer to: the
    messages by id, tool outputs by their event's seq, and the last call's window."""

    def __init__(self):
        self.messages: Dict[str, Mapping] = {}
        self._outputs: Dict[object, str] = {}  # a tool_call event's seq -> its output
        self._last_call: Optional[Tuple[object, List[Mapping]]] = None

    def read(self, record: Mapping) -> Optional[dict]:
        """Take in one record; an event is returned as `event_records` gives it."""
        if record.get("type") == "message":
            message = record["message"]
            if "content_from" in record:
                try:
                    output = self._outputs[record["content_from"]]
                except KeyError:
                    raise ValueError(
                        f"message record {record.get('id')!r}: no tool_call event with "
                        f"seq {record['content_from']!r} before it"
                    ) from None
                message = dict(message, content=output)
            self.messages[record["id"]] = message
            return None
        if "event" not in record:  # the header, or a record kind read elsewhere
            return None
        payload = record.get("payload")
        if record["event"] == "tool_call" and isinstance(payload, Mapping):
            self._outputs[record.get("seq")] = payload.get("output")
        if record["event"] != "model_call":
            return record
        payload = self.rebuilt(payload)
        self._last_call = (record.get("seq"), payload["input"])
        return {**record, "payload": payload}

    def message(self, item) -> Mapping:
        """One window entry: a message id looked up, or (format 1) the message itself."""
        if isinstance(item, Mapping):
            return item
        try:
            return self.messages[item]
        except (KeyError, TypeError):
            raise ValueError(f"the trace has no message record {item!r}") from None

    def rebuilt(self, payload: Mapping) -> dict:
        """A model call's stored payload with its whole window and reply as messages."""
        payload = dict(payload)
        window = [self.message(item) for item in payload["input"]]
        if "input_extends" in payload:
            extends = payload.pop("input_extends")
            if self._last_call is None or self._last_call[0] != extends:
                last = None if self._last_call is None else self._last_call[0]
                raise ValueError(
                    f"a model call extends the window of seq {extends!r}, but the last "
                    f"model call before it is seq {last!r}"
                )
            window = self._last_call[1] + window
        payload["input"] = window
        if "reply_text" in payload:
            payload["reply"] = payload.pop("reply_text")
        else:
            payload["reply"] = self.message(payload["reply"])
        return payload


# what json.dumps(record, ensure_ascii=False) builds for every call, built once: a long
# trace has tens of thousands of lines
_TO_JSON = json.JSONEncoder(ensure_ascii=False)


def json_line(record: Mapping) -> str:
    """One record as a line of UTF-8 JSON. A string with a lone surrogate (JSON allows
    the escape; UTF-8 cannot hold it) keeps its escape, so the line is still lossless."""
    line = _TO_JSON.encode(record) + "\n"
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(record, ensure_ascii=True) + "\n"
    return line


def json_bytes(record: Mapping) -> bytes:
    """`json_line(record)` as UTF-8, encoded once: a long trace is tens of megabytes."""
    try:
        return (_TO_JSON.encode(record) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record, ensure_ascii=True) + "\n").encode("ascii")


def write_text_safely(path, text: str) -> Path:
    """Write `text` to `path` through a temporary file moved into place, so the file is
    either the old one or the whole new one."""
    return write_lines_safely(path, (text,))


def write_lines_safely(path, lines: Iterable, binary: bool = False) -> Path:
    """Write `lines` (str, or bytes if `binary`) one after the other, as
    `write_text_safely` writes a text."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    mode = {"mode": "wb"} if binary else {"mode": "w", "encoding": "utf-8"}
    with open(partial, **mode) as handle:
        handle.writelines(lines)
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
