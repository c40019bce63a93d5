"""Claude Code session files, in the content blocks minilib.logs.anthropic reads.

- claude-code (`~/.claude/projects/<project>/<session>.jsonl`): one record a line.
  Only `user`/`assistant` lines carry a `message` in the block shape above; the
  other types (progress, system, file-history-snapshot, queue-operation, summary)
  are the tool's bookkeeping. An API response is written one block a line, the
  lines sharing `message.id`: they are merged into one assistant message, and the
  tool results written between them are placed after it, in call order. The
  system prompt is not recorded; `toolUseResult` is for the UI, not the model.
  A file whose first record is `{type: system, subtype: init}` is `claude -p
  --output-format stream-json` output, not a session file (see stream.py).
  Claude Code's own compaction is a `system` record with subtype `compact_boundary`
  (`compactMetadata {trigger, preTokens}`) followed by a `user` record marked
  `isCompactSummary` (the summary, "This session is being continued..."): after it
  the model saw the summary and what follows, not the history before. The history
  stays in the messages, the summary is the recorded compaction's replacement
  (`LoadedLog.compactions`). A subagent's (`isSidechain`) compaction is skipped.
"""

from typing import Dict, List, Tuple

from ...logs.anthropic import read_blocks
from ...logs.base import (
    Builder,
    Clearing,
    Resume,
    Unrecorded,
)
from ...logs.detect import Doc, Shape


def is_stream_init(record) -> bool:
    """The first record of `claude -p --output-format stream-json` output."""
    return (
        isinstance(record, dict)
        and record.get("type") == "system"
        and record.get("subtype") == "init"
    )


def is_stream_json(lines) -> bool:
    """Print-mode stream output: an init first line, or (cut) its snake_case fields."""
    if lines and is_stream_init(lines[0][1]):
        return True
    return any(  # session files say sessionId and parentUuid instead
        line.get("type") in ("user", "assistant")
        and "parent_tool_use_id" in line
        and "session_id" in line
        for _, line in lines or ()
    )


def _detect_claude_code(doc: Doc):
    lines = doc.line_objects()
    if is_stream_json(lines):
        return "stream-json output (an init first line, or parent_tool_use_id)"
    if lines and any(
        line.get("type") in ("user", "assistant")
        and isinstance(line.get("message"), dict)
        for _, line in lines
    ):
        return None
    return "no line with type user/assistant and a 'message'"


def _boundary(line: dict, where: str, log: Builder) -> str:
    """A compact_boundary record's trigger and tokens before, checked."""
    meta = line.get("compactMetadata", {})
    if not isinstance(meta, dict):
        raise log.fail(f"{where}: compact_boundary compactMetadata must be an object")
    tokens = meta.get("preTokens")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int)):
        raise log.fail(
            f"{where}: compact_boundary compactMetadata.preTokens must be a number"
        )
    said = [f"trigger {meta['trigger']}"] if meta.get("trigger") else []
    said += [f"{tokens:,} tokens before"] if tokens is not None else []
    return ", ".join(said)


def whose_run(lines) -> str:
    """Whose run a Claude Code file records, when it is not the main session's: a
    subagent's own file has every message line `isSidechain` with its `agentId`
    (the compaction agent's ids begin `acompact`)."""
    said = [line for _, line in lines if line.get("type") in ("user", "assistant")]
    if not said or not all(line.get("isSidechain") for line in said):
        return ""
    agent = next((line["agentId"] for line in said if line.get("agentId")), None)
    if isinstance(agent, str) and agent.startswith("acompact"):
        return (
            f"the compaction agent's own run (agentId {agent}): the model writing a "
            "compaction summary, not a working session"
        )
    named = f" (agentId {agent})" if agent else ""
    return (
        f"a subagent's own log{named}: the parent session holds the call that "
        "started it and the result it returned"
    )


def _note_lost_parents(lines, log: Builder) -> None:
    """Lines naming a parent the file lacks (a line never written or cut): the
    reader follows the file's order, not the parent links, so only said."""
    ids = {line.get("uuid") for _, line in lines}
    lost = [
        number
        for number, line in lines
        if line.get("parentUuid") and line["parentUuid"] not in ids
    ]
    if lost:
        log.note(
            f"line {lost[0]}",
            f"{len(lost)} line{'s' * (len(lost) > 1)} name{'s' * (len(lost) == 1)} "
            "a parent (parentUuid) the file does not hold: read in the file's order",
        )


def _usage(usage: dict, where: str, log: Builder) -> None:
    """The Messages API's usage: the prompt is its uncached input, what it read from
    the cache and what it wrote to it."""
    parts = [
        usage.get(name, 0) or 0
        for name in (
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    ]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in parts):
        raise log.fail(f"{where}: token counts must be whole numbers")
    read = usage.get("cache_read_input_tokens")
    written = usage.get("cache_creation_input_tokens")
    log.recorded_usage(sum(parts), where, read, written)


