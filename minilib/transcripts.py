"""Real transcripts: load a recorded conversation and replay it through the window round
by round.

Accepted files (one transcript a file):
- a JSON list of chat-completions messages;
- a JSON object with "messages" (and optionally the request's "tools" declaration);
- JSONL (a ``.jsonl`` file): one message a line.

Agent trajectory datasets often store what does not fit a table column as a string;
loading undoes that: ``tool_calls`` given as a JSON string is parsed, ``arguments``
given as an object is encoded, a flat call ``{"id", "name", "arguments"}`` is nested
under ``function``, a call without ``type`` gets ``"function"``, and a content given
as a list of text parts is joined. Anything else that is not a valid
conversation is a TranscriptFileError naming the file and the field.

A round is one assistant message: `replay_transcript` governs the window the model
would have seen just before it, with the same ContextWindow the loop uses, and
records the same trace (decisions, summaries, compressions, full tool outputs), so
the CLI prints the same table as for the bundled session.
"""

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple

from .loop import replay
from .messages import InvalidMessagesError, validate_messages
from .model import scripted_summary
from .session import Baseline, SessionRun, session_run
from .summary import Summarizer
from .tokens import TokenCounter, estimate_tokens, tool_call_name
from .trace import Tracer
from .window import Settings, article_window


class TranscriptFileError(ValueError):
    """A transcript file that cannot be used; the text names the file and the field."""


@dataclass
class Transcript:
    """A loaded transcript: its messages (normalized) and the tool names it declares, if
    any."""

    path: Optional[Path]
    messages: List[dict]
    declared_tools: Optional[Tuple[str, ...]] = None

    @property
    def rounds(self) -> int:
        """How many model calls the transcript records (its assistant messages)."""
        return sum(1 for message in self.messages if message["role"] == "assistant")


def _parse_json(text: str, source: str, what: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise TranscriptFileError(
            f"{source}: {what} is not valid JSON ({error.msg}, "
            f"line {error.lineno} column {error.colno})"
        ) from None


def normalize_message(message, at: str, source: str) -> dict:
    """A copy of one message in the chat-completions shape the library checks (see the
    module text)."""
    if not isinstance(message, Mapping):
        raise TranscriptFileError(
            f"{source}: {at} must be a JSON object, got {type(message).__name__}"
        )
    result = copy.deepcopy(dict(message))
    content = result.get("content")
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}, ...]
        texts = []
        for number, part in enumerate(content):
            if not (
                isinstance(part, Mapping)
                and part.get("type") == "text"
                and isinstance(part.get("text"), str)
            ):
                raise TranscriptFileError(
                    f"{source}: {at}.content[{number}] is not a text part; "
                    "only text content can be measured and compressed"
                )
            texts.append(part["text"])
        result["content"] = "\n".join(texts)
    tool_calls = result.get("tool_calls")
    if isinstance(tool_calls, str):
        tool_calls = (
            _parse_json(tool_calls, source, f"{at}.tool_calls")
            if tool_calls.strip()
            else None
        )
    if tool_calls in (None, []):
        # "no calls" is spelled several ways; the API wants the key absent
        result.pop("tool_calls", None)
        return result
    if not isinstance(tool_calls, list):
        raise TranscriptFileError(
            f"{source}: {at}.tool_calls must be a list, got {type(tool_calls).__name__}"
        )
    calls = []
    for number, call in enumerate(tool_calls):
        if not isinstance(call, Mapping):
            raise TranscriptFileError(
                f"{source}: {at}.tool_calls[{number}] must be a JSON object"
            )
        call = dict(call)
        call.setdefault("type", "function")
        if (
            "function" not in call and "name" in call
        ):  # the flat {"id", "name", "arguments"} some datasets use
            call["function"] = {
                "name": call.pop("name"),
                "arguments": call.pop("arguments", "{}"),
            }
        function = call.get("function")
        if isinstance(function, Mapping):
            function = dict(function)
            if isinstance(function.get("arguments"), (dict, list)):
                function["arguments"] = json.dumps(
                    function["arguments"], ensure_ascii=False
                )
            call["function"] = function
        calls.append(call)
    result["tool_calls"] = calls
    return result


def _declared_tool_names(tools, source: str) -> Tuple[str, ...]:
    if not isinstance(tools, list):
        raise TranscriptFileError(
            f"{source}: field 'tools' must be a list of tool declarations"
        )
    names = []
    for number, tool in enumerate(tools):
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str) or not name:
            raise TranscriptFileError(
                f"{source}: tools[{number}].function.name is missing"
            )
        names.append(name)
    return tuple(names)


