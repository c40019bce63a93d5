"""The chat-completions message shape, and the checks every public entry point runs on it.

An assistant message may carry ``tool_calls: [{"id", "type": "function",
"function": {"name", "arguments"}}]``; each call is answered by a ``tool`` message
with the same ``tool_call_id``; a tool message may carry ``"error": {"code",
"message"}``. A harness that compresses history must keep those pairs intact, so
the checks here name the message index and field of anything that breaks them.

Example: a tool result whose call was never made is named by its place.

    >>> validate_messages([
    ...     {"role": "user", "content": "go"},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ... ])
    Traceback (most recent call last):
    ...
    minilib.messages.InvalidMessagesError: messages[1].tool_call_id 'c1' answers no tool
    call: no assistant message comes before it
    >>> protected_head_length([
    ...     {"role": "system", "content": "you are an agent"},
    ...     {"role": "user", "content": "fix the build"},
    ...     {"role": "assistant", "content": "reading the log"},
    ... ])  # system + the first task message
    2
"""

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Sequence

ROLES = ("system", "user", "assistant", "tool")


class InvalidMessagesError(ValueError):
    """A message list that is not a valid conversation; the text names index and field."""


def call_ids(message: Mapping) -> List[str]:
    """Ids of the tool calls an assistant message makes (empty for any other message)."""
    return [call.get("id") for call in message.get("tool_calls") or ()]


def is_observation(message: Mapping) -> bool:
    """Environment output an agent recorded as a user message (SWE-agent, mini-swe-agent).

    Log readers mark such messages with ``"observation": True``; to compression they
    are tool output, not a person's turn.
    """
    return message.get("role") == "user" and bool(message.get("observation"))


def output_id(message: Mapping) -> str:
    """The id the trace keeps an output under: a tool result's `tool_call_id`, or the
    `output_id` a log replay gives environment output (it has no call to answer)."""
    return message.get("tool_call_id") or message.get("output_id") or ""


def protected_head_length(messages: Sequence[Mapping]) -> int:
    """Leading system messages plus the first user message: never compressed.

    They define who the agent is and what it was asked to do.
    """
    index = 0
    while index < len(messages) and messages[index].get("role") == "system":
        index += 1
    if index < len(messages) and messages[index].get("role") == "user":
        index += 1
    return index


