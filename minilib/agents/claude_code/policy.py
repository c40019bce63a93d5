"""Claude Code: microcompact (off, after an idle hour, or the gated cache-editing
variant), then auto-compact near the end of the window. Inferred: Claude Code is
closed source; what is below comes from its public changelog and docs, users' reports
and the inferred client configuration (docs/references.md), not from its code.

Microcompact clears the content of old results of Claude Code's "compactable" tools
(Read, the shells, Grep, Glob, WebSearch, WebFetch, Edit, Write), keeping the 5 most
recent: a cleared result keeps its place and its call and reads `[Old tool result
content cleared]`; results of other tools (MCP servers, Task, TodoWrite) are never
cleared. When it runs is the variant (`microcompact=`):
- `"time-based"` (the default): before a call, only when the time since the last
  assistant message is at least `idle_minutes` (60: the prompt cache has expired, so
  clearing breaks nothing that was still cached). The lab reads the gap from the
  messages' `timestamp` (ISO 8601 or seconds) where the log reader kept one; a log
  without timestamps never has an idle gap, so it never fires there.
- `"cache-editing"`: the variant behind a feature gate, which deletes old results
  from the server's cached prompt (cache edits) instead of rewriting the prompt; what
  the model reads is the same, so the lab clears before every call.
- `"off"`: never (what a user who reports no clearing sees).
Registered as `claude-code` (time-based) and `claude-code-cache-editing`.

Auto-compact. Claude Code compacts when the tokens of its last call (the API's input:
messages, system prompt and tool definitions) reach the window less an output reserve,
min(max_output_tokens, 20,000), less a 13,000-token buffer: 167,000 of a 200k window,
83.5% (`auto_compact="inferred"`, the default). The docs say it compacts when the
context is "approximately 95%" full (`auto_compact="docs"`: 95% of the window). The
lab follows the inferred trigger because the compactions users record fall near it:
`compact_boundary` records carry `preTokens` of 155,000-175,000 for a 200k window
(158,340 in the bundled `claude_code_compacted.jsonl`), none near 190,000.
`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` may lower the trigger to a percentage of the window
less the reserve (never raise it; anthropics/claude-code#31806). A compaction asks
the model for a summary of the whole conversation (an `<analysis>` scratchpad, then
nine sections) and replaces the conversation with one user message, `CONTINUATION`:
the summary, the path of the full transcript, and the instruction to resume without
acknowledging the summary. The system prompt stays.

Where the lab differs:
- other harnesses' tool names count as their Claude Code equivalent (`read_file` as
  Read, `run_shell` and `run_tests` as Bash, `search_text` as Grep...:
  `COMPACTABLE_TOOLS`); environment output recorded as a user message (an observation)
  counts as shell output. Any other name is not compactable.
- 20,000, 13,000 and the overhead are numbers for a 200k window: below 200k they are
  scaled with the window (at 16k the real formula would give a trigger below zero).
- the summary is the lab's stand-in (`stand_in = True`), at most `summary_tokens` long
  (default 2.5% of the window; the real summary may use up to the 20,000-token
  reserve). It reads the whole conversation even past the window.
- Claude Code also re-attaches the files it read last, the todo list and the plan after
  a compaction; the lab does not.
Overhead: `DEFAULT_OVERHEAD_TOKENS` (docs/references.md).
"""

from typing import List, Mapping, Optional, Sequence

from ...logs.base import timestamp_seconds
from ...messages import check_int
from ...policies.production.base import (
    Policy,
    Sent,
    stand_in_summarizer,
    system_head,
)
from ...scale.bounded import MIN_BUDGET
from ...summary import summary_header
from ...tokens import TokenCounter, estimate_tokens
from . import behaviour as agent
from .client import ClaudeCodeClient

