"""Read real agent logs into the chat-completions messages the library works on.

`load_log(path)` / `parse_log(text, source)` find the log's shape from its content
(never its file name), read it with that shape's reader and give a `LoadedLog`:
the messages (roles system/user/assistant/tool, string content, assistant
`tool_calls` answered by the tool messages right after it, tool errors as
`error: {code, message}`, environment output recorded as a user turn marked
`observation: True`), where the system prompt came from, what was skipped and why,
and the declared tool names. Shapes are tried in the order of `SHAPES`; the more
specific ones come first, so a trajectory that also has `messages` is not read as
a plain request. Anything that goes wrong is a one-line `LogFileError`.
"""

import re
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .base import Builder, LoadedLog, LogFileError, frame_place
from .detect import Doc, find_shape, parse_text


@lru_cache(maxsize=None)
def readers() -> tuple:
    """Every shape, in the order they are tried: each agent's own first
    (minilib.agents: its home's readers), then the generic ones, line shapes, then
    JSON shapes from the most specific to plain message lists. Gathered at first use:
    an agent's reader imports this package's base, so it cannot be gathered while
    this package is being imported."""
    from ..agents import agent_shapes
    from . import (
        aider,
        anthropic,
        goose,
        harbor,
        langchain,
        openai,
        openhands,
        openhands_v1,
        responses,
        sweagent,
    )

    return (
        tuple(agent_shapes())
        + tuple(
            goose.SHAPES  # before openai-chat: its message lines have a role too
            + langchain.SHAPES
            # before openai-chat: the SDK's user items are {role, content}
            + responses.SHAPES
            + sweagent.SHAPES[:1]
            + openhands.SHAPES
            + openhands_v1.SHAPES
            + harbor.SHAPES
            + sweagent.SHAPES[1:]
            + anthropic.SHAPES
            + openai.SHAPES
            + aider.SHAPES  # text histories: offered only text files
        )
    )


def __getattr__(name: str):
    # READERS and SHAPES read as constants, gathered at first use (see readers)
    if name == "READERS":
        return readers()
    if name == "SHAPES":
        return tuple(shape.name for shape in readers())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "LoadedLog",
    "LogFileError",
    "SHAPES",
    "load_log",
    "load_transcript",
    "parse_log",
    "replay_transcript",
]


# A log larger than this is refused with a message that names the limit; raise it with
# load_log(path, max_bytes=...) or the CLI's --max-mb.
MAX_LOG_BYTES = 256 * 1024 * 1024
SHOWN_CHARS = 200  # of any one value quoted in an error


def parse_log(
    text: str,
    source: str = "<log>",
    strict: bool = False,
    beside: Optional[Mapping[str, bytes]] = None,
) -> LoadedLog:
    """The LoadedLog of a log's text; `source` names it in errors.

    Every step runs inside the error handling (parsing, detection, reading, finishing),
    so whatever the text holds, the caller gets a LoadedLog or one LogFileError line.
    The gaps real runs leave are repaired as a harness would and listed in
    `LoadedLog.repairs` (see `base.REPAIRS`); `strict` refuses them instead.
    `beside`: the files given with it (an upload of one task's files), by name, read
    as the files beside it in its folder (`split_upload`).
    """
    log = _parse_log(text, source, strict)
    if beside is not None:
        read_beside(log, Path(source), lambda path: _uploaded_text(beside, path.name))
    return log


def _uploaded_text(files: Mapping[str, bytes], name: str) -> Optional[str]:
    return None if name not in files else decoded_text(files[name], name)


def read_beside(log: LoadedLog, path: Path, text_of) -> None:
    """What the log's agent keeps in files beside it (`Shape.beside`: Cline's usage),
    read into `log`; `text_of(path)` gives a file's text, or None where there is none."""
    beside = next((s.beside for s in readers() if s.name == log.shape), None)
    if beside is not None:
        beside(log, path, text_of)


