"""ContextWindow: the one check the loop runs before every model call.

    measure -> within budget? send
            -> age tool results -> measure -> within budget? send
            -> summarize old groups -> measure -> within budget? send
            -> ContextOverflowError

The loop never learns how many strategies there are or what they cut; it only asks
"is the window governed?". Cheap, pairing-safe aging runs first so its room is used
up before anything is summarized. When even that is not enough, what is left is
protected content no strategy may touch, and pretending otherwise would only make
the next API call fail with a less readable error: the window fails loudly instead.

Example: a 2,000-character result is over a 100-token window; aging brings it under.

    >>> from minilib.aging import ToolResultAging
    >>> call = {"id": "c1", "type": "function",
    ...         "function": {"name": "read_file", "arguments": "{}"}}
    >>> messages = [{"role": "user", "content": "read the log"},
    ...             {"role": "assistant", "content": "", "tool_calls": [call]},
    ...             {"role": "tool", "tool_call_id": "c1", "content": "x" * 2000}]
    >>> window = ContextWindow(100, [ToolResultAging(head_chars=40, tail_chars=40)])
    >>> [(c.strategy, c.before_tokens, c.after_tokens)
    ...  for c in window.before_model_call(messages)]
    [('tool_result_aging', 532, 87)]
    >>> ContextWindow(100).before_model_call([{"role": "user", "content": "x" * 800}])
    Traceback (most recent call last):
    ...
    minilib.window.ContextOverflowError: context window needs 204 tokens after
    compression, over the threshold of 100; nothing more may be cut. Largest message
    left: #0 (user, 204 tokens), which no strategy may cut further.
"""

from dataclasses import dataclass, field, replace
from typing import List, Mapping, Optional, Sequence

from .aging import ToolResultAging
from .messages import check_int, validate_messages
from .summary import RollingSummary, Summarizer
from .tokens import TokenCounter, check_counter, estimate_tokens, known_per_message


class ContextOverflowError(RuntimeError):
    """The window is over its threshold and no strategy may cut anything more.

    `window` is the list it would have sent; `largest_index` is the position in it of
    the largest message. `written_by` names the strategy that wrote that message (a
    summary), or is None when it is one of the caller's own messages, unchanged.
    """

    def __init__(
        self,
        tokens: int,
        threshold: int,
        window: Sequence[Mapping],
        largest_index: int,
        largest_tokens: int,
        written_by: Optional[str] = None,
    ):
        self.tokens = tokens
        self.threshold = threshold
        self.window = list(window)
        self.largest_index = largest_index
        self.largest_role = window[largest_index].get("role")
        self.largest_tokens = largest_tokens
        self.written_by = written_by
        what = f"#{largest_index} ({self.largest_role}, {largest_tokens:,} tokens"
        what += ")" if written_by is None else f", written by {written_by})"
        super().__init__(
            f"context window needs {tokens:,} tokens after compression, over the "
            f"threshold of {threshold:,}; nothing more may be cut. "
            f"Largest message left: {what}, which no strategy may cut further."
        )


@dataclass(frozen=True)
class Compression:
    """One compression that changed the window, as the trace records it."""

    step: int
    strategy: str
    before_messages: int
    after_messages: int
    before_tokens: int
    after_tokens: int
    affected_indexes: tuple
    model_calls: tuple = ()  # what a summarizing strategy asked the model, for the trace

    def payload(self) -> dict:
        return {
            "step": self.step,
            "strategy": self.strategy,
            "before_messages": self.before_messages,
            "after_messages": self.after_messages,
            "before_tokens": self.before_tokens,
            "after_tokens": self.after_tokens,
            "affected_indexes": list(self.affected_indexes),
        }


@dataclass
class WindowState:
    """One state of the state machine, as walked for one model call.

    `state` is "measure", a strategy's name, "send" or "overflow"; `messages` is the
    window in that state; `compression` is set when a strategy changed something.
    """

    state: str
    messages: List[Mapping]
    tokens: int
    detail: str
    compression: Optional[Compression] = None
    error: Optional[ContextOverflowError] = None  # set on the "overflow" state


