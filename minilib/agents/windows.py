"""The context window a log's agent ran at, from the model it names.

A replay of a real session at the article's 1,200 tokens stops before its first round
(a real agent's system prompt alone is thousands); a replay at the agent's own window
shows what the agent lived with. The window comes from, in order: what the log itself
records (Codex writes `model_context_window`), a recorded input over the model's
usual window (a Claude session that counted 230,000 tokens ran at 1M), the table below,
else a stated default.

>>> window_for_model("claude-opus-4-5-20251101")[0], window_for_model("gpt-5.1-codex")[0]
(200000, 272000)
>>> window_for_model("claude-sonnet-4-5[1m]")[0], window_for_model("llama-3")[0]
(1000000, None)
"""

import re
from typing import Optional, Tuple

DEFAULT_WINDOW = 200_000
ONE_MILLION = 1_000_000
ARTICLE_WINDOW = 1_200
# (pattern of the model name, window in tokens, source: docs/references.md)
WINDOWS = (
    (
        r"\[1m\]|-1m$",
        ONE_MILLION,
        "a 1M-context Claude model (Anthropic, context windows)",
    ),
    (
        r"^claude-",
        200_000,
        "Claude models' 200,000-token window (Anthropic, models overview)",
    ),
    (
        r"^gpt-5|^codex-",
        272_000,
        "Codex's current models report a 272,000-token window "
        "(openai/codex, model_context_window)",
    ),
    (r"^gemini-", 1_048_576, "Gemini's 1,048,576 input tokens (Google AI, models)"),
)
HINT = "the log names no model the lab knows, so the replay runs at a stated default"


def window_for_model(model: str) -> Tuple[Optional[int], str]:
    """The model's window and why, or (None, "") for a model not in the table."""
    for pattern, tokens, why in WINDOWS:
        if re.search(pattern, model or ""):
            return tokens, why
    return None, ""


def agent_window(log) -> Tuple[int, str, bool]:
    """The window `log`'s agent ran at, the reason in words, and whether it is known
    (False: the stated default)."""
    recorded = getattr(log, "context_window", None)
    if recorded:
        return (
            recorded,
            f"{recorded:,} as the log records it (model_context_window)",
            True,
        )
    model = log.model or next(iter(log.models), "")
    tokens, why = window_for_model(model)
    largest = max((u.input_tokens for u in log.usage), default=0)
    if tokens is not None and largest > tokens:
        return (
            ONE_MILLION,
            f"{model}: a recorded input of {largest:,} tokens is over its usual "
            f"{tokens:,}, so it ran at the 1M window",
            True,
        )
    if tokens is not None:
        return tokens, f"{model}: {why}", True
    return DEFAULT_WINDOW, f"a stated default ({HINT})", False
