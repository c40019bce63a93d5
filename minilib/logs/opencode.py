"""opencode sessions, as `opencode export <sessionID>` writes them: one JSON file.

`{info: {id, title, ...}, messages: [{info, parts}], todos?}`: `info` is the
session (metadata), each message's `info` has `role` user or assistant, and its
`parts` are what opencode keeps in its storage folder (`part/<messageID>/*.json`).
The window is rebuilt as opencode builds it for the model:
- a user message: its `text` parts (an `ignored` one is skipped), a `compaction`
  part asks "What did we do so far?", a `subtask` part says a tool was run; a
  `file` part is an attachment (an image or PDF cannot be measured; a text file's
  content is already in a text part beside it): skipped.
- an assistant message is one model call a step: `step-start` parts split it. A
  step is one assistant message (its `text` parts and its `tool` parts' calls)
  and the tool results after it. A `tool` part `{callID, tool, state}` whose
  status is completed answers with `state.output` (a compacted one with
  opencode's placeholder), error with `state.error` (a tool error), pending or
  running with "[Tool execution was interrupted]" (an error). `reasoning` is not
  kept as text; `step-finish` (its `tokens`: the step's usage, read), `snapshot`, `patch`,
  `agent`, `retry`: bookkeeping.
  An assistant message with an `error` is not sent back (unless it was aborted
  after it said something).
Older versions keep the system prompt in an assistant's `info.system` list: it
is the system message when present; otherwise it is not recorded.
"""

from .base import Builder, first_line, make_call
from .detect import Doc, Shape

CLEARED = "[Old tool result content cleared]"
INTERRUPTED = "[Tool execution was interrupted]"
TEXT_FILES = ("text/plain", "application/x-directory")  # read into a text part
BOOKKEEPING = ("step-finish", "snapshot", "patch", "agent", "retry")


def _user(parts: list, at: str, log: Builder) -> None:
    texts = []
    for number, part in enumerate(parts):
        where, kind = f"{at}.parts[{number}]", part.get("type")
        if kind == "text" and part.get("ignored"):
            log.skip(where, "ignored text part: not sent")
        elif kind == "text":
            texts.append(part.get("text") or "")
        elif kind == "compaction":
            texts.append("What did we do so far?")
        elif kind == "subtask":
            texts.append("The following tool was executed by the user")
        elif kind == "file" and part.get("mime") in TEXT_FILES:
            log.skip(where, "file part: its text is sent as the text part beside it")
        elif kind == "file":
            log.skip(where, "file part: an attachment, cannot be measured as text")
        else:
            log.skip(where, f"{kind} part: bookkeeping")
    if texts:
        log.user("\n".join(texts))


def _tool(part: dict, where: str, log: Builder):
    """(call, text, error) of a tool part."""
    state = part.get("state")
    if not part.get("callID") or not part.get("tool") or not isinstance(state, dict):
        raise log.fail(f"{where}: a tool part needs 'callID', 'tool' and 'state'")
    call = make_call(part["callID"], part["tool"], state.get("input"))
    status = state.get("status")
    if status == "completed":
        compacted = (state.get("time") or {}).get("compacted")
        if compacted:
            log.note(where, "compacted by opencode: its placeholder is what was sent")
        return call, CLEARED if compacted else str(state.get("output") or ""), None
    if status == "error":
        kept = (state.get("metadata") or {}).get("output")
        if (state.get("metadata") or {}).get("interrupted") and isinstance(kept, str):
            return call, kept, None
        text = str(state.get("error") or "")
        return call, text, {"code": "TOOL_ERROR", "message": first_line(text)}
    if status in ("pending", "running"):
        return call, INTERRUPTED, {"code": "INTERRUPTED", "message": INTERRUPTED}
    raise log.fail(f"{where}.state.status is {status!r}; expected completed or error")


def _assistant(info: dict, parts: list, at: str, log: Builder) -> None:
    error = info.get("error")
    said = any(p.get("type") not in ("step-start", "reasoning") for p in parts)
    if error and not ((error or {}).get("name") == "MessageAbortedError" and said):
        log.skip(at, "assistant message with an error: not sent back")
        return
    steps, step = [], None
    for number, part in enumerate(parts):
        where, kind = f"{at}.parts[{number}]", part.get("type")
        if kind == "step-start" or step is None:
            step = {"texts": [], "tools": []}
            steps.append(step)
        if kind == "step-finish" and isinstance(part.get("tokens"), dict):
            step["usage"] = (part["tokens"], f"{where}.tokens")
        if kind == "text":
            step["texts"].append(part.get("text") or "")
        elif kind == "tool":
            step["tools"].append((where, *_tool(part, where, log)))
        elif kind == "reasoning":
            log.skip(where, "reasoning part: not kept as text")
        elif kind in BOOKKEEPING:
            log.skip(where, f"{kind} part: bookkeeping")
        elif kind != "step-start":
            raise log.fail(f"{where} has type {kind!r}, not an assistant part")
    for step in steps:
        if not step["texts"] and not step["tools"]:
            continue
        log.assistant("\n".join(step["texts"]), [call for _, call, _, _ in step["tools"]])
        if "usage" in step:
            _usage(*step["usage"], log)
        for where, call, text, failure in step["tools"]:
            log.result(call["id"], text, where, failure)


def _usage(tokens: dict, where: str, log: Builder) -> None:
    """A step's `tokens`: its uncached input, what it read from the prompt cache and
    what it wrote to it make the prompt the provider counted."""
    cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
    read, written = cache.get("read"), cache.get("write")
    parts = [tokens.get("input"), read, written]
    if not isinstance(parts[0], int) or isinstance(parts[0], bool):
        log.skip(where, "step tokens without an input count")
        return
    whole = sum(n for n in parts if isinstance(n, int) and not isinstance(n, bool))
    log.recorded_usage(whole, where, read, written)


def _read(doc: Doc, log: Builder) -> None:
    messages = doc.value["messages"]
    for index, message in enumerate(messages):
        info = message.get("info") if isinstance(message, dict) else None
        system = info.get("system") if isinstance(info, dict) else None
        if isinstance(system, list) and system:
            log.system("\n".join(map(str, system)), f"messages[{index}].info.system")
            break
    for index, message in enumerate(messages):
        at = f"messages[{index}]"
        info, parts = message.get("info"), message.get("parts")
        if not isinstance(info, dict) or not isinstance(parts, list):
            raise log.fail(f"{at} needs 'info' (an object) and 'parts' (a list)")
        if not all(isinstance(part, dict) for part in parts):
            raise log.fail(f"{at}.parts must be a list of objects")
        if info.get("role") == "user":
            _user(parts, at, log)
        elif info.get("role") == "assistant":
            _assistant(info, parts, at, log)
        else:
            raise log.fail(
                f"{at}.info.role is {info.get('role')!r}; expected user or assistant"
            )


def _detect(doc: Doc):
    value = doc.value
    if not isinstance(value, dict) or not isinstance(value.get("info"), dict):
        return "not an object with 'info'"
    messages = value.get("messages")
    if not isinstance(messages, list) or not messages:
        return "no 'messages' list"
    if not all(isinstance(m, dict) and "info" in m and "parts" in m for m in messages):
        return "no {info, parts} in each of 'messages'"
    return None


SHAPES = [Shape("opencode-export", _detect, _read)]
