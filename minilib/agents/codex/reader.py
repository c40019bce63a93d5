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
A `compacted` line is Codex's own compaction (`payload.message` the summary text,
`payload.replacement_history` the items that replaced the history, when recorded):
the history before it stays in the messages and the compaction is recorded
(`LoadedLog.compactions`), with what the model saw instead. Without
`replacement_history` that is rebuilt as Codex rebuilds it on resume: the session's
opening context, the earlier user messages (the latest, up to 20,000 tokens at 4
characters a token) and the summary as a user message.
"""

import json
from collections import Counter
from typing import Optional, Tuple

from ...logs.base import Builder
from ...logs.detect import Doc, Shape
from ...logs.openai import content_text
from ...logs.responses import read_item

# user messages Codex writes itself at a session's start: context, not the user's turns
SESSION_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
)
KEPT_USER_TOKENS = 20_000  # of earlier user messages a rebuilt compaction keeps


def _read(doc: Doc, log: Builder) -> None:
    lines = doc.line_objects()
    said = Counter()  # texts of response_item user/assistant messages, for event_msg
    for number, line in lines:
        item = line.get("payload") or {}
        if line.get("type") == "response_item" and item.get("type") == "message":
            text = _text(item, f"line {number}", log, quiet=True)
            said[item.get("role"), text.strip()] += 1
    response = 0  # number of the current model response; assistant items of one merge
    instructions_kept = 0  # the base instructions go with every call, compacted or not
    total = 0  # the running total of input tokens the token_count events record
    for number, line in lines:
        where, kind, item = f"line {number}", line.get("type"), line.get("payload") or {}
        log.timestamp = line.get("timestamp")
        item_type = item.get("type") if isinstance(item, dict) else None
        if kind in ("session_meta", "turn_context") and isinstance(item, dict):
            if isinstance(item.get("cli_version"), str):
                log.agent, log.agent_version = "codex", item["cli_version"]
            if isinstance(item.get("model"), str):
                log.model = item["model"]
        if kind == "session_meta":
            instructions = item.get("base_instructions")
            if isinstance(instructions, dict):
                instructions = instructions.get("text")
            text = instructions
            if text:
                log.system(text, "session_meta.payload.base_instructions")
                instructions_kept = len(log.messages)
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
            _compacted(line.get("payload"), where, log, instructions_kept)
            response += 1
        elif kind == "event_msg" and item_type == "token_count":
            total = _token_count(item, where, log, total)
        elif kind != "response_item":
            log.skip(
                where,
                f"{kind}{' ' + item_type if kind == 'event_msg' else ''}: bookkeeping",
            )
        else:
            response = read_item(
                item, where, where + ": payload", log, response, kind="response_item "
            )


def _token_count(item: dict, where: str, log: Builder, total: int) -> int:
    """A `token_count` event: the last call's usage (`last_token_usage`, whose
    input_tokens include the cached part), or else the growth of the running total;
    returns the running total's input so far. An event that counts nothing (all
    zero: Codex writes one before any call has been counted) is a placeholder, not a
    call's usage."""
    info = item.get("info") if isinstance(item.get("info"), dict) else {}
    window = info.get("model_context_window")
    if isinstance(window, int) and not isinstance(window, bool) and window > 0:
        log.context_window = window
    running = info.get("total_token_usage")
    seen = running.get("input_tokens") if isinstance(running, dict) else None
    last = last_call_usage(info)
    if last is not None:
        at = f"{where}: payload.info.last_token_usage"
        log.recorded_usage(last[0], at, last[1])
        _billed(info, at, log)
    elif last_token_placeholder(info):
        log.skip(where, "event_msg token_count: a placeholder (every count 0)")
    elif isinstance(seen, int) and seen > total:
        at = f"{where}: payload.info.total_token_usage"
        log.recorded_usage(seen - total, at)
    else:
        log.skip(where, "event_msg token_count: no usage recorded")
    return seen if isinstance(seen, int) else total


def _billed(info: dict, where: str, log: Builder) -> None:
    """A token_count's last call as the bill counts it. OpenAI's cached input is part
    of its input (never added to it), its reasoning part of its output; its cache is
    automatic and bills no writes. Codex repeats an event with the same running
    total: one call, keyed by that total."""
    last = info["last_token_usage"]
    running = info.get("total_token_usage")
    total = running.get("total_tokens") if isinstance(running, dict) else None
    cached = last.get("cached_input_tokens")
    cached = cached if isinstance(cached, int) and not isinstance(cached, bool) else 0
    whole = last["input_tokens"]
    log.billed_call(
        f"total {total}" if isinstance(total, int) else where,
        where,
        {
            "input": max(0, whole - cached),
            "cache_read": min(cached, whole),
            "output": last.get("output_tokens"),
        },
        "openai",
    )