TRANSCRIPT_PATH = "~/.claude/projects/<project>/<session-id>.jsonl"
CONTINUATION = (  # as public transcripts of Claude Code 2.1 quote it
    "This session is being continued from a previous conversation that ran out of "
    "context. The summary below covers the earlier portion of the conversation.\n\n"
    "Summary:\n{summary}\n\n"
    "If you need specific details from before compaction (like exact code snippets, "
    "error messages, or content you generated), read the full transcript at: {path}\n"
    "Continue the conversation from where it left off without asking the user any "
    "further questions. Resume directly \u2014 do not acknowledge the summary, do not "
    'recap what was happening, do not preface with "I\'ll continue" or similar. Pick '
    "up the last task as if the break never happened."
)
WINDOW_OF_THE_NUMBERS = 200_000  # the window the documented token numbers are for
TIME_BASED, CACHE_EDITING, OFF = "time-based", "cache-editing", "off"
TOKEN_RULE = "token-rule"  # 2.0.x to 2.1.11 (minilib.agents.claude_code)
MICROCOMPACT = (TIME_BASED, CACHE_EDITING, OFF, TOKEN_RULE)
INFERRED, DOCS = "inferred", "docs"
SENT = "sent"  # the client's one count: the policy's
IDLE_MINUTES = 60
DOCS_SHARE = 0.95  # "approximately 95%"


