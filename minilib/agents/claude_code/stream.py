"""Claude Code's print mode output: `claude -p --output-format stream-json`.

One JSON record a line. The first is `{type: system, subtype: init, session_id,
model, tools, ...}`: `tools` declares the tool names (the system prompt itself is
not written). Then `assistant` and `user` lines, each wrapping one Anthropic
`message` in the block shape anthropic.py reads: an API response is written one
content block a line, the lines sharing `message.id` (merged into one assistant
message, its results placed after it in call order), and tool results come back
as `tool_result` blocks in `user` lines. The prompt appears as a `user` line only
when the run replays its input (`--input-format stream-json`); without it the
first reply has no user turn before it, which a note says. The last line is
`{type: result, num_turns, usage, result, ...}`: the run's outcome, whose text
repeats the last reply. Lines from a subagent (the `Task` tool) carry a non-null
`parent_tool_use_id`: they are the subagent's own window, not the main agent's,
so they are skipped, and only the subagent's final answer (the `Task` call's tool
result) is kept. `stream_event` lines (`--include-partial-messages`) are partial
output that the whole message repeats.
"""

from ...logs.anthropic import read_blocks
from ...logs.base import Builder
from ...logs.detect import Doc, Shape
from .reader import is_stream_init, is_stream_json


def _detect(doc: Doc):
    if is_stream_json(doc.line_objects()):
        return None
    return "no first line with type system, subtype init"


def _read(doc: Doc, log: Builder) -> None:
    asked = False  # a user line came before the first reply
    for number, line in doc.line_objects():
        where = f"line {number}"
        kind = line.get("type")
        if is_stream_init(line):
            tools = line.get("tools")
            if tools is not None:
                if not isinstance(tools, list) or not all(
                    isinstance(name, str) and name for name in tools
                ):
                    raise log.fail(f"{where}: tools must be a list of tool names")
                log.declared_tools = tuple(tools)
            log.skip(where, "system init: the run's settings, no message")
        elif kind == "system":
            log.skip(where, f"system {line.get('subtype')}: bookkeeping")
        elif kind == "result":
            log.skip(where, "result: the run's outcome, repeats the last reply")
        elif kind == "stream_event":
            log.skip(where, "stream_event: partial output the whole message repeats")
        elif kind not in ("user", "assistant"):
            log.skip(where, f"{kind}: not a message")
        elif line.get("parent_tool_use_id") is not None:
            log.skip(where, "subagent line (parent_tool_use_id): not the main window")
        else:
            message = line.get("message")
            if not isinstance(message, dict) or "content" not in message:
                raise log.fail(f"{where}: message.content is missing")
            role = message.get("role") or kind
            if role not in ("user", "assistant"):
                raise log.fail(f"{where}: message.role is {role!r}")
            if role == "assistant" and not asked:
                log.note(
                    where, "no prompt before the first reply: given on the command line"
                )
            asked = True
            key = message.get("id") if role == "assistant" else None
            read_blocks(role, message["content"], f"{where}: message", log, key)


SHAPES = [Shape("claude-stream-json", _detect, _read)]
