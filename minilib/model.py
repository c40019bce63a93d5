"""The model adapter boundary, and a scripted model that replays a recorded session.

A model adapter has two methods: `complete(messages) -> assistant message` and
`summarize(messages) -> str`. The scripted model needs no API and gives the same
answers every time, so every number of the lab is reproducible. To use a real
model, implement the same two methods with LLM calls: the compression code does
not change.

A recorded reply does not depend on what the model is sent; a model that answers the
window it gets (it looks up a fact its window lacks) is `minilib.measure.grounded_model`,
built on this one.

Example: the summary quotes each action with its tools and each result's first line.

    >>> call = {"id": "c1", "type": "function",
    ...         "function": {"name": "read_file", "arguments": "{}"}}
    >>> print(scripted_summary([
    ...     {"role": "assistant", "content": "读日志", "tool_calls": [call]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "E2BIG at link\\nmore"},
    ... ]))
    - 读日志 → read_file
      read_file 回报: E2BIG at link
"""

import copy
import re
from typing import Callable, List, Mapping, Optional, Sequence

from .markers import AGING_MARK, is_summary
from .messages import is_observation
from .tokens import tool_call_name


class ScriptEndedError(RuntimeError):
    """The loop asked the scripted model for more replies than the session holds."""


# Where `str.splitlines` splits a text.
LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def first_line_of_result(content: str) -> str:
    """The first line of a tool result; for an aged one, the first line of
    its kept head. (`content.splitlines()`'s first or second line, read only as far
    as that line: a summary quotes the first line of every result.)"""
    first_break = LINE_BREAK.search(content)
    if first_break is None:
        return content
    first, rest = content[: first_break.start()], first_break.end()
    if first.startswith(AGING_MARK) and rest < len(content):
        second_break = LINE_BREAK.search(content, rest)
        second = content[rest : second_break.start() if second_break else len(content)]
        if second.strip():
            return second
    return first


def scripted_summary(
    messages: Sequence[Mapping],
    more_from_result: Optional[Callable[[str, str], List[str]]] = None,
) -> str:
    """A deterministic summary that only quotes: no rewording, so nothing is invented.

    Each assistant action is quoted verbatim with the names of the tools it called,
    each tool result (or environment output) by its first line, a later user turn
    or a system message the harness wrote between turns whole; an earlier summary is
    carried over line for line.
    `more_from_result(content, first_line)` may pick further lines of a result to quote
    (the hierarchical summary's "keep the facts" rule).
    """
    lines: List[str] = []
    names = {}
    for message in messages:
        content = message.get("content") or ""
        if is_summary(message):
            lines.extend(content.splitlines()[1:])  # drop its header, keep what it quoted
        elif message.get("role") == "assistant":
            calls = message.get("tool_calls") or []
            names.update({call.get("id"): tool_call_name(call) for call in calls})
            called = ", ".join(tool_call_name(call) for call in calls)
            lines.append(f"- {content}" + (f" → {called}" if called else ""))
        elif message.get("role") == "user" and not is_observation(message):
            lines.append(f"- 用户: {content}")  # a person's words are quoted whole
        elif message.get("role") == "system":  # the harness's words, quoted whole too
            lines.append(f"- 系统: {content}")
        elif message.get("role") in ("tool", "user"):
            name = names.get(message.get("tool_call_id"), "环境")
            first = first_line_of_result(content)
            lines.append(f"  {name} 回报: {first}")
            if more_from_result is not None:
                lines.extend(f"    {line}" for line in more_from_result(content, first))
    return "\n".join(lines)


class ScriptedModel:
    """Replays the assistant replies of a session, one per `complete` call."""

    def __init__(self, replies: Sequence[Mapping]):
        self.replies = [copy.deepcopy(dict(reply)) for reply in replies]
        self.calls = 0  # scripted replies given

    def complete(self, messages: Sequence[Mapping]) -> dict:
        if self.calls >= len(self.replies):
            raise ScriptEndedError(
                f"the script has {len(self.replies)} replies; "
                f"call {self.calls + 1} has none"
            )
        reply = copy.deepcopy(self.replies[self.calls])
        self.calls += 1
        return reply

    def summarize(self, messages: Sequence[Mapping]) -> str:
        return scripted_summary(messages)
