"""Anthropic's content blocks: a Messages API request body (Claude Code's session files,
written in the same blocks, are read in minilib.agents.claude_code.reader).

- anthropic-messages: `{system?, messages: [{role, content}], tools?}`, or the bare
  list of messages when it holds `tool_use`/`tool_result` blocks (a list that also
  carries Cline's `ts`/`modelInfo` is Cline's). `system` is
  a string or a list of text blocks. `content` is a string or a list of blocks:
  `text`; `tool_use` (`id`, `name`, `input` object) on the assistant side;
  `tool_result` (`tool_use_id`, `content` a string or text blocks, `is_error`) on
  the *user* side. Tool results become tool messages, ahead of any text of the
  same user message; `is_error` becomes error code TOOL_ERROR with the first line.
  Thinking blocks are not sent back and images cannot be measured: both skipped.
"""

from .base import (
    Builder,
    content_items,
    first_line,
    make_call,
)
from .detect import Doc, Shape

BLOCKS = {
    "text",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "image",
    "document",
    "server_tool_use",
    "web_search_tool_result",
}


def _result_text(content, where: str, log: Builder) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for number, block in enumerate(content):
        if isinstance(block, dict) and block.get("type") == "text":
            texts.append(block.get("text") or "")
        else:
            log.skip(f"{where}.content[{number}]", "image in a tool result: not text")
    return "\n".join(texts)


def read_blocks(role: str, content, at: str, log: Builder, key=None) -> None:
    """One message's content (string or blocks), told to the builder; `key` merges."""
    if isinstance(content, str):
        if role == "assistant":
            return log.assistant(content, key=key)
        return log.user(content)
    texts, calls, thoughts = [], [], []
    for where, kind, block in content_items(content, at, log):
        if kind == "text":
            texts.append(block.get("text") or "")
        elif kind == "tool_use" and role == "assistant":
            if not block.get("id") or not block.get("name"):
                raise log.fail(f"{where}: tool_use needs 'id' and 'name'")
            calls.append(make_call(block["id"], block["name"], block.get("input") or {}))
        elif kind == "tool_result" and role == "user":
            if not block.get("tool_use_id"):
                raise log.fail(f"{where}.tool_use_id is missing")
            text = _result_text(block.get("content"), where, log)
            error = (
                {"code": "TOOL_ERROR", "message": first_line(text)}
                if block.get("is_error")
                else None
            )
            log.result(block["tool_use_id"], text, where, error)
        elif kind in ("thinking", "redacted_thinking"):
            log.skip(where, "thinking block: not sent back as content")
            if kind == "thinking" and isinstance(block.get("thinking"), str):
                thoughts.append(block["thinking"])  # counted where the API takes it back
        elif kind in ("image", "document"):
            log.skip(where, f"{kind} block: cannot be measured as text")
        elif kind in ("server_tool_use", "web_search_tool_result"):
            log.skip(where, "server tool block: run by the provider, not by the agent")
        elif kind in ("tool_use", "tool_result"):  # a block in the other role's message
            raise log.fail(f"{where} has type {kind!r}, not a {role} content block")
        else:
            refusal = f"has type {kind!r}, not a {role} content block"
            texts.append(log.unread_part(where, kind, refusal))
    if role == "assistant":
        log.assistant("\n".join(texts), calls, key=key, thinking="\n".join(thoughts))
    elif texts:  # after this message's tool results (the builder keeps that order)
        log.user("\n".join(texts))


def _bare_list(value) -> bool:
    """A bare JSON list of Anthropic messages: user/assistant turns with tool blocks."""
    if not isinstance(value, list) or not value:
        return False
    if not all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant") for m in value
    ):
        return False
    if any("ts" in m or "modelInfo" in m for m in value):  # Cline's fields
        return False
    return any(
        isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result")
        for m in value
        if isinstance(m.get("content"), list)
        for block in m["content"]
    )


def _detect_messages(doc: Doc):
    data = doc.value
    if not doc.lines and _bare_list(data):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        return "not an object with 'messages'"
    kinds = {
        block.get("type")
        for m in data["messages"]
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        for block in m["content"]
        if isinstance(block, dict)
    }
    schemas = any(
        isinstance(tool, dict) and "input_schema" in tool
        for tool in data.get("tools") or ()
    )
    if "system" in data or schemas or kinds & (BLOCKS - {"text"}):
        return None
    return "no 'system' field, Anthropic blocks or input_schema tools"


def _read_messages(doc: Doc, log: Builder) -> None:
    data = doc.value
    if isinstance(data, list):
        data = {"messages": data}
    system = data.get("system")
    if isinstance(system, list):
        system = "\n".join(
            block.get("text") or ""
            for block in system
            if isinstance(block, dict) and block.get("type") == "text"
        )
    if system:
        log.system(system, "field 'system'")
    if data.get("tools"):
        log.declared_tools = tuple(tool.get("name") for tool in data["tools"])
    for index, message in enumerate(data["messages"]):
        at = f"messages[{index}]"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            raise log.fail(f"{at}.role is {role!r}; expected user or assistant")
        read_blocks(role, message.get("content"), at, log)


SHAPES = [Shape("anthropic-messages", _detect_messages, _read_messages)]
