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
  status is completed answers with `state.output` (one opencode pruned later is
  sent whole until then: a clearing, to its placeholder, at the first message created
  after its `time.compacted`), error with `state.error` (a tool error), pending or
  running with "[Tool execution was interrupted]" (an error). `reasoning` is not
  kept as text; `step-finish` (its `tokens`: the step's usage, read), `snapshot`, `patch`,
  `agent`, `retry`: bookkeeping.
  An assistant message with an `error` is not sent back (unless it was aborted
  after it said something).
Older versions keep the system prompt in an assistant's `info.system` list: it
is the system message when present; otherwise it is not recorded.

A compaction is a user message with a `compaction` part (`auto` false: the user's
`/compact`), then an assistant message the compaction agent wrote (`mode:
compaction`, `summary: true`): from then on opencode sends the request and the summary
in place of the history (its `filterCompacted`), which is the agent's own compaction
here; its tokens before are the summary call's input.
"""

from ...logs.base import Builder, Clearing, first_line, make_call
from ...logs.detect import Doc, Shape

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
        if isinstance(compacted, (int, float)) and not isinstance(compacted, bool):
            # sent whole until opencode pruned it, its placeholder after: a clearing
            # at the time the export records (`_clearings`)
            log.pruned.append((compacted, part["callID"], where))
        elif compacted:
            log.note(where, "compacted by opencode: its placeholder is what was sent")
            return call, CLEARED, None
        return call, str(state.get("output") or ""), None
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
            _usage(*step["usage"], log, *_model(info, log))
        for where, call, text, failure in step["tools"]:
            log.result(call["id"], text, where, failure)


def _usage(tokens: dict, where: str, log: Builder, provider="", model=None) -> None:
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
    log.billed_call(
        where,
        where,
        {
            "input": parts[0],
            "cache_read": read if isinstance(read, int) else 0,
            "cache_write_5m": written if isinstance(written, int) else 0,
            "output": _whole(tokens.get("output")) + _whole(tokens.get("reasoning")),
        },
        provider,
        model,
    )


def _whole(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _read(doc: Doc, log: Builder) -> None:
    messages = doc.value["messages"]
    for index, message in enumerate(messages):
        info = message.get("info") if isinstance(message, dict) else None
        system = info.get("system") if isinstance(info, dict) else None
        if isinstance(system, list) and system:
            log.system("\n".join(map(str, system)), f"messages[{index}].info.system")
            break
    asked = None  # (where, part) of a compaction asked for, until its summary
    log.pruned = []  # (when, call id, where) of each output opencode pruned later
    started = []  # (when a message was created, the lab's messages before it)
    for index, message in enumerate(messages):
        at = f"messages[{index}]"
        info, parts = message.get("info"), message.get("parts")
        created = ((info or {}).get("time") or {}).get("created")
        if isinstance(created, (int, float)) and not isinstance(created, bool):
            started.append((created, len(log.messages)))
        if not isinstance(info, dict) or not isinstance(parts, list):
            raise log.fail(f"{at} needs 'info' (an object) and 'parts' (a list)")
        if not all(isinstance(part, dict) for part in parts):
            raise log.fail(f"{at}.parts must be a list of objects")
        if info.get("role") == "user" and _asks_compaction(parts):
            asked = (at, next(p for p in parts if p.get("type") == "compaction"))
        elif info.get("role") == "user":
            _user(parts, at, log)
        elif info.get("role") == "assistant" and _is_summary(info):
            _compaction(info, parts, at, asked, log)
            asked = None
        elif info.get("role") == "assistant":
            _assistant(info, parts, at, log)
        else:
            raise log.fail(
                f"{at}.info.role is {info.get('role')!r}; expected user or assistant"
            )
    _clearings(log, started)


def _clearings(log: Builder, started: list) -> None:
    """The outputs opencode pruned (`state.time.compacted`), as clearings before the
    first message created after the prune: the calls before it sent them whole."""
    at_time = {}
    for when, call_id, where in log.pruned:
        at = next((index for created, index in started if created >= when), None)
        at = len(log.messages) if at is None else at
        at_time.setdefault(at, []).append((call_id, where))
    for at in sorted(at_time):
        ids = tuple(call_id for call_id, _ in at_time[at])
        log.clearings.append(Clearing(at, at_time[at][0][1], ids))
    del log.pruned


def _model(info: dict, log: Builder):
    """(provider, model) of an assistant message, named on the log as it goes."""
    provider, model = info.get("providerID"), info.get("modelID")
    if isinstance(model, str) and model:
        log.agent, log.model = "opencode", model
    return (provider if isinstance(provider, str) else ""), (
        model if isinstance(model, str) else None
    )


def _asks_compaction(parts: list) -> bool:
    return any(part.get("type") == "compaction" for part in parts)


def _is_summary(info: dict) -> bool:
    return info.get("summary") is True or info.get("mode") == "compaction"


def _compaction(info: dict, parts: list, at: str, asked, log: Builder) -> None:
    """opencode's compaction: the user's (or its own) request for one, then the
    summary written by the compaction agent. From then on the model sees the request
    and the summary in place of the history; the summary's call is billed, but it is
    no call of the conversation."""
    replacement = log.replacement()
    replacement.user("What did we do so far?")
    text = "\n".join(p.get("text") or "" for p in parts if p.get("type") == "text")
    replacement.assistant(text)
    auto = asked is not None and asked[1].get("auto") is True
    detail = "trigger " + ("auto" if auto else "manual") if asked is not None else ""
    tokens = info.get("tokens")
    if isinstance(tokens, dict) and isinstance(tokens.get("input"), int):
        detail += f", {tokens['input']:,} tokens before"
    where = asked[0] if asked is not None else at
    log.compaction(
        where,
        f"compaction part, summary {at} (mode compaction)",
        replacement,
        detail=detail.strip(", "),
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
