"""pi coding agent sessions, and its forks': `~/.pi/agent/sessions/--<path>--/*.jsonl`.

JSON Lines. The first line is the header `{type: session, version, id, timestamp,
cwd}`; every later entry has `id` and `parentId`, so the entries form a tree:
the window is the path from the root to the last entry, as pi rebuilds it on
load, and entries on abandoned branches are skipped (each says so). A version 1
file has no ids: its entries are one path. Entry types:
- `message`: `message.role` user (content a string or blocks `text` / `image`),
  assistant (blocks `text`, `thinking`, `toolCall {id, name, arguments}`),
  toolResult (`toolCallId`, `content` blocks, `isError`: a tool error with its
  first line), bashExecution (a `!` command the person ran: a user message, as pi
  sends it, unless `excludeFromContext`) or custom (an extension's message: user).
  An assistant message that stopped with `stopReason` error or aborted is not
  sent back by pi, nor are the results of its calls: skipped.
- `custom_message` (an extension's message, sent as a user message) and
  `branch_summary` (the summary of the branch left behind, sent as a user message
  with pi's prefix): kept, with a note.
- `compaction` (`summary`, `firstKeptEntryId` or in the early format
  `firstKeptEntryIndex`, the kept entry's place in the file; `tokensBefore`): pi's
  own compaction,
  followed as the model saw it (`LoadedLog.compactions`): from then on pi sends the
  summary as a user message (with its prefix), then the entries from the first kept
  one up to the compaction, then what came after. The history before it stays in
  the messages. A first kept entry the path does not hold (a lost line, a damaged
  id) is repaired as pi rebuilds it then: the summary alone, said as a repair.
- `model_change`, `thinking_level_change`, `custom` (extension state), `label`,
  `session_info`: bookkeeping, skipped.
Thinking blocks are not sent back as content and images cannot be measured: both
skipped. No system prompt is recorded.
"""

from ...logs.base import Builder, content_items, first_line, make_call
from ...logs.detect import Doc, Shape

ALL = ("text", "toolCall", "thinking")  # the blocks of an assistant message
BOOKKEEPING = ("model_change", "thinking_level_change", "custom", "label", "session_info")
BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:"
    "\n\n<summary>\n"
)
COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following "
    "summary:\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
KEPT_KINDS = ("message", "custom_message", "branch_summary")  # what a replay re-sends


def _blocks(content, at: str, log: Builder, allowed=("text",), thoughts=None):
    """(texts, calls) of a content string or block list; thinking and images skipped
    (a thinking block's text added to `thoughts`, when given)."""
    if isinstance(content, str):
        return [content], []
    texts, calls = [], []
    for where, kind, block in content_items(content, at, log):
        if kind == "text" and "text" in allowed:
            texts.append(block.get("text") or "")
        elif kind == "toolCall" and "toolCall" in allowed:
            if not block.get("id") or not block.get("name"):
                raise log.fail(f"{where}: toolCall needs 'id' and 'name'")
            calls.append(make_call(block["id"], block["name"], block.get("arguments")))
        elif kind == "thinking" and "thinking" in allowed:
            log.skip(where, "thinking block: not sent back as content")
            if thoughts is not None and isinstance(block.get("thinking"), str):
                thoughts.append(block["thinking"])
        elif kind == "image":
            log.skip(where, "image block: cannot be measured as text")
        else:
            raise log.fail(f"{where} has type {kind!r}, not a content block here")
    return texts, calls