@dataclass
class ContextWindow:
    """Keep the window within `threshold` tokens by running `strategies` in order."""

    threshold: int = 1200
    strategies: Sequence = field(default_factory=list)
    count_tokens: TokenCounter = estimate_tokens
    # What the last governed window counted, so the loop need not count it again.
    tokens_sent: Optional[int] = field(default=None, init=False, compare=False)

    def __post_init__(self):
        check_int("threshold", self.threshold, minimum=1)
        check_counter(self.count_tokens)
        for number, strategy in enumerate(self.strategies):
            if not callable(getattr(strategy, "compress", None)):
                raise TypeError(
                    f"strategies[{number}] ({type(strategy).__name__}) has no "
                    "compress(messages) method"
                )

    def walk(
        self, messages: Sequence[Mapping], step: int = 0, *, counted: Optional[int] = None
    ) -> List[WindowState]:
        """Every state the machine passes through for this window; changes nothing.

        `counted` is for a caller that has already checked this list and counted it
        with this window's counter (a window that tracks what each round appended):
        the walk then trusts both instead of walking the list twice more.
        """
        # The window's entry: the list is checked once here, so the strategies it
        # hands it to may trust its shape and pairing.
        if counted is None:
            validate_messages(messages)
        check_int("step", step)
        current = list(messages)
        written = {}  # id of a message a strategy wrote -> its name, for an overflow
        # 1. Measure what the loop would send.
        tokens = self.count_tokens(current) if counted is None else counted
        states = [self._measure(current, tokens)]
        for strategy in self.strategies:
            # 2. Within budget: no further strategy runs (aging first, so the cheap
            #    cut is used up before anything is summarized).
            if tokens <= self.threshold:
                break
            # 3. Over budget: the next strategy compresses, then measure again.
            state = self._compress(strategy, current, tokens, step, written)
            current, tokens = state.messages, state.tokens
            states += [state, self._measure(current, tokens)]
        # 4. Send what fits; over budget after every strategy is a hard failure.
        if tokens <= self.threshold:
            detail = f"send {len(current)} messages, {tokens:,} tokens"
            states.append(WindowState("send", current, tokens, detail))
        else:
            states.append(self._overflow(current, tokens, written))
        return states

    def _compress(self, strategy, current, tokens, step, written) -> WindowState:
        """Run one strategy on the window: the state it leaves, with its Compression."""
        result = strategy.compress(current)
        if not result.changed:
            detail = f"{result.strategy}: nothing it may cut"
            return WindowState(result.strategy, current, tokens, detail)
        after = self._count_result(current, tokens, result.messages)
        compression = Compression(
            step,
            result.strategy,
            len(current),
            len(result.messages),
            tokens,
            after,
            tuple(result.affected_indexes),
            tuple(result.model_calls),
        )
        detail = (
            f"{result.strategy}: {tokens:,} -> {after:,} tokens, "
            f"{len(current)} -> {len(result.messages)} messages"
        )
        before = {id(message) for message in current}
        written.update(
            (id(m), result.strategy) for m in result.messages if id(m) not in before
        )
        return WindowState(result.strategy, result.messages, after, detail, compression)

    def _count_result(self, before: List[Mapping], tokens: int, after) -> int:
        """Tokens of a strategy's result, given the `tokens` of the list it was given.

        A strategy never changes a message in place (it writes a new one), so where the
        counter is a sum over messages and the result is as long as its input (aging),
        only the messages it replaced are counted: aging rewrites a few messages of a
        long window, and counting all of it again each time dominated long replays."""
        per_message = known_per_message(self.count_tokens)
        if per_message is None or type(after) is not list or len(after) != len(before):
            return self.count_tokens(after)
        pairs = enumerate(zip(before, after))
        replaced = [index for index, (old, new) in pairs if old is not new]
        removed = sum(per_message(before[i]) for i in replaced)
        return tokens - removed + sum(per_message(after[i]) for i in replaced)

    def _overflow(self, current, tokens, written) -> WindowState:
        """The hard-failure state: its error names the largest message left."""
        sizes = [self.count_tokens([message]) for message in current]
        largest = max(range(len(current)), key=sizes.__getitem__)
        error = ContextOverflowError(
            tokens,
            self.threshold,
            current,
            largest,
            sizes[largest],
            written.get(id(current[largest])),
        )
        return WindowState("overflow", current, tokens, str(error), error=error)

    def _measure(self, messages: Sequence[Mapping], tokens: int) -> WindowState:
        return WindowState(
            "measure",
            messages,
            tokens,
            f"{tokens:,} tokens, threshold {self.threshold:,}",
        )

    def before_model_call(
        self,
        messages: List[Mapping],
        tracer=None,
        step: int = 0,
        *,
        counted: Optional[int] = None,
    ) -> List[Compression]:
        """Govern `messages` in place before a model call; trace what changed.

        On success the list holds the compressed window; on ContextOverflowError it is
        left exactly as it was. `counted` is passed to `walk`.
        """
        states = self.walk(messages, step, counted=counted)
        final = states[-1]
        if final.state == "overflow":
            if tracer is not None:
                tracer.event(
                    "context_overflow",
                    {"step": step, "tokens": final.tokens, "threshold": self.threshold},
                )
            raise final.error
        compressions = []
        for state in states:
            if state.compression is None:
                continue
            compressions.append(state.compression)
            if tracer is not None:
                for call in state.compression.model_calls:
                    tracer.model_call(step, call["purpose"], call["input"], call["reply"])
                tracer.event("context_compression", state.compression.payload())
        messages[:] = final.messages
        self.tokens_sent = final.tokens
        return compressions


@dataclass(frozen=True)
class Settings:
    """The knobs of the article's pipeline, at the article's values: the one place they
    are set."""

    threshold: int = 1200
    head_chars: int = 160
    tail_chars: int = 120
    min_chars: int = 240
    protect_tail: int = 4
    # beyond the article: let the summary fold later user turns (logs with several),
    # and the system messages a harness writes between them
    fold_user_turns: bool = False

    def __post_init__(self):
        check_int("threshold", self.threshold, minimum=1)
        for name in ("head_chars", "tail_chars", "min_chars", "protect_tail"):
            check_int(name, getattr(self, name))
        if not isinstance(self.fold_user_turns, bool):
            raise ValueError(
                f"fold_user_turns must be True or False, got {self.fold_user_turns!r}"
            )


def article_window(
    summarize: Summarizer,
    settings: Settings = Settings(),
    count_tokens: TokenCounter = estimate_tokens,
    **changes,
) -> ContextWindow:
    """The article's pipeline: aging first, then the rolling summary.

    `changes` override single settings: `article_window(summarize, threshold=800)`.
    """
    if not isinstance(settings, Settings):
        raise TypeError(
            f"settings must be a minilib Settings, got {type(settings).__name__}"
        )
    settings = replace(settings, **changes)
    return ContextWindow(
        settings.threshold,
        [
            ToolResultAging(
                settings.head_chars, settings.tail_chars, settings.min_chars, count_tokens
            ),
            RollingSummary(
                summarize, settings.protect_tail, count_tokens, settings.fold_user_turns
            ),
        ],
        count_tokens,
    )
