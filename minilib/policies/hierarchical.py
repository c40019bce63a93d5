"""Hierarchical (map-reduce) summary: summarize each closed group on its own, then merge.

The rolling summary makes one model call over the whole old range, so every group
competes for one summary. Here each group (one assistant message and the answers to
its tool calls) gets its own call with its own room, and one more call merges the
parts: more model calls, more kept. It cuts the same range as the rolling summary
and the truncation (`minilib.ranges`), and its message starts with the rolling
summary's mark, so either summary can fold the other's output in later.

Without a model API the map step is scripted and only quotes, like the rolling
summary: the assistant's action, the first line of each tool result, and up to
`key_lines` more lines that look like facts (a digit, a path, an upper-case code).
That rule is the stand-in for a prompt such as "keep numbers, paths and error codes".
"""

import re
from dataclasses import dataclass
from typing import Callable, List, Mapping, Sequence

from ..markers import SUMMARY_MARK, is_marker_line, is_summary
from ..messages import check_int
from ..model import scripted_summary
from ..ranges import closed_range
from ..strategy import CompressionResult, unchanged
from ..tokens import TokenCounter, estimate_tokens

HIERARCHICAL_TITLE = "分段摘要"
# A line worth keeping: a number, a path-like token, or an upper-case code such as E2BIG
# or NOT_FOUND.
_FACT_LIKE = re.compile(r"\d|\w/\w|\w\.\w{1,4}\b|\b[A-Z][A-Z0-9_]{2,}\b")

GroupSummarizer = Callable[[Sequence[Mapping]], str]
Merger = Callable[[Sequence[str]], str]


def split_groups(messages: Sequence[Mapping]) -> List[List[Mapping]]:
    """Cut a closed range into groups: each assistant message opens one; a carried summary
    is its own."""
    groups: List[List[Mapping]] = []
    for message in messages:
        if message.get("role") == "assistant" or is_summary(message) or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


def scripted_group_summary(group: Sequence[Mapping], key_lines: int = 3) -> str:
    """The map step, scripted: the rolling summary's quotes plus up to `key_lines`
    fact-like lines a result."""

    def fact_lines(content: str, first: str) -> List[str]:
        return [
            line.strip()
            for line in content.splitlines()
            if line.strip()
            and line != first
            and not is_marker_line(line)
            and _FACT_LIKE.search(line)
        ][:key_lines]

    return scripted_summary(group, fact_lines)


def scripted_merge(parts: Sequence[str]) -> str:
    """The reduce step, scripted: the parts in order, each line once (the first
    time it appears)."""
    seen, merged = set(), []
    for part in parts:
        for line in part.splitlines():
            if line not in seen:
                seen.add(line)
                merged.append(line)
    return "\n".join(merged)


@dataclass
class HierarchicalSummary:
    """Fold the oldest closed range into one summary built from per-group summaries.

    Model calls: one per group (an earlier summary is carried over without a call)
    plus one merge. `key_lines` is how many fact-like lines each group may keep.
    """

    key_lines: int = 3
    protect_tail: int = 4
    count_tokens: TokenCounter = estimate_tokens
    summarize_group: GroupSummarizer = None
    merge: Merger = scripted_merge
    name: str = "hierarchical_summary"

    def __post_init__(self):
        check_int("key_lines", self.key_lines)
        check_int("protect_tail", self.protect_tail)
        if self.summarize_group is None:
            self.summarize_group = lambda group: scripted_group_summary(
                group, self.key_lines
            )

    def compress(self, messages: Sequence[Mapping]) -> CompressionResult:
        """Return a new list with the closed range folded; the input is not changed."""
        span = closed_range(messages, self.protect_tail)
        if len(span) == 0:
            return unchanged(self.name, messages)
        folded = list(messages[span.start : span.stop])
        parts, calls = [], []
        for group in split_groups(folded):
            if len(group) == 1 and is_summary(group[0]):
                parts.append("\n".join(group[0]["content"].splitlines()[1:]))
                continue
            part = self.summarize_group(group)
            parts.append(part)
            calls.append({"purpose": "summary", "input": group, "reply": part})
        text = self.merge(parts)
        # Traced as "summary" like the rolling summary's call, so every consumer of the
        # trace counts it.
        calls.append(
            {
                "purpose": "summary",
                "input": [{"role": "user", "content": p} for p in parts],
                "reply": text,
            }
        )
        header = (
            f"{SUMMARY_MARK} {HIERARCHICAL_TITLE}:"
            f"折叠了 {len(folded)} 条早期消息,{len(parts)} 段"
        )
        result: List[Mapping] = (
            list(messages[: span.start])
            + [{"role": "user", "content": f"{header}\n{text}"}]
            + list(messages[span.stop :])
        )
        if self.count_tokens(result) >= self.count_tokens(messages):
            return unchanged(self.name, messages)  # a summary must never inflate
        return CompressionResult(self.name, result, list(span), calls)
