"""Goose sessions as JSON Lines (`~/.local/share/goose/sessions/<id>.jsonl`).

Goose up to version 1.x wrote each session as JSON Lines; newer versions keep
sessions in SQLite, and a JSON Lines file in the same shape is what this reads.
The first line is the session metadata (`working_dir`, `description`,
`message_count`, ...: skipped); every other line is a message `{id?, role: user |
assistant, created, content: [items], metadata?: {userVisible, agentVisible}}`.
A message with `agentVisible: false` is kept out of the model's context by Goose:
skipped. Content items (tagged by `type`):
- `text`; `image` (cannot be measured: skipped);
- `toolRequest {id, toolCall}` on the assistant side: `toolCall` is `{status:
  success, value: {name, arguments}}`, or `{status: error, error}` when the
  model's call did not parse (skipped, and so is the response to it);
- `toolResponse {id, toolResult}` on the user side: `{status: success, value}`,
  `value` a list of MCP content items or `{content: [items], isError}`; or
  `{status: error, error}`. An error status or `isError` makes it a tool error.
  A content item whose `annotations.audience` leaves out the assistant is shown
  to the person only: skipped.
- `thinking`, `redactedThinking` (not sent back), `toolConfirmationRequest`,
  `actionRequired`, `frontendToolRequest`, `systemNotification`,
  `summarizationRequested`, `contextLengthExceeded` (the UI's): skipped.
Tool responses are placed after the assistant message whose request they answer,
ahead of the user's text in the same message. No system prompt is recorded.
"""

from .base import Builder, first_line, make_call
from .detect import Doc, Shape

UI_ITEMS = (
    "toolConfirmationRequest",
    "actionRequired",
    "frontendToolRequest",
    "systemNotification",
    "summarizationRequested",
    "contextLengthExceeded",
)


def _result_text(items, at: str, log: Builder) -> str:
    if isinstance(items, str):
        return items
    if not isinstance(items, list):
        raise log.fail(f"{at} must be a list of content items")
    texts = []
    for number, item in enumerate(items):
        where = f"{at}[{number}]"
        kind = item.get("type") if isinstance(item, dict) else None
        audience = ((item.get("annotations") or {}) if kind else {}).get("audience")
        if isinstance(audience, list) and "assistant" not in audience:
            log.skip(where, "content for the person only (audience): not sent")
        elif kind == "text":
            texts.append(item.get("text") or "")
        elif kind == "resource":
            texts.append((item.get("resource") or {}).get("text") or "")
        elif kind in ("image", "audio"):
            log.skip(where, f"{kind} in a tool result: cannot be measured as text")
        else:
            refusal = f"has type {kind!r}, not an MCP content item"
            texts.append(log.unread_part(where, kind, refusal))
    return "\n".join(texts)


def _response(item: dict, where: str, log: Builder):
    """(text, error) of a toolResponse item."""
    result = item.get("toolResult")
    if not isinstance(result, dict) or result.get("status") not in ("success", "error"):
        raise log.fail(f"{where}.toolResult.status must be success or error")
    if result["status"] == "error":
        text = str(result.get("error") or "")
        return text, {"code": "TOOL_ERROR", "message": first_line(text)}
    value = result.get("value")
    failed = isinstance(value, dict) and value.get("isError") is True
    if isinstance(value, dict):  # newer Goose: an MCP CallToolResult
        value = value.get("content")
    text = _result_text(value, f"{where}.toolResult.value", log)
    return text, ({"code": "TOOL_ERROR", "message": first_line(text)} if failed else None)


def _request(item: dict, where: str, log: Builder, dropped: set):
    call = item.get("toolCall")
    if not item.get("id") or not isinstance(call, dict):
        raise log.fail(f"{where}: toolRequest needs 'id' and 'toolCall'")
    if call.get("status") == "error":
        dropped.add(item["id"])
        log.skip(where, "toolRequest that did not parse: never ran")
        return None
    value = call.get("value")
    if call.get("status") != "success" or not isinstance(value, dict):
        raise log.fail(f"{where}.toolCall must be {{status: success, value}}")
    if not value.get("name"):
        raise log.fail(f"{where}.toolCall.value.name is missing")
    return make_call(item["id"], value["name"], value.get("arguments"))


def _read(doc: Doc, log: Builder) -> None:
    dropped = set()  # ids of requests that did not parse, answered all the same
    for number, line in doc.line_objects():
        where = f"line {number}"
        if "role" not in line:
            log.skip(where, "session metadata")
            continue
        role, content = line["role"], line.get("content")
        if role not in ("user", "assistant"):
            raise log.fail(f"{where}: role is {role!r}; expected user or assistant")
        if not isinstance(content, list):
            raise log.fail(f"{where}: content must be a list of content items")
        if (line.get("metadata") or {}).get("agentVisible") is False:
            log.skip(where, "agentVisible false: kept out of the model's context")
            continue
        texts, calls = [], []
        for index, item in enumerate(content):
            at = f"{where}: content[{index}]"
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "text":
                texts.append(item.get("text") or "")
            elif kind == "toolRequest" and role == "assistant":
                call = _request(item, at, log, dropped)
                calls += [call] if call else []
            elif kind == "toolResponse" and role == "user":
                if item.get("id") in dropped:
                    log.skip(at, "response to a request that did not parse")
                    continue
                text, error = _response(item, at, log)
                log.result(item.get("id"), text, at, error)
            elif kind == "image":
                log.skip(at, "image: cannot be measured as text")
            elif kind in ("thinking", "redactedThinking"):
                log.skip(at, f"{kind}: not sent back as content")
            elif kind in UI_ITEMS:
                log.skip(at, f"{kind}: the UI's, not sent to the model")
            elif kind in ("toolRequest", "toolResponse"):  # in the other role's message
                raise log.fail(f"{at} has type {kind!r}, not a {role} content item")
            else:
                refusal = f"has type {kind!r}, not a {role} content item"
                texts.append(log.unread_part(at, kind, refusal))
        if role == "assistant" and (texts or calls):  # not when all it had was skipped
            log.assistant("\n".join(texts), calls)
        elif texts:  # after this message's tool responses (the builder keeps that order)
            log.user("\n".join(texts))


def _detect(doc: Doc):
    lines = doc.line_objects()
    if not lines:
        return "not JSON Lines"
    first = lines[0][1]
    messages = lines[1:] if "role" not in first else lines
    if "role" not in first and "working_dir" not in first:
        return "no first line with working_dir, nor a message"
    if not messages or not all(
        "role" in line and "created" in line and isinstance(line.get("content"), list)
        for _, line in messages
    ):
        return "no lines {role, created, content: [items]}"
    return None


SHAPES = [Shape("goose-session", _detect, _read)]
