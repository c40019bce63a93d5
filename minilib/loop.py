"""The agent loop: govern the window, ask the model, add what comes back, repeat.

`replay` is the one loop every runner uses: the bundled session with and without
compression, the six paths, recorded logs, and the stepper's "window before round
N". What differs between them is only where replies and tool results come from, a
`Conversation`: `LiveConversation` asks a model and runs the tools it calls; a
recorded log plays back what it holds (`minilib.logs.replay`). Compression is one
optional argument: with `window=None` the list simply grows (the M1/M2 loop).

Example: a model that answers at once ends the loop after one round.

    >>> from minilib.model import ScriptedModel
    >>> model = ScriptedModel([{"role": "assistant", "content": "done"}])
    >>> messages = run_loop(model, [{"role": "user", "content": "hi"}], tools=None)
    >>> [(message["role"], message["content"]) for message in messages]
    [('user', 'hi'), ('assistant', 'done')]
"""

from dataclasses import dataclass, field
from typing import Callable, List, Mapping, Optional, Protocol, Tuple

from .messages import InvalidMessagesError, check_int, validate_messages
from .tokens import TokenCounter, estimate_tokens, tool_call_name
from .window import Compression, ContextOverflowError

RoundObserver = Callable[[int, List[Mapping], List[Compression]], None]


class MaxStepsExceeded(RuntimeError):
    """The model kept calling tools for more than `max_steps` rounds."""


class Conversation(Protocol):
    """Where a replay's messages come from."""

    def opening(self) -> List[dict]:
        """The messages before the first model call (system prompt, task)."""

    def reply(self, window: List[Mapping], step: int) -> Mapping:
        """The assistant message answering `window`."""

    def arrivals(self, reply: Mapping, step: int, tracer) -> Tuple[List[dict], bool]:
        """What arrives after `reply` (tool results, a user turn), and whether
        more rounds follow."""


@dataclass(frozen=True)
class GovernedRound:
    """One model call: the window before and after it was governed, and the strategies
    that changed it."""

    round: int
    tokens_before: int
    messages_before: int
    tokens_after: int
    messages_after: int
    strategies: Tuple[str, ...]


@dataclass
class Replay:
    """What one replay produced; `messages` is the final list (or the list
    when it stopped)."""

    rounds: List[GovernedRound]
    compressions: List[Compression]
    messages: List[Mapping]
    tracer: object = None
    overflow: Optional[ContextOverflowError] = None
    decisions: List[Mapping] = field(default_factory=list)  # the replies, in order


def replay(
    conversation: Conversation,
    window=None,
    *,
    tracer=None,
    count_tokens: TokenCounter = estimate_tokens,
    max_steps: Optional[int] = 50,
    until_round: Optional[int] = None,
    on_round: Optional[RoundObserver] = None,
) -> Replay:
    """Run rounds until the conversation ends; a ContextOverflowError ends it too, kept in
    `overflow`.

    Each round: govern the window (if any), call the model, append its reply and what
    arrives after it. `on_round(step, window, compressions)` sees the exact window sent
    in each round. With `until_round=N` the replay stops just before round N is governed.
    """
    if max_steps is not None:
        check_int("max_steps", max_steps, minimum=1)
    messages = conversation.opening()
    validate_messages(messages)  # where a conversation enters; later rounds only append
    run = Replay([], [], messages, tracer)
    step = 0
    while max_steps is None or step < max_steps:
        if step == until_round:
            return run
        # 1. Govern the window before the model sees it (the article's M3); an
        #    overflow ends the replay and is kept, not raised.
        compressions: List[Compression] = []
        if window is not None:
            try:
                compressions = window.before_model_call(messages, tracer, step)
            except ContextOverflowError as error:
                run.overflow = error
                return run
        run.compressions.extend(compressions)
        # 2. Record the round. Counted once (this runs on every slider step): what the
        #    window measured before compressing is in the first compression's record,
        #    and what it sent in its `tokens_sent` (when it counts as this loop does).
        tokens = _tokens_sent(window, count_tokens)
        if tokens is None:
            tokens = count_tokens(messages)
        first = compressions[0] if compressions else None
        run.rounds.append(
            GovernedRound(
                step,
                first.before_tokens if first else tokens,
                first.before_messages if first else len(messages),
                tokens,
                len(messages),
                tuple(c.strategy for c in compressions),
            )
        )
        if on_round is not None:
            on_round(step, messages, compressions)
        # 3. Ask the model; its reply joins the history.
        reply = conversation.reply(messages, step)
        if not isinstance(reply, Mapping) or reply.get("role") != "assistant":
            raise InvalidMessagesError(
                f"model reply at step {step} must be an assistant message"
            )
        if tracer is not None:
            tracer.model_call(step, "decision", messages, reply)
        messages.append(reply)
        run.decisions.append(reply)
        # 4. What answers it arrives (tool results, a user turn); none ends the run.
        arrived, more = conversation.arrivals(reply, step, tracer)
        messages.extend(arrived)
        if not more:
            if until_round is not None:  # the session ended before that round
                raise ValueError(
                    f"until_round {until_round} is past the end of the session "
                    f"(rounds 0-{step})"
                )
            return run
        step += 1
    if until_round is not None:
        raise ValueError(
            f"until_round {until_round} is past the end of the session ({step} rounds)"
        )
    raise MaxStepsExceeded(f"no final answer after {max_steps} rounds")


def _tokens_sent(window, count_tokens: TokenCounter) -> Optional[int]:
    """The count the window just governed to, if it counts with the loop's counter."""
    if window is None or getattr(window, "count_tokens", None) is not count_tokens:
        return None
    return getattr(window, "tokens_sent", None)


class LiveConversation:
    """A model and the tools it may call: the agent loop of the article."""

    def __init__(self, model, tools, opening: List[Mapping]):
        self.model, self.tools, self._opening = model, tools, opening

    def opening(self) -> List[dict]:
        return self._opening

    def reply(self, window: List[Mapping], step: int) -> Mapping:
        return self.model.complete(window)

    def arrivals(self, reply: Mapping, step: int, tracer) -> Tuple[List[dict], bool]:
        calls = reply.get("tool_calls") or []
        results = []
        for call in calls:
            result = answer_tool_call(call, self.tools)
            if tracer is not None:
                arguments = call["function"].get("arguments") or "{}"
                tracer.tool_call(
                    step,
                    call["id"],
                    tool_call_name(call),
                    arguments,
                    result["content"],
                    result.get("error"),
                )
            results.append(result)
        return results, bool(calls)


def run_loop(
    model,
    messages: List[Mapping],
    tools,
    *,
    context_window=None,
    tracer=None,
    max_steps: int = 50,
    on_round: Optional[RoundObserver] = None,
) -> List[Mapping]:
    """The article's loop: run rounds on `messages` (in place) until the model answers;
    return it."""
    run = replay(
        LiveConversation(model, tools, messages),
        context_window,
        tracer=tracer,
        max_steps=max_steps,
        on_round=on_round,
    )
    if run.overflow is not None:
        raise run.overflow
    return messages


def answer_tool_call(call: Mapping, tools) -> dict:
    """Run one tool call and return the tool message that answers it."""
    arguments = (call.get("function") or {}).get("arguments") or "{}"
    result = tools.call(tool_call_name(call), arguments)
    message = {"role": "tool", "tool_call_id": call["id"], "content": result.content}
    if result.error is not None:
        message["error"] = dict(result.error)
    return message
