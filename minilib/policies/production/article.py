"""The article's pipeline as a policy: aging, then the rolling summary, at a threshold.

`article` is the article's exact pipeline (its unbounded, quoting summary; later user
turns are never folded, as the article's range rule has it). `article-bounded` is the
production window `python -m minilib compress` uses on a log: the same pipeline with the
bounded summary, later user turns folded and quoted whole. Both keep a history of their
own and govern it before every model call; the threshold is the whole window (the
article compresses only when the next call would not fit). An overflow is the
article's `ContextOverflowError`: the runner ends the replay there.
"""

from typing import Mapping, Sequence

from ...logs.replay import ARTICLE, PRODUCTION, log_window
from ...tokens import TokenCounter, estimate_tokens
from ...window import Settings
from .base import KeptHistory, Policy, Sent


class ArticlePolicy(Policy):
    key = "article"
    title = "The article's pipeline"
    summary = (
        "Ages old tool results to head + tail with an omission line, then folds closed "
        "groups into a rolling summary, only when the window is over its threshold."
    )
    source = "The article (mini-agent M3); minilib.window.article_window"
    main_parameter = "threshold"
    stand_in = False  # the article's own summary is the scripted, quoting one
    window_kind = ARTICLE

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        threshold: int = None,
    ):
        super().__init__(window_tokens, count_tokens)
        self.threshold = window_tokens if threshold is None else threshold
        settings = Settings(
            threshold=self.threshold, fold_user_turns=self.window_kind == PRODUCTION
        )
        self.window, _ = log_window(self.window_kind, settings, count_tokens)
        self.kept = KeptHistory()

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        self.kept.take_new(history)
        compressions = self.window.before_model_call(self.kept.messages, None, step)
        calls = sum(len(c.model_calls) for c in compressions)
        return Sent(list(self.kept.messages), calls)

    def parameters(self) -> dict:
        return {"threshold": self.threshold}


class ArticleBoundedPolicy(ArticlePolicy):
    key = "article-bounded"
    title = "The article's pipeline, bounded summary"
    summary = (
        "The article's pipeline with a summary that stays within a budget, later user "
        "turns folded: what `python -m minilib compress` runs on a log."
    )
    source = "minilib.scale.bounded_window"
    window_kind = PRODUCTION