def last_call_usage(info) -> Optional[Tuple[int, Optional[int]]]:
    """(input tokens, the cached part of them) of a `token_count` event's
    `last_token_usage`; None where it has none or counts nothing (a placeholder)."""
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if not isinstance(last, dict) or last_token_placeholder(info):
        return None
    tokens = last.get("input_tokens")
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        return None
    return tokens, last.get("cached_input_tokens")


def last_token_placeholder(info) -> bool:
    """A `last_token_usage` whose every count is 0: written before a call was
    counted, so it says nothing of any call's prompt."""
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if not isinstance(last, dict):
        return False
    counts = [v for v in last.values() if isinstance(v, int)]
    return bool(counts) and not any(counts)


def _compacted(payload, where: str, log: Builder, kept: int) -> None:
    """A `compacted` line told to the builder as the agent's own compaction."""
    if not isinstance(payload, dict) or not isinstance(payload.get("message"), str):
        raise log.fail(f"{where}: compacted payload.message must be a string")
    history = payload.get("replacement_history")
    replacement = log.replacement()
    if history is None:
        _rebuilt(payload["message"], log, replacement, kept)
        recorded_by = "compacted payload.message, history rebuilt as Codex does"
    elif isinstance(history, list):
        response = 0
        for number, entry in enumerate(history):
            at = f"{where}: payload.replacement_history[{number}]"
            if not isinstance(entry, dict):
                raise log.fail(f"{at} must be an object")
            if entry.get("type") in ("compaction", "compaction_summary"):
                replacement.skip(at, "compaction item: encrypted, cannot be measured")
            else:
                response = read_item(entry, at, at, replacement, response)
        recorded_by = "compacted payload.replacement_history"
    else:
        raise log.fail(f"{where}: compacted payload.replacement_history must be a list")
    log.compaction(where, recorded_by, replacement, kept)


def _rebuilt(summary: str, log: Builder, replacement: Builder, kept: int) -> None:
    """What Codex puts in place of the history when the record holds only the summary:
    the opening context, the latest earlier user messages, the summary."""
    opening, users = [], []
    for message in log.messages[kept:]:
        if message["role"] != "system" and not (message["content"] or "").startswith(
            SESSION_PREFIXES
        ):
            break
        opening.append(message)
    previous = log.compactions[-1] if log.compactions else None
    held = (
        log.messages[kept:]
        if previous is None
        else list(previous.replacement) + log.messages[previous.at :]
    )
    summaries = {c.replacement[-1]["content"] for c in log.compactions if c.replacement}
    for message in held:
        text = message["content"] or ""
        if message["role"] == "user" and not message.get("observation"):
            if not text.startswith(SESSION_PREFIXES) and text not in summaries:
                users.append(text)
    chosen, left = [], KEPT_USER_TOKENS * 4  # characters, at 4 a token
    for text in reversed(users):
        if left <= 0:
            break
        if len(text) > left:  # the oldest one kept: its middle cut, as Codex cuts it
            cut, half = len(text) - left, left // 2
            text = f"{text[:half]}…{cut // 4} tokens truncated…{text[-half:]}"
        chosen.append(text)
        left -= len(text)
    for message in opening:
        if message["role"] == "system":
            replacement.system(message["content"], "compacted")
        else:
            replacement.user(message["content"])
    for text in reversed(chosen):
        replacement.user(text)
    replacement.user(summary or "(no summary available)")


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


def compaction_fields(record, lines_before):
    """(None, tokens before, the field) of a Codex compaction: the input of the last
    `token_count` event before it that counted a call (a placeholder that counts
    nothing is passed over, as the reader passes it over); None for a record that
    is not Codex's."""
    if not (isinstance(record, dict) and record.get("type") == "compacted"):
        return None
    for line in reversed(lines_before):
        try:
            earlier = json.loads(line)
        except ValueError:
            continue
        payload = earlier.get("payload") if isinstance(earlier, dict) else None
        if not isinstance(payload, dict) or payload.get("type") != "token_count":
            continue
        info = payload.get("info") or {}
        last = last_call_usage(info)
        if last is not None:
            return None, last[0], "token_count info.last_token_usage.input_tokens"
        if last_token_placeholder(info):
            continue
        tokens = (info.get("total_token_usage") or {}).get("input_tokens")
        if isinstance(tokens, int) and tokens:
            return None, tokens, "token_count info.total_token_usage.input_tokens"
    return None, None, "not recorded"
