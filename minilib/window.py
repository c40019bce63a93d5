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
"""

from dataclasses import dataclass, field
from typing import List, Mapping, NamedTuple, Optional, Sequence

from .aging import ToolResultAging
from .messages import check_int, validate_messages
from .strategy import CompressionResult
from .summary import RollingSummary, Summarizer
from .tokens import TokenCounter, estimate_tokens


class ContextOverflowError(RuntimeError):
    """The window is over its threshold and no strategy may cut anything more.

    `largest_index` is the index in the caller's list of the largest message left;
    when that message was written by a strategy (a summary), `written_by` names the
    strategy and `largest_index` is the first of the caller's messages it replaced.
    """

    def __init__(self, tokens: int, threshold: int, largest_index: int, largest_role: str, largest_tokens: int,
                 written_by: Optional[str] = None, replaced: Sequence[int] = ()):
        self.tokens = tokens
        self.threshold = threshold
        self.largest_index = largest_index
        self.largest_role = largest_role
        self.largest_tokens = largest_tokens
        self.written_by = written_by
        self.replaced = tuple(replaced)
        if written_by is None:
            largest = f"#{largest_index} ({largest_role}, {largest_tokens:,} tokens), which no strategy may cut further."
        else:
            largest = (f"the {largest_role} message {written_by} wrote ({largest_tokens:,} tokens) in place of "
                       f"#{min(self.replaced)}-#{max(self.replaced)}.")
        super().__init__(
            f"context window needs {tokens:,} tokens after compression, over the threshold of {threshold:,}; "
            f"nothing more may be cut. Largest message left: {largest}"
        )


class WrittenBy(NamedTuple):
    """Where a window message came from when a strategy wrote it: the strategy and the caller's indexes it replaced."""

    strategy: str
    replaced: tuple


def follow_origins(before: Sequence[Mapping], result: CompressionResult, origins: Sequence) -> list:
    """Where each message of `result.messages` came from in the caller's list (an index, or WrittenBy).

    An unchanged message is the same object; a message rewritten in place (aging) keeps
    its position and its origin; anything else was written by the strategy from the
    messages it affected.
    """
    place = {id(message): index for index, message in enumerate(before)}
    in_place = len(result.messages) == len(before)
    replaced = []
    for index in result.affected_indexes:
        origin = origins[index]
        replaced.extend(origin.replaced if isinstance(origin, WrittenBy) else [origin])
    followed = []
    for position, message in enumerate(result.messages):
        if id(message) in place:
            followed.append(origins[place[id(message)]])
        elif in_place:
            followed.append(origins[position])
        else:
            followed.append(WrittenBy(result.strategy, tuple(sorted(replaced))))
    return followed


@dataclass(frozen=True)
class Compression:
    """One compression that changed the window: the trace's context_compression payload."""

    step: int
    strategy: str
    before_messages: int
    after_messages: int
    before_tokens: int
    after_tokens: int
    affected_indexes: tuple

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
    result: Optional[CompressionResult] = None
    error: Optional[ContextOverflowError] = None  # set on the "overflow" state


@dataclass
class ContextWindow:
    """Keep the window within `threshold` tokens by running `strategies` in order."""

    threshold: int = 1200
    strategies: Sequence = field(default_factory=list)
    count_tokens: TokenCounter = estimate_tokens

    def __post_init__(self):
        check_int("threshold", self.threshold, minimum=1)
        for number, strategy in enumerate(self.strategies):
            if not callable(getattr(strategy, "compress", None)):
                raise TypeError(f"strategies[{number}] ({type(strategy).__name__}) has no compress(messages) method")

    def walk(self, messages: Sequence[Mapping], step: int = 0) -> List[WindowState]:
        """Every state the state machine passes through for this window; changes nothing."""
        validate_messages(messages)
        check_int("step", step)
        current = list(messages)
        origins = list(range(len(current)))  # so an overflow can name the caller's message, not a window index
        tokens = self.count_tokens(current)
        states = [WindowState("measure", current, tokens, f"{tokens:,} tokens, threshold {self.threshold:,}")]
        for strategy in self.strategies:
            if tokens <= self.threshold:
                break
            result = strategy.compress(current)
            compression = None
            if result.changed:
                after = self.count_tokens(result.messages)
                compression = Compression(step, result.strategy, len(current), len(result.messages),
                                          tokens, after, tuple(result.affected_indexes))
                detail = f"{result.strategy}: {tokens:,} -> {after:,} tokens, {len(current)} -> {len(result.messages)} messages"
                origins = follow_origins(current, result, origins)
                current, tokens = result.messages, after
            else:
                detail = f"{result.strategy}: nothing it may cut"
            states.append(WindowState(result.strategy, current, tokens, detail, compression, result))
            states.append(WindowState("measure", current, tokens, f"{tokens:,} tokens, threshold {self.threshold:,}"))
        if tokens <= self.threshold:
            states.append(WindowState("send", current, tokens, f"send {len(current)} messages, {tokens:,} tokens"))
        else:
            error = self._overflow(current, tokens, origins)
            states.append(WindowState("overflow", current, tokens, str(error), error=error))
        return states

    def _overflow(self, current: Sequence[Mapping], tokens: int, origins: Sequence) -> ContextOverflowError:
        # Over a positive threshold, so the window holds at least one message.
        sizes = [self.count_tokens([message]) for message in current]
        largest = max(range(len(current)), key=sizes.__getitem__)
        role, origin = current[largest].get("role"), origins[largest]
        # Name the message by its index in the caller's list: on overflow that list is left as it was.
        if isinstance(origin, WrittenBy):
            return ContextOverflowError(tokens, self.threshold, origin.replaced[0], role, sizes[largest],
                                        origin.strategy, origin.replaced)
        return ContextOverflowError(tokens, self.threshold, origin, role, sizes[largest])

    def before_model_call(self, messages: List[Mapping], tracer=None, step: int = 0) -> List[Compression]:
        """Govern `messages` in place before a model call; trace what changed.

        On success the list holds the compressed window; on ContextOverflowError it is
        left exactly as it was.
        """
        states = self.walk(messages, step)
        final = states[-1]
        if final.state == "overflow":
            if tracer is not None:
                tracer.event("context_overflow", {"step": step, "tokens": final.tokens, "threshold": self.threshold})
            raise final.error
        compressions = []
        for state in states:
            if state.compression is None:
                continue
            compressions.append(state.compression)
            if tracer is not None:
                for call in state.result.model_calls:
                    tracer.model_call(step, call["purpose"], call["input"], call["reply"])
                tracer.event("context_compression", state.compression.payload())
        messages[:] = final.messages
        return compressions


def article_window(summarize: Summarizer, *, threshold: int = 1200, head_chars: int = 160, tail_chars: int = 120,
                   min_chars: int = 240, protect_tail: int = 4, count_tokens: TokenCounter = estimate_tokens) -> ContextWindow:
    """The article's pipeline: aging first, then the rolling summary, at its default parameters."""
    return ContextWindow(threshold, [
        ToolResultAging(head_chars, tail_chars, min_chars, count_tokens),
        RollingSummary(summarize, protect_tail, count_tokens),
    ], count_tokens)

