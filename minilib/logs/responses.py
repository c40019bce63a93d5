"""OpenAI Responses API input items: an Agents SDK session's items, or a request body.

- responses-items: a JSON list of Responses API items, as an OpenAI Agents SDK
  session stores them (`session.get_items()`, or `result.to_input_list()`, dumped
  as JSON), or a request body `{input: [items], instructions?, tools?}` (then
  `instructions` is the system prompt and `tools` declares the function names).
  The items are the ones a Codex rollout carries in its `response_item` payloads,
  without the envelope, and are read by the same code (`read_item`, which Codex's
  reader uses):
  `message` (role user, assistant, system or developer; content a string or parts
  `input_text` / `output_text`; an item with a `role` and no `type` is a message
  too, which is how the SDK stores the user's input), `function_call` (`call_id`,
  `name`, `arguments` JSON string), `function_call_output` (`call_id`, `output`).
  Consecutive calls after a message belong to that response: one assistant
  message with parallel calls. `reasoning` (not sent back) and hosted tool calls
  (`web_search_call`, ... : run by the provider) are skipped. An output that is
  the SDK's default failure text ("An error occurred while running the tool ...
  Error: ...") is a tool error, its message the text after "Error: ".
"""

import json
import re

from .base import Builder, first_line, make_call
from .detect import Doc, Shape
from .openai import content_text, declared_tools

CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")

ITEM_TYPES = {
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "reasoning",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "item_reference",
}
HOSTED = ITEM_TYPES - set(CALLS) - set(OUTPUTS) - {"message", "reasoning"}
# the Agents SDK's default_tool_error_function writes one of these to the model
SDK_FAILURE = re.compile(
    r"An error occurred while (running the tool|parsing tool arguments)\..*?Error: (.*)",
    re.DOTALL,
)


def call_output(output, where: str, log: Builder):
    """(text the model saw, error or None) of a call output (Codex's shell output
    among them: its exit code decides the error)."""
    error = None
    if isinstance(output, dict):  # older {content, success}
        failed, output = output.get("success") is False, output.get("content")
        if failed:
            error = "TOOL_ERROR"
    text = content_text(output, where + ".output", log) or ""
    shown = text
    try:  # older shell output: a JSON string {"output", "metadata": {"exit_code"}}
        parsed = json.loads(text)
        code = parsed["metadata"]["exit_code"]
        shown = str(parsed.get("output") or "")
    except (ValueError, TypeError, KeyError):
        match = re.match(r"Exit code: (-?\d+)", text)
        code = int(match.group(1)) if match else 0
        shown = text.split("\nOutput:\n", 1)[-1]
    if error is None and isinstance(code, int) and code != 0:
        error = f"EXIT_{code}"
    if error is None:
        return text, None
    return text, {"code": error, "message": first_line(shown) or first_line(text)}


def item_call(kind: str, item: dict, at: str, log: Builder) -> dict:
    call_id = item.get("call_id")
    if not call_id:
        raise log.fail(f"{at}.call_id is missing")
    if kind == "function_call":
        return make_call(call_id, item.get("name"), item.get("arguments"))
    if kind == "custom_tool_call":
        return make_call(call_id, item.get("name"), {"input": item.get("input") or ""})
    return make_call(call_id, "local_shell", item.get("action"))


def read_item(
    item: dict, where: str, at: str, log: Builder, response: int, output=None, kind=""
) -> int:
    """One Responses API item told to the builder; returns the response number.

    `where` names the item in skips and pairing errors, `at` prefixes its fields in
    field errors; items of one response number merge into one assistant message (a
    user message or a call output starts the next). `output` reads an output into
    (text, error), `kind` prefixes the type in a bookkeeping skip. An item with a
    `role` and no `type` is a message, as the Responses API accepts it.
    """
    item_type = item.get("type") or ("message" if "role" in item else None)
    if item_type == "message":
        role = item.get("role")
        text = content_text(item.get("content") or "", at, log) or ""
        if role in ("developer", "system"):
            log.system(text, f"{where} ({role} message)")
        elif role == "assistant":
            log.assistant(text, key=response)
        else:
            response += 1
            log.user(text)
    elif item_type in CALLS:
        log.assistant("", [item_call(item_type, item, at, log)], key=response)
    elif item_type in OUTPUTS:
        response += 1
        text, error = (output or call_output)(item.get("output"), at, log)
        log.result(item.get("call_id"), text, where, error)
    elif item_type == "reasoning":
        log.skip(where, "reasoning: not sent back as content")
    elif item_type == "web_search_call":
        log.skip(where, "web_search_call: run by the provider, no id and no output")
    else:
        log.skip(where, f"{kind}{item_type}: bookkeeping")
    return response


def _output(output, at: str, log: Builder):
    text, error = call_output(output, at, log)
    failed = SDK_FAILURE.match(text)
    if error is None and failed:
        error = {"code": "TOOL_ERROR", "message": failed.group(2).strip()}
    return text, error


def _function(tool: dict) -> bool:
    return tool.get("type", "function") in ("function", "custom")


def _items(doc: Doc):
    """(prefix, items) of the document, or None when it holds no item list."""
    value = doc.value
    if isinstance(value, dict) and isinstance(value.get("input"), list):
        return "input", value["input"]
    if isinstance(value, list) and not doc.lines:
        return "items", value
    return None


def _detect(doc: Doc):
    found = _items(doc)
    if found is None or not found[1]:
        return "no list of items, nor an object with an 'input' list"
    for index, item in enumerate(found[1]):
        if not isinstance(item, dict):
            return f"{found[0]}[{index}] is not an object"
        kind = item.get("type")
        if kind is None and "role" not in item:
            return f"no 'type' or 'role' in {found[0]}[{index}]"
        if kind is not None and kind not in ITEM_TYPES:
            return f"{found[0]}[{index}] has type {kind!r}, not a Responses item"
    if not any("type" in item for item in found[1]):
        return "no item with a Responses 'type' (a plain message list)"
    return None


def _read(doc: Doc, log: Builder) -> None:
    prefix, items = _items(doc)
    value = doc.value
    if isinstance(value, dict):
        if isinstance(value.get("instructions"), str) and value["instructions"]:
            log.system(value["instructions"], "field 'instructions'")
        if value.get("tools") is not None:  # hosted tools (web search ...) have no name
            tools = value["tools"] if isinstance(value["tools"], list) else None
            log.declared_tools = declared_tools(
                tools
                if tools is None
                else [t for t in tools if not isinstance(t, dict) or _function(t)],
                log,
            )
    response = 0
    for index, item in enumerate(items):
        where = f"{prefix}[{index}]"
        kind = item.get("type")
        if kind in ("computer_call", "computer_call_output"):
            log.skip(where, f"{kind}: computer use, screenshots are not text")
            continue
        if kind in HOSTED - {"web_search_call"}:
            log.skip(where, f"{kind}: run by the provider, not by the agent")
            continue
        response = read_item(item, where, where, log, response, output=_output)


SHAPES = [Shape("responses-items", _detect, _read)]
