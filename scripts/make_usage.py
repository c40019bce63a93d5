"""Write generated API usage into the bundled logs that have a usage field.

The bundled logs are constructed, so what "the API counted" in them has to be made
too. This script makes it the way a provider would count it, with parts the lab does
not use: a real tokenizer (o200k_base) over each window the log records, call
arguments and the thinking of the tool loop under way included, plus a stated fixed
overhead for the system prompt and tool definitions the log does not hold and, after
one of the agent's own compactions, what its harness re-attaches. The lab sees only
the log, so the bundled logs check its estimate, its overhead method and what it adds
for arguments and thinking against a real tokenizer's count (tests/test_recorded_usage.py).
A provider's tokenizer is not o200k_base for every agent here; the figures on real
logs are in docs/recorded_usage.md.

Only the numbers of the usage records the log already has are rewritten; the cache
split follows the provider's rule: the prefix the call before sent is read from the
cache, the rest written (OpenAI reads in whole blocks of 128 tokens).

    python scripts/make_usage.py            # rewrite the files in place
    python scripts/make_usage.py --check    # exit 1 if a file would change
"""

import argparse
import json
import re
import sys
from pathlib import Path

from minilib.logs import load_log
from minilib.logs.replay import sent_stretches
from minilib.measure.tokenizers import text_counter
from minilib.tokens import MESSAGE_OVERHEAD, TOOL_CALL_OVERHEAD, tool_call_name

LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"

# The fixed part of every call (system prompt and tool definitions), in tokens, and
# what the harness re-attaches after one of its compactions. Claude Code's overhead is
# the size a real Claude Code 2.1 session's first call showed beyond its messages;
# the others are those the constructed logs were written with.
OVERHEAD = {
    "claude-code": 35_000,
    "codex": 9_000,
    "gemini": 5_100,
    "pi": 2_180,
    "opencode": 1_140,
    "cline": 11_200,
    "cline-metrics": 11_200,
}
REATTACHED = {"claude-code": 600}  # a recently read file, put back after a compaction
FILES = {
    "claude_code_session.jsonl": "claude-code",
    "claude_code_compacted.jsonl": "claude-code",
    "gaps/claude_code_missing_line.jsonl": "claude-code",
    "codex_rollout.jsonl": "codex",
    "codex_compacted.jsonl": "codex",
    "codex_event_users.jsonl": "codex",
    "gaps/codex_approval_between.jsonl": "codex",
    "gaps/codex_interrupted_call.jsonl": "codex",
    "gemini_session.json": "gemini",
    "opencode_export.json": "opencode",
    "pi_session.jsonl": "pi",
    "gaps/pi_damaged_line.jsonl": "pi",
    "gaps/pi_compaction_kept_entry_elsewhere.jsonl": "pi",
    # the usage is in ui_messages.json beside the history
    "as_kept/cline_task/api_conversation_history.json": "cline",
    # newer Cline: each reply's own metrics
    "cline_task.json": "cline-metrics",
    "gaps/cline_task_resumption.json": "cline-metrics",
}
# Anthropic's prices for Claude Sonnet 4.5 in dollars a token (input, output, cache
# write, cache read): what Cline's `cost` is made of
CLINE_PRICES = (3e-6, 15e-6, 3.75e-6, 0.3e-6)


def calls_counted(log, agent: str):
    """Per assistant message (by index in the log): (prompt tokens, cached prefix)."""
    count = text_counter("o200k_base")
    thinking = {id(log.messages[i]): text for i, text in log.thinking.items()}
    indices = {id(m): i for i, m in enumerate(log.messages)}
    counted, previous_total = {}, None
    for number, (stretch, opening) in enumerate(
        sent_stretches(log.messages, log.compactions)
    ):
        total = OVERHEAD[agent] + (REATTACHED.get(agent, 0) if number else 0)
        loop, first = 0, True
        for index, message in enumerate(stretch):
            if message["role"] == "user":
                loop = 0
            if index >= opening and message["role"] == "assistant":
                prompt = total + loop
                cached = (
                    previous_total if not first else (OVERHEAD[agent] if number else 0)
                )
                counted[indices[id(message)]] = (prompt, min(cached, prompt))
                previous_total, first = prompt, False
            total += MESSAGE_OVERHEAD + count(message.get("content") or "")
            for call in message.get("tool_calls") or ():
                arguments = str(call["function"].get("arguments") or "")
                total += (
                    TOOL_CALL_OVERHEAD + count(tool_call_name(call)) + count(arguments)
                )
            if message["role"] == "assistant":
                loop += count(thinking.get(id(message), ""))
    return counted


def claude_usage(prompt: int, cached: int) -> dict:
    return {
        "input_tokens": 3,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": prompt - cached - 3,
    }


