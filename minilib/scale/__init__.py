"""Beyond the article: the same pipeline over sessions a hundred times longer.

    histories  deterministic long coding-agent sessions (1,000 tool calls and more)
    bounded    a rolling summary that stays within a token budget however long the
               session runs, and the article's pipeline built with it
    fast       FastWindow: the window's answer for a round that only appended
               messages, without walking the whole list again

Standard library only, like the core.
"""

from .bounded import (
    BoundedSummarizer,
    ProtectedContentOverflowError,
    bounded_window,
    default_summary_budget,
)
from .fast import FastWindow
from .histories import (
    GeneratedConversation,
    GeneratedHistory,
    HistoryStats,
    generate_history,
    history_stats,
)

__all__ = [
    "BoundedSummarizer",
    "FastWindow",
    "GeneratedConversation",
    "GeneratedHistory",
    "HistoryStats",
    "ProtectedContentOverflowError",
    "bounded_window",
    "default_summary_budget",
    "generate_history",
    "history_stats",
]