def billed_counts(usage: dict) -> dict:
    """A Messages API usage as a bill's disjoint counts: the writes split by time to
    live where `cache_creation` splits them (the rest of the writes, or all of them
    where it does not, are 5-minute writes, the API's default)."""

    def number(value) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    written = number(usage.get("cache_creation_input_tokens"))
    split = usage.get("cache_creation")
    hour = (
        number(split.get("ephemeral_1h_input_tokens")) if isinstance(split, dict) else 0
    )
    return {
        "input": number(usage.get("input_tokens")),
        "cache_read": number(usage.get("cache_read_input_tokens")),
        "cache_write_5m": max(0, written - hour),
        "cache_write_1h": min(hour, written),
        "output": number(usage.get("output_tokens")),
    }


# Hooks whose output Claude Code adds to the conversation's context (its hooks docs:
# a SessionStart or UserPromptSubmit hook's stdout is added as context); the log
# keeps a `progress` line saying the hook ran, never what it printed.
CONTEXT_HOOKS = ("SessionStart", "UserPromptSubmit")


def _context_hook(line: dict) -> Tuple[str, str]:
    """(the hook's event, its command) of a progress line of a hook whose output joins
    the context; ("", "") for any other line."""
    data = line.get("data")
    if not isinstance(data, dict) or data.get("type") != "hook_progress":
        return "", ""
    if data.get("hookEvent") not in CONTEXT_HOOKS or line.get("isSidechain"):
        return "", ""
    event = data.get("hookName") or data["hookEvent"]
    command = data.get("command")
    return str(event), command.split("/")[-1] if isinstance(command, str) else "?"


def _note_hook(hook: Tuple[str, str], where: str, log: Builder) -> None:
    """A hook that added its output to the context: one entry for the hooks of one
    event that ran before the same message."""
    at, (event, command) = len(log.messages), hook
    last = log.unrecorded[-1] if log.unrecorded else None
    if last is not None and last.at == at and last.event == event:
        log.unrecorded[-1] = Unrecorded(at, last.where, event, (*last.commands, command))
    else:
        log.unrecorded.append(Unrecorded(at, where, event, (command,)))


def _billed(line: dict, where: str, log: Builder, in_conversation: bool) -> None:
    """A Claude Code assistant line's usage, as the bill counts it: once a response
    (its message id; the last line of a streamed response holds its whole output).
    The client's own lines (model `<synthetic>`) were no call."""
    message = line.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("usage"), dict):
        return
    model = message.get("model")
    if not isinstance(model, str) or model == "<synthetic>":
        return
    key = message.get("id") if isinstance(message.get("id"), str) else where
    log.billed_call(
        key,
        f"{where}: message.usage",
        billed_counts(message["usage"]),
        "anthropic",
        model,
        in_conversation,
    )


def _clearing(line: dict, where: str, log: Builder) -> None:
    """A microcompact_boundary record: the results it cleared, from the next call on
    (a record it cannot read is skipped, saying why: the history is unchanged)."""
    metadata = line.get("microcompactMetadata")
    ids = metadata.get("compactedToolIds") if isinstance(metadata, dict) else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        log.skip(where, "microcompact_boundary without compactedToolIds: not followed")
        return
    numbers = [metadata.get(k) for k in ("preTokens", "tokensSaved")]
    numbers = [
        n if isinstance(n, int) and not isinstance(n, bool) else None for n in numbers
    ]
    log.clearings.append(Clearing(len(log.messages), where, tuple(ids), *numbers))


_QUIT = "<command-name>/exit</command-name>"
_LOCAL_COMMAND = ("<local-command-", "<command-name>")


def _said(line: dict) -> str:
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else ""


def _call_ids(line: dict) -> List[str]:
    """The tool calls a line makes or answers."""
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    ids = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_use":
            ids.append(block.get("id"))
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            ids.append(block.get("tool_use_id"))
    return [i for i in ids if isinstance(i, str)]


_RESTART_REPLY = "No response requested."


