"""FastWindow: the window's answer for a round that only appended messages.

Between two model calls an agent loop only appends: the assistant reply and the tool
results that answer it. The plain `ContextWindow` still walks the whole list every
round (it validates every message and re-counts every message), so at a 200k-token
threshold a round costs O(window) even when nothing is compressed.
`FastWindow` keeps what the last governed round established: the list it left (the
same message objects), a `ConversationChecker` holding the pairing state after that
list, and its token total. When the new list is that list plus new messages (checked
with one list comparison, which compares identities first and so costs a few
nanoseconds a message), only the new messages are validated, on a copy of the
checker (a failed check leaves the state as it was, and raises the same error, with
the same index, as the full check would), and only they are counted and added to the
total; when the total fits, the round returns `[]` at once, as the walk would (no
strategy runs, nothing is traced). In every other case (the prefix changed, the
total is over the threshold, the list is not a list, or the counter is not known to
be additive) it calls the plain window's `before_model_call`, so compression,
tracing and ContextOverflowError are exactly the plain window's, and then re-seeds
its state from the governed result. Adding per-message counts is only right for a
counter that is a sum over messages: the article's `estimate_tokens` is (4 tokens a
message plus its text and calls, counted alone); any other counter gets the full
walk every round unless a `per_message` function is given, and that claim is checked
against the window's counter on every full walk (a mismatch turns the fast path off
for good, `fast_path_off` says why). One caveat: messages are values; a message dict
changed in place is not seen, so replace it instead (the prefix comparison then sends
the round through the full walk).
"""

from typing import Callable, List, Mapping, Optional, Sequence

from ..messages import ConversationChecker, InvalidMessagesError, check_int
from ..tokens import ADDITIVE_COUNTERS
from ..window import Compression, ContextWindow

MessageCounter = Callable[[Mapping], int]


class FastWindow:
    """`before_model_call` with the plain window's results, in O(new messages) when a
    round only appended and still fits."""

    def __init__(
        self, window: ContextWindow, per_message: Optional[MessageCounter] = None
    ):
        if not isinstance(window, ContextWindow):
            raise TypeError(
                f"window must be a ContextWindow, got {type(window).__name__}"
            )
        self.window = window
        # A caller's per_message is a claim: until a full walk has checked it, every
        # round takes the full walk.
        self._unchecked = per_message is not None
        self.per_message = per_message or ADDITIVE_COUNTERS.get(window.count_tokens)
        self.fast_path_off: Optional[str] = None
        if self.per_message is None:
            self.fast_path_off = (
                f"count_tokens {getattr(window.count_tokens, '__name__', '?')} is not "
                "known to be a sum over messages; pass per_message to use the fast path"
            )
        self.tokens_sent: Optional[int] = None  # what the last governed window counted
        self.fast_rounds = 0  # rounds answered from the cached state
        self.full_rounds = 0  # rounds sent through the plain window
        self._forget()

    # The window's own attributes, so a FastWindow can stand where a window stands.
    @property
    def threshold(self) -> int:
        return self.window.threshold

    @property
    def strategies(self) -> Sequence:
        return self.window.strategies

    @property
    def count_tokens(self):
        return self.window.count_tokens

    def walk(
        self, messages: Sequence[Mapping], step: int = 0, *, counted: Optional[int] = None
    ):
        return self.window.walk(messages, step, counted=counted)

    def before_model_call(
        self, messages: List[Mapping], tracer=None, step: int = 0
    ) -> List[Compression]:
        """Govern `messages` in place before a model call, as `ContextWindow` does."""
        if self.per_message is None or self._unchecked or type(messages) is not list:
            return self._full(messages, tracer, step)
        last = self._messages
        known = len(last)
        # List equality tries identity before ==, so the same objects compare at C
        # speed; an equal copy also passes, and is as good (same checks, same counts).
        if len(messages) < known or messages[:known] != last:
            return self._full(messages, tracer, step)
        new = messages[known:]
        checker = self._checker.copy()
        for index, message in enumerate(new, known):
            checker.add(message, index)  # raises what validate_messages would raise
        check_int("step", step)  # the walk checks the step after the messages
        tokens = self._tokens + sum(map(self.per_message, new))
        if tokens > self.window.threshold:
            # Checked and counted already: the walk need not do either again.
            return self._full(messages, tracer, step, counted=tokens, checker=checker)
        last.extend(new)
        self._checker, self._tokens = checker, tokens
        self.tokens_sent = tokens
        self.fast_rounds += 1
        return []

    def _full(
        self,
        messages,
        tracer,
        step: int,
        counted: Optional[int] = None,
        checker: Optional[ConversationChecker] = None,
    ) -> List[Compression]:
        """The plain window's round; `checker` holds the pairing state after `messages`
        as they come in (checked and counted: `counted` tokens), if known."""
        self.full_rounds += 1
        given = list(messages) if checker is not None else None
        # On an error the list is unchanged and the state still describes a prefix of
        # it, so it stays; on success the state is rebuilt from the governed window.
        compressions = self.window.before_model_call(
            messages, tracer, step, counted=counted
        )
        self.tokens_sent = self.window.tokens_sent
        if given is not None and not _same_pairing(given, messages):
            checker = None
        self._seed(messages, checker)
        return compressions

    def _seed(self, messages, checker: Optional[ConversationChecker] = None) -> None:
        """Take `messages` as the last governed list; `checker`, if given, already holds
        the pairing state after it."""
        self._forget()
        if self.per_message is None or type(messages) is not list:
            return
        if checker is None:
            checker = ConversationChecker()
            try:
                for index, message in enumerate(messages):
                    checker.add(message, index)
            except InvalidMessagesError:
                return  # a strategy wrote an invalid list: the next walk reports it
        additive = self.per_message is ADDITIVE_COUNTERS.get(self.window.count_tokens)
        if additive and self.tokens_sent is not None:
            tokens = self.tokens_sent  # the walk just counted this very list
        else:
            tokens = sum(map(self.per_message, messages))
        if not additive:
            counted = self.window.count_tokens(messages)
            if tokens != counted:
                self.per_message = None
                self.fast_path_off = (
                    f"per_message counts {tokens:,} tokens where the window's counter "
                    f"counts {counted:,}: not a sum over messages"
                )
                return
            self._unchecked = False
        self._messages, self._checker, self._tokens = list(messages), checker, tokens

    def _forget(self) -> None:
        """The state of an empty list: the first round is validated and counted whole."""
        self._messages: List[Mapping] = []
        self._checker = ConversationChecker()
        self._tokens = 0


def _same_pairing(before: List[Mapping], after: List[Mapping]) -> bool:
    """Whether `after` passes the conversation check exactly where `before` did, and
    leaves the same pairing state: as long, and every message it replaced (aging
    rewrites a few contents of a long window) replaced by a dict of the same role, the
    same calls and call id, and content of the same kind. Then the checked state of
    `before` is that of `after`, and a long window is not checked whole again."""
    if len(before) != len(after):
        return False
    for old, new in zip(before, after):
        if old is new:
            continue
        if not (
            type(new) is dict
            and new.get("role") == old.get("role")
            and new.get("tool_call_id") == old.get("tool_call_id")
            and new.get("tool_calls") == old.get("tool_calls")
            and type(new.get("content")) is type(old.get("content"))
        ):
            return False
    return True
