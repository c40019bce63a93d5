"""Workspace tools the agent can call: read a file, list a folder, search text.

Every failure comes back as a structured error ``{"code", "message"}`` instead of an
exception, so the loop can hand it to the model as a tool result (the article's M2);
aging keeps the code in its header, so a failure stays classifiable after the cut.

Example: a failure is a result with an error, not an exception.

    >>> from minilib.session import DATA_DIR
    >>> tools = Workspace(DATA_DIR / "workspace")
    >>> tools.call("read_file", '{"path": "no_such_file.txt"}').error
    {'code': 'NOT_FOUND', 'message': 'no such file: no_such_file.txt'}
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional


@dataclass(frozen=True)
class ToolResult:
    content: str
    error: Optional[Dict[str, str]] = None


class ToolFailure(Exception):
    """Raised inside a tool; turned into a ToolResult with an
    error by `Workspace.call`."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class Workspace:
    """Tools confined to one folder. Paths are relative to it; nothing outside may be
    read.

    Python's bytecode caches are not part of the workspace (installing the package
    compiles the workspace's .py files): the tools neither list nor search them.
    """

    IGNORED = ("__pycache__",)

    MAX_SEARCH_HITS = 200

    def __init__(self, root):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ValueError(f"workspace folder {root} does not exist")
        self.tools: Dict[str, Callable[..., str]] = {
            "read_file": self.read_file,
            "list_dir": self.list_dir,
            "search_text": self.search_text,
        }

    def _resolve(self, path) -> Path:
        if not isinstance(path, str) or not path:
            raise ToolFailure("BAD_ARGUMENTS", "path must be a non-empty string")
        target = (self.root / path).resolve()
        if target != self.root and self.root not in target.parents:
            raise ToolFailure("OUTSIDE_WORKSPACE", f"{path} is outside the workspace")
        return target

    def _relative(self, target: Path) -> str:
        return target.relative_to(self.root).as_posix() or "."

    def read_file(self, path: str) -> str:
        target = self._resolve(path)
        if not target.exists():
            raise ToolFailure("NOT_FOUND", f"no such file: {path}")
        if target.is_dir():
            raise ToolFailure("IS_A_DIRECTORY", f"{path} is a folder; use list_dir")
        return target.read_text(encoding="utf-8")

    def list_dir(self, path: str = ".") -> str:
        target = self._resolve(path)
        if not target.is_dir():
            raise ToolFailure("NOT_FOUND", f"no such folder: {path}")
        lines = []
        entries = (entry for entry in target.iterdir() if entry.name not in self.IGNORED)
        for entry in sorted(entries, key=lambda p: p.name):
            if entry.is_dir():
                lines.append(f"{entry.name}/")
            else:
                lines.append(f"{entry.name}  {entry.stat().st_size} bytes")
        return "\n".join(lines)

    def search_text(self, pattern: str, path: str = ".") -> str:
        if not isinstance(pattern, str) or not pattern:
            raise ToolFailure("BAD_ARGUMENTS", "pattern must be a non-empty string")
        try:
            regex = re.compile(pattern)
        except re.error as error:
            raise ToolFailure(
                "BAD_ARGUMENTS",
                f"pattern {pattern!r} is not a valid regular expression: {error}",
            )
        target = self._resolve(path)
        if not target.exists():
            raise ToolFailure("NOT_FOUND", f"no such file or folder: {path}")
        files = (
            sorted(
                p
                for p in target.rglob("*")
                if p.is_file()
                and not set(p.relative_to(target).parts) & set(self.IGNORED)
            )
            if target.is_dir()
            else [target]
        )
        hits = []
        for file in files:
            for number, line in enumerate(
                file.read_text(encoding="utf-8").splitlines(), start=1
            ):
                if regex.search(line):
                    hits.append(f"{self._relative(file)}:{number}: {line}")
        shown = hits[: self.MAX_SEARCH_HITS]
        header = f"{len(hits)} matches for {pattern!r} in {self._relative(target)}"
        if len(hits) > len(shown):
            header += f" (first {len(shown)} shown)"
        return "\n".join([header] + shown)

    def call(self, name: str, arguments) -> ToolResult:
        """Run one tool call; arguments is the chat-completions JSON string
        (or a dict)."""
        tool = self.tools.get(name)
        if tool is None:
            return failure(
                "UNKNOWN_TOOL",
                f"unknown tool {name!r}; available: {', '.join(self.tools)}",
            )
        try:
            return ToolResult(tool(**parse_arguments(arguments)))
        except ToolFailure as problem:
            return failure(problem.code, problem.message)
        except TypeError as error:  # wrong or missing argument names
            return failure("BAD_ARGUMENTS", f"{name}: {error}")


def parse_arguments(arguments, tool: str = "") -> dict:
    """A tool call's arguments (a JSON string or a dict) as a dict, or
    a BAD_ARGUMENTS failure."""
    prefix = f"{tool}: " if tool else ""
    try:
        parsed = (
            json.loads(arguments) if isinstance(arguments, str) else dict(arguments or {})
        )
    except (json.JSONDecodeError, TypeError, ValueError) as error:
        raise ToolFailure(
            "BAD_ARGUMENTS", f"{prefix}arguments are not a JSON object: {error}"
        ) from None
    if not isinstance(parsed, Mapping):
        raise ToolFailure("BAD_ARGUMENTS", f"{prefix}arguments must be a JSON object")
    return dict(parsed)


def failure(code: str, message: str) -> ToolResult:
    """A tool result that reports a failure the model can read and the
    harness can classify."""
    return ToolResult(f"error {code}: {message}", {"code": code, "message": message})


def declaration(
    name: str, description: str, properties: Mapping[str, str], required=()
) -> dict:
    """A tool declaration in the chat-completions shape, string parameters only."""
    schema = {k: {"type": "string", "description": v} for k, v in properties.items()}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": schema,
                "required": list(required),
            },
        },
    }


# What the harness tells the model about the workspace tools (sent with every request).
WORKSPACE_DECLARATIONS = (
    declaration(
        "read_file",
        "Read a UTF-8 text file of the workspace.",
        {"path": "path relative to the workspace"},
        ["path"],
    ),
    declaration(
        "list_dir",
        "List a folder of the workspace: names, and sizes of files.",
        {"path": "folder relative to the workspace, default ."},
    ),
    declaration(
        "search_text",
        "Search the workspace for a regular expression; one line per match.",
        {
            "pattern": "a Python regular expression",
            "path": "file or folder to search, default .",
        },
        ["pattern"],
    ),
)
