"""Codex CLI: each tool output cut by its model's `TruncationPolicy`, and at 90% of the
window a compaction: remote (an opaque item) for OpenAI, a handoff summary otherwise.

What Codex does (openai/codex; the files and commits are in docs/references.md):
- Output truncation, in two steps. A shell command's output over its model's
  `TruncationPolicy` budget (10,000 tokens for current models; gpt-5.2 and the fallback
  metadata use 10,000 bytes: `MODELS`) keeps its head and tail, half the budget each,
  around a marker `…N tokens truncated…` (`…N chars truncated…` in bytes mode), under
  the header `Warning: truncated output (original token count: N)` and `Total output
  lines: L` (`format_exec_output_str` in `core/src/tools/mod.rs` calls
  `formatted_truncate_text`, `codex-rs/utils/output-truncation/src/lib.rs`; the cut is
  `codex-rs/utils/string/src/truncate.rs`). Then every function output, shell or not,
  is recorded in the history cut to 1.2 times the budget (12,000 tokens), with the same
  marker and no header (`with_serialization_allowance`, `policy * 1.2` in
  `ContextManager::process_item`, `core/src/context_manager/history.rs`, which calls
  `truncate_text`). A token is 4 bytes there (`approx_token_count`).
- Trigger: the auto-compact limit, 90% of the context window (a configured
  `model_auto_compact_token_limit` may only lower it; `ModelInfo::
  auto_compact_token_limit`), compared with the tokens the API counted.
- Remote compaction, the default for the OpenAI provider (`compact.rs`:
  `should_use_remote_compact_task` is `provider.is_openai()` with the
  `remote_compaction` feature on by default). `compact_remote_v2.rs` asks the model
  for one encrypted `compaction` item and installs the retained messages (the real
  user messages, newest first up to `RETAINED_MESSAGE_TOKEN_BUDGET = 64_000` tokens,
  the one that crosses cut with the same token marker) followed by that opaque item;
  the initial context (instructions, environment) is injected again.
- Local compaction, for other providers (`compact.rs`, `templates/compact/prompt.md`):
  the model writes a handoff summary (`PROMPT`); the history becomes the initial
  context, the user's messages newest first up to `COMPACT_USER_MESSAGE_MAX_TOKENS =
  20_000`, and the summary as a last user message opening with `SUMMARY_PREFIX`.
  Registered as its own policy, `codex-local`.

Where the lab differs:
- what the encrypted item holds is not public and cannot be measured: the lab puts its
  stand-in summary in the item (`stand_in = True`, at most `summary_tokens`, default
  2.5% of the window), labelled as the opaque item it stands for. The handoff summary
  of the local path is the same stand-in.
- a shell output is a tool message answering a call of one of `SHELL_TOOLS`, or
  environment output recorded as a user message (an observation); user messages are
  the non-observation ones, and the leading system messages and session-context user
  messages (`<environment_context>`, `<user_instructions>`,
  `# AGENTS.md instructions`) are the initial context a compaction keeps.
- 64,000 and 20,000 are numbers for a 200k window and are scaled with the window below
  it; the 10,000 of the truncation policy is per output and is not scaled. Current
  Codex models report a 272,000-token window (`MODELS`): `model_settings(slug)` gives
  the window and truncation policy of one to build the policy with.
- before a remote compaction Codex trims old function-call history that no longer
  fits the window; the lab's trigger fires before that can happen.
Overhead: `DEFAULT_OVERHEAD_TOKENS` (docs/references.md).
"""

import math
from typing import List, Mapping, Optional, Sequence

from ...messages import check_int, is_observation
from ...policies.production.base import (
    KeptHistory,
    Policy,
    Sent,
    scaled,
    stand_in_summarizer,
    system_head,
)
from ...scale.bounded import MIN_BUDGET
from ...summary import summary_header
from ...tokens import TokenCounter, estimate_tokens, tool_call_name

SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its "
    "thinking process. You also have access to the state of the tools that were used by "
    "that language model. Use this to build on the work that has already been done and "
    "avoid duplicating work. Here is the summary produced by the other language model, "
    "use the information in this summary to  assist with your own analysis:"
)
PROMPT = (
    "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for "
    "another LLM that will resume the task.\n\n"
    "Include:\n"
    "- Goal / user objective\n"
    "- Current progress and key decisions made\n"
    "- Important context, constraints, or user preferences\n"
    "- What remains to be done (clear next steps)\n"
    "- Any critical data, examples, or references needed to continue\n\n"
    "Be concise, structured, and focused on helping the next LLM seamlessly continue "
    "the work.\n"
)
OPAQUE_ITEM = (
    "[compaction item: encrypted by the server, its content is not readable; "
    "the lab's stand-in summary stands in its place]"
)
SESSION_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
)
REMOTE, LOCAL = "remote", "local"
TOKENS, BYTES = "tokens", "bytes"
RETAINED_MESSAGE_TOKEN_BUDGET = 64_000  # remote: compact_remote_v2.rs
COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000  # local: compact.rs
TRUNCATION_LIMIT = 10_000  # TruncationPolicyConfig::tokens(10_000)
SERIALIZATION_ALLOWANCE = 1.2  # with_serialization_allowance: policy * 1.2
BYTES_PER_TOKEN = 4
# tools whose output Codex formats as a command's (format_exec_output_str)
SHELL_TOOLS = frozenset(
    ("shell", "shell_command", "local_shell", "container.exec", "exec_command")
)
# Codex's bundled model list, codex-rs/models-manager/models.json at commit
# 0dcb02e06fdc76ac90471de72b4bcf90d5145753: slug -> (context_window, its
# truncation_policy mode and limit); gpt-5.4 and codex-auto-review also report a
# max_context_window of 1,000,000, which the lab does not use
MODELS = {
    "gpt-5.4": (272_000, TOKENS, 10_000),
    "gpt-5.4-mini": (272_000, TOKENS, 10_000),
    "gpt-5.3-codex": (272_000, TOKENS, 10_000),
    "gpt-5.2": (272_000, BYTES, 10_000),
    "codex-auto-review": (272_000, TOKENS, 10_000),
}


def model_settings(slug: str) -> dict:
    """The window and truncation policy Codex's model list gives `slug`, as keywords
    for `CodexPolicy` (`CodexPolicy(**model_settings("gpt-5.4"))`: 90% of 272,000
    is an auto-compact limit of 244,800)."""
    if slug not in MODELS:
        raise ValueError(f"unknown Codex model {slug!r}; known: {', '.join(MODELS)}")
    window, mode, limit = MODELS[slug]
    return {"window_tokens": window, "truncation": mode, "truncation_limit": limit}


def approx_token_count(text: str) -> int:
    """Codex's token estimate: 4 bytes a token, rounded up."""
    return (len(text.encode()) + BYTES_PER_TOKEN - 1) // BYTES_PER_TOKEN


def _lines(text: str) -> int:
    """Lines as Rust's `str::lines` counts them (a final newline opens no line)."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def truncate_middle(text: str, max_bytes: int, use_tokens: bool) -> str:
    """Codex's `truncate_with_byte_estimate`: the first half of `max_bytes` and the
    rest from the end, cut at characters, around a marker of what was removed."""
    data = text.encode()
    if not data:
        return ""
    if max_bytes == 0:
        removed = (len(data) + 3) // 4 if use_tokens else len(text)
        return _marker(use_tokens, removed)
    if len(data) <= max_bytes:
        return text
    left = max_bytes // 2
    head = data[:left].decode("utf-8", "ignore")  # characters that end within it
    tail = data[len(data) - (max_bytes - left) :].decode("utf-8", "ignore")
    if use_tokens:
        removed = (len(data) - max_bytes + BYTES_PER_TOKEN - 1) // BYTES_PER_TOKEN
    else:
        removed = len(text) - len(head) - len(tail)
    return head + _marker(use_tokens, removed) + tail


def _marker(use_tokens: bool, removed: int) -> str:
    return f"…{removed} {'tokens' if use_tokens else 'chars'} truncated…"


def truncate_text(text: str, mode: str, limit: int) -> str:
    """Codex's `truncate_text` under `TruncationPolicy::Tokens(limit)` or `Bytes`."""
    if mode == BYTES:
        return truncate_middle(text, limit, use_tokens=False)
    if not text or (limit > 0 and len(text.encode()) <= limit * BYTES_PER_TOKEN):
        return text
    return truncate_middle(text, limit * BYTES_PER_TOKEN, use_tokens=True)