def _bash_text(message: dict) -> str:
    """The user message pi sends for a `!` command (its bashExecutionToText)."""
    output = message.get("output")
    text = f"Ran `{message.get('command')}`\n" + (
        f"```\n{output}\n```" if output else "(no output)"
    )
    code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _message(entry: dict, where: str, log: Builder, dropped: set) -> None:
    message = entry.get("message")
    if not isinstance(message, dict):
        raise log.fail(f"{where}: message must be a JSON object")
    at, role = f"{where}: message", message.get("role")
    if role == "assistant":
        if message.get("stopReason") in ("error", "aborted"):
            _, calls = _blocks(message.get("content"), at, Builder("", ""), ALL)
            dropped.update(call["id"] for call in calls)
            stop = message["stopReason"]
            if isinstance(message.get("usage"), dict):  # billed, though not sent back
                _billed(message, message["usage"], at, log, in_conversation=False)
            log.skip(where, f"assistant stopped by {stop}: not sent back")
            return
        if isinstance(message.get("model"), str):
            log.agent, log.model = "pi", message["model"]
        thoughts = []  # counted where the API takes them back (measure.recorded_usage)
        texts, calls = _blocks(message.get("content"), at, log, ALL, thoughts)
        log.assistant("\n".join(texts), calls, thinking="\n".join(thoughts))
        usage = message.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("input"), int):
            # pi's `input` is the uncached part; the prompt adds what was read and written
            read, written = usage.get("cacheRead"), usage.get("cacheWrite")
            whole = usage["input"] + sum(n for n in (read, written) if isinstance(n, int))
            log.recorded_usage(whole, f"{at}.usage", read, written)
            _billed(message, usage, at, log)
    elif role == "toolResult":
        call_id = message.get("toolCallId")
        if not call_id:
            raise log.fail(f"{at}.toolCallId is missing")
        if call_id in dropped:
            log.skip(where, "result of a call of a stopped assistant: not sent back")
            return
        text = "\n".join(_blocks(message.get("content"), at, log)[0])
        error = (
            {"code": "TOOL_ERROR", "message": first_line(text)}
            if message.get("isError")
            else None
        )
        log.result(call_id, text, where, error)
    elif role in ("user", "custom"):
        log.user("\n".join(_blocks(message.get("content"), at, log)[0]))
    elif role == "bashExecution":
        if message.get("excludeFromContext"):
            log.skip(where, "bashExecution with !!: kept out of the context by pi")
        else:
            log.user(_bash_text(message))
            log.note(where, "bashExecution: a command the person ran, sent as user text")
    else:
        raise log.fail(
            f"{at}.role is {role!r}; expected user, assistant, toolResult, "
            "bashExecution or custom"
        )


def _path(entries: list, log: Builder) -> list:
    """The (line, entry) pairs from the root to the last entry; others are skipped."""
    if not any("id" in entry for _, entry in entries):  # version 1: one linear path
        return entries
    by_id, order = {}, {}
    for position, (number, entry) in enumerate(entries):
        if not isinstance(entry.get("id"), str):
            raise log.fail(f"line {number}: the entry has no 'id'")
        by_id[entry["id"]] = (number, entry)
        order[entry["id"]] = position
    path, current, seen = [], entries[-1], set()
    while current is not None:
        number, entry = current
        if entry["id"] in seen:
            raise log.fail(f"line {number}: parentId makes a cycle")
        seen.add(entry["id"])
        path.append(current)
        parent = entry.get("parentId")
        if parent is not None and parent not in by_id:
            if log.strict:
                raise log.fail(f"line {number}: parentId {parent!r} names no entry")
            # its parent's line was lost (damaged, never written): in a session that
            # ran straight on, the entry written before it is the parent's parent
            position = order[entry["id"]]
            log.repaired("missing-parent", f"line {number}", f"parentId {parent!r}")
            current = entries[position - 1] if position else None
            continue
        current = by_id[parent] if parent is not None else None
    path.reverse()
    for number, entry in entries:
        if entry["id"] not in seen:
            log.skip(f"line {number}", "on an abandoned branch: not in the window")
    return path


def _read(doc: Doc, log: Builder) -> None:
    lines = doc.line_objects()
    log.skip(f"line {lines[0][0]}", "session header: metadata")
    dropped = set()  # call ids of assistant messages pi does not send back
    before = []  # the (line, entry) pairs of the path read so far
    for number, entry in _path(lines[1:], log):
        where, kind = f"line {number}", entry.get("type")
        log.timestamp = entry.get("timestamp")  # when pi wrote it: idle gaps show
        if kind in KEPT_KINDS:
            _entry(entry, where, log, dropped)
        elif kind == "compaction":
            _compaction(entry, where, log, before, dropped)
        elif kind in BOOKKEEPING:
            log.skip(where, f"{kind}: bookkeeping")
        else:
            raise log.fail(f"{where}: entry type {kind!r} is not a pi session entry")
        before.append((number, entry))


def _entry(entry: dict, where: str, log: Builder, dropped: set) -> None:
    """An entry pi sends to the model (one of KEPT_KINDS), told to `log`."""
    kind = entry.get("type")
    if kind == "message":
        _message(entry, where, log, dropped)
    elif kind == "custom_message":
        at = f"{where}: custom_message"
        log.user("\n".join(_blocks(entry.get("content"), at, log)[0]))
        log.note(where, "custom_message: an extension's message, sent as user text")
    else:
        log.user(BRANCH_PREFIX + (entry.get("summary") or "") + "</summary>")
        log.note(where, "branch_summary: the branch left behind, sent as user text")