def companion_names() -> frozenset:
    """The names of the files agents keep beside a log (`Shape.companions`)."""
    return frozenset(name for shape in readers() for name in shape.companions)


def split_upload(files: Sequence[Tuple[str, bytes]]):
    """(the log's name, its bytes, the other files by name) of files uploaded together
    (one task's files: Cline's api_conversation_history.json with its
    ui_messages.json). The log is the last file that is not one an agent keeps beside
    its log; where every file is one, the last file (its reading then says what it
    is)."""
    if not files:
        raise ValueError("no file uploaded")
    companions = companion_names()
    logs = [index for index, (name, _) in enumerate(files) if name not in companions]
    at = logs[-1] if logs else len(files) - 1
    others = {name: bytes(content) for i, (name, content) in enumerate(files) if i != at}
    return files[at][0], bytes(files[at][1]), others


def _parse_log(text: str, source: str, strict: bool) -> LoadedLog:
    step = "detecting its shape"
    try:
        doc = parse_text(text, source, strict)
        shape = find_shape(doc, list(readers()), source, unclaimed)
        step = shape.name
        log = Builder(source, shape.name, strict)
        for number, why in doc.bad_lines:
            log.repaired("bad-line", f"line {number}", why)
        shape.read(doc, log)
        return log.finish()
    except LogFileError as error:
        if step == "detecting its shape":
            raise
        raise LogFileError(clipped(str(error))) from None  # a reader may quote a value
    except RecursionError:
        raise LogFileError(f"{source}: {step}: the log nests too deeply") from None
    except (AttributeError, KeyError, IndexError, TypeError, ValueError) as error:
        # a field of an unexpected type deep in a record: still one line, not a trace
        raise LogFileError(
            f"{source}: {step}: {_place_of(error)}a record has an unexpected structure "
            f"({type(error).__name__}: {clipped(str(error), SHOWN_CHARS)})"
        ) from None


def load_log(path, max_bytes: int = MAX_LOG_BYTES, strict: bool = False) -> LoadedLog:
    """Read an agent log file of any known shape (see `SHAPES`).

    Only a regular file is read (a pipe or a device could block or never end), and
    at most `max_bytes` of it. `strict`: see `parse_log`."""
    text = read_log_text(path, max_bytes)
    log = parse_log(text, str(path), strict)
    log.path = Path(path)
    # the agent may keep part of its log in a file beside it
    read_beside(
        log, log.path, lambda p: read_log_text(p, max_bytes) if p.is_file() else None
    )
    return log


def read_log_text(path, max_bytes: int = MAX_LOG_BYTES) -> str:
    """A log file's text: a regular file only, at most `max_bytes`, UTF-8; anything
    else one LogFileError line naming the file."""
    path = Path(path)
    try:
        if path.is_dir():
            raise LogFileError(f"{path}: is a folder, not a log file")
        if path.exists() and not path.is_file():
            raise LogFileError(f"{path}: not a regular file (a pipe, socket or device)")
        with open(path, "rb") as file:
            data = file.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise LogFileError(
                f"{path}: larger than the {max_bytes:,}-byte limit for a log "
                "(raise it with max_bytes=, or --max-mb on the command line)"
            )
        text = decoded_text(data, str(path))
    except FileNotFoundError:
        raise LogFileError(f"{path}: no such log file") from None
    except OSError as error:
        raise LogFileError(f"{path}: cannot be read ({error.strerror})") from None
    return text


# the first bytes of files a user may pick by mistake, and what they are
BINARY_KINDS = (
    (b"\x89PNG", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF", "PDF"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x1f\x8b", "gzip archive"),
    (b"SQLite format 3\x00", "SQLite database (a Goose session database, say)"),
)


