"""Claude Code, by version: when it compacts, what its microcompact clears, what it
re-attaches after a compaction.

Claude Code is closed source. What is below is read from its CHANGELOG.md, its docs,
and public analyses of its 2.0.76 and 2.1.7 clients (docs/references.md), and checked
against real session logs: their `compact_boundary` preTokens and the drops in their
recorded input.

- **Auto-compact** fires when the API's count of the context reaches the window less an
  output reserve less 13,000. The reserve was 32,000 up to 2.1.20 (155,000 of 200k:
  real 2.0.x logs record preTokens 155,118-157,472) and 20,000 from 2.1.21 (167,000:
  real 2.1.x logs 167,140-175,199); a 1M-context model compacts near 967,000.
- **Microcompact by tokens** (before 2.1.12, which writes no record of it): above the
  warning threshold (the trigger less 20,000) it clears the oldest results of the
  file, shell and search tools, keeping the newest 3, while their estimated tokens
  (characters / 4) are over 40,000, and only when that saves at least 20,000. From
  2.1.12 a `microcompact_boundary` line names the results cleared: the log is
  followed there, not this rule.
- **A resumed session** (`/exit`, then `--continue`) was rebuilt along the lines'
  `parentUuid` links before 2.1.80: the parallel tool calls off that chain, and their
  results, were not sent again (the reader records them: `LoadedLog.resumes`).
- **After a compaction** it re-attaches the files read last (up to 5, at most 5,000
  tokens each, 50,000 in all) and the todo list.

>>> auto_compact_trigger("2.0.76"), auto_compact_trigger("2.1.21")
(155000, 167000)
>>> auto_compact_trigger("2.1.30", window=1_000_000)
967000
>>> token_microcompact_applies("2.0.76"), token_microcompact_applies("2.1.12")
(True, False)
>>> resume_drops_parallel_calls("2.1.7"), resume_drops_parallel_calls("2.1.80")
(True, False)
"""

import json
import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ...tokens import estimate_text_tokens, tool_call_name

PLACEHOLDER = "[Old tool result content cleared]"
WINDOW = 200_000
ONE_MILLION = 1_000_000
BUFFER = 13_000
OLD_RESERVE, NEW_RESERVE = 32_000, 20_000
RESERVE_CHANGED = (2, 1, 21)  # "auto-compact triggering too early" fixed
WARNING_BELOW_TRIGGER = 20_000
RECORDED_CLEARINGS_FROM = (2, 1, 12)  # microcompact_boundary lines
RESUME_KEEPS_PARALLEL_RESULTS_FROM = (2, 1, 80)  # CHANGELOG 2.1.80
MICROCOMPACT_TOOLS = frozenset(
    "Read Bash Grep Glob WebSearch WebFetch Edit Write".split()
)
MICROCOMPACT_KEEP = 3
MICROCOMPACT_KEEP_TOKENS = 40_000
MICROCOMPACT_MIN_SAVING = 20_000
REATTACHED_FILES = 5
REATTACHED_FILE_TOKENS = 5_000
REATTACHED_TOKENS = 50_000
READ_TOOLS = frozenset({"Read"})
TODO_TOOLS = frozenset({"TodoWrite"})


def parse_version(version: str) -> Optional[Tuple[int, ...]]:
    """`"2.1.7"` as (2, 1, 7); None for a version the lab cannot read."""
    match = re.match(r"^\s*(\d+)\.(\d+)\.(\d+)", version or "")
    return tuple(int(part) for part in match.groups()) if match else None


def output_reserve(version: str) -> int:
    parsed = parse_version(version)
    return OLD_RESERVE if parsed is not None and parsed < RESERVE_CHANGED else NEW_RESERVE


def auto_compact_trigger(version: str, window: int = WINDOW) -> int:
    """The API-counted context at which this version compacts (newest rule when the
    version is unknown)."""
    return window - output_reserve(version) - BUFFER


def warning_threshold(version: str, window: int = WINDOW) -> int:
    return auto_compact_trigger(version, window) - WARNING_BELOW_TRIGGER


def token_microcompact_applies(version: str) -> bool:
    """True for the versions that cleared by the token rule without recording it."""
    parsed = parse_version(version)
    return parsed is not None and parsed < RECORDED_CLEARINGS_FROM


def resume_drops_parallel_calls(version: str) -> bool:
    """True for the versions whose `--resume` rebuilt the history along the parent
    links and lost the parallel tool calls off that chain (fixed in 2.1.80)."""
    parsed = parse_version(version)
    return parsed is not None and parsed < RESUME_KEEPS_PARALLEL_RESULTS_FROM


def token_microcompact(results: Sequence[Tuple[object, str]]) -> List[object]:
    """Which of `results` ((key, text) of the compactable results still whole, oldest
    first) the token rule clears; [] when it would save less than 20,000."""
    sizes = [(key, (len(text) + 3) // 4) for key, text in results]
    remaining = sum(size for _, size in sizes)
    cleared, saved = [], 0
    for key, size in sizes[: max(0, len(sizes) - MICROCOMPACT_KEEP)]:
        if remaining <= MICROCOMPACT_KEEP_TOKENS:
            break
        cleared.append(key)
        remaining -= size
        saved += size
    return cleared if saved >= MICROCOMPACT_MIN_SAVING else []


def reattached_messages(history: Sequence[Mapping]) -> List[dict]:
    """What Claude Code re-attaches after compacting `history`: the latest result of
    each of the last files read (up to 5, each at most 5,000 tokens, 50,000 in all,
    by the article's text rule) and the last todo list written, as user messages."""
    calls = {}
    for message in history:
        for call in message.get("tool_calls") or ():
            calls[call.get("id")] = call
    files: Dict[str, str] = {}
    todo = None
    for message in reversed(history):
        if message.get("role") == "assistant" and todo is None:
            for call in message.get("tool_calls") or ():
                if tool_call_name(call) in TODO_TOOLS:
                    todo = str((call.get("function") or {}).get("arguments") or "")
        if message.get("role") != "tool" or len(files) >= REATTACHED_FILES:
            continue
        call = calls.get(message.get("tool_call_id"))
        if call is None or tool_call_name(call) not in READ_TOOLS:
            continue
        path = _read_path(call)
        if path and path not in files and not message.get("error"):
            files[path] = message.get("content") or ""
    attached, room = [], REATTACHED_TOKENS
    for path, text in files.items():
        cut = text[: 4 * min(REATTACHED_FILE_TOKENS, room)]
        room -= estimate_text_tokens(cut)
        attached.append({"role": "user", "content": f"[re-attached: {path}]\n{cut}"})
        if room <= 0:
            break
    if todo:
        attached.append({"role": "user", "content": f"[re-attached: todo list]\n{todo}"})
    return attached


def _read_path(call: Mapping) -> str:
    arguments = (call.get("function") or {}).get("arguments") or ""
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return ""
    if isinstance(parsed, dict):
        return str(parsed.get("file_path") or parsed.get("path") or "")
    return ""
