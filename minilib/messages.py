"""The chat-completions message shape, and the checks every public entry point runs on it.

An assistant message may carry ``tool_calls: [{"id", "type": "function",
"function": {"name", "arguments"}}]``; each call is answered by a ``tool`` message
with the same ``tool_call_id``; a tool message may carry ``"error": {"code",
"message"}``. A harness that compresses history must keep those pairs intact, so
the checks here name the message index and field of anything that breaks them.
"""

import json
from pathlib import Path
from typing import Iterable, List, Mapping, Sequence

ROLES = ("system", "user", "assistant", "tool")


class InvalidMessagesError(ValueError):
    """A message list that is not a valid conversation; the text names index and field."""


def call_ids(message: Mapping) -> List[str]:
    """Ids of the tool calls an assistant message makes (empty for any other message)."""
    return [call.get("id") for call in message.get("tool_calls") or ()]


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


def validate_messages(messages: Iterable[Mapping], where: str = "messages", *, expect_tool_results: bool = True) -> None:
    """Raise InvalidMessagesError unless `messages` is a well-formed conversation.

    Checked: each item is a dict with a known role and string (or, for an assistant
    with tool calls, null) content; tool calls have a unique id, a name and string
    arguments; every tool message answers a not yet answered call of the assistant
    message before it, and those answers come right after it, before any other
    message (what the chat-completions API accepts); an error is {"code", "message"}.
    Calls still unanswered at the end are allowed: the model may just have made them.
    With `expect_tool_results=False` (a script of assistant replies whose tools are
    run at replay) calls need no answers in the list.
    """
    if not isinstance(messages, (list, tuple)):
        raise InvalidMessagesError(f"{where} must be a list of messages, got {type(messages).__name__}")
    seen_calls = set()
    answered = set()
    pending = {}  # call id -> index of the assistant message whose answers are still due
    for index, message in enumerate(messages):
        at = f"{where}[{index}]"
        if not isinstance(message, Mapping):
            raise InvalidMessagesError(f"{at} must be a dict, got {type(message).__name__}")
        role = message.get("role")
        if role not in ROLES:
            raise InvalidMessagesError(f"{at}.role is {role!r}; expected one of {', '.join(ROLES)}")
        if role != "tool" and pending:
            call_id, caller = next(iter(pending.items()))
            raise InvalidMessagesError(
                f"{at} ({role}) comes before tool call {call_id!r} of {where}[{caller}] is answered; "
                f"tool results must directly follow the assistant message that made the calls")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise InvalidMessagesError(f"{at}.content must be a string, got {type(content).__name__}")
        if content is None and not (role == "assistant" and message.get("tool_calls")):
            raise InvalidMessagesError(f"{at}.content is missing")
        tool_calls = message.get("tool_calls")
        if tool_calls is not None:
            if role != "assistant":
                raise InvalidMessagesError(f"{at}.tool_calls is only allowed on assistant messages, not {role}")
            if not isinstance(tool_calls, (list, tuple)):
                raise InvalidMessagesError(f"{at}.tool_calls must be a list")
            for number, call in enumerate(tool_calls):
                call_at = f"{at}.tool_calls[{number}]"
                if not isinstance(call, Mapping):
                    raise InvalidMessagesError(f"{call_at} must be a dict")
                call_id = call.get("id")
                if not isinstance(call_id, str) or not call_id:
                    raise InvalidMessagesError(f"{call_at}.id is missing")
                function = call.get("function")
                name = function.get("name") if isinstance(function, Mapping) else None
                if not isinstance(name, str) or not name:
                    raise InvalidMessagesError(f"{call_at}.function.name is missing")
                arguments = function.get("arguments")
                if arguments is not None and not isinstance(arguments, str):
                    raise InvalidMessagesError(
                        f"{call_at}.function.arguments must be a JSON string, got {type(arguments).__name__}")
                if call_id in seen_calls:
                    raise InvalidMessagesError(f"{call_at}.id {call_id!r} is used by an earlier tool call")
                seen_calls.add(call_id)
                if expect_tool_results:
                    pending[call_id] = index
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise InvalidMessagesError(f"{at}.tool_call_id is missing")
            if call_id not in seen_calls:
                raise InvalidMessagesError(f"{at}.tool_call_id {call_id!r} answers no earlier tool call")
            if call_id in answered:
                raise InvalidMessagesError(f"{at}.tool_call_id {call_id!r} was already answered")
            answered.add(call_id)
            pending.pop(call_id, None)
            error = message.get("error")
            if error is not None and not (isinstance(error, Mapping) and "code" in error):
                raise InvalidMessagesError(f"{at}.error must be a dict with a 'code'")


def read_json_file(path, kind: str, error: type):
    """The parsed JSON of a data file, or `error` naming the file: missing, or where the JSON breaks."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: no such {kind} file") from None
    except json.JSONDecodeError as problem:
        raise error(f"{path}: not valid JSON ({problem.msg}, line {problem.lineno} column {problem.colno})") from None
