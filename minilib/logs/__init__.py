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

from pathlib import Path

from . import anthropic, codex, gemini, openai, openhands, sweagent
from .base import Builder, LoadedLog, LogFileError
from .detect import find_shape, parse_text

# line shapes first, then JSON shapes from the most specific to plain message lists
READERS = (
    anthropic.SHAPES[:1]
    + codex.SHAPES
    + gemini.SHAPES
    + sweagent.SHAPES[:1]
    + openhands.SHAPES
    + sweagent.SHAPES[1:]
    + anthropic.SHAPES[1:]
    + openai.SHAPES
)
SHAPES = tuple(shape.name for shape in READERS)

__all__ = [
    "LoadedLog",
    "LogFileError",
    "SHAPES",
    "load_log",
    "load_transcript",
    "parse_log",
    "replay_transcript",
]


def parse_log(text: str, source: str = "<log>") -> LoadedLog:
    """The LoadedLog of a log's text; `source` names it in errors."""
    doc = parse_text(text, source)
    shape = find_shape(doc, list(READERS), source)
    log = Builder(source, shape.name)
    try:
        shape.read(doc, log)
    except LogFileError:
        raise
    except (AttributeError, KeyError, IndexError, TypeError, ValueError) as error:
        # a field of an unexpected type deep in a record: still one line, not a trace
        raise LogFileError(
            f"{source}: {shape.name}: a record has an unexpected "
            f"structure ({type(error).__name__}: {error})"
        ) from None
    return log.finish()


def load_log(path) -> LoadedLog:
    """Read an agent log file of any known shape (see `SHAPES`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LogFileError(f"{path}: no such log file") from None
    except IsADirectoryError:
        raise LogFileError(f"{path}: is a folder, not a log file") from None
    except UnicodeDecodeError as error:
        raise LogFileError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise LogFileError(f"{path}: cannot be read ({error.strerror})") from None
    log = parse_log(text, str(path))
    log.path = path
    return log


# the replay reads logs with the functions above, so it is imported after them
from .replay import load_transcript, replay_transcript  # noqa: E402
