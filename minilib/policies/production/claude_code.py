"""Claude Code: microcompact between turns, auto-compact near the end of the window.

What Claude Code does. Before each model call, *microcompact* clears the content of old
results of its "compactable" tools (Read, Bash and the other shells, Grep, Glob,
WebSearch, WebFetch, Edit, Write), keeping the 5 most recent; a cleared result keeps its
place and its call, and reads `[Old tool result content cleared]`. Results of any other
tool (MCP servers, Task, TodoWrite) are never cleared. Then *auto-compact*: when the
conversation reaches the window less an output reserve, min(max_output_tokens, 20,000),
less a 13,000-token buffer (167,000 tokens of a 200k window, 83.5%), Claude Code asks
the model for a summary of the whole conversation (an `<analysis>` scratchpad, then a
summary in nine sections) and replaces the conversation with one user message: "This
session is being continued from a previous conversation...", the summary, and the path
of the full transcript on disk. The system prompt stays. `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`
may lower the trigger to a percentage of the window less the reserve (never raise it).
Sources: docs/references.md (the 13,000 buffer and the 20,000 reserve, the placeholder,
the continuation text quoted in public transcripts).

Where the lab differs:
- other harnesses' tool names count as their Claude Code equivalent (`read_file` as
  Read, `run_shell` and `run_tests` as Bash, `search_text` as Grep, `list_dir` as Glob,
  `edit_file` as Edit...: `COMPACTABLE_TOOLS`); environment output recorded as a user
  message (an observation) counts as shell output. Any other name is not compactable.
- microcompact runs before every model call. The real time-based path clears only after
  an idle hour (the prompt cache has expired) and the cache-editing path deletes results
  on the server; what the model reads is the same, the lab clears at the first chance.
- 20,000 and 13,000 are numbers for a 200k window: below 200k they are scaled with the
  window (at 16k the real formula would give a trigger below zero).
- the summary is the lab's stand-in (`stand_in = True`), at most `summary_tokens` long
  (default 2.5% of the window; the real summary may use up to the 20,000-token reserve).
  It reads the whole conversation even past the window (Claude Code then retries without
  its oldest rounds).
- Claude Code also re-attaches the files it read last, the todo list and the plan after
  a compaction; the lab does not.
"""

from collections import deque
from typing import List, Mapping, Optional, Sequence

from ...messages import check_int, is_observation
from ...scale.bounded import MIN_BUDGET
from ...summary import summary_header
from ...tokens import TokenCounter, estimate_tokens, tool_call_name
from .base import KeptHistory, Policy, Sent, stand_in_summarizer, system_head

PLACEHOLDER = "[Old tool result content cleared]"
# Claude Code's own names, then what other harnesses call the same tools.
COMPACTABLE_TOOLS = frozenset(
    "Read Bash PowerShell Grep Glob WebSearch WebFetch Edit Write "
    "read_file read view view_file open_file "
    "bash shell shell_command local_shell run_shell run_command run_shell_command "
    "execute_bash execute_command terminal run_tests git_log "
    "search_text grep search_file_content glob list_dir web_search web_fetch "
    "edit_file edit replace apply_patch str_replace_editor replace_in_file file_editor "
    "write_file write write_to_file".split()
)
TRANSCRIPT_PATH = "~/.claude/projects/<project>/<session-id>.jsonl"
CONTINUATION = (
    "This session is being continued from a previous conversation that ran out of "
    "context. The summary below covers the earlier portion of the conversation.\n\n"
    "Summary:\n{summary}\n\n"
    "If you need specific details from before compaction (like exact code snippets, "
    "error messages, or content you generated), read the full transcript at: {path}\n"
    "Please continue the conversation from where we left it off without asking the user "
    "any further questions. Continue with the last task that you were asked to work on."
)
WINDOW_OF_THE_NUMBERS = 200_000  # the window the documented token numbers are for


