"""OpenAI chat completions: a message list, a request body, or a response object.

- openai-chat: a JSON list of `{role, content, tool_calls?, tool_call_id?, name?}`,
  or JSON Lines with one such message a line.
- openai-request: `{messages, tools?, ...}`; `tools` declares the tool names, and a
  call of any other tool is an error.
- openai-response: `{choices: [{message}]}`: one assistant message, the reply. When
  the object also carries the request's `messages`, those come first, so the log
  is the request and its answer; other choices are alternatives and are skipped.

What datasets store as strings or in other spellings is undone: content given as a
list of parts is joined (text parts; image parts are skipped, they cannot be
measured as text), `tool_calls` given as a JSON string is parsed, a flat call
`{id, name, arguments}` is nested under `function`, object arguments are encoded,
every call gets `type: function`. Role `developer` is a system message.
`reasoning_content` is not sent back, so it is skipped. Keys other than role,
content, tool_calls, tool_call_id, name and error are dropped.

Scripts that convert a session to this shape often split one response's parallel
calls into consecutive assistant messages, the later ones without text. Where the
split is evident, openai-chat merges them back into one assistant message (the
first one's text, every call, then every result) and notes it: when the messages
follow each other with no result between (the API accepts no other reading), or
when each is followed only by its own results and they carry the same response id
(`id`, `response_id` or `message_id`). Without such an id the same pattern is also
how an agent makes one call a round, so it is kept as consecutive rounds, which pair.
"""

import json

from .base import Builder, make_call
from .detect import Doc, Shape

TEXT_PARTS = ("text", "input_text", "output_text")
IMAGE_PARTS = ("image_url", "input_image", "image")


