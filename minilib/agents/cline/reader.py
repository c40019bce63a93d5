"""Cline and Roo Code task histories (`tasks/<id>/api_conversation_history.json`).

A bare JSON list of Anthropic-style messages `{role, content, ts?, modelInfo?,
metrics?}`; `ts` and `modelInfo` (or, in older files, the result headers below) tell
it from a plain Anthropic Messages list. Assistant blocks: `text`, `tool_use` (`id`,
`name`, `input` object), thinking (not sent back: skipped). The results come in the
next user message as text, with no call id: one `[<tool> for '<arg>'] Result:`
header a call, in call order, so they pair by position. The output follows the
header in the same block, or (older files) in the next text block. Newer files may
write a `tool_result` block instead: its `tool_use_id` is used when it names an open
call (else it pairs by position too). `The tool execution failed ...` is a tool
error (TOOL_ERROR, the first line of its `<error>`), `The user denied this
operation.` a rejected one (REJECTED), `Task was interrupted before this tool
call ...` (written when a task resumes) INTERRUPTED, and `Tool [x] was not executed
...` a call the harness refused (NOT_EXECUTED). The rest of the user message (the
task, the reminder text, `<environment_details>`, `[TASK RESUMPTION]`, `[ERROR]`
notes from the harness) is one user message after the results; a header with no
open call left (tools written as XML in the text, as early versions did) stays in
it, and the message is marked as environment output. Images are skipped: they cannot be
measured as text. The system prompt is rebuilt on every request and not recorded.

A resumed task (`[TASK RESUMPTION]` text blocks in a user message) leaves the call it
interrupted without a result (a `plan_mode_respond` waiting for the person, say): the
builder adds the interrupted result before the resumption message, which is kept as
the user message it is, and says so (a repair).

`ui_messages.json`, beside the history in the task folder, is what Cline's panel
showed, and Cline's usage record: each `{"type": "say", "say": "api_req_started"}`
entry's `text` is JSON with `tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads` and
`cost` for one API request, in request order. When the history is loaded from a file,
the file beside it is read (`read_usage_beside`): the requests are paired with the
assistant messages by position (one request, one reply), each a `RecordedUsage` whose
input is tokensIn + cacheReads + cacheWrites, as Anthropic counts a prompt. Given alone,
`ui_messages.json` is no conversation: `describe_ui_messages` says what it holds.
"""

import json
import re
from pathlib import Path
from typing import List, Optional, Tuple

from ...logs.base import (
    BilledCall,
    Builder,
    LoadedLog,
    LogFileError,
    RecordedUsage,
    content_items,
    first_line,
    make_call,
)
from ...logs.detect import Doc, Shape

HEADER = re.compile(r"\[(?P<what>[^\n]*)\] Result:(?:\n|$)")
NOT_EXECUTED = re.compile(r"Tool \[(?P<name>[^\]\n]+)\] was not executed\b")
ERROR_TAG = re.compile(r"<error>\s*(?P<text>.*?)\s*(?:</error>|$)", re.S)


def _text_blocks(content) -> list:
    return [
        block.get("text") or ""
        for block in (content if isinstance(content, list) else ())
        if isinstance(block, dict) and block.get("type") == "text"
    ]


def _detect(doc: Doc):
    items = doc.value
    if doc.lines or not isinstance(items, list) or not items:
        return "not a JSON list of messages"
    for index, item in enumerate(items):
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            return f"item[{index}] is not a user or assistant message"
    if any("ts" in item or "modelInfo" in item for item in items):
        return None
    if any(
        HEADER.match(text)
        for item in items
        if item["role"] == "user"
        for text in _text_blocks(item.get("content"))
    ):
        return None
    return "no 'ts'/'modelInfo' on its messages, nor '[tool] Result:' headers"


def _error(body: str):
    """The error of a result's text (after its header), or None."""
    text = body.strip()
    if text.startswith("The tool execution failed"):
        inner = ERROR_TAG.search(text)
        return {
            "code": "TOOL_ERROR",
            "message": first_line(inner.group("text") if inner else text),
        }
    if text.startswith("Task was interrupted before this tool call"):
        return {"code": "INTERRUPTED", "message": first_line(text)}
    if text.startswith("The user denied this operation"):
        return {"code": "REJECTED", "message": first_line(text)}
    if NOT_EXECUTED.match(text):
        return {"code": "NOT_EXECUTED", "message": first_line(text)}
    return None