def _compaction(entry: dict, where: str, log: Builder, before: list, dropped) -> None:
    """A `compaction` entry told to the builder as the agent's own compaction: the
    summary, then the entries from the first kept one (re-read: the model saw them
    again after it)."""
    summary, first = entry.get("summary"), entry.get("firstKeptEntryId")
    if not isinstance(summary, str):
        raise log.fail(f"{where}: compaction summary must be a string")
    tokens = entry.get("tokensBefore")
    if tokens is not None and (
        isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0
    ):
        raise log.fail(f"{where}: compaction tokensBefore must be a whole number >= 0")
    start = next(
        (
            n
            for n, (_, e) in enumerate(before)
            if first is not None and e.get("id") == first
        ),
        None,
    )
    index = entry.get("firstKeptEntryIndex")  # the early format: the entry's place
    if first is None and isinstance(index, int) and not isinstance(index, bool):
        start = next((n for n, (line, _) in enumerate(before) if line - 1 == index), None)
        first = f"#{index}"
    if start is None:
        said = (
            "has no firstKeptEntryId"
            if first is None
            else (f"firstKeptEntryId {first!r} names no entry before it on the path")
        )
        if log.strict:
            raise log.fail(f"{where}: compaction {said}")
        log.repaired("missing-kept-entry", where, said)
        kept = []
        recorded_by = "compaction summary; no first kept entry on the path before it"
    else:
        kept = before[start:]
        recorded_by = (
            f"compaction summary, the entries from first kept entry {first!r} "
            f"(line {before[start][0]})"
        )
    replacement = log.replacement()
    replacement.user(COMPACTION_PREFIX + summary + COMPACTION_SUFFIX)
    for number, kept_entry in kept:
        if kept_entry.get("type") in KEPT_KINDS:
            _entry(kept_entry, f"line {number}", replacement, set(dropped))
    # a call the compaction cut off before its result: interrupted, as the harness
    # answers it before the next call (the log goes on after the replacement)
    replacement._flush()
    # what reading them said was said when they were first read: not twice
    replacement.skipped, replacement.notes = [], []
    known = {(r.kind, r.where) for r in log.repairs}
    replacement.repairs = [
        r for r in replacement.repairs if (r.kind, r.where) not in known
    ]
    detail = "" if tokens is None else f"{tokens:,} tokens before"
    log.compaction(where, recorded_by, replacement, 0, detail)


def _detect(doc: Doc):
    lines = doc.line_objects()
    if not lines or lines[0][1].get("type") != "session" or "cwd" not in lines[0][1]:
        return "no first line {type: session, cwd}"
    if not any(entry.get("type") == "message" for _, entry in lines[1:]):
        return "no line with type message"
    return None


SHAPES = [Shape("pi-session", _detect, _read)]


# pi's provider names, as the bill's (a provider pi names otherwise is kept as named)
PROVIDERS = {"anthropic": "anthropic", "openai": "openai", "google": "google"}


def _billed(
    message: dict, usage: dict, at: str, log: Builder, in_conversation: bool = True
) -> None:
    """A pi assistant message's usage as the bill counts it, with pi's own price of it
    (`usage.cost.total`, in dollars, from pi's price table). pi's cache writes carry
    no time to live: they are the providers' default, 5 minutes."""
    cost = usage.get("cost")
    provider = message.get("provider") if isinstance(message.get("provider"), str) else ""
    log.billed_call(
        f"{at}",
        f"{at}.usage",
        {
            "input": usage.get("input"),
            "cache_read": usage.get("cacheRead"),
            "cache_write_5m": usage.get("cacheWrite"),
            "output": usage.get("output"),
        },
        PROVIDERS.get(provider, provider),
        message["model"] if isinstance(message.get("model"), str) else None,
        in_conversation,
        cost.get("total") if isinstance(cost, dict) else None,
    )


def compaction_fields(record, lines_before):
    """(trigger, tokens before, the field) of pi's compaction entry, else None."""
    if not (isinstance(record, dict) and record.get("type") == "compaction"):
        return None
    tokens = record.get("tokensBefore")
    tokens = tokens if isinstance(tokens, int) else None
    field = "compaction.tokensBefore" if tokens is not None else "not recorded"
    return None, tokens, field
