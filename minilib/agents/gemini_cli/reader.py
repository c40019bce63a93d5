"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.json` or `.jsonl`).

A JSON object `{sessionId, projectHash, startTime, lastUpdated, messages}`; newer
versions write the same as JSON Lines: a first line with `sessionId` and
`projectHash`, then one message record a line (a record re-written with the same
`id` replaces the earlier one in place), `$set` metadata updates, and `$rewindTo`
records that drop the named message and everything after it. Messages have `type`
(`user`, `gemini`; `info`, `error`, `warning` are shown to the person, not sent
to the model) and `content`, a string or a list of parts `{"text": ...}` with no
`type` key (other parts, e.g. inline data, are skipped). A `gemini` message may
carry `thoughts` (not sent back: skipped) and `toolCalls: [{id, name, args,
result, status, ...}]`; `result` is a list of parts whose `functionResponse
.response` holds `output` or `error`. Each call becomes a tool message right
after its message; status `error` or `cancelled` is a tool error. No system
prompt is recorded.
"""

import json

from ...logs.base import Builder, first_line, make_call
from ...logs.detect import Doc, Shape


def _text(content, at: str, log: Builder) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    parts = content if isinstance(content, list) else [content]
    texts = []
    for number, part in enumerate(parts):
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            if part.get("thought"):  # a thought part in the content: not sent back either
                log.skip(f"{at}[{number}]", "thought part: not sent back as content")
            else:
                texts.append(part["text"])
        elif isinstance(part, dict) and "functionResponse" in part:
            response = part["functionResponse"].get("response") or {}
            value = response.get("output", response.get("error", response))
            texts.append(
                value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            )
        else:
            log.skip(f"{at}[{number}]", "non-text part: cannot be measured as text")
    return "\n".join(texts)


def _records(doc: Doc, log: Builder) -> list:
    """(where, message) pairs: the `messages` list, or the replayed JSONL records."""
    if not doc.lines:
        return [(f"messages[{i}]", m) for i, m in enumerate(doc.value["messages"])]
    kept = {}  # message id -> (where, record), in first-written order
    for number, record in doc.line_objects()[1:]:
        where = f"line {number}"
        if "$rewindTo" in record:
            ids = list(kept)
            target = record["$rewindTo"]
            dropped = ids[ids.index(target) :] if target in kept else ids
            for message_id in dropped:
                log.skip(kept.pop(message_id)[0], f"rewound by {where}: taken back")
        elif "$set" in record:
            log.skip(where, "$set: session metadata update")
        elif isinstance(record.get("id"), str):
            kept[record["id"]] = (kept.get(record["id"], (where,))[0], record)
        else:
            raise log.fail(f"{where}: a record with no 'id', '$set' or '$rewindTo'")
    return list(kept.values())


def _read(doc: Doc, log: Builder) -> None:
    for at, message in _records(doc, log):
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "user":
            log.user(_text(message.get("content"), f"{at}.content", log))
            continue
        if kind not in ("gemini", "model"):
            log.skip(at, f"{kind} message: shown to the person, not sent to the model")
            continue
        if isinstance(message.get("model"), str):
            log.agent, log.model = "gemini-cli", message["model"]
        if message.get("thoughts"):
            log.skip(f"{at}.thoughts", "thoughts: not sent back as content")
        calls = message.get("toolCalls") or []
        for number, call in enumerate(calls):
            if not isinstance(call, dict) or not call.get("id") or not call.get("name"):
                raise log.fail(f"{at}.toolCalls[{number}] needs 'id' and 'name'")
        log.assistant(
            _text(message.get("content"), f"{at}.content", log),
            [make_call(c["id"], c["name"], c.get("args") or {}) for c in calls],
        )
        tokens = message.get("tokens")
        if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
            # Gemini's prompt count holds its cached part (`cached`)
            log.recorded_usage(tokens["input"], f"{at}.tokens", tokens.get("cached"))
            _billed(tokens, f"{at}.tokens", log)
        for number, call in enumerate(calls):
            where = f"{at}.toolCalls[{number}]"
            text = _text(call.get("result"), f"{where}.result", log)
            status = call.get("status")
            error = (
                {
                    "code": "TOOL_ERROR" if status == "error" else "CANCELLED",
                    "message": first_line(text),
                }
                if status in ("error", "cancelled")
                else None
            )
            log.result(call["id"], text, where, error)


def _detect(doc: Doc):
    data = doc.value
    if (
        isinstance(data, dict)
        and "sessionId" in data
        and isinstance(data.get("messages"), list)
    ):
        return None
    head = doc.value[0] if doc.lines else None
    if head and "sessionId" in head and "projectHash" in head:
        return None
    return "no 'sessionId' with 'messages', nor a first line with sessionId/projectHash"


SHAPES = [Shape("gemini-cli", _detect, _read)]


def _billed(tokens: dict, where: str, log: Builder) -> None:
    """A reply's tokens as Google bills them: the implicit cache's part is inside the
    prompt count (never added to it) and bills no writes; thoughts are output."""

    def number(name: str) -> int:
        value = tokens.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    cached = min(number("cached"), number("input"))
    log.billed_call(
        where,
        where,
        {
            "input": number("input") - cached,
            "cache_read": cached,
            "output": number("output") + number("thoughts"),
        },
        "google",
    )
