"""docs/recorded_usage.md: the lab's count beside what the API counted, on every bundled
log that records usage, step by step (minilib.measure.recorded_usage).

Every number comes from running minilib; a test checks the committed page. Rewrite it
after a change to a reader, the estimate or the data:
`python -m minilib.reports usage --write docs/recorded_usage.md`.
"""

from pathlib import Path
from typing import List, Tuple

from ..logs import LogFileError, load_log
from ..measure.recorded_usage import counted_usage_rows, usage_rows, usage_summary
from ..measure.tokenizers import available, message_counter
from ..session import DATA_DIR
from .markdown import markdown_table

COMMAND = "python -m minilib.reports usage --write docs/recorded_usage.md"

COLUMNS = (
    ("log", "log"),
    ("shape", "shape"),
    ("calls", "calls with usage"),
    ("recorded", "API counted, all calls"),
    ("window", "median error: the window"),
    ("sent", "+ arguments, thinking"),
    ("overhead", "+ overhead (estimated)"),
    ("o200k", "the same, o200k_base"),
    ("overhead_tokens", "overhead a call"),
    ("growth", "added after the first call"),
    ("cache", "cache reads: lab vs API"),
    ("reattached", "after a compaction, unseen"),
)

METHOD = """\
A log that records each call's usage holds what the API counted for the window its agent
sent. The lab rebuilds that window from the log (the agent's own compactions followed) and
counts it, then closes the gap in steps, each said as such:

1. **the window** as the lab counts it: the article's estimate (a quarter token a
   character, a CJK character one; 4 tokens a message; a call's name, not its arguments);
2. **+ arguments, thinking**: what else the window sent: each call's arguments, and the
   thinking of the tool loop under way, which the Messages API takes back and counts (it
   drops the thinking of earlier turns), by the same text rule;
3. **+ overhead**: the system prompt the log may not hold and the tool definitions no log
   holds, estimated from the first call as what it counted beyond steps 1 and 2, and added
   to every call.

"Median error" is the median over calls of |lab − API| / API. "Added after the first call"
sums what each later call counted beyond the first, for the API and the lab: the overhead
cannot hide an error there, so it shows the estimate's own (the text rule against a
tokenizer). "Cache reads" sets the lab's prefix model (what the call before sent, and the
overhead, can be read from the cache) beside the recorded reads. "After a compaction,
unseen" is what the first call after one of the agent's compactions counted beyond the
lab's three steps: what the harness sent that the log does not hold (Claude Code
re-attaches recently read files and its todo list there).
"""

BUNDLED = """\
**The bundled logs' usage is generated, not recorded.** They are constructed, so what
the API counted had to be made too: `scripts/make_usage.py` counts each recorded window
with a real tokenizer (o200k_base, with call arguments and the tool loop's thinking),
adds a stated overhead (35,000 tokens for Claude Code, the size a real Claude Code 2.1
session's first call showed beyond its messages; the figures the other logs were written
with) and, after a Claude Code compaction, 600 re-attached tokens. On them the steps
check the lab's method and its estimate against a real tokenizer's count, not against a
provider; counted with the tokenizer the usage was made with (`--tokenizer o200k`), the
lab explains every call but what the harness re-attached after a compaction. The
compacted Claude Code fixture's compact boundary says 158,340 tokens before it
(`preTokens`), written to stand for the long session the fixture abridges; its generated
usage counts only what the fixture holds, so the two do not agree.
"""

REAL = """\
## On real logs

Measured on public logs of real runs (not in this repository), with steps 1 and 3 only
(before call arguments and thinking were counted): a Claude Code 2.1 session of 204
calls and two compactions: the lab counted a median 46% fewer input tokens per call than
the API (p10 −49%, p90 +7%; 14.5M against 21.9M, with a first-call overhead of 35,276),
and right after its first compaction the API counted 72.8k tokens where the lab's window
held 5.8k; a Codex CLI 0.63 rollout of 125 calls, a median −14% (p10 −28%). The largest
parts the lab did not see there are the kinds steps 2 and the after-compaction line now
name: thinking blocks (200 in that session), call arguments (its edits and writes), and
what Claude Code re-attaches after a compaction. Run `python -m minilib compress LOG
--threshold 1000000000` on a log of your own to see its figures.
"""


def bundled_rows() -> List[Tuple[str, dict]]:
    """(file name, usage summary) of every bundled log that records usage."""
    found = []
    logs = DATA_DIR / "logs"
    for path in sorted(logs.rglob("*"), key=lambda p: p.as_posix()):
        try:
            log = load_log(Path(path))
        except (LogFileError, OSError):
            continue  # the damaged and foreign fixtures
        if log.usage:
            found.append((path.relative_to(logs).as_posix(), log))
    return [(name, log.shape, usage_summary(usage_rows(log)), log) for name, log in found]


def _with_tokenizer(log) -> str:
    """The median error left when the lab counts with o200k_base (`--tokenizer o200k`)."""
    if not available():
        return "needs bpe-openai"
    rows = counted_usage_rows(log, message_counter("o200k_base"))
    return f"{usage_summary(rows)['median_abs_error_with_overhead']:.1%}"


def _row(name: str, shape: str, summary: dict, log) -> dict:
    growth = summary["growth_error"]
    if not summary["cache_recorded"]:
        cache = "not recorded"
    elif not summary["cache_read_total"]:
        cache = f"none read; lab {summary['lab_reused_total']:,}"
    else:
        cache = f"{summary['lab_reused_total'] / summary['cache_read_total'] - 1:+.0%}"
    unseen = ", ".join(f"{a['unexplained']:+,}" for a in summary["after_compaction"])
    return {
        "log": f"`{name}`",
        "shape": shape,
        "calls": summary["calls"],
        "recorded": summary["recorded_total"],
        "window": f"{summary['median_abs_error']:.0%}",
        "sent": f"{summary['median_abs_error_sent']:.0%}",
        "overhead": f"{summary['median_abs_error_with_overhead']:.0%}",
        "o200k": _with_tokenizer(log),
        "overhead_tokens": summary["overhead_tokens"],
        "growth": "one call" if growth is None else f"{growth:+.0%}",
        "cache": cache,
        "reattached": unseen or "-",
    }


def build_markdown() -> str:
    rows = [_row(*found) for found in bundled_rows()]
    return "\n".join(
        [
            "# What the API counted, beside the lab's count",
            "",
            f"Generated by `{COMMAND}`; every figure comes from running the lab.",
            "",
            METHOD,
            "## On the bundled logs",
            "",
            BUNDLED,
            markdown_table(rows, COLUMNS),
            "",
            REAL,
        ]
    )
