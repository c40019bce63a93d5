"""minilib: context compression for an agent harness, after the article "mini-agent M3".

The article's system, in reading order (standard library only, one concept a module):
    tokens    the deterministic token estimate
    messages  the chat-completions shape and its checks (pairing by position)
    markers   the marks compression writes, and the closed-range rule in `ranges`
    aging     tool-result aging (head + tail + a header)
    summary   the rolling summary of closed groups
    window    ContextWindow: the pipeline run before every model call,
    ContextOverflowError
    trace     the JSONL trace
    loop      the agent loop, and `replay`, the one loop every runner uses
    tools     the workspace tools;  model  the scripted model
    session   the bundled 13-call session, replayed with and without compression
Beyond the article: `paths` (the four other compression paths and the six side by
side), `measure` (the fact probe, real tokenizers), `transcripts` (recorded agent
logs), `checks` (the window's invariants on your own strategy). The presentation
layer (pandas, plotly, ipywidgets) is `minilib.lab`, imported only by notebooks.
"""

from .aging import ToolResultAging, aged_content
from .checks import StrategyProblem, check_strategy
from .loop import LiveConversation, Replay, replay, run_loop
from .markers import AGING_MARK, OMISSION_LINE, SUMMARY_MARK, is_aged, is_summary
from .measure.facts import Fact, load_facts, probe
from .messages import InvalidMessagesError, protected_head_length, validate_messages
from .model import ScriptedModel, scripted_summary
from .paths.budgeting import InputBudgeting, PromptSection
from .paths.hierarchical import HierarchicalSummary
from .paths.registry import PATHS, run_path
from .paths.store import ExternalStore, OffloadGroups, OffloadToolResults, RecallTool
from .paths.truncation import SlidingWindowTruncation
from .ranges import closed_range, range_candidates
from .session import load_session, run_baseline, run_session, window_before_round
from .strategy import CompressionResult, Strategy
from .summary import RollingSummary
from .tokens import estimate_tokens
from .tools import Workspace
from .trace import Tracer, recover_tool_output
from .transcripts import load_transcript, replay_transcript
from .window import (
    Compression,
    ContextOverflowError,
    ContextWindow,
    Settings,
    article_window,
)

__all__ = [
    # the article's system
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
    # beyond the article: the other four paths, the fact probe, logs, your own strategy
    "PATHS",
    "ExternalStore",
    "Fact",
    "HierarchicalSummary",
    "InputBudgeting",
    "OffloadGroups",
    "OffloadToolResults",
    "PromptSection",
    "RecallTool",
    "SlidingWindowTruncation",
    "StrategyProblem",
    "check_strategy",
    "load_facts",
    "load_transcript",
    "probe",
    "replay_transcript",
    "run_path",
]
