"""LangChain / LangGraph message dumps.

- langchain-messages: what `messages_to_dict` writes, a JSON list of `{type: human
  | ai | system | tool | chat, data: {content, tool_calls?, tool_call_id?, ...}}`,
  or what `dumpd` writes for each message, `{lc: 1, type: constructor, id: [...,
  "HumanMessage" | "AIMessage" | "SystemMessage" | "ToolMessage" | "ChatMessage"],
  kwargs: {...}}` (the same fields). Either as a list, one a line (JSON Lines), or
  in an object's `messages` list (a LangGraph state). `content` is a string or a
  list of parts: text parts (`{type: text, text}` or a bare string) are joined;
  images cannot be measured, reasoning and thinking parts are not sent back, and
  an Anthropic `tool_use` part repeats a call that `tool_calls` holds: all skipped.
  An AI message's calls are `tool_calls: [{name, args (object), id}]` (older dumps
  keep them only in `additional_kwargs.tool_calls`, OpenAI's shape);
  `invalid_tool_calls` (arguments that did not parse: never run) are skipped. A
  ToolMessage answers `tool_call_id`; `status: "error"` makes it a tool error.
  A `function` message (the legacy function-calling shape) is skipped.
"""

from .base import Builder, first_line, make_call
from .detect import Doc, Shape
from .openai import read_calls

ROLES = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "chat": "chat",
    "function": "function",
}
CLASSES = {  # dumpd's class names, and the chunk classes a stream leaves behind
    f"{name}{chunk}": role
    for name, role in (
        ("HumanMessage", "user"),
        ("AIMessage", "assistant"),
        ("SystemMessage", "system"),
        ("ToolMessage", "tool"),
        ("ChatMessage", "chat"),
        ("FunctionMessage", "function"),
    )
    for chunk in ("", "Chunk")
}
CHAT_ROLES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
}


def _kind(item) -> tuple:
    """(role, fields) of one dumped message, or (None, why not)."""
    if not isinstance(item, dict):
        return None, "not an object"
    if item.get("lc") == 1 and item.get("type") == "constructor":
        ids = item.get("id")
        name = ids[-1] if isinstance(ids, list) and ids else None
        if name not in CLASSES:
            return None, f"constructor {name!r} is not a message class"
        return CLASSES[name], item.get("kwargs")
    if item.get("type") in ROLES and isinstance(item.get("data"), dict):
        return ROLES[item["type"]], item["data"]
    if item.get("type") in CLASSES and isinstance(item.get("data"), dict):
        return CLASSES[item["type"]], item["data"]
    return None, "no {type, data} nor {lc: 1, type: constructor}"


def _text(content, at: str, log: Builder) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise log.fail(f"{at}.content must be a string or a list of parts")
    texts = []
    for number, part in enumerate(content):
        where = f"{at}.content[{number}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, str):
            texts.append(part)
        elif kind == "text":
            texts.append(part.get("text") or "")
        elif kind in ("image_url", "image", "file", "audio"):
            log.skip(where, f"{kind} part: cannot be measured as text")
        elif kind in ("thinking", "reasoning", "redacted_thinking"):
            log.skip(where, f"{kind} part: not sent back as content")
        elif kind == "tool_use":
            log.skip(where, "tool_use part: the same call as in tool_calls")
        else:
            log.skip(where, f"{kind} part: not text")
    return "\n".join(texts)


def _calls(data: dict, at: str, log: Builder) -> list:
    calls = []
    for number, call in enumerate(data.get("tool_calls") or ()):
        where = f"{at}.tool_calls[{number}]"
        if not isinstance(call, dict):
            raise log.fail(f"{where} must be a JSON object")
        if not isinstance(call.get("id"), str) or not call["id"]:
            raise log.fail(f"{where}.id is missing")
        if not isinstance(call.get("name"), str) or not call["name"]:
            raise log.fail(f"{where}.name is missing")
        calls.append(make_call(call["id"], call["name"], call.get("args")))
    if not calls:  # older dumps: only the provider's own shape in additional_kwargs
        extra = data.get("additional_kwargs") or {}
        if extra.get("tool_calls"):
            message = {"role": "assistant", "tool_calls": extra["tool_calls"]}
            calls = read_calls(message, f"{at}.additional_kwargs", log)
    for number, _ in enumerate(data.get("invalid_tool_calls") or ()):
        log.skip(
            f"{at}.invalid_tool_calls[{number}]",
            "invalid tool call: its arguments did not parse, it never ran",
        )
    return calls


def _message(item, at: str, log: Builder) -> None:
    role, data = _kind(item)
    if role is None:
        raise log.fail(f"{at}: not a LangChain message ({data})")
    if not isinstance(data, dict):
        raise log.fail(f"{at}: the message's fields are not an object")
    where = f"{at}.{'kwargs' if 'lc' in item else 'data'}"
    if role == "chat":
        role = CHAT_ROLES.get(data.get("role"), "system" if data.get("role") else None)
        if role is None:
            raise log.fail(f"{where}.role is missing on a chat message")
    text = _text(data.get("content"), where, log)
    if role == "system":
        log.system(text, at)
    elif role == "user":
        log.user(text)
    elif role == "assistant":
        log.assistant(text, _calls(data, where, log))
    elif role == "tool":
        call_id = data.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise log.fail(f"{where}.tool_call_id is missing")
        error = (
            {"code": "TOOL_ERROR", "message": first_line(text)}
            if data.get("status") == "error"
            else None
        )
        name = data.get("name")
        log.result(call_id, text, at, error, {"name": name} if name else None)
    else:
        log.skip(at, "function message: the legacy function-calling shape")


def _messages(doc: Doc):
    """(prefix, messages) of the document, or None."""
    value = doc.value
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return "messages", value["messages"]
    if isinstance(value, list):
        return "messages", value
    return None


def _detect(doc: Doc):
    found = _messages(doc)
    if found is None or not found[1]:
        return "no list of dumped messages"
    for index, item in enumerate(found[1]):
        role, why = _kind(item)
        if role is None:
            return f"{doc.at(index, found[0])}: {why}"
    return None


def _read(doc: Doc, log: Builder) -> None:
    prefix, messages = _messages(doc)
    for index, item in enumerate(messages):
        _message(item, doc.at(index, prefix), log)


SHAPES = [Shape("langchain-messages", _detect, _read)]