def _block_text(content, where: str, log: Builder) -> str:
    """A tool_result block's content as text; images skipped."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise log.fail(f"{where}.content must be a string or a list of blocks")
    texts = []
    for number, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(block.get("text") or "")
        elif kind == "image":
            log.skip(
                f"{where}.content[{number}]", "image block: cannot be measured as text"
            )
        else:
            texts.append(
                log.unread_part(
                    f"{where}.content[{number}]", kind, f"has type {kind!r}, not text"
                )
            )
    return "\n".join(texts)


def _plain_text(block):
    """The text of a text block that is neither a result header nor the environment."""
    if not isinstance(block, dict) or block.get("type") != "text":
        return None
    text = block.get("text")
    if not isinstance(text, str) or HEADER.match(text):
        return None
    return None if text.startswith("<environment_details>") else text


def _read_assistant(content, at: str, log: Builder) -> list:
    """The assistant message; returns the ids of its calls, in order."""
    if isinstance(content, str):
        log.assistant(content)
        return []
    texts, calls = [], []
    for where, kind, block in content_items(content, at, log):
        if kind == "text":
            texts.append(block.get("text") or "")
        elif kind == "tool_use":
            if not block.get("id") or not block.get("name"):
                raise log.fail(f"{where}: tool_use needs 'id' and 'name'")
            if not isinstance(block.get("input", {}), dict):
                raise log.fail(f"{where}.input must be a JSON object")
            calls.append(make_call(block["id"], block["name"], block.get("input") or {}))
        elif kind in ("thinking", "redacted_thinking", "reasoning"):
            log.skip(where, "thinking block: not sent back as content")
        elif kind == "image":
            log.skip(where, "image block: cannot be measured as text")
        elif kind == "tool_result":
            raise log.fail(f"{where} has type {kind!r}, not an assistant content block")
        else:
            refusal = f"has type {kind!r}, not an assistant content block"
            texts.append(log.unread_part(where, kind, refusal))
    log.assistant("\n".join(texts), calls)
    return [call["id"] for call in calls]


def _read_user(content, at: str, open_calls: list, names: dict, log: Builder) -> None:
    """Results first (by position, or by a tool_result's id), then the rest as text."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise log.fail(f"{at}.content must be a string or a list of blocks")
    texts, environment = [], False
    blocks = list(enumerate(content))
    position = 0
    while position < len(blocks):
        number, block = blocks[position]
        position += 1
        where = f"{at}.content[{number}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_result":
            named = block.get("tool_use_id")
            call_id = named if named in open_calls else None
            if call_id is None and open_calls:
                call_id = open_calls[0]
            if call_id is None:
                raise log.fail(f"{where}: tool_result answers no open tool call")
            open_calls.remove(call_id)
            text = _block_text(block.get("content"), where, log)
            error = _error(HEADER.sub("", text, count=1))
            if block.get("is_error") and error is None:
                error = {"code": "TOOL_ERROR", "message": first_line(text)}
            log.result(call_id, text, where, error)
        elif kind == "text":
            text = block.get("text") or ""
            header = HEADER.match(text)
            refused = NOT_EXECUTED.match(text)
            if (header or refused) and open_calls:
                call_id = open_calls.pop(0)
                body = text[header.end() :] if header else text
                if header and not body.strip() and position < len(blocks):
                    # the older two-block form: the output is the next text block
                    follows = _plain_text(blocks[position][1])
                    if follows is not None:
                        text, body = f"{text}\n{follows}", follows
                        position += 1
                said = (header.group("what") if header else refused["name"]).split()
                if said and said[0] != names.get(call_id, said[0]):
                    log.note(
                        where, "result header names another tool: paired by position"
                    )
                log.result(call_id, text, where, _error(body))
            else:
                environment = environment or bool(header)
                texts.append(text)
        elif kind == "image":
            log.skip(where, "image block: cannot be measured as text")
        elif kind == "tool_use":
            raise log.fail(f"{where} has type {kind!r}, not a user content block")
        else:
            refusal = f"has type {kind!r}, not a user content block"
            texts.append(log.unread_part(where, kind, refusal))
    if texts:
        log.user("\n".join(texts), observation=environment)


def _read(doc: Doc, log: Builder) -> None:
    open_calls, names = [], {}
    for index, message in enumerate(doc.value):
        at = doc.at(index, "messages")
        content = message.get("content")
        if content is None:
            raise log.fail(f"{at}.content is missing")
        if message["role"] == "assistant":
            _model_of(message, log)
            open_calls = _read_assistant(content, at, log)
            _metrics(message, at, log)
            names = {
                call["id"]: call["function"]["name"]
                for call in log.messages[-1].get("tool_calls") or ()
            }
        else:
            _read_user(content, at, open_calls, names, log)
            open_calls = []  # calls left open: the builder notes them


def _model_of(message: dict, log: Builder) -> None:
    info = message.get("modelInfo")
    if isinstance(info, dict) and isinstance(info.get("modelId"), str):
        log.agent, log.model = "cline", info["modelId"]


def _metrics(message: dict, at: str, log: Builder) -> None:
    """An assistant message's own usage (`metrics.tokens {prompt, completion,
    cached}`, newer Cline): the uncached prompt, the cache reads and the reply. It
    does not record the cache writes, so its prompt is a lower bound; the
    `ui_messages.json` beside it, when read, records them and replaces it."""
    metrics = message.get("metrics")
    tokens = metrics.get("tokens") if isinstance(metrics, dict) else None
    if not isinstance(tokens, dict) or not isinstance(tokens.get("prompt"), int):
        return
    cached = tokens.get("cached") if isinstance(tokens.get("cached"), int) else 0
    where = f"{at}.metrics.tokens"
    # `cached` is what the cache read and wrote together (the file beside it splits
    # it): the whole prompt is exact, its split is not
    log.recorded_usage(tokens["prompt"] + cached, where)
    info = message.get("modelInfo") if isinstance(message.get("modelInfo"), dict) else {}
    provider = info.get("providerId") if isinstance(info.get("providerId"), str) else ""
    counts = {"input": tokens["prompt"], "cache_read": cached}
    counts["output"] = tokens.get("completion")
    log.billed_call(where, where, counts, provider)
    if not any(place == METRICS_NOTE[0] for place, _ in log.notes):
        log.note(*METRICS_NOTE)


METRICS_NOTE = (
    "metrics.tokens",
    "the replies' own metrics give each prompt whole but not how much of it the cache "
    "read and how much it wrote: the bill counts it all as read (a lower bound); the "
    "ui_messages.json of the same task records the split",
)


# --- ui_messages.json: Cline's usage record -------------------------------------------

UI_FILE = "ui_messages.json"
REQUEST = "api_req_started"
TOKEN_FIELDS = ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")


def is_ui_messages(value) -> bool:
    """A list of Cline panel entries `{ts, type: say|ask, ...}`, one of them a say."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(item, dict) and "ts" in item and item.get("type") in ("say", "ask")
            for item in value
        )
        and any(item.get("type") == "say" for item in value)
    )


def ui_requests(value, source: str) -> List[Tuple[int, Optional[dict]]]:
    """(entry index, its counts or None) of each API request of a ui_messages.json
    list, in request order: the counts the request's JSON text records (None while it
    records none: a request still under way). Damage is one LogFileError line."""
    if not is_ui_messages(value):
        raise LogFileError(
            f"{source}: not a Cline ui_messages.json (a JSON list of {{ts, type: "
            "say|ask}} entries)"
        )
    requests = []
    for index, item in enumerate(value):
        if item.get("say") != REQUEST:
            continue
        where = f"{source}: [{index}].text"
        try:
            said = json.loads(item.get("text") or "")
        except (TypeError, ValueError):
            raise LogFileError(f"{where} is not the JSON of an API request") from None
        if not isinstance(said, dict):
            raise LogFileError(f"{where} is not a JSON object")
        if not any(name in said for name in TOKEN_FIELDS):
            requests.append((index, None))
            continue
        counts = {}
        for name in TOKEN_FIELDS:
            number = said.get(name, 0)
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise LogFileError(f"{where}: {name} must be a whole number >= 0")
            counts[name] = number
        cost = said.get("cost", 0)
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or cost < 0:
            raise LogFileError(f"{where}: cost must be a number >= 0")
        counts["cost"] = cost
        requests.append((index, counts))
    return requests


def describe_ui_messages(doc: Doc, source: str) -> Optional[str]:
    """What a ui_messages.json given alone is and holds, as the one-line error for it;
    None when `doc` is not one."""
    if doc.lines or not is_ui_messages(doc.value):
        return None
    requests = ui_requests(doc.value, source)
    counted = [counts for _, counts in requests if counts is not None]
    total = {name: sum(c[name] for c in counted) for name in (*TOKEN_FIELDS, "cost")}
    prompt = total["tokensIn"] + total["cacheReads"] + total["cacheWrites"]
    return (
        f"{source}: a Cline ui_messages.json, what Cline's panel showed and its usage "
        f"record, not the conversation the model saw: {len(doc.value)} entries, "
        f"{len(requests)} API requests ({len(counted)} with token counts): "
        f"{prompt:,} input tokens (tokensIn {total['tokensIn']:,} + cacheReads "
        f"{total['cacheReads']:,} + cacheWrites {total['cacheWrites']:,}), "
        f"{total['tokensOut']:,} output tokens, cost ${total['cost']:.4f}. Load "
        f"api_conversation_history.json from the same task folder (in the lab, upload "
        "both files together): its calls are paired with these requests"
    )


def _ui_billed(log, reply: int, index: int, counts: dict, earlier) -> BilledCall:
    """One request of ui_messages.json as the bill counts it, with Cline's own price
    of it (`cost`): its model and provider as the reply's metrics named them."""
    return BilledCall(
        f"{UI_FILE}[{index}]",
        earlier.model if earlier is not None else log.model,
        earlier.provider if earlier is not None else "",
        counts["tokensIn"],
        counts["cacheReads"],
        counts["cacheWrites"],
        0,
        counts["tokensOut"],
        f"{UI_FILE}[{index}]",
        reply,
        None,
        counts["cost"],
    )