def decoded_text(data: bytes, source: str) -> str:
    """A log's bytes as text, or one LogFileError line saying what they are instead."""
    kind = next((kind for magic, kind in BINARY_KINDS if data.startswith(magic)), None)
    if kind is not None:
        raise LogFileError(f"{source}: a {kind}, not a text log")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if b"\0" in data[:8192]:  # a NUL near the start: binary, not another encoding
            raise LogFileError(
                f"{source}: a binary file (an image, an archive...), not a text log"
            ) from None
        raise LogFileError(f"{source}: not UTF-8 text (byte {error.start})") from None


def clipped(text: str, limit: int = 2 * SHOWN_CHARS) -> str:
    """`text`, its middle cut when it is longer than `limit` (a huge value echoed whole
    would bury the line that says where it is)."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return f"{text[: limit * 3 // 4]} …({cut:,} characters cut)… {text[-limit // 4 :]}"


def _place_of(error: BaseException) -> str:
    """Where a reader was when `error` broke it: the innermost reader frame's `where` or
    `at` (the place names readers already build for their own messages)."""
    place = ""
    traceback = error.__traceback__
    while traceback is not None:  # outermost first: the innermost place wins
        place = frame_place(traceback.tb_frame) or place
        traceback = traceback.tb_next
    return f"{clipped(place, SHOWN_CHARS)}: " if place else ""


def document_fields(value, depth: int = 3, limit: int = 200) -> set:
    """The field names a JSON value holds, down to `depth` levels (the first `limit`
    items of each list): what two logs of one shape have in common."""
    fields, todo = set(), [(value, 0)]
    while todo:
        item, level = todo.pop()
        if level >= depth:
            continue
        if isinstance(item, dict):
            fields.update(key for key in item if isinstance(key, str))
            todo.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            todo.extend((child, level + 1) for child in item[:limit])
    return fields


# Set while the examples are read: an example no shape claims (the unknown-shape one)
# is refused with a closest-shape line too, which must not read the examples again (it
# did, recursively: seconds before the first refusal of a file of no known shape).
_READING_EXAMPLES: List[bool] = []


def _example_fields() -> Dict[str, frozenset]:
    """Each shape's fields, from the constructed example of it the package ships;
    nothing while they are being read (an example's own refusal is discarded)."""
    return {} if _READING_EXAMPLES else _read_example_fields()


@lru_cache(maxsize=1)
def _read_example_fields() -> Dict[str, frozenset]:
    examples: Dict[str, set] = {}
    _READING_EXAMPLES.append(True)
    try:
        for path in sorted(files("minilib.data").joinpath("logs").iterdir()):
            try:
                log = load_log(path)
                doc = parse_text(path.read_text(encoding="utf-8"), path.name)
            except (LogFileError, OSError):
                continue  # the damaged and unknown-shape examples
            if not doc.is_text:
                examples.setdefault(log.shape, set()).update(document_fields(doc.value))
    finally:
        _READING_EXAMPLES.pop()
    return {shape: frozenset(fields) for shape, fields in examples.items()}


# What each JSON shape needs of a file at the least: the smallest conversion that makes
# a file of no known shape readable as it (the closest one's is named in the refusal)
NEEDS = {
    "claude-code": "one JSON object a line, {type: user|assistant, message: {role, "
    "content}}",
    "claude-stream-json": "a first line {type: system, subtype: init}, then {type: "
    "user|assistant, message} lines",
    "codex-rollout": "one {type: response_item, payload: {type: message|function_call"
    "|function_call_output, ...}} a line",
    "gemini-cli": "{sessionId, messages: [{type: user|gemini, content}]}",
    "pi-session": "a first line {type: session, version: 3, cwd}, then {type: message, "
    "id, parentId, message: {role, content}} lines",
    "goose-session": "one {role, content: [{type: text|toolRequest|toolResponse}]} a "
    "line",
    "opencode-export": "{info, messages: [{info: {role}, parts: [...]}]}",
    "langchain-messages": "a list of {type: human|ai|tool|system, data: {content, "
    "tool_calls?, tool_call_id?}}",
    "responses-items": "a list of {type: message|function_call|function_call_output, "
    "...}",
    "swe-agent": "{history: [{role, content, ...}], trajectory}",
    "openhands-eval": "{instance_id, history: [events]}",
    "openhands-events": "a list of {id, source, action|observation, ...}",
    "openhands-v1": "{history: [{kind: MessageEvent|ActionEvent|ObservationEvent, ...}]}",
    "harbor-atif": "{schema_version: 'ATIF-v1.x', steps: [{step_id, source: user|agent, "
    "message, tool_calls: [{tool_call_id, function_name, arguments}], observation: "
    "{results: [{source_call_id, content}]}}]}",
    "mini-swe-agent": "{messages: [{role, content}], trajectory_format: "
    "'mini-swe-agent-1'}",
    "cline": "a list of {role: user|assistant, content: [blocks], ts}",
    "anthropic-messages": "a list of {role: user|assistant, content: [text|tool_use|"
    "tool_result blocks]}",
    "openai-response": "{choices: [{message: {role: assistant, content}}]}",
    "openai-request": "{messages: [...], tools?}",
    "openai-chat": "a list of {role: system|user|assistant|tool, content, tool_calls?: "
    "[{id, function: {name, arguments}}], tool_call_id?}",
}
CONVERT_DOC = "docs/convert_your_log.md"


def conversion_hint(best: str) -> str:
    """The smallest conversion that would make a file readable: as the closest shape,
    and as openai-chat, the shape any script can write."""
    said = f"to read it as {best}, it needs {NEEDS[best]}" if best in NEEDS else ""
    chat = f"or convert it to openai-chat: {NEEDS['openai-chat']} ({CONVERT_DOC})"
    return (
        f"{said}; {chat}"
        if said and best != "openai-chat"
        else (
            f"to read it as openai-chat, it needs {NEEDS['openai-chat']} ({CONVERT_DOC})"
        )
    )


def unclaimed(doc: Doc, source: str, reasons: Dict[str, str]) -> str:
    """The error for a JSON file no shape claims: what it is, when it is a file an agent
    keeps beside its log (Cline's ui_messages.json), else the closest shape."""
    for shape in readers():
        said = shape.describe(doc, source) if shape.describe is not None else None
        if said:
            return said
    return closest_shape(doc, source, reasons)


def closest_shape(doc: Doc, source: str, reasons: Dict[str, str]) -> str:
    """The error for a JSON file no shape claims: the closest shape, what it looked for,
    and the others' names. Closest: the shape whose bundled example shares the most
    field names with the file; among equals, one that got as far as an item of the
    file (its reason names the item), then the one the shared names cover best."""
    fields = document_fields(doc.value)
    examples = _example_fields()

    def shared(name: str) -> tuple:
        example = examples.get(name, frozenset())
        common = len(fields & example)
        reached_an_item = re.search(r"\bitems?\[\d+\]|\bline \d+", reasons[name])
        return (
            common,
            reached_an_item is not None,
            common / len(example) if example else 0,
        )

    best = max(reasons, key=shared)  # the first of equals: READERS order
    common = sorted(fields & examples.get(best, frozenset()))
    if not common:
        return (
            f"{source}: not a known agent log, and no shape's example shares a field "
            f"name with it; {conversion_hint('openai-chat')}; tried: "
            f"{', '.join(reasons)}"
        )
    named = ", ".join(common[:6]) + (", ..." if len(common) > 6 else "")
    others = ", ".join(name for name in reasons if name != best)
    return (
        f"{source}: not a known agent log; closest: {best} ({reasons[best]}); its "
        f"example shares {len(common)} field name{'s' * (len(common) > 1)} with this "
        f"file ({named}); {conversion_hint(best)}; "
        f"also tried: {others}"
    )


# the replay reads logs with the functions above, so it is imported after them
from .replay import load_transcript, replay_transcript  # noqa: E402
