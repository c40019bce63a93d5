"""The article's pipeline as a policy: aging, then the rolling summary, at a threshold.

`article` is the article's exact pipeline (its unbounded, quoting summary; later user
turns are never folded, as the article's range rule has it). `article-bounded` is the
production window `python -m minilib compress` uses on a log: the same pipeline with the
bounded summary, later user turns folded and quoted whole. Both keep a history of their
own and govern it before every model call; the threshold is the whole window (the
article compresses only when the next call would not fit). An overflow is the
article's `ContextOverflowError`: the runner ends the replay there.
"""

from typing import Mapping, Optional, Sequence

from ...logs.replay import ARTICLE, PRODUCTION, log_window
from ...scale.fast import FastWindow
from ...tokens import TokenCounter, estimate_tokens
from ...window import ContextOverflowError, Settings
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
    threshold_parameter = "threshold"
    stand_in = False  # the article's own summary is the scripted, quoting one
    window_kind = ARTICLE

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        threshold: int = None,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.threshold = window_tokens if threshold is None else threshold
        settings = Settings(
            threshold=self.threshold, fold_user_turns=self.window_kind == PRODUCTION
        )
        self.window, _ = log_window(self.window_kind, settings, count_tokens)
        if not isinstance(self.window, FastWindow):  # the article's: same results,
            # and a round that only appended and still fits costs what it appended
            self.window = FastWindow(
                self.window, getattr(count_tokens, "per_message", None)
            )
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


class ArticleBatchedPolicy(Policy):
    """The production window, compressing in batches: rarer compressions, fewer cache
    breaks.

    Every compression that changes an early message makes the prompt cache write
    everything after it again. The article's window compresses just enough to fit its
    threshold, so with a long session it compresses again a few rounds later. Here,
    once the window is over the threshold, it is compressed down to `target_share` of
    it (the same strategies, at the lower threshold), which leaves room for several
    rounds before the next compression. When that lower target cannot be reached (what
    may not be cut is already larger), the window compresses to the threshold itself,
    as the article's does.
    """

    key = "article-batched"
    title = "The article's pipeline, compressing in batches"
    summary = (
        "The production window, but once over the threshold it compresses down to "
        "`target_share` of it, so it compresses, and breaks the prompt cache, less often."
    )
    source = "minilib.scale.bounded_window, with a low-water mark"
    main_parameter = "target_share"
    threshold_parameter = "threshold"

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        threshold: int = None,
        target_share: float = 0.7,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        if isinstance(target_share, bool) or not 0 < target_share <= 1:
            raise ValueError(f"target_share must be in (0, 1], got {target_share!r}")
        self.threshold = window_tokens if threshold is None else threshold
        self.target_share = target_share
        target = max(1, int(self.threshold * target_share))
        self.at_threshold, _ = log_window(
            PRODUCTION, Settings(self.threshold, fold_user_turns=True), count_tokens
        )
        self.at_target, _ = log_window(
            PRODUCTION, Settings(target, fold_user_turns=True), count_tokens
        )
        self.count_message = getattr(count_tokens, "per_message", None) or (
            lambda message: count_tokens([message])
        )
        self.kept = KeptHistory()
        self.tokens = 0  # of the kept history, kept up to date as messages arrive

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        self.tokens += sum(map(self.count_message, self.kept.take_new(history)))
        if self.tokens <= self.threshold:
            return Sent(list(self.kept.messages))
        try:
            window = self.at_target
            compressions = window.before_model_call(self.kept.messages, None, step)
        except ContextOverflowError:  # the low-water mark is out of reach: fit at least
            window = self.at_threshold
            compressions = window.before_model_call(self.kept.messages, None, step)
        self.tokens = window.tokens_sent
        calls = sum(len(c.model_calls) for c in compressions)
        return Sent(list(self.kept.messages), calls)

    def parameters(self) -> dict:
        return {"threshold": self.threshold, "target_share": self.target_share}
