"""External store with recall: what is cut leaves the window but not the harness.

Aging and summaries lose text for good (a person can still dig it out of the run
log, the model cannot). Here every cut text is put into an `ExternalStore` under an
id the window keeps naming, and a `recall` tool gives it back on request, whole or
only the lines that contain a search string. Two strategies fill the store:
- `OffloadToolResults`: an overlong tool result keeps a header, its head and its tail,
  like aging, but its full text is stored under its tool_call_id;
- `OffloadGroups`: the oldest closed range (the same range a summary would fold)
  leaves the window; one index message keeps each action verbatim and the id of each
  stored result.
The price moves from tokens to tool calls: a fact comes back only if the model asks.
Storing is these strategies' one side effect; it is idempotent (the first copy under
an id stays), so walking the same window twice, as the stepper does, stores nothing new.
(A production store adds retrieval by relevance; here the model names the id.)
"""

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence

from ..markers import (
    INDEX_MARK,
    RECALL_LINE,
    STORE_MARK,
    cut_content,
    is_aged,
    is_offloaded,
    is_store_index,
    size_header,
)
from ..messages import check_int
from ..ranges import closed_range
from ..strategy import CompressionResult, unchanged
from ..tokens import TokenCounter, estimate_tokens, tool_call_name
from ..tools import ToolFailure, ToolResult, declaration, failure, parse_arguments

RECALL_TOOL = "recall"
RECALL_DECLARATION = declaration(
    RECALL_TOOL,
    "Get back a tool result that was moved out of the context window, by its id.",
    {
        "id": "the id the window names, e.g. call_01",
        "grep": "only return the lines that contain this text",
    },
    ["id"],
)


class ExternalStore:
    """Texts by id. The first text stored under an id stays: a later, shorter copy never
    replaces it."""

    def __init__(self):
        self._texts: Dict[str, str] = {}

    def put(self, key: str, text: str) -> str:
        if not isinstance(key, str) or not key:
            raise ValueError(f"store id must be a non-empty string, got {key!r}")
        if not isinstance(text, str):
            raise ValueError(
                f"store text for {key!r} must be a string, got {type(text).__name__}"
            )
        self._texts.setdefault(key, text)
        return key

    def key_for(self, call_id: str, text: str, pending: Optional[dict] = None) -> str:
        """The id to store `text` under: the call's id, unless another text holds it.

        Agents reuse call ids in later turns; the second result of `call_1` is stored as
        `call_1~2`, so recall never returns another call's output.
        """
        taken = {
            **(pending or {}),
            **self._texts,
        }  # pending: keys given out, not stored yet
        key, number = call_id, 1
        while key in taken and taken[key] != text:
            number += 1
            key = f"{call_id}~{number}"
        return key

    def get(self, key: str) -> str:
        try:
            return self._texts[key]
        except KeyError:
            raise KeyError(
                f"no stored text with id {key!r}; stored ids: "
                f"{', '.join(self._texts) or 'none'}"
            ) from None

    def __contains__(self, key) -> bool:
        return key in self._texts

    def __len__(self) -> int:
        return len(self._texts)

    def items(self):
        return self._texts.items()


class RecallTool:
    """The `recall` tool over a store, answering like the workspace tools
    (errors as codes)."""

    def __init__(self, store: ExternalStore):
        self.store = store
        self.tools = {RECALL_TOOL: self.recall}

    def recall(self, id: str, grep: Optional[str] = None) -> ToolResult:
        if not isinstance(id, str) or not id:
            return failure("BAD_ARGUMENTS", "recall: id must be a non-empty string")
        if id not in self.store:
            known = ", ".join(key for key, _ in self.store.items()) or "none"
            return failure(
                "NOT_FOUND", f"recall: nothing stored under {id!r}; stored ids: {known}"
            )
        text = self.store.get(id)
        if grep is None:
            return ToolResult(text)
        if not isinstance(grep, str) or not grep:
            return failure("BAD_ARGUMENTS", "recall: grep must be a non-empty string")
        hits = [
            f"{number}: {line}"
            for number, line in enumerate(text.splitlines(), start=1)
            if grep in line
        ]
        lines, verb = (
            ("1 line", "contains")
            if len(hits) == 1
            else (f"{len(hits)} lines", "contain")
        )
        return ToolResult("\n".join([f"{lines} of {id} {verb} {grep!r}"] + hits))

    def call(self, name: str, arguments) -> ToolResult:
        if name != RECALL_TOOL:
            return failure(
                "UNKNOWN_TOOL",
                f"unknown tool {name!r}; this tool set has only {RECALL_TOOL!r}",
            )
        try:
            kwargs = parse_arguments(arguments, RECALL_TOOL)
        except ToolFailure as problem:
            return failure(problem.code, problem.message)
        if set(kwargs) - {"id", "grep"} or "id" not in kwargs:
            return failure(
                "BAD_ARGUMENTS",
                f"recall: expected arguments id and optional grep, got {arguments!r}",
            )
        return self.recall(**kwargs)


