"""Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

One `{timestamp, type, payload}` a line. `session_meta` holds the system prompt in
`payload.base_instructions.text`; `turn_context` and most `event_msg` lines are
bookkeeping. `response_item` payloads are Responses API items:
- `message` with role developer (a system message), user or assistant, and content
  parts `input_text` / `output_text` (images skipped);
- `function_call` (`name`, `arguments` JSON string, `call_id`), `custom_tool_call`
  (raw-text `input`, sent on as the argument `{"input": ...}`) and
  `local_shell_call` (`action`), answered by `function_call_output` /
  `custom_tool_call_output` with the same `call_id`;
- `reasoning` (not sent back) and `web_search_call` (run by the provider, no id,
  no output): skipped.
Consecutive assistant-side items form one response: one assistant message, its
calls in order (parallel calls). An output is a string, a list of content items, or
`{content, success}`; `success: false`, a nonzero `exit_code` in the older JSON
output, or a first line `Exit code: N` (N != 0) make it an error.
Some files record a user turn only as `event_msg` `user_message`: that text is
used when no response_item user message carries it; `agent_message` likewise, so
no turn is counted twice.
"""

import json
import re
from collections import Counter

from .base import Builder, first_line, make_call
from .detect import Doc, Shape
from .openai import content_text

CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def _output(output, where: str, log: Builder):
    """(text the model saw, error or None) of a call output."""
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


def _call(kind: str, item: dict, at: str, log: Builder) -> dict:
    call_id = item.get("call_id")
    if not call_id:
        raise log.fail(f"{at}.call_id is missing")
    if kind == "function_call":
        return make_call(call_id, item.get("name"), item.get("arguments"))
    if kind == "custom_tool_call":
        return make_call(call_id, item.get("name"), {"input": item.get("input") or ""})
    return make_call(call_id, "local_shell", item.get("action"))


def _read(doc: Doc, log: Builder) -> None:
    lines = doc.line_objects()
    said = Counter()  # texts of response_item user/assistant messages, for event_msg
    for number, line in lines:
        item = line.get("payload") or {}
        if line.get("type") == "response_item" and item.get("type") == "message":
            text = _text(item, f"line {number}", log, quiet=True)
            said[item.get("role"), text.strip()] += 1
    response = 0  # number of the current model response; assistant items of one merge
    for number, line in lines:
        where, kind, item = f"line {number}", line.get("type"), line.get("payload") or {}
        item_type = item.get("type")
        if kind == "session_meta":
            instructions = item.get("base_instructions")
            if isinstance(instructions, dict):
                instructions = instructions.get("text")
            text = instructions
            if text:
                log.system(text, "session_meta.payload.base_instructions")
            else:
                log.skip(where, "session_meta: no base_instructions recorded")
        elif kind == "event_msg" and item_type in ("user_message", "agent_message"):
            role = "user" if item_type == "user_message" else "assistant"
            text = item.get("message") or ""
            if said[role, text.strip()]:
                said[role, text.strip()] -= 1
                log.skip(where, f"event_msg {item_type}: repeats a response_item message")
            elif role == "user":
                response += 1
                log.user(text)
            else:
                log.assistant(text, key=response)
        elif kind == "compacted":
            log.skip(where, "compacted: the harness's summary; earlier lines kept")
        elif kind != "response_item":
            log.skip(
                where,
                f"{kind}{' ' + item_type if kind == 'event_msg' else ''}: bookkeeping",
            )
        else:
            response = read_item(
                item, where, where + ": payload", log, response, kind="response_item "
            )


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
        log.assistant("", [_call(item_type, item, at, log)], key=response)
    elif item_type in OUTPUTS:
        response += 1
        text, error = (output or _output)(item.get("output"), at, log)
        log.result(item.get("call_id"), text, where, error)
    elif item_type == "reasoning":
        log.skip(where, "reasoning: not sent back as content")
    elif item_type == "web_search_call":
        log.skip(where, "web_search_call: run by the provider, no id and no output")
    else:
        log.skip(where, f"{kind}{item_type}: bookkeeping")
    return response


def _text(item: dict, where: str, log: Builder, quiet: bool = False) -> str:
    if quiet:  # the first pass only compares texts; skips are recorded by the second
        log = Builder(log.source, "")
    return content_text(item.get("content") or "", where + ": payload", log) or ""


def _detect(doc: Doc):
    lines = doc.line_objects()
    if lines and any(
        line.get("type") in ("session_meta", "response_item")
        and isinstance(line.get("payload"), dict)
        for _, line in lines
    ):
        return None
    return "no line with type session_meta/response_item and a payload"


SHAPES = [Shape("codex-rollout", _detect, _read)]