def parse_transcript(
    text: str, source: str = "<transcript>", jsonl: bool = False
) -> Transcript:
    """A Transcript from the text of a file; `source` names it in errors."""
    declared = None
    if jsonl:  # an error names the file's line, not the list index
        numbered = [
            (number, line)
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        ]
        raw = [_parse_json(line, source, f"line {number}") for number, line in numbered]
        where, positions = "line {}", [number for number, _ in numbered]
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            hint = (
                "; one message a line is read from a file named .jsonl"
                if error.msg == "Extra data"
                else ""
            )
            raise TranscriptFileError(
                f"{source}: the file is not valid JSON ({error.msg}, line {error.lineno} "
                f"column {error.colno}){hint}"
            ) from None
        if isinstance(data, Mapping):
            if "messages" not in data:
                raise TranscriptFileError(
                    f"{source}: field 'messages' is missing (expected a list of "
                    "messages, "
                    "or an object with 'messages')"
                )
            if data.get("tools") is not None:
                declared = _declared_tool_names(data["tools"], source)
            if not isinstance(data["messages"], list):
                raise TranscriptFileError(
                    f"{source}: field 'messages' must be a list, "
                    f"got {type(data['messages']).__name__}"
                )
            data = data["messages"]
        elif not isinstance(data, list):
            raise TranscriptFileError(
                f"{source}: expected a list of messages or an object with 'messages', "
                f"got {type(data).__name__}"
            )
        raw, where, positions = data, "messages[{}]", list(range(len(data)))
    if not raw:
        raise TranscriptFileError(f"{source}: the transcript holds no messages")
    messages = [
        normalize_message(message, where.format(position), source)
        for message, position in zip(raw, positions)
    ]
    try:
        validate_messages(messages, where="messages")
    except InvalidMessagesError as error:
        text = str(error)
        if jsonl:  # name the file's line, not the list index
            text = re.sub(
                r"messages\[(\d+)\]",
                lambda match: f"line {positions[int(match.group(1))]}",
                text,
            )
        raise TranscriptFileError(f"{source}: {text}") from None
    if declared is not None:
        for index, message in enumerate(messages):
            for number, call in enumerate(message.get("tool_calls") or ()):
                name = tool_call_name(call)
                if name not in declared:
                    raise TranscriptFileError(
                        f"{source}: messages[{index}].tool_calls[{number}].function.name "
                        "calls unknown tool "
                        f"{name!r}; the file declares {', '.join(declared) or 'no tools'}"
                    )
    return Transcript(None, messages, declared)


def load_transcript(path) -> Transcript:
    """Read and check a transcript file (JSON, or JSONL when its name ends in .jsonl)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TranscriptFileError(f"{path}: no such transcript file") from None
    except IsADirectoryError:
        raise TranscriptFileError(f"{path}: is a folder, not a transcript file") from None
    except UnicodeDecodeError:
        raise TranscriptFileError(f"{path}: not UTF-8 text") from None
    transcript = parse_transcript(text, str(path), jsonl=path.suffix == ".jsonl")
    transcript.path = path
    return transcript


class RecordedConversation:
    """A recorded log played back: its assistant messages are the replies, the rest
    arrives between them.

    Each tool output is traced in full when it arrives, so `recover_tool_output` finds
    whatever aging or a summary cut.
    """

    def __init__(self, messages: Sequence[Mapping]):
        self.messages = [copy.deepcopy(dict(message)) for message in messages]
        self.replies = [
            index
            for index, message in enumerate(self.messages)
            if message["role"] == "assistant"
        ]

    def opening(self) -> List[dict]:
        return self.messages[: self.replies[0]] if self.replies else list(self.messages)

    def reply(self, window, step: int) -> dict:
        return copy.deepcopy(self.messages[self.replies[step]])

    def arrivals(self, reply: Mapping, step: int, tracer) -> Tuple[List[dict], bool]:
        start = self.replies[step] + 1
        end = (
            self.replies[step + 1] if step + 1 < len(self.replies) else len(self.messages)
        )
        arrived = [copy.deepcopy(message) for message in self.messages[start:end]]
        calls = {call["id"]: call for call in reply.get("tool_calls") or ()}
        for message in arrived:
            if tracer is not None and message["role"] == "tool":
                call = calls[message["tool_call_id"]]  # positional: a call of this reply
                tracer.tool_call(
                    step,
                    call["id"],
                    tool_call_name(call),
                    call["function"].get("arguments") or "{}",
                    message["content"],
                    message.get("error"),
                )
        return arrived, step + 1 < len(self.replies)


def replay_transcript(
    messages: Sequence[Mapping],
    settings: Settings = Settings(),
    count_tokens: TokenCounter = estimate_tokens,
    summarize: Summarizer = scripted_summary,
) -> SessionRun:
    """Govern the window before every assistant message of `messages`, as the loop would
    have.

    The baseline of a round is the transcript up to that assistant message; the
    compressed window is what the article's ContextWindow made of the previous
    window plus the messages that arrived since. A ContextOverflowError ends the
    replay and is kept in `run.overflow`, like `run_session`. `messages` is not changed.
    """
    validate_messages(messages)
    window = article_window(summarize, settings, count_tokens)
    conversation = RecordedConversation(messages)
    if not conversation.replies:  # no model call, so no round to govern
        return SessionRun(
            settings,
            [],
            [],
            conversation.messages,
            count_tokens(conversation.messages),
            Tracer(),
        )
    governed = replay(
        conversation, window, tracer=Tracer(), count_tokens=count_tokens, max_steps=None
    )
    baseline = replay(
        RecordedConversation(messages), None, count_tokens=count_tokens, max_steps=None
    )
    return session_run(
        settings, governed, Baseline.of(baseline, count_tokens), count_tokens
    )