def truncate_output(content: str, mode: str = TOKENS, limit: int = TRUNCATION_LIMIT):
    """`content` as Codex shows a tool output to the model (`formatted_truncate_text`):
    unchanged within the policy's byte budget, else a header, head, marker, tail."""
    budget = limit * BYTES_PER_TOKEN if mode == TOKENS else limit
    if len(content.encode()) <= budget:
        return content
    return (
        f"Warning: truncated output (original token count: "
        f"{approx_token_count(content)})\nTotal output lines: {_lines(content)}\n\n"
        + truncate_text(content, mode, limit)
    )


def allowance(limit: int) -> int:
    """`TruncationPolicy * 1.2`: the budget a recorded function output is kept to."""
    return math.ceil(limit * SERIALIZATION_ALLOWANCE)


def record_output(content: str, mode: str, limit: int, shell: bool) -> str:
    """A tool output as Codex records it in the history: a shell command's output
    formatted and cut to the policy (`truncate_output`), then every output cut to
    1.2 times the policy, with no header."""
    if shell:
        content = truncate_output(content, mode, limit)
    return truncate_text(content, mode, allowance(limit))


def is_context(message: Mapping) -> bool:
    """Initial context Codex injects again after a compaction."""
    if message.get("role") == "system":
        return True
    text = message.get("content") or ""
    return message.get("role") == "user" and text.startswith(SESSION_PREFIXES)