def rewrite_lines(path: Path, log, counted, agent: str) -> str:
    """A JSONL log with each usage record's numbers replaced."""
    lines = path.read_text(encoding="utf-8").split("\n")
    by_line = {int(u.where.split(":")[0].split()[1]): u for u in log.usage}
    response_ids, running = {}, 0
    for number, usage in sorted(by_line.items()):
        record = json.loads(lines[number - 1])
        prompt, cached = counted[usage.message]
        if agent == "claude-code":
            response_ids[record["message"]["id"]] = claude_usage(prompt, cached)
        elif agent == "codex":
            cached = cached // 128 * 128
            running += prompt
            info = record["payload"]["info"]
            outputs = info.get("total_token_usage", {}).get("output_tokens", 0)
            info["last_token_usage"] = {
                "input_tokens": prompt,
                "cached_input_tokens": cached,
            }
            info["total_token_usage"] = {
                "input_tokens": running,
                "output_tokens": outputs,
            }
            lines[number - 1] = json.dumps(record, separators=(",", ":"))
        else:  # pi: usage on the assistant message
            usage_field = record["message"]["usage"]
            usage_field.update(input=prompt - cached, cacheRead=cached, cacheWrite=0)
            lines[number - 1] = json.dumps(record, separators=(",", ":"))
    for position, line in enumerate(lines):  # every line of a Claude response
        if agent != "claude-code" or not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a damaged line stays as it is
        message = record.get("message") if isinstance(record, dict) else None
        if isinstance(message, dict) and message.get("id") in response_ids:
            message["usage"] = {**message["usage"], **response_ids[message["id"]]}
            lines[position] = json.dumps(record, separators=(",", ":"))
    return "\n".join(lines)


def rewrite_cline_ui(path: Path, log, counted) -> str:
    """Cline's ui_messages.json beside the history: each api_req_started entry's
    tokens as Anthropic splits a prompt (3 uncached, the prefix read, the rest
    written) and its cost; the output tokens as the file has them."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for usage in log.usage:
        entry = document[int(usage.where.split("[")[1].rstrip("]"))]
        said = json.loads(entry["text"])
        prompt, cached = counted[usage.message]
        fresh = min(3, prompt - cached)
        said.update(
            tokensIn=fresh, cacheReads=cached, cacheWrites=prompt - cached - fresh
        )
        parts = (fresh, said.get("tokensOut", 0), said["cacheWrites"], cached)
        said["cost"] = round(sum(n * p for n, p in zip(parts, CLINE_PRICES)), 6)
        entry["text"] = json.dumps(said)
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def rewrite_cline_metrics(path: Path, log, counted) -> str:
    """A Cline history whose replies keep their own metrics: `prompt` the uncached
    part, `cached` what the cache read and wrote (Cline adds the two), the
    completion as the file has it."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for usage in log.usage:
        index = int(re.match(r"messages\[(\d+)\]", usage.where).group(1))
        tokens = document[index]["metrics"]["tokens"]
        prompt, _ = counted[usage.message]
        fresh = min(3, prompt)
        tokens.update(prompt=fresh, cached=prompt - fresh)
    return json.dumps(document, indent=_indent(path), ensure_ascii=False) + "\n"


def _indent(path: Path) -> int:
    """The indent the file is written with (its second line's)."""
    second = path.read_text(encoding="utf-8").split("\n")[1]
    return len(second) - len(second.lstrip(" "))


def rewrite_json(path: Path, log, counted, agent: str) -> str:
    """A JSON log (Gemini CLI's session, opencode's export) with each usage record's
    numbers replaced, where the reader found it (`messages[i]...tokens`)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for usage in log.usage:
        found = document
        for key in re.findall(r"(\w+)(?:\[(\d+)\])?", usage.where):
            found = found[key[0]] if not key[1] else found[key[0]][int(key[1])]
        prompt, cached = counted[usage.message]
        if agent == "gemini":  # its input holds the cached part
            found.update(input=prompt, cached=cached)
        else:
            found.update(input=prompt - cached, cache={"read": cached, "write": 0})
    if agent == "opencode":
        for message in document["messages"]:
            message_totals(message)
    indent = 1 if agent == "gemini" else 2  # as each file is written
    return json.dumps(document, indent=indent, ensure_ascii=False) + "\n"


OPENCODE_NO_TOKENS = {
    "input": 0,
    "output": 0,
    "reasoning": 0,
    "cache": {"read": 0, "write": 0},
}


def message_totals(message: dict) -> None:
    """An opencode assistant message's own `tokens` and `cost` as opencode keeps them:
    at the end of every step it sets the message's tokens to that step's and adds the
    step's cost to the message's (packages/opencode/src/session/processor.ts,
    "finish-step"); a message no step finished (an error, an interruption) keeps the
    zeros it was created with."""
    info = message.get("info") or {}
    if info.get("role") != "assistant":
        return
    steps = [p for p in message.get("parts", ()) if p.get("type") == "step-finish"]
    info["tokens"] = json.loads(
        json.dumps(steps[-1]["tokens"] if steps else OPENCODE_NO_TOKENS)
    )
    info["cost"] = round(sum(step.get("cost", 0) for step in steps), 6)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only say what would change")
    args = parser.parse_args(argv)
    changed = []
    for name, agent in FILES.items():
        path = LOGS / name
        log = load_log(path)
        counted = calls_counted(log, agent)
        if agent == "cline":
            path = path.parent / "ui_messages.json"
            text = rewrite_cline_ui(path, log, counted)
        elif agent == "cline-metrics":
            text = rewrite_cline_metrics(path, log, counted)
        elif agent in ("gemini", "opencode"):
            text = rewrite_json(path, log, counted, agent)
        else:
            text = rewrite_lines(path, log, counted, agent)
        if text != path.read_text(encoding="utf-8"):
            changed.append(name)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    verb = "would change" if args.check else "rewrote"
    print(f"{verb}: {', '.join(changed) or 'nothing'}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