def _restart_reply(line: dict) -> bool:
    """The reply the client writes itself (model `<synthetic>`) when it loads a
    session whose last message awaits an answer: the session was resumed there."""
    message = line.get("message")
    if not isinstance(message, dict) or message.get("model") != "<synthetic>":
        return False
    content = message.get("content")
    blocks = content if isinstance(content, list) else ()
    texts = [
        block.get("text")
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return texts == [_RESTART_REPLY]


def resumed_lines(lines) -> Dict[int, Tuple[str, ...]]:
    """The first line of each resumed run of the client (after an `/exit` or the
    reply a resumed client writes itself, or where the version writing the lines
    changes), with the tool calls of the stretch before
    it that lie off the parent chain that line continues: what a client rebuilding
    its history along `parentUuid` no longer sent. A chain that reaches a parent the
    file lacks is not followed (the calls it drops are not known)."""
    lines = list(lines)
    by_uuid = {
        line["uuid"]: line for _, line in lines if isinstance(line.get("uuid"), str)
    }
    found: Dict[int, Tuple[str, ...]] = {}
    quit_at, stretch_start, version = None, 0, None
    for position, (number, line) in enumerate(lines):
        if line.get("subtype") == "compact_boundary":
            stretch_start = position
        if line.get("type") not in ("user", "assistant") or line.get("isSidechain"):
            continue
        written_by = line.get("version") if isinstance(line.get("version"), str) else None
        if written_by and version and written_by != version and quit_at is None:
            quit_at = position  # a new client version: the client was restarted
        version = written_by or version
        if _QUIT in _said(line):
            quit_at = position
            continue
        if _restart_reply(line) and quit_at is None:
            quit_at = position  # the resumed client's first line: this one
        if quit_at is None or _said(line).lstrip().startswith(_LOCAL_COMMAND):
            continue
        chain, parent = set(), line.get("parentUuid")
        while parent in by_uuid and parent not in chain:
            chain.add(parent)
            parent = by_uuid[parent].get("parentUuid")
        dropped: List[str] = []
        if parent is None:  # the chain reached its root or a compaction's boundary
            for _, earlier in lines[stretch_start:quit_at]:
                said = earlier.get("type") in ("user", "assistant")
                if said and not earlier.get("isSidechain"):
                    if earlier.get("uuid") not in chain:
                        dropped.extend(_call_ids(earlier))
        found[number] = tuple(dict.fromkeys(dropped))
        quit_at = None
    return found


def _read_claude_code(doc: Doc, log: Builder) -> None:
    boundary = None  # (where, detail) of a compact_boundary waiting for its summary
    log.run_of = whose_run(doc.line_objects())
    _note_lost_parents(doc.line_objects(), log)
    resumed = resumed_lines(doc.line_objects())
    for number, line in doc.line_objects():
        kind, where = line.get("type"), f"line {number}"
        if number in resumed:
            log.resumes.append(Resume(len(log.messages), where, resumed[number]))
        log.timestamp = line.get("timestamp")
        compacting = line.get("subtype") == "compact_boundary" or line.get(
            "isCompactSummary"
        )
        if compacting and line.get("isSidechain") and not log.run_of:
            log.skip(where, "a subagent's compaction: not this conversation's")
            continue
        if line.get("isSidechain") and not log.run_of and kind in ("user", "assistant"):
            # older versions wrote a Task subagent's run into the session's file: its
            # messages went to the subagent's model, not this conversation's (its
            # calls were billed all the same)
            if kind == "assistant":
                _billed(line, where, log, in_conversation=False)
            log.skip(where, "a subagent's line (isSidechain): not this conversation's")
            continue
        if kind == "system" and line.get("subtype") == "microcompact_boundary":
            _clearing(line, where, log)
            continue
        if kind == "system" and line.get("subtype") == "compact_boundary":
            boundary = (where, _boundary(line, where, log))
            continue
        if kind == "progress" and (hook := _context_hook(line))[0]:
            _note_hook(hook, where, log)
        if kind not in ("user", "assistant"):
            log.skip(where, f"{kind}: bookkeeping")
            continue
        message = line.get("message")
        if not isinstance(message, dict) or "content" not in message:
            raise log.fail(f"{where}: message.content is missing")
        if kind == "user" and line.get("isCompactSummary"):
            summary = log.replacement()
            read_blocks("user", message["content"], f"{where}: message", summary)
            if boundary is None:
                log.compaction(where, "user isCompactSummary", summary)
            else:
                log.compaction(
                    boundary[0],
                    f"system compact_boundary, summary {where} (isCompactSummary)",
                    summary,
                    detail=boundary[1],
                )
            boundary = None
            continue
        if boundary is not None:
            raise log.fail(
                f"{boundary[0]}: compact_boundary is not followed by its "
                f"isCompactSummary user record ({where} is a {kind} record)"
            )
        role = message.get("role") or kind
        key = message.get("id") if role == "assistant" else None
        if role == "assistant" and isinstance(message.get("model"), str):
            if message["model"] != "<synthetic>":  # the client's own line, no call
                log.model = message["model"]
        if isinstance(line.get("version"), str):
            log.agent, log.agent_version = "claude-code", line["version"]
        read_blocks(role, message["content"], f"{where}: message", log, key)
        if role == "assistant" and isinstance(message.get("usage"), dict):
            _usage(message["usage"], f"{where}: message.usage", log)
            _billed(line, where, log, in_conversation=True)
    if boundary is not None:
        log.note(
            boundary[0], "compact_boundary at the end of the log: no summary after it"
        )


SHAPES = [Shape("claude-code", _detect_claude_code, _read_claude_code)]


def compaction_fields(record, lines_before):
    """(trigger, tokens before, the field) of Claude Code's compact boundary, else
    None."""
    meta = record.get("compactMetadata") if isinstance(record, dict) else None
    if not isinstance(meta, dict):
        return None
    tokens = meta.get("preTokens")
    tokens = tokens if isinstance(tokens, int) else None
    return meta.get("trigger"), tokens, "compactMetadata.preTokens"
