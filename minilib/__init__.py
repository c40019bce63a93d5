"""minilib: context compression for an agent harness, after the article "mini-agent M3".

The article's system, in reading order (standard library only, one concept a module,
importing nothing outside this list):

    tokens    the deterministic token estimate
    messages  the chat-completions shape and its checks (pairing by position)
    markers   the marks compression writes
    ranges    the closed-range rule: which old messages a summary may replace
    strategy  what a compression strategy is and what it returns
    aging     tool-result aging (head + tail + a header)
    summary   the rolling summary of closed groups
    window    ContextWindow, the pipeline run before every model call, and
              ContextOverflowError
    trace     the JSONL trace
    loop      the agent loop, and `replay`, the one loop every runner uses
    tools     the workspace tools
    model     the scripted model (the stand-in for an LLM)
    session   the bundled 13-call session, replayed with and without compression

Everything else builds on these and is imported from its own package: `logs` (agent
logs read and replayed), `policies` (the other compression paths and their registry),
`measure` (facts, grounding, tokenizers), `reports` (report rows as plain data),
`scale` (long sessions), `cli` (the command line) and `lab` (figures and widgets).
"""

from .aging import ToolResultAging, aged_content
from .loop import LiveConversation, Replay, replay, run_loop
from .markers import AGING_MARK, OMISSION_LINE, SUMMARY_MARK, is_aged, is_summary
from .messages import InvalidMessagesError, protected_head_length, validate_messages
from .model import ScriptedModel, scripted_summary
from .ranges import closed_range, range_candidates
from .session import load_session, run_baseline, run_session, window_before_round
from .strategy import CompressionResult, Strategy
from .summary import RollingSummary
from .tokens import estimate_tokens
from .tools import Workspace
from .trace import Tracer, model_calls, recover_tool_output, window_of
from .window import (
    Compression,
    ContextOverflowError,
    ContextWindow,
    Settings,
    article_window,
)

__all__ = [
    "AGING_MARK",
    "OMISSION_LINE",
    "SUMMARY_MARK",
    "Compression",
    "CompressionResult",
    "ContextOverflowError",
    "ContextWindow",
    "InvalidMessagesError",
    "LiveConversation",
    "Replay",
    "RollingSummary",
    "ScriptedModel",
    "Settings",
    "Strategy",
    "ToolResultAging",
    "Tracer",
    "Workspace",
    "aged_content",
    "article_window",
    "closed_range",
    "estimate_tokens",
    "is_aged",
    "is_summary",
    "load_session",
    "model_calls",
    "protected_head_length",
    "range_candidates",
    "recover_tool_output",
    "replay",
    "run_baseline",
    "run_loop",
    "run_session",
    "scripted_summary",
    "validate_messages",
    "window_before_round",
    "window_of",
]
