"""minilib: context compression for an agent harness, after the article "mini-agent M3".

Core modules use the standard library only, one concept each:
tokens (the estimate), aging, summary, window (the pipeline), trace, tools,
model (scripted), loop, session (the bundled 13-call session); the other four
paths: truncation, hierarchical (summary), store (external store + recall),
budgeting (input side); facts (the retention probe), tokenizers (optional real
counts) and compare (the six paths side by side). The presentation
layer (pandas, plotly, ipywidgets) lives in `minilib.lab` and is imported only by
notebooks.
"""

from .aging import AGING_MARK, OMISSION_LINE, ToolResultAging, aged_content
from .budgeting import InputBudgeting, PromptSection
from .facts import Fact, load_facts, probe
from .hierarchical import HierarchicalSummary
from .loop import run_loop
from .messages import InvalidMessagesError, validate_messages
from .model import ScriptedModel, scripted_summary
from .session import Settings, load_session, run_baseline, run_session
from .store import ExternalStore, OffloadGroups, OffloadToolResults, RecallTool
from .summary import SUMMARY_MARK, RollingSummary, summary_range
from .tokens import estimate_tokens
from .tools import Workspace
from .trace import Tracer, recover_tool_output
from .truncation import SlidingWindowTruncation
from .window import Compression, ContextOverflowError, ContextWindow, article_window

__all__ = [
    "AGING_MARK", "OMISSION_LINE", "SUMMARY_MARK", "Compression", "ContextOverflowError", "ContextWindow",
    "InvalidMessagesError", "RollingSummary", "ScriptedModel", "Settings", "ToolResultAging", "Tracer",
    "Workspace", "aged_content", "article_window", "estimate_tokens", "load_session", "recover_tool_output",
    "run_baseline", "run_loop", "run_session", "scripted_summary", "summary_range", "validate_messages",
    # the other four paths, and the fact probe
    "ExternalStore", "Fact", "HierarchicalSummary", "InputBudgeting", "OffloadGroups", "OffloadToolResults",
    "PromptSection", "RecallTool", "SlidingWindowTruncation", "load_facts", "probe",
]