def stand_in_budget(window_tokens: int) -> int:
    """The lab's default length of a stand-in summary: 2.5% of the window."""
    return max(MIN_BUDGET, window_tokens // 40)


class ClaudeCodePolicy(Policy):
    key = "claude-code"
    title = "Claude Code: microcompact, then auto-compact"
    summary = (
        "Clears all but the 5 newest results of file, shell and search tools; near the "
        "end of the window replaces the whole conversation with one summary message."
    )
    source = (
        "Claude Code (anthropics/claude-code): the auto-compact threshold and "
        "microcompact as public issue threads describe them; docs/references.md"
    )
    main_parameter = "keep_recent"
    stand_in = True
    PROMPT = (
        "Not quoted. Claude Code's compact prompt asks for an <analysis> scratchpad, "
        "then a <summary> in nine sections: Primary Request and Intent, Key Technical "
        "Concepts, Files and Code Sections, Errors and fixes, Problem Solving, All user "
        "messages, Pending Tasks, Current Work, Optional Next Step."
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        keep_recent: int = 5,
        max_output_tokens: int = 32_000,
        autocompact_pct_override: Optional[float] = None,
        summary_tokens: Optional[int] = None,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.keep_recent = check_int("keep_recent", keep_recent, minimum=1)
        self.max_output_tokens = check_int(
            "max_output_tokens", max_output_tokens, minimum=1
        )
        pct = autocompact_pct_override
        if pct is not None and (
            isinstance(pct, bool)
            or not isinstance(pct, (int, float))
            or not 0 < pct <= 100
        ):
            raise ValueError(
                f"autocompact_pct_override must be a percentage in (0, 100], got {pct!r}"
            )
        self.autocompact_pct_override = pct
        self.summary_tokens = (
            stand_in_budget(window_tokens)
            if summary_tokens is None
            else check_int("summary_tokens", summary_tokens, minimum=MIN_BUDGET)
        )
        scale = min(1.0, window_tokens / WINDOW_OF_THE_NUMBERS)
        self.output_reserve = min(max_output_tokens, round(20_000 * scale))
        self.buffer = round(13_000 * scale)
        effective = window_tokens - self.output_reserve
        self.trigger_tokens = effective - self.buffer
        if pct is not None:
            self.trigger_tokens = min(int(effective * pct / 100), self.trigger_tokens)
        self.summarize = stand_in_summarizer(self.summary_tokens)
        self.kept = KeptHistory()
        self.tokens = 0  # of the kept history
        self.recent: deque = deque()  # places of compactable results not yet cleared
        self.names = {}  # call id -> tool name, of the latest assistant message
        self.continuation: Optional[Mapping] = None  # the summary message, if any
        self.earlier = ""  # the stand-in text it carries

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        start = len(self.kept.messages)
        for place, message in enumerate(self.kept.take_new(history), start):
            self.tokens += self.count_tokens([message])
            if message.get("role") == "assistant":
                calls = message.get("tool_calls") or ()
                self.names = {call.get("id"): tool_call_name(call) for call in calls}
            elif self.compactable(message):
                self.recent.append(place)
        while len(self.recent) > self.keep_recent:
            self.clear(self.recent.popleft())
        compacted = self.tokens >= self.trigger_tokens and self.compact()
        return Sent(list(self.kept.messages), 1 if compacted else 0)

    def compactable(self, message: Mapping) -> bool:
        if message.get("content") == PLACEHOLDER:
            return False
        if is_observation(message):
            return True  # environment output: what Bash would have returned
        if message.get("role") != "tool":
            return False
        return self.names.get(message.get("tool_call_id")) in COMPACTABLE_TOOLS

    def clear(self, place: int) -> None:
        old = self.kept.messages[place]
        new = dict(old, content=PLACEHOLDER)
        self.tokens += self.count_tokens([new]) - self.count_tokens([old])
        self.kept.messages[place] = new

    def compact(self) -> bool:
        """Replace everything after the system prompt with the continuation message."""
        messages = self.kept.messages
        head = system_head(messages)
        if head == len(messages):
            return False  # nothing but the system prompt: nothing to summarise
        folded: List[Mapping] = list(messages[head:])
        if folded and folded[0] is self.continuation:
            # the earlier summary, as the stand-in reads a summary it wrote
            folded[0] = {"role": "user", "content": summary_header(0) + self.earlier}
        self.earlier = self.summarize(folded)
        text = CONTINUATION.format(summary=self.earlier, path=TRANSCRIPT_PATH)
        self.continuation = {"role": "user", "content": text}
        messages[head:] = [self.continuation]
        self.tokens = sum(self.count_tokens([m]) for m in messages)
        self.recent.clear()
        return True

    def parameters(self) -> dict:
        return {
            "keep_recent": self.keep_recent,
            "max_output_tokens": self.max_output_tokens,
            "autocompact_pct_override": self.autocompact_pct_override,
            "summary_tokens": self.summary_tokens,
        }
