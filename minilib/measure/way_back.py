"""How a fact gone from the window could come back: only by what the harness offers.

A fact the window no longer holds is **restorable** when the agent could get it back
with a tool call of the harness it ran in, and by no other road:

- **recall**: the harness declares a recall tool (the external store's `recall`, or
  any tool named in `RECALL_TOOLS`), and the window still names the id of an output
  that showed the fact (in a pairing field, an omission line, a summary);
- **re-read**: the output came from a read-only call (reading a file, searching text,
  listing a folder: see `read_only`), and what that call needs to run again (the path,
  the pattern, the command) is still in the window's text; an absolute path from its
  last folder on, as a summary names the project's files (the agent knows the folder
  it works in). Re-running it costs about
  what the output cost the first time: `ReRead.tokens`, the output's tokens.

An omission line's id alone is no way back where no recall tool is declared: no
harness the lab replays gives the agent a tool that reads the run log by id. A write
(an edit, a test run, a command that changes things) is no way back either, even when
its arguments are still in the window: running it again is not reading.

The same rule judges the replayed policies (`used_facts.classify`) and the agent's own
compactions (`minilib.measure.compactions`).

Example: a file read whose path the window still names can be read again.

    >>> call = {"id": "c1", "type": "function", "function": {"name": "Read",
    ...         "arguments": '{"file_path": "src/app.py"}'}}
    >>> read_only(call)
    ('src/app.py',)
    >>> read_only({"id": "c2", "function": {"name": "Bash",
    ...            "arguments": '{"command": "grep -rn E2BIG src/app.py"}'}})
    ('E2BIG', 'src/app.py')
    >>> read_only({"id": "c3", "function": {"name": "Bash",
    ...            "arguments": '{"command": "pytest -q"}'}}) is None
    True
"""

import json
import re
import shlex
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Tuple

MIN_POINTER = 4  # an argument shorter than this ("ls", "1") points at nothing
RECALL_TOOLS = frozenset({"recall"})
# Tools that only read, by name (lower-cased): the agents' file readers, searchers and
# folder listers.
READ_TOOLS = frozenset(
    "read read_file readfile view view_file open open_file cat grep search search_text "
    "search_files search_file find find_file glob ls list list_dir list_files "
    "list_directory read_many_files get_file file_search codebase_search".split()
)
# Shell programs that only read; a shell call is a re-read when it runs one of them.
READ_PROGRAMS = frozenset(
    "cat head tail less more grep egrep rg ag ack ls find tree nl wc file stat du "
    "sed awk".split()
)
READ_GIT = frozenset("show log diff status grep blame ls-files".split())
SHELL_TOOLS = frozenset(
    "bash shell sh exec_command run_command execute_command run_shell_command "
    "local_shell terminal execute_bash cmd".split()
)
# Argument keys that describe a call rather than steer it.
DESCRIBING = frozenset("description explanation reason thought title".split())


@dataclass(frozen=True)
class ReRead:
    """A read-only call that showed an output: what it needs in the window to be run
    again, and what its output cost (tokens)."""

    tool: str
    needs: Tuple[str, ...]
    tokens: int


def _arguments(call: Mapping):
    raw = (call.get("function") or {}).get("arguments") or ""
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return raw


def _shell_command(arguments) -> Optional[str]:
    if isinstance(arguments, str):
        return arguments
    if not isinstance(arguments, dict):
        return None
    command = arguments.get("command", arguments.get("cmd"))
    if isinstance(command, list):  # Codex: ["bash", "-lc", "cat x"]
        command = command[-1] if command else None
    return command if isinstance(command, str) else None


def _read_only_command(command: str) -> Optional[Tuple[str, ...]]:
    """The operands of a shell command that only reads (one program, no pipe into a
    writer, no redirection to a file), or None."""
    if re.search(r"(?<![<>&])>(?!&)|\btee\b|\bsed\s+-i|&&|;|\|\|", command):
        return None
    try:
        words = shlex.split(command.split("|")[0])
    except ValueError:
        return None
    if not words:
        return None
    program, rest = words[0].rsplit("/", 1)[-1], words[1:]
    if program == "git" and rest and rest[0] in READ_GIT:
        rest = rest[1:]
    elif program not in READ_PROGRAMS:
        return None
    operands = tuple(w for w in rest if not w.startswith("-") and len(w) >= MIN_POINTER)
    return operands or (command,)


def _as_named(need: str) -> str:
    """An absolute path as a window may name it: from its last folder on. An agent's
    tools take absolute paths, but a summary names the project's files relative to
    it (`strategy/auto_commit.go` for `/Users/me/cli/cmd/strategy/auto_commit.go`),
    and the agent, which knows its working folder, can read them again by that."""
    parts = need.split("/")
    if need.startswith("/") and len(parts) > 3 and " " not in need and parts[-1]:
        return "/".join(parts[-2:])
    return need


def read_only(call: Mapping) -> Optional[Tuple[str, ...]]:
    """What a read-only call needs in the window to be run again (its path, pattern or
    command; an absolute path from its last folder on), or None when the call is not
    read-only (an edit, a test run)."""
    needs = _read_only(call)
    return tuple(_as_named(need) for need in needs) if needs else needs


def _read_only(call: Mapping) -> Optional[Tuple[str, ...]]:
    name = ((call.get("function") or {}).get("name") or "").lower()
    arguments = _arguments(call)
    if name in SHELL_TOOLS or (
        isinstance(arguments, dict) and name not in READ_TOOLS and "cmd" in arguments
    ):
        command = _shell_command(arguments)
        return _read_only_command(command) if command else None
    if isinstance(arguments, dict) and arguments.get("command") == "view":
        name = "view"  # an editor tool's view command (SWE-agent, OpenHands)
    if name not in READ_TOOLS:
        return None
    if not isinstance(arguments, dict):
        return (arguments,) if len(arguments) >= MIN_POINTER else None
    needs = tuple(
        value
        for key, value in arguments.items()
        if key not in DESCRIBING
        and key != "command"
        and isinstance(value, str)
        and len(value) >= MIN_POINTER
    )
    return needs or None


def declares_recall(tool_names: Iterable[str]) -> bool:
    """Whether a harness with these tools offers a recall tool."""
    return any((name or "").lower() in RECALL_TOOLS for name in tool_names)


def log_declares_recall(log) -> bool:
    """Whether a loaded log's harness offers recall: declared among its tools, or
    called by the agent."""
    names = list(getattr(log, "declared_tools", None) or ())
    messages = getattr(log, "messages", log)
    for message in messages:
        for call in message.get("tool_calls") or ():
            names.append((call.get("function") or {}).get("name"))
    return declares_recall(names)