def check_int(name: str, value, *, minimum: int = 0) -> int:
    """`value` as an int parameter, or a ValueError that names the parameter."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


class ConversationChecker:
    """Checks a conversation one message at a time, so a window can check only what is
    new.

    Pairing is positional, as the chat-completions API has it: a tool message answers
    an open call of the most recent assistant message, and every call of that message
    is answered before any other message comes. An id must be unique within one
    assistant message; a later turn may use it again. Calls still open at the end are
    allowed: the model may just have made them. With `expect_tool_results=False` (a
    script of assistant replies whose tools run at replay) calls open nothing.
    """

    def __init__(self, where: str = "messages", *, expect_tool_results: bool = True):
        self.where = where
        self.expect_tool_results = expect_tool_results
        self.open_calls: Dict[
            str, None
        ] = {}  # ids of the latest assistant message still unanswered
        self.caller = -1  # index of the latest assistant message
        self.answered: set = set()  # its calls answered so far

    def copy(self) -> "ConversationChecker":
        twin = ConversationChecker(
            self.where, expect_tool_results=self.expect_tool_results
        )
        twin.open_calls, twin.caller, twin.answered = (
            dict(self.open_calls),
            self.caller,
            set(self.answered),
        )
        return twin

    def add(self, message, index: int) -> None:
        """Check the message at `index`, given every message before
        it; raise InvalidMessagesError."""
        # Where it is ("messages[12]") is written only into an error: a long replay
        # checks millions of messages, nearly all of them valid.
        # dict first: an isinstance check against typing's Mapping costs a
        # microsecond.
        if not isinstance(message, dict) and not isinstance(message, Mapping):
            raise InvalidMessagesError(
                f"{self._at(index)} must be a dict, got {type(message).__name__}"
            )
        role = message.get("role")
        if role not in ROLES:
            raise InvalidMessagesError(
                f"{self._at(index)}.role is {role!r}; expected one of {', '.join(ROLES)}"
            )
        if role != "tool" and self.open_calls:
            unanswered = next(iter(self.open_calls))
            raise InvalidMessagesError(
                f"tool call {unanswered!r} of {self.where}[{self.caller}] "
                f"is never answered: {self._at(index)} ({role}) comes where its tool "
                "result should be; tool results must directly follow the assistant "
                "message that made the calls"
            )
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise InvalidMessagesError(
                f"{self._at(index)}.content must be a string, got "
                f"{type(content).__name__}"
            )
        tool_calls = message.get("tool_calls")
        if content is None and not (role == "assistant" and tool_calls):
            raise InvalidMessagesError(f"{self._at(index)}.content is missing")
        if role == "assistant":
            self.caller, self.answered = index, set()
        if tool_calls is not None:
            self._check_calls(tool_calls, role, index)
        if role == "tool":
            self._check_answer(message, index)

    def _at(self, index: int) -> str:
        return f"{self.where}[{index}]"

    def _check_calls(self, tool_calls, role: str, index: int) -> None:
        if role != "assistant":
            raise InvalidMessagesError(
                f"{self._at(index)}.tool_calls is only allowed on assistant messages, "
                f"not {role}"
            )
        if not isinstance(tool_calls, (list, tuple)):
            raise InvalidMessagesError(f"{self._at(index)}.tool_calls must be a list")
        ids = set()
        for number, call in enumerate(tool_calls):
            if not isinstance(call, dict) and not isinstance(call, Mapping):
                raise InvalidMessagesError(
                    f"{self._call_at(index, number)} must be a dict"
                )
            call_id = call.get("id")
            if not isinstance(call_id, str) or not call_id:
                raise InvalidMessagesError(
                    f"{self._call_at(index, number)}.id is missing"
                )
            function = call.get("function")
            is_mapping = isinstance(function, dict) or isinstance(function, Mapping)
            name = function.get("name") if is_mapping else None
            if not isinstance(name, str) or not name:
                raise InvalidMessagesError(
                    f"{self._call_at(index, number)}.function.name is missing"
                )
            arguments = function.get("arguments")
            if arguments is not None and not isinstance(arguments, str):
                raise InvalidMessagesError(
                    f"{self._call_at(index, number)}.function.arguments must be a "
                    f"JSON string, got {type(arguments).__name__}"
                )
            if call_id in ids:
                raise InvalidMessagesError(
                    f"{self._call_at(index, number)}.id {call_id!r} is used twice in "
                    "this message"
                )
            ids.add(call_id)
            if self.expect_tool_results:
                self.open_calls[call_id] = None

    def _call_at(self, index: int, number: int) -> str:
        return f"{self._at(index)}.tool_calls[{number}]"

    def _check_answer(self, message: Mapping, index: int) -> None:
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise InvalidMessagesError(f"{self._at(index)}.tool_call_id is missing")
        if call_id not in self.open_calls:
            at = self._at(index)
            if call_id in self.answered:
                raise InvalidMessagesError(
                    f"{at}.tool_call_id {call_id!r} was already answered"
                )
            if self.caller < 0:
                raise InvalidMessagesError(
                    f"{at}.tool_call_id {call_id!r} answers no tool call: "
                    "no assistant message comes before it"
                )
            raise InvalidMessagesError(
                f"{at}.tool_call_id {call_id!r} answers no open tool call of "
                f"the most recent assistant message ({self.where}[{self.caller}])"
            )
        del self.open_calls[call_id]
        self.answered.add(call_id)
        error = message.get("error")
        if error is not None and not (isinstance(error, Mapping) and "code" in error):
            raise InvalidMessagesError(
                f"{self._at(index)}.error must be a dict with a 'code'"
            )


@contextmanager
def named_if_malformed(messages: Sequence[Mapping], where: str = "messages"):
    """Trust `messages`, but name the bad message if working on them fails.

    The window checks every list on entry, so a strategy need not check it again each
    round. A strategy called directly on a hand-made list still gets a clear error:
    when a wrong type breaks it, the full check runs and names the message and field.
    """
    try:
        yield
    except (AttributeError, TypeError, KeyError, IndexError):
        validate_messages(messages, where)
        raise


def validate_messages(
    messages: Iterable[Mapping],
    where: str = "messages",
    *,
    expect_tool_results: bool = True,
) -> None:
    """Raise InvalidMessagesError unless `messages` is a well-formed conversation.

    Checked: each item is a dict with a known role and string (or, for an assistant
    with tool calls, null) content; tool calls have an id (unique in their message), a
    name and string arguments; tool results pair by position (see ConversationChecker);
    an error is {"code", "message"}.
    """
    if not isinstance(messages, (list, tuple)):
        raise InvalidMessagesError(
            f"{where} must be a list of messages, got {type(messages).__name__}"
        )
    checker = ConversationChecker(where, expect_tool_results=expect_tool_results)
    for index, message in enumerate(messages):
        checker.add(message, index)


def read_json_file(path, kind: str, error: type):
    """The parsed JSON of a data file, or `error` naming the file: missing, or where the
    JSON breaks."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: no such {kind} file") from None
    except json.JSONDecodeError as problem:
        raise error(
            f"{path}: not valid JSON ({problem.msg}, line {problem.lineno} column "
            f"{problem.colno})"
        ) from None