def stand_in_budget(window_tokens: int) -> int:
    """The lab's default length of a stand-in summary: 2.5% of the window."""
    return max(MIN_BUDGET, window_tokens // 40)


class ClaudeCodePolicy(Policy):
    key = "claude-code"
    title = "Claude Code: microcompact after an idle hour, then auto-compact"
    summary = (
        "After an idle hour clears all but the 5 newest results of file, shell and "
        "search tools; near the end of the window replaces the conversation with one "
        "summary message."
    )
    source = (
        "Claude Code (closed source, inferred): changelog and docs, users' reports "
        "(anthropics/claude-code#31806, #57788); docs/references.md"
    )
    main_parameter = "keep_recent"
    threshold_parameter = "auto_compact_tokens"
    stand_in = True
    PROMPT = (
        "Not quoted. Claude Code's compact prompt asks for an <analysis> scratchpad, "
        "then a <summary> in nine sections: Primary Request and Intent, Key Technical "
        "Concepts, Files and Code Sections, Errors and fixes, Problem Solving, All user "
        "messages, Pending Tasks, Current Work, Optional Next Step."
    )
    MICROCOMPACT = TIME_BASED
    DEFAULT_OVERHEAD_TOKENS = 20_000
    OVERHEAD_SOURCE = (
        "users' reports: a fresh session's first 'hello' already counts about 20,000 "
        "tokens (anthropics/claude-code#51747, 2.1.116), 10-15k of them the built-in "
        "tool definitions (#57235)"
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        keep_recent: int = 5,
        microcompact: Optional[str] = None,
        idle_minutes: float = IDLE_MINUTES,
        auto_compact: str = INFERRED,
        max_output_tokens: int = 32_000,
        autocompact_pct_override: Optional[float] = None,
        summary_tokens: Optional[int] = None,
        overhead_tokens: Optional[int] = None,
        version: Optional[str] = None,
        recorded_clearings: Sequence = (),
        reattach: Optional[bool] = None,
        missing_history_tokens: int = 0,
        recorded_resumes: Sequence = (),
        recorded_manual_compactions: Sequence[int] = (),
        auto_compact_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        # the rounds before which the user ran /compact: the user's decision, followed
        # as recorded; the replay decides only the automatic compactions
        self.manual_compactions = frozenset(recorded_manual_compactions)
        self.keep_recent = check_int("keep_recent", keep_recent, minimum=1)
        # the client version that wrote the log: its trigger, its microcompact, its
        # re-attachment after a compaction (minilib.agents.claude_code)
        self.version = version
        if microcompact is None and version is not None:
            # before 2.1.12 the client cleared by a token rule and wrote nothing of it;
            # from 2.1.12 it writes every clearing (microcompact_boundary), so the
            # replay clears where the log says and by no rule of its own
            microcompact = (
                TOKEN_RULE if agent.token_microcompact_applies(version) else OFF
            )
        self.microcompact = self.MICROCOMPACT if microcompact is None else microcompact
        self.reattach = version is not None if reattach is None else bool(reattach)
        # a file that begins mid-session: what its first call held that the file does
        # not, carried as history until the replay compacts it away
        self.missing_history_tokens = check_int(
            "missing_history_tokens", missing_history_tokens, minimum=0
        )
        # (round, call ids[, lacking]) of the clearings the log records
        # (microcompact_boundary); lacking: what one saved of the history a file
        # that begins mid-session lacks, taken off the history carried for it
        self.recorded_clearings = {}
        self.lacking_cleared = {}
        for round_number, call_ids, *lacking in recorded_clearings:
            self.recorded_clearings.setdefault(round_number, set()).update(call_ids)
            self.lacking_cleared[round_number] = self.lacking_cleared.get(
                round_number, 0
            ) + (lacking[0] if lacking else 0)
        # (round, call ids) of each resume the log records, for a version whose
        # resumed client lost the parallel calls off the parent chain
        self.recorded_resumes = {}
        for round_number, call_ids in recorded_resumes:
            self.recorded_resumes.setdefault(round_number, set()).update(call_ids)
        if self.microcompact not in MICROCOMPACT:
            raise ValueError(
                f"microcompact must be one of {', '.join(MICROCOMPACT)}, "
                f"got {microcompact!r}"
            )
        if isinstance(idle_minutes, bool) or not (
            isinstance(idle_minutes, (int, float)) and idle_minutes > 0
        ):
            raise ValueError(
                f"idle_minutes must be a positive number, got {idle_minutes!r}"
            )
        self.idle_minutes = idle_minutes
        if auto_compact not in (INFERRED, DOCS):
            raise ValueError(
                f"auto_compact must be {INFERRED!r} or {DOCS!r}, got {auto_compact!r}"
            )
        self.auto_compact = auto_compact
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
        reserve = agent.output_reserve(version) if version is not None else 20_000
        self.output_reserve = min(max_output_tokens, round(reserve * scale))
        self.buffer = round(13_000 * scale)
        effective = window_tokens - self.output_reserve
        if auto_compact == DOCS:
            self.trigger_tokens = int(window_tokens * DOCS_SHARE)
        else:
            self.trigger_tokens = effective - self.buffer
        if pct is not None:
            self.trigger_tokens = min(int(effective * pct / 100), self.trigger_tokens)
        # a threshold in tokens, the setting users ask for most (docs/references.md, 27):
        # what the trigger would be if the client let it be set, up or down
        self.auto_compact_tokens = auto_compact_tokens
        if auto_compact_tokens is not None:
            self.trigger_tokens = check_int(
                "auto_compact_tokens", auto_compact_tokens, minimum=1
            )
        self.warning_tokens = self.trigger_tokens - round(
            agent.WARNING_BELOW_TRIGGER * scale
        )
        self.summarize = stand_in_summarizer(self.summary_tokens)
        # the conversation as the client holds it (minilib.agents.claude_code.client)
        self.client = ClaudeCodeClient({SENT: self.count_message})
        self.seen = 0  # how many of the log's messages have arrived
        self.last_reply: Optional[float] = None  # when the latest assistant message was
        self.continuation: Optional[Mapping] = None  # the summary message, if any
        self.earlier = ""  # the stand-in text it carries
        self.microcompactions: List[int] = []  # rounds where microcompact cleared
        self.last_call_tokens: Optional[int] = None  # the window of the last call
        # per round, the history a file that begins mid-session lacks, carried as sent
        self.unseen_by_round: List[int] = []

    def count_message(self, message: Mapping) -> int:
        return self.count_tokens([message])

    @property
    def tokens(self) -> int:
        """The conversation's tokens as the client holds it now."""
        return self.client.tokens[SENT]

    def take_new(self, history: Sequence[Mapping]) -> List[Mapping]:
        """What arrived since the last call (the client is given it by `send`)."""
        new = list(history[self.seen :])
        self.seen = len(history)
        return new

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        idle = False
        # what the last response's usage counted (its input and its reply): what the
        # client compares with its thresholds before the next call
        last_usage = self.last_call_tokens
        for message in self.take_new(history):
            tokens = self.client.add(message)[SENT]
            when = timestamp_seconds(message)
            if message.get("role") == "assistant":
                last_usage = None if last_usage is None else last_usage + tokens
                self.last_reply = when
            else:
                gap = None
                if when is not None and self.last_reply is not None:
                    gap = when - self.last_reply
                idle = idle or (gap is not None and gap >= self.idle_minutes * 60)
        if step in self.recorded_resumes:  # resumed here: rebuilt along the chain
            self.client.drop_calls(self.recorded_resumes[step])
        if step in self.recorded_clearings:  # the log records what it cleared here
            if self.client.clear_calls(self.recorded_clearings[step]):
                self.microcompactions.append(step)
            # what it cleared of the history the file lacks comes off that history;
            # where the calibration could not tell it from the overhead (no
            # compaction to tell them by), off the overhead, which then holds it
            self.missing_history_tokens = max(
                -self.overhead_tokens,
                self.missing_history_tokens - self.lacking_cleared[step],
            )
        if self.microcompact == CACHE_EDITING or (
            self.microcompact == TIME_BASED and idle
        ):
            if self.client.keep_newest(self.keep_recent):
                self.microcompactions.append(step)
        unseen = self.missing_history_tokens
        # a version's client decides on the last usage; the lab's default on the window
        decided = (
            self.tokens if last_usage is None or self.version is None else last_usage
        )
        if (
            self.microcompact == TOKEN_RULE
            and decided + self.overhead_tokens + unseen >= self.warning_tokens
            and self.client.token_microcompact()
        ):
            self.microcompactions.append(step)
        counted = self.tokens + self.overhead_tokens + unseen
        over = decided + self.overhead_tokens + unseen >= self.trigger_tokens
        compacted = (over or step in self.manual_compactions) and self.compact()
        if compacted:
            self.compacted(step, counted)
        self.last_call_tokens = self.tokens
        self.unseen_by_round.append(self.missing_history_tokens)
        return Sent(list(self.client.messages), 1 if compacted else 0)

    def compact(self) -> bool:
        """Replace everything after the system prompt with the continuation message."""
        messages = self.client.messages
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
        attached = agent.reattached_messages(folded) if self.reattach else []
        self.client.compacted(head, [self.continuation, *attached])
        # summarised with the rest; what a clearing took off the overhead stays off
        self.missing_history_tokens = min(0, self.missing_history_tokens)
        return True

    def parameters(self) -> dict:
        return {
            "keep_recent": self.keep_recent,
            "microcompact": self.microcompact,
            "idle_minutes": self.idle_minutes,
            "auto_compact": self.auto_compact,
            "max_output_tokens": self.max_output_tokens,
            "autocompact_pct_override": self.autocompact_pct_override,
            "summary_tokens": self.summary_tokens,
            "overhead_tokens": self.overhead_tokens,
            "version": self.version,
            "reattach": self.reattach,
            "missing_history_tokens": self.missing_history_tokens,
            "recorded_resumes": len(self.recorded_resumes),
            "recorded_manual_compactions": len(self.manual_compactions),
            "auto_compact_tokens": self.auto_compact_tokens,
        }


class ClaudeCodeCacheEditingPolicy(ClaudeCodePolicy):
    """Claude Code with the gated cache-editing microcompact: old results cleared
    before every call (on the server's cached prompt), auto-compact as the default."""

    key = "claude-code-cache-editing"
    title = "Claude Code, cache-editing microcompact (feature-gated)"
    summary = (
        "Before every call clears all but the 5 newest results of file, shell and "
        "search tools; near the end of the window one summary message."
    )
    MICROCOMPACT = CACHE_EDITING


def own_row_parameters(log, version, ratio: float, missing: int) -> dict:
    """What the agent's own row replays on a Claude Code log: the version that wrote
    it (or `version`), the clearings, manual compactions and resumes it records, by
    round, and the history the file lacks (`missing`). `ratio`: the row's count per
    token of the lab's, for what a clearing saved of that history."""
    from ...policies.production.compare import rounds_before
    from ...policies.production.own_agent import (
        recorded_clearing_rounds,
        recorded_resume_rounds,
    )

    version = version or log.agent_version or None
    before = rounds_before(log)
    parameters = {
        "version": version,
        "recorded_clearings": recorded_clearing_rounds(log, ratio),
        "missing_history_tokens": missing,
        "recorded_manual_compactions": [
            before[c.at] for c in log.compactions if c.manual
        ],
    }
    if agent.resume_drops_parallel_calls(version or ""):
        parameters["recorded_resumes"] = recorded_resume_rounds(log)
    return parameters


POLICIES = (ClaudeCodePolicy, ClaudeCodeCacheEditingPolicy)
# the log shape whose own row replays a policy here: the agent's own, by its version
OWN_ROW = {"claude-code": ClaudeCodePolicy.key}
