"""The compression policies production agents run, replayed on any log.

Each policy is a small module: what the real system does, its documented defaults as
parameters, its source (docs/references.md). `POLICIES` maps each key to its class;
`build_policy(key, window_tokens)` makes one; `replay_policy` runs it on a log.
"""

from functools import lru_cache
from typing import Dict, Type

from ...agents import agent_policies
from ...tokens import TokenCounter, estimate_tokens
from .anthropic_clear import AnthropicClearToolUsesPolicy
from .anthropic_compaction import AnthropicCompactionPolicy
from .article import ArticleBatchedPolicy, ArticleBoundedPolicy, ArticlePolicy
from .base import KeptHistory, Policy, Sent, stand_in_summarizer
from .langchain_trim import LangChainTrimHumanPolicy, LangChainTrimPolicy
from .openai_agents import OpenAITrimmingSessionPolicy
from .openhands_masking import OpenHandsMaskingPolicy
from .openhands_summarizing import OpenHandsSummarizingPolicy
from .run import PolicyRun, replay_policy
from .swe_agent import SweAgentLastNPolicy


@lru_cache(maxsize=None)
def policy_classes() -> Dict[str, Type[Policy]]:
    """Each policy's class by its key, in the order `compare` shows them. Gathered at
    first use: an agent's policy (minilib.agents) imports this package's base, so it
    cannot be gathered while this package is being imported."""
    return {
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
            *agent_policies(),  # each agent's own, from its home (minilib.agents)
            AnthropicCompactionPolicy,
        )
    }


def __getattr__(name: str):
    # POLICIES reads as a constant, gathered at first use (see policy_classes)
    if name == "POLICIES":
        return policy_classes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_policy(
    key: str,
    window_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    **parameters,
) -> Policy:
    """The policy `key` for a model with a context window of `window_tokens`;
    `parameters` override its documented defaults (`overhead_tokens=` among them)."""
    POLICIES = policy_classes()
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