def read_usage_beside(log: LoadedLog, path: Path, text_of) -> None:
    """The usage `ui_messages.json` beside a loaded history records, set on `log`
    (`text_of(path)` reads a file as the loader does, None where there is none). A
    request a reply; a file that cannot be read, or whose requests do not match the
    replies one for one, is a note saying why, and the history is read as it is."""
    if path.name == UI_FILE:
        return
    try:
        text = text_of(path.parent / UI_FILE)
        if text is None:
            return
        requests = ui_requests(json.loads(text), UI_FILE)
    except LogFileError as error:
        log.notes.append((UI_FILE, f"usage record beside it not read: {error}"))
        return
    except ValueError as error:
        log.notes.append(
            (UI_FILE, f"usage record beside it not read: not JSON ({error})")
        )
        return
    replies = [
        i for i, message in enumerate(log.messages) if message["role"] == "assistant"
    ]
    if len(requests) != len(replies):
        log.notes.append(
            (
                UI_FILE,
                f"usage record beside it not paired: {len(requests)} API requests for "
                f"{len(replies)} assistant messages (they pair one for one, in order)",
            )
        )
        return
    from_metrics = len(log.usage)
    log.usage.clear()  # the record beside it has the cache writes the metrics lack
    earlier = {call.message: call for call in log.billed}
    billed = []
    for (index, counts), reply in zip(requests, replies):
        if counts is None:
            continue
        read, written = counts["cacheReads"], counts["cacheWrites"]
        log.usage.append(
            RecordedUsage(
                reply,
                counts["tokensIn"] + read + written,
                read,
                written,
                f"{UI_FILE}[{index}]",
            )
        )
        billed.append(_ui_billed(log, reply, index, counts, earlier.get(reply)))
    log.billed[:] = billed
    log.notes[:] = [note for note in log.notes if note != METRICS_NOTE]
    log.notes.append(
        (
            UI_FILE,
            f"usage of {len(log.usage)} API requests read from the file beside it"
            + (
                f" (in place of the {from_metrics} replies' own metrics, which lack "
                "the cache writes)"
                if from_metrics
                else ""
            ),
        )
    )


SHAPES = [
    Shape(
        "cline",
        _detect,
        _read,
        beside=read_usage_beside,
        companions=(UI_FILE,),
        describe=describe_ui_messages,
    )
]