class CodexPolicy(Policy):
    key = "codex"
    title = "Codex CLI: output cut, remote compaction at 90%"
    summary = (
        "Cuts shell output to 10,000 tokens and other tool output to 12,000 (head + "
        "tail); at 90% of the window "
        "keeps the user's newest messages (64k tokens) and one opaque compaction item."
    )
    source = (
        "openai/codex: core/src/compact.rs, compact_remote_v2.rs, "
        "utils/output-truncation; docs/references.md"
    )
    main_parameter = "auto_compact_token_limit"
    threshold_parameter = "auto_compact_token_limit"
    stand_in = True
    PROMPT = PROMPT
    COMPACTION = REMOTE
    DEFAULT_OVERHEAD_TOKENS = 18_000
    OVERHEAD_SOURCE = (
        "measured by a user: the first call of a fresh session with a five-word "
        "message reported 18,080 input tokens (openai/codex#16212)"
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        auto_compact_token_limit: Optional[int] = None,
        truncation: str = TOKENS,
        truncation_limit: int = TRUNCATION_LIMIT,
        user_message_tokens: Optional[int] = None,
        summary_tokens: Optional[int] = None,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        ninety = window_tokens * 9 // 10
        if auto_compact_token_limit is None:
            self.auto_compact_token_limit = ninety
        else:
            limit = check_int(
                "auto_compact_token_limit", auto_compact_token_limit, minimum=1
            )
            self.auto_compact_token_limit = min(limit, ninety)  # only ever lowered
        if truncation not in (TOKENS, BYTES):
            raise ValueError(
                f"truncation must be {TOKENS!r} or {BYTES!r}, got {truncation!r}"
            )
        self.truncation = truncation
        self.truncation_limit = check_int("truncation_limit", truncation_limit, minimum=1)
        budget = (
            RETAINED_MESSAGE_TOKEN_BUDGET
            if self.COMPACTION == REMOTE
            else COMPACT_USER_MESSAGE_MAX_TOKENS
        )
        self.user_message_tokens = (
            scaled(budget, window_tokens)
            if user_message_tokens is None
            else check_int("user_message_tokens", user_message_tokens)
        )
        self.summary_tokens = (
            max(MIN_BUDGET, window_tokens // 40)
            if summary_tokens is None
            else check_int("summary_tokens", summary_tokens, minimum=MIN_BUDGET)
        )
        self.trigger_tokens = self.auto_compact_token_limit
        self.summarize = stand_in_summarizer(self.summary_tokens)
        self.kept = KeptHistory()
        self.tokens = 0
        self.summary_message: Optional[Mapping] = None
        self.earlier = ""
        self.names: dict = {}  # call id -> tool name, of the latest assistant message

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        messages = self.kept.messages
        start = len(messages)
        self.kept.take_new(history)
        for place in range(start, len(messages)):
            message = messages[place]
            if message.get("role") == "assistant":
                calls = message.get("tool_calls") or ()
                self.names = {call.get("id"): tool_call_name(call) for call in calls}
            elif message.get("role") == "tool" or is_observation(message):
                content = message.get("content") or ""
                shell = is_observation(message) or (
                    self.names.get(message.get("tool_call_id")) in SHELL_TOOLS
                )
                cut = record_output(
                    content, self.truncation, self.truncation_limit, shell
                )
                if cut != content:
                    message = messages[place] = dict(message, content=cut)
            self.tokens += self.count_tokens([message])
        counted = self.tokens + self.overhead_tokens
        compacted = counted >= self.auto_compact_token_limit and self.compact()
        if compacted:
            self.compacted(step, counted)
        return Sent(list(messages), 1 if compacted else 0)

    def compact(self) -> bool:
        """The initial context, the user's recent messages, the summary or the item."""
        messages = self.kept.messages
        head = system_head(messages)
        while head < len(messages) and is_context(messages[head]):
            head += 1
        if head == len(messages):
            return False
        users = [
            m["content"] or ""
            for m in messages[head:]
            if m.get("role") == "user"
            and not is_observation(m)
            and not is_context(m)
            and m is not self.summary_message
        ]
        earlier = {"role": "user", "content": summary_header(0) + self.earlier}
        folded: List[Mapping] = [  # the earlier summary, as the stand-in reads its own
            earlier if m is self.summary_message else m for m in messages[head:]
        ]
        self.earlier = self.summarize(folded) or "(no summary available)"
        self.summary_message = {"role": "user", "content": self.summary_text()}
        kept = [{"role": "user", "content": text} for text in self.recent_users(users)]
        messages[head:] = kept + [self.summary_message]
        self.tokens = sum(self.count_tokens([m]) for m in messages)
        return True

    def summary_text(self) -> str:
        """The remote path's opaque item, with the stand-in in its place."""
        return f"{OPAQUE_ITEM}\n{self.earlier}"

    def recent_users(self, users: List[str]) -> List[str]:
        """The user's messages, newest first, within the budget; oldest first again."""
        selected, remaining = [], self.user_message_tokens
        for text in reversed(users):
            if remaining <= 0:
                break
            tokens = max(approx_token_count(text), 1)
            if tokens <= remaining:
                selected.append(text)
                remaining -= tokens
            else:
                selected.append(truncate_text(text, TOKENS, remaining))
                break
        return selected[::-1]

    def parameters(self) -> dict:
        return {
            "compaction": self.COMPACTION,
            "auto_compact_token_limit": self.auto_compact_token_limit,
            "truncation": self.truncation,
            "truncation_limit": self.truncation_limit,
            "user_message_tokens": self.user_message_tokens,
            "summary_tokens": self.summary_tokens,
            "overhead_tokens": self.overhead_tokens,
        }


class CodexLocalPolicy(CodexPolicy):
    """Codex's local compaction, the path for providers other than OpenAI."""

    key = "codex-local"
    title = "Codex CLI (other providers): output cut, handoff summary at 90%"
    summary = (
        "Cuts shell output to 10,000 tokens, other tool output to 12,000; at 90% of "
        "the window replaces the "
        "history with the user's messages (20k tokens) and a handoff summary."
    )
    source = (
        "openai/codex: core/src/compact.rs, templates/compact/prompt.md, "
        "utils/output-truncation; docs/references.md"
    )
    COMPACTION = LOCAL

    def summary_text(self) -> str:
        return f"{SUMMARY_PREFIX}\n{self.earlier}"


POLICIES = (CodexPolicy, CodexLocalPolicy)
# the log shape whose own row replays a policy here: the agent's own
OWN_ROW = {"codex-rollout": CodexPolicy.key}