def content_text(content, at: str, log: Builder):
    """A message's content as one string (None stays None); parts become text or skips."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise log.fail(
            f"{at}.content must be a string or a list of parts, "
            f"got {type(content).__name__}"
        )
    texts = []
    for number, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind in IMAGE_PARTS:
            log.skip(f"{at}.content[{number}]", "image part: cannot be measured as text")
        elif kind in ("thinking", "reasoning"):
            log.skip(f"{at}.content[{number}]", "reasoning part: not sent back")
        else:
            refusal = (
                "is not a text part; only text content can be measured and compressed"
            )
            texts.append(log.unread_part(f"{at}.content[{number}]", kind, refusal))
    return "\n".join(texts)


def read_calls(message: dict, at: str, log: Builder) -> list:
    """The tool calls of a message in the chat-completions shape (see the module text)."""
    calls = message.get("tool_calls")
    if isinstance(calls, str):
        try:
            calls = json.loads(calls) if calls.strip() else None
        except json.JSONDecodeError as error:
            raise log.fail(
                f"{at}.tool_calls is not valid JSON ({error.msg}, line "
                f"{error.lineno} column {error.colno})"
            ) from None
    if calls in (None, []):
        return []
    if message.get("role") != "assistant":
        raise log.fail(
            f"{at}.tool_calls is only allowed on assistant messages, "
            f"not {message.get('role')}"
        )
    if not isinstance(calls, list):
        raise log.fail(f"{at}.tool_calls must be a list, got {type(calls).__name__}")
    result = []
    for number, call in enumerate(calls):
        call_at = f"{at}.tool_calls[{number}]"
        if not isinstance(call, dict):
            raise log.fail(f"{call_at} must be a JSON object")
        function = call.get("function", call)  # the flat {"id", "name", "arguments"} too
        if not isinstance(function, dict):
            raise log.fail(f"{call_at}.function must be a JSON object")
        if not isinstance(call.get("id"), str) or not call["id"]:
            raise log.fail(f"{call_at}.id is missing")
        if not isinstance(function.get("name"), str) or not function["name"]:
            raise log.fail(f"{call_at}.function.name is missing")
        result.append(make_call(call["id"], function["name"], function.get("arguments")))
    return result


def read_message(message, at: str, log: Builder, observation: bool = False) -> None:
    """One chat-completions message, told to the builder."""
    if not isinstance(message, dict):
        raise log.fail(f"{at} must be a JSON object, got {type(message).__name__}")
    role = "system" if message.get("role") == "developer" else message.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        raise log.fail(
            f"{at}.role is {message.get('role')!r}; expected one of system, "
            "developer, user, assistant, tool"
        )
    text = content_text(message.get("content"), at, log)
    calls = read_calls(message, at, log)
    if message.get("reasoning_content"):
        log.skip(f"{at}.reasoning_content", "reasoning_content: not sent back as content")
    if text is None and not calls:
        raise log.fail(f"{at}.content is missing")
    if role == "system":
        log.system(text, at)
    elif role == "user":
        # the lab's own mark for environment output, kept when a log already has it
        log.user(text, observation or message.get("observation") is True)
    elif role == "assistant":
        log.assistant(text, calls)
    else:
        error = message.get("error")
        if error is not None and not (isinstance(error, dict) and "code" in error):
            raise log.fail(f"{at}.error must be a JSON object with a 'code'")
        call_id, name = message.get("tool_call_id"), message.get("name")
        if not isinstance(call_id, str) or not call_id:
            raise log.fail(f"{at}.tool_call_id is missing")
        extra = {"name": name} if isinstance(name, str) else None
        log.result(call_id, text, at, error, extra)


def declared_tools(tools, log: Builder) -> tuple:
    if not isinstance(tools, list):
        raise log.fail("field 'tools' must be a list of tool declarations")
    names = []
    for number, tool in enumerate(tools):
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise log.fail(f"tools[{number}].function.name is missing")
        names.append(name)
    return tuple(names)


def _as_messages(doc: Doc):
    """The messages of a plain chat log; one message alone (a one-line JSONL file) too."""
    value = doc.value
    return [value] if isinstance(value, dict) and "role" in value else value


ANTHROPIC_BLOCKS = ("tool_use", "tool_result")


def _message_list(items, what: str, doc: Doc):
    if not isinstance(items, list) or not items:
        return f"no {what}"
    for index, item in enumerate(items):
        if not isinstance(item, dict) or "role" not in item:
            return f"no 'role' in {doc.at(index, 'item')}"
        # another tool's messages in a chat-like list: claimed only on OpenAI's fields
        if "ts" in item or "modelInfo" in item:
            return f"{doc.at(index, 'item')} carries Cline's 'ts'/'modelInfo'"
        for part in item["content"] if isinstance(item.get("content"), list) else ():
            if isinstance(part, dict) and part.get("type") in ANTHROPIC_BLOCKS:
                return f"{doc.at(index, 'item')} holds an Anthropic {part['type']} block"
    return None


def _read_request(data: dict, doc: Doc, log: Builder) -> None:
    if data.get("tools") is not None:
        log.declared_tools = declared_tools(data["tools"], log)
    for index, message in enumerate(data.get("messages") or ()):
        read_message(message, doc.at(index, "messages"), log)


def _read_response(doc: Doc, log: Builder) -> None:
    _read_request(doc.value, doc, log)
    choices = doc.value["choices"]
    for number in range(1, len(choices)):
        log.skip(f"choices[{number}]", "another choice: an alternative not kept")
    read_message(choices[0]["message"], "choices[0].message", log)


def _detect_response(doc: Doc):
    choices = doc.value.get("choices") if isinstance(doc.value, dict) else None
    if not (
        isinstance(choices, list)
        and choices
        and isinstance(choices[0], dict)
        and isinstance(choices[0].get("message"), dict)
    ):
        return "no 'choices[0].message'"
    return None


RESPONSE_KEYS = ("id", "response_id", "message_id")


def _raw_calls(message) -> list:
    """The tool calls of a raw assistant message, or [] when it has none or they are
    malformed (read_message names what is wrong with them)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    calls = message.get("tool_calls")
    if isinstance(calls, str):
        try:
            calls = json.loads(calls) if calls.strip() else None
        except json.JSONDecodeError:
            return []
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        return []
    return calls