class ToolsWithRecall:
    """Workspace tools plus `recall`: the tool set of a harness that has
    an external store."""

    def __init__(self, tools, recall_tool: RecallTool):
        self.base = tools
        self.recall_tool = recall_tool

    def call(self, name: str, arguments) -> ToolResult:
        if name == RECALL_TOOL:  # never cached: the store changes during a run
            return self.recall_tool.call(name, arguments)
        return self.base.call(name, arguments)


def offloaded_content(
    content: str,
    tool_call_id: str,
    head_chars: int,
    tail_chars: int,
    error_code: Optional[str] = None,
) -> str:
    """The window's copy of a stored tool result: header with its id, head, a
    recall hint, tail."""
    header = size_header(f"{STORE_MARK} id={tool_call_id}", content, error_code)
    return cut_content(content, header, head_chars, tail_chars, RECALL_LINE, tool_call_id)


@dataclass
class OffloadToolResults:
    """Store every tool result longer than `min_chars` whole; the window keeps head, tail
    and its id."""

    store: ExternalStore
    min_chars: int = 240
    head_chars: int = 160
    tail_chars: int = 120
    count_tokens: TokenCounter = estimate_tokens
    name: str = "store_offload_results"

    def __post_init__(self):
        for name in ("min_chars", "head_chars", "tail_chars"):
            check_int(name, getattr(self, name))

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult:
        """Return a new list with long tool results offloaded; stores their full text."""
        result: List[Mapping] = list(messages)
        affected = []
        for index, message in enumerate(messages):
            content = message.get("content") or ""
            if (
                message.get("role") != "tool"
                or is_offloaded(message)
                or is_aged(message)
                or len(content) <= self.min_chars
            ):
                # an aged result has lost its middle already: storing it would promise too
                # much
                continue
            key = self.store.key_for(message.get("tool_call_id", ""), content)
            short = dict(
                message,
                content=offloaded_content(
                    content,
                    key,
                    self.head_chars,
                    self.tail_chars,
                    (message.get("error") or {}).get("code"),
                ),
            )
            if self.count_tokens([short]) >= self.count_tokens([message]):
                continue  # never inflate
            self.store.put(key, content)
            result[index] = short
            affected.append(index)
        return CompressionResult(self.name, result, affected)


@dataclass
class OffloadGroups:
    """Move the oldest closed range into the store; one index message says what is there
    and under which id.

    A result OffloadToolResults already stored keeps that copy (its header names the
    id). Any other result is stored as the window holds it: after ToolResultAging that
    is the aged text, so pair the store with OffloadToolResults, not with aging.
    """

    store: ExternalStore
    protect_tail: int = 4
    count_tokens: TokenCounter = estimate_tokens
    name: str = "store_offload_groups"

    def __post_init__(self):
        check_int("protect_tail", self.protect_tail)

    def keys(self, folded: Sequence[Mapping]) -> dict:
        """The store id of each folded tool result (by position), in order.

        An offloaded result names its id in its header; any other gets a fresh one.
        """
        keys, pending = {}, {}
        for position, message in enumerate(folded):
            if message.get("role") != "tool":
                continue
            content = message.get("content") or ""
            if is_offloaded(message):
                header = content.split("\n", 1)[0]
                keys[position] = header.split("id=", 1)[1].split(" ", 1)[0]
            else:
                key = self.store.key_for(message.get("tool_call_id"), content, pending)
                keys[position] = key
                pending[key] = content
        return keys

    def index_lines(self, folded: Sequence[Mapping], keys: dict) -> List[str]:
        lines: List[str] = []
        calls = {}
        for position, message in enumerate(folded):
            content = message.get("content") or ""
            if is_store_index(message):
                lines.extend(content.splitlines()[1:])
            elif message.get("role") == "assistant":
                for call in message.get("tool_calls") or ():
                    calls[call.get("id")] = call
                lines.append(f"- {content}")
            elif message.get("role") == "tool":
                key = keys[position]
                call = calls.get(message.get("tool_call_id")) or {}
                arguments = (call.get("function") or {}).get("arguments") or ""
                # The stored copy is the full text when OffloadToolResults got there
                # first.
                size = len(self.store.get(key)) if key in self.store else len(content)
                lines.append(
                    f"  id={key} {tool_call_name(call)} {arguments} ({size:,} 字符)"
                )
        return lines

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult:
        """Return a new list with the closed range replaced by an index;
        stores each result."""
        span = closed_range(messages, self.protect_tail, is_store_index)
        if len(span) == 0:
            return unchanged(self.name, messages)
        folded = list(messages[span.start : span.stop])
        keys = self.keys(folded)
        lines = self.index_lines(folded, keys)
        new_results = [
            (keys[position], m)
            for position, m in enumerate(folded)
            if m.get("role") == "tool" and not is_offloaded(m)
        ]
        index = {
            "role": "user",
            "content": "\n".join(
                [
                    f"{INDEX_MARK} 早期消息已移出窗口;"
                    f"工具回报全文可用 {RECALL_TOOL}(id) 取回"
                ]
                + lines
            ),
        }
        result: List[Mapping] = (
            list(messages[: span.start]) + [index] + list(messages[span.stop :])
        )
        if self.count_tokens(result) >= self.count_tokens(messages):
            return unchanged(self.name, messages)  # never inflate
        for key, message in new_results:
            self.store.put(key, message.get("content") or "")
        return CompressionResult(self.name, result, list(span))
