"""Compression policies beyond the article's pipeline, under one registry.

The article sorts compression into six paths; it builds two (aging and the rolling
summary, in the core). The other four are here, each a small module: `truncation` (drop
the oldest closed range), `hierarchical` (map-reduce summary), `store` (external store
and recall) and `budgeting` (the input side). `registry` names all six and runs any of
them on one session with the fact probe; `on_logs` runs them on an agent log;
`checks` tells whether a strategy of your own keeps the window's rules.
"""

from .budgeting import InputBudgeting, PromptSection
from .checks import StrategyProblem, check_strategy
from .hierarchical import HierarchicalSummary
from .registry import PATHS, run_path
from .store import ExternalStore, OffloadGroups, OffloadToolResults, RecallTool
from .truncation import SlidingWindowTruncation

__all__ = [
    "PATHS",
    "ExternalStore",
    "HierarchicalSummary",
    "InputBudgeting",
    "OffloadGroups",
    "OffloadToolResults",
    "PromptSection",
    "RecallTool",
    "SlidingWindowTruncation",
    "StrategyProblem",
    "check_strategy",
    "run_path",
]