def _textless(message: dict) -> bool:
    content = message.get("content")
    return content is None or (isinstance(content, str) and not content.strip())


def _split_group(messages: list, start: int):
    """The parts of a split response starting at assistant `start` ([assistant index,
    result indexes, call ids] each), or None when no textless part follows it."""
    parts, index = [], start
    while index < len(messages):
        message = messages[index]
        calls = _raw_calls(message)
        if not calls or (parts and not _textless(message)):
            break
        assistant, results, index = index, [], index + 1
        while (
            index < len(messages)
            and isinstance(messages[index], dict)
            and messages[index].get("role") == "tool"
        ):
            results.append(index)
            index += 1
        parts.append([assistant, results, [call.get("id") for call in calls]])
    return parts if len(parts) > 1 else None


def _same_response(messages: list, parts: list) -> list:
    """The leading parts that carry the first part's response id (all of `parts`'s
    first when it has none)."""
    first = messages[parts[0][0]]
    for key in RESPONSE_KEYS:
        if isinstance(first.get(key), str) and first[key]:
            same = 1
            while same < len(parts) and messages[parts[same][0]].get(key) == first[key]:
                same += 1
            if same > 1:
                return parts[:same]
    return parts[:1]


def _merged(messages: list, parts: list):
    """One assistant message for the parts, with every result after it, and the
    index after them; None when merging is not evident or not safe (a result
    answering another part, an id twice)."""
    back_to_back = not parts[0][1]  # no result before the next part
    if back_to_back:  # up to the first part that results follow
        parts = parts[: next((n for n, p in enumerate(parts) if p[1]), len(parts)) + 1]
    else:
        parts = _same_response(messages, parts)
        if len(parts) < 2:
            return None
    ids = [call_id for _, _, part_ids in parts for call_id in part_ids]
    if len(set(ids)) != len(ids):
        return None
    owners = {}
    for number, (_, _, part_ids) in enumerate(parts):
        owners.update((call_id, number) for call_id in part_ids)
    for number, (_, results, _) in enumerate(parts):
        for index in results:
            owner = owners.get(messages[index].get("tool_call_id"))
            if owner is None or (not back_to_back and owner != number):
                return None
    merged = dict(messages[parts[0][0]])
    merged["tool_calls"] = [
        call for assistant, _, _ in parts for call in _raw_calls(messages[assistant])
    ]
    results = [index for _, part_results, _ in parts for index in part_results]
    last, last_results, _ = parts[-1]
    return merged, results, last + len(last_results) + 1


def _read_chat(doc: Doc, log: Builder) -> None:
    messages = _as_messages(doc)
    index = 0
    while index < len(messages):
        group = _split_group(messages, index) if _raw_calls(messages[index]) else None
        merged = _merged(messages, group) if group else None
        if merged is None:
            read_message(messages[index], doc.at(index, "messages"), log)
            index += 1
            continue
        at = doc.at(index, "messages")
        log.note(
            at,
            "one response's calls split over consecutive assistant messages: merged",
        )
        read_message(merged[0], at, log)
        for result in merged[1]:
            read_message(messages[result], doc.at(result, "messages"), log)
        index = merged[2]


SHAPES = [
    Shape("openai-response", _detect_response, _read_response),
    Shape(
        "openai-request",
        lambda doc: (
            _message_list(doc.value.get("messages"), "'messages' list", doc)
            if isinstance(doc.value, dict)
            else "not an object with 'messages'"
        ),
        lambda doc, log: _read_request(doc.value, doc, log),
    ),
    Shape(
        "openai-chat",
        lambda doc: _message_list(_as_messages(doc), "list of messages", doc),
        _read_chat,
    ),
]
