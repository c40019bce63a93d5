"""Replay a log under a production policy: one window a round, as the policy sends it.

A round is one assistant message of the log. Before it, the policy is given the log's
history so far (uncompressed, the same list growing) and sends a window
(`Policy.send`). The runner counts each window, ends the replay at the first window
over the model's context window (or the policy's own overflow), and counts the windows
that break pairing (a tool result whose call is not right before it): a policy that
breaks pairing is run as written, and its broken windows are counted, not hidden.
`on_window(step, messages)` sees each window sent, for the measurements
(`minilib.measure`) that read a run round by round.
"""

from dataclasses import dataclass, field
from typing import Callable, List, Mapping, Optional, Sequence

from ...logs.replay import with_output_ids
from ...messages import InvalidMessagesError, validate_messages
from ...window import ContextOverflowError
from .base import Policy

WindowObserver = Callable[[int, List[Mapping]], None]


@dataclass
class PolicyRun:
    """What one policy sent on one log."""

    policy: str
    rounds_total: int  # the log's rounds (assistant messages)
    tokens: List[int] = field(default_factory=list)  # the window sent, each round
    invalid_rounds: List[int] = field(default_factory=list)  # windows breaking pairing
    summary_calls: int = 0
    overflow_round: Optional[int] = None
    overflow: Optional[str] = None  # what stopped it, in words

    @property
    def rounds(self) -> int:
        """Rounds sent (a round that overflowed was not sent)."""
        return len(self.tokens)

    @property
    def tokens_sent(self) -> int:
        return sum(self.tokens)

    @property
    def peak_tokens(self) -> int:
        return max(self.tokens, default=0)


def replay_policy(
    messages: Sequence[Mapping],
    policy: Policy,
    on_window: Optional[WindowObserver] = None,
) -> PolicyRun:
    """Send every round of `messages` (a log's, chat-completions shape) through
    `policy`; stop at the first window that does not fit its context window."""
    prepared = with_output_ids(messages)
    replies = [i for i, message in enumerate(prepared) if message["role"] == "assistant"]
    run = PolicyRun(policy.key, len(replies))
    history: List[Mapping] = []
    for step, index in enumerate(replies):
        history.extend(prepared[len(history) : index])
        try:
            sent = policy.send(history, step)
        except ContextOverflowError as error:
            run.overflow_round, run.overflow = step, str(error)
            break
        run.summary_calls += sent.summary_calls
        tokens = policy.count_tokens(sent.messages)
        if tokens > policy.window_tokens:
            run.overflow_round = step
            run.overflow = (
                f"the window needs {tokens:,} tokens, over the model's "
                f"{policy.window_tokens:,}"
            )
            break
        try:
            validate_messages(sent.messages)
        except InvalidMessagesError:
            run.invalid_rounds.append(step)
        run.tokens.append(tokens)
        if on_window is not None:
            on_window(step, sent.messages)
    return run
