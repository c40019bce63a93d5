"""The compression policies production agents run, replayed on any log.

Each policy is a small module: what the real system does, its documented defaults as
parameters, its source (docs/references.md). `POLICIES` maps each key to its class;
`build_policy(key, window_tokens)` makes one; `replay_policy` runs it on a log.
"""

from typing import Dict, Type

from ...tokens import TokenCounter, estimate_tokens
from .anthropic_clear import AnthropicClearToolUsesPolicy
from .anthropic_compaction import AnthropicCompactionPolicy
from .article import ArticleBatchedPolicy, ArticleBoundedPolicy, ArticlePolicy
from .base import KeptHistory, Policy, Sent, stand_in_summarizer
from .claude_code import ClaudeCodeCacheEditingPolicy, ClaudeCodePolicy
from .codex import CodexLocalPolicy, CodexPolicy
from .gemini_cli import GeminiCliPolicy
from .langchain_trim import LangChainTrimHumanPolicy, LangChainTrimPolicy
from .openai_agents import OpenAITrimmingSessionPolicy
from .opencode import OpencodePrunePolicy
from .openhands_masking import OpenHandsMaskingPolicy
from .openhands_summarizing import OpenHandsSummarizingPolicy
from .run import PolicyRun, replay_policy
from .swe_agent import SweAgentLastNPolicy

POLICIES: Dict[str, Type[Policy]] = {
    policy.key: policy
    for policy in (
        ArticlePolicy,
        ArticleBoundedPolicy,
        ArticleBatchedPolicy,
        AnthropicClearToolUsesPolicy,
        OpenHandsMaskingPolicy,
        OpenHandsSummarizingPolicy,
        SweAgentLastNPolicy,
        OpenAITrimmingSessionPolicy,
        LangChainTrimPolicy,
        LangChainTrimHumanPolicy,
        ClaudeCodePolicy,
        ClaudeCodeCacheEditingPolicy,
        CodexPolicy,
        CodexLocalPolicy,
        GeminiCliPolicy,
        OpencodePrunePolicy,
        AnthropicCompactionPolicy,
    )
}


def build_policy(
    key: str,
    window_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    **parameters,
) -> Policy:
    """The policy `key` for a model with a context window of `window_tokens`;
    `parameters` override its documented defaults (`overhead_tokens=` among them)."""
    if key not in POLICIES:
        raise ValueError(f"unknown policy {key!r}; expected one of {', '.join(POLICIES)}")
    return POLICIES[key](window_tokens, count_tokens, **parameters)


__all__ = [
    "POLICIES",
    "KeptHistory",
    "Policy",
    "PolicyRun",
    "Sent",
    "build_policy",
    "replay_policy",
    "stand_in_summarizer",
]
