"""The marks compression writes into the window, and how to recognise them.

Every strategy that rewrites a message starts its text with a mark, so any later
pass (the same strategy, another one, the fact probe, a person reading the trace)
can tell original text from what compression wrote. Keeping all marks here is what
lets aging stay idempotent and lets one summary fold another's output in.

Example: the header aging writes, and how it is recognised again.

    >>> header = size_header(AGING_MARK, "line 1\\nline 2", "E2BIG")
    >>> header
    '[已老化] 原 13 字符 / 2 行 / 错误码 E2BIG'
    >>> is_aged({"role": "tool", "content": header + "\\nline 1"})
    True
"""

from typing import Mapping, Optional

AGING_MARK = "[已老化]"  # an aged tool result: header, head, omission line, tail
SUMMARY_MARK = "[滚动摘要]"  # a summary message (rolling or hierarchical)
STORE_MARK = "[已存档]"  # a tool result whose full text is in the external store
INDEX_MARK = "[外置存储]"  # the index message of groups moved to the external store
# The article's omission line, plus what it takes to find the cut text again: how
# much was cut, and the id under which the trace keeps the full output.
OMISSION_LINE = (
    "……(中段已省略 {omitted} 字符,完整内容见运行日志 tool_call_id={tool_call_id})……"
)
RECALL_LINE = '……(中段 {omitted} 字符已存档,recall(id="{tool_call_id}", grep=...) 取回)……'
OMISSION_PREFIX = "……("


def _starts_with(message: Mapping, mark: str) -> bool:
    content = message.get("content")
    return isinstance(content, str) and content.startswith(mark)


def is_aged(message: Mapping) -> bool:
    return _starts_with(message, AGING_MARK)


def is_summary(message: Mapping) -> bool:
    return message.get("role") == "user" and _starts_with(message, SUMMARY_MARK)


def is_offloaded(message: Mapping) -> bool:
    return _starts_with(message, STORE_MARK)


def is_store_index(message: Mapping) -> bool:
    return message.get("role") == "user" and _starts_with(message, INDEX_MARK)


def is_marker_line(line: str) -> bool:
    """A line compression added (a header or an omission line): sizes, not facts
    of the task."""
    return line.startswith((AGING_MARK, STORE_MARK, OMISSION_PREFIX))


def cut_content(
    content: str,
    header: str,
    head_chars: int,
    tail_chars: int,
    omission_line: str,
    tool_call_id: str,
) -> str:
    """Header, the first `head_chars`, a line on what was cut, the last `tail_chars`."""
    head = content[:head_chars]
    tail = content[max(len(head), len(content) - tail_chars) :] if tail_chars else ""
    omitted = len(content) - len(head) - len(tail)
    omission = omission_line.format(omitted=omitted, tool_call_id=tool_call_id)
    return "\n".join([header, head, omission, tail])


def size_header(mark: str, content: str, error_code: Optional[str] = None) -> str:
    """`mark` with the original size (and error code), so a cut
    result stays classifiable."""
    header = f"{mark} 原 {len(content)} 字符 / {len(content.splitlines())} 行"
    return header if error_code is None else f"{header} / 错误码 {error_code}"
