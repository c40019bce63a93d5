"""Write data/logs/: small generated agent logs, for each shape of minilib.logs.

Deterministic (no clock, no randomness): running it again gives byte-identical
files, and tests/test_logs.py checks that the committed files are exactly what
`fixtures()` returns. Never edit the files by hand. Each log is a short coding
session in the shape a real agent writes to disk, with the odd cases its reader
must handle: at least one long tool output (over 2,000 characters, for
compression to cut), a tool error, parallel calls where the shape has them,
bookkeeping records, reasoning blocks, images, and the shape's own quirks
(repeated call ids in SWE-agent, user turns only as events in Codex, ...).
Plus a damaged JSONL file and a JSON file of no known shape.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "logs"


# --- long tool outputs ------------------------------------------------------------------


def pytest_output(module: str, count: int, failing=(), project="ledgerlite") -> str:
    """A pytest run of `count` tests in one module, some of them failing."""
    lines = [
        "=" * 29 + " test session starts " + "=" * 30,
        "platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0",
        f"rootdir: /home/dev/{project}",
        f"collected {count} items",
        "",
    ]
    for number in range(count):
        verdict = "FAILED" if number in failing else "PASSED"
        lines.append(
            f"tests/{module}::test_case_{number:03d} {verdict} "
            f"[{100 * (number + 1) // count:3d}%]"
        )
    summary = (
        f"{len(failing)} failed, {count - len(failing)} passed"
        if failing
        else f"{count} passed"
    )
    lines.append(f"======================== {summary} in 1.84s ========================")
    return "\n".join(lines) + "\n"


def numbered_source(path: str, functions: int) -> str:
    """A module listing with line numbers, as a read tool shows it."""
    body = [f'"""{path}: report layout helpers."""', "", "import textwrap", ""]
    for number in range(functions):
        body += [
            f"def column_{number}(rows, width={20 + number}):",
            f'    """Column {number} of the report, padded to `width`."""',
            "    cells = [str(row.get('amount', '')) for row in rows]",
            "    return [cell.rjust(width) for cell in cells]",
            "",
        ]
    body += [
        "def wrap_text(text, width):",
        "    # splits inside words when width is small",
        "    return [text[i:i + width] for i in range(0, len(text), width)]",
    ]
    return "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(body, 1)) + "\n"


def build_log(tool: str, steps: int) -> str:
    """A long build log: one line per compiled file, then a summary."""
    lines = [
        f"[{n:3d}/{steps}] {tool} src/page_{n:03d}.rst -> _build/html/page_{n:03d}.html"
        for n in range(1, steps + 1)
    ]
    return "\n".join(lines + [f"build succeeded, {steps} pages written."]) + "\n"


# --- OpenAI -----------------------------------------------------------------------------


def openai_chat() -> list:
    """A plain message list with the dataset quirks the loader undoes."""
    return [
        {
            "role": "developer",
            "content": "You are a careful coding agent. Tools: shell, read.",
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "The CSV export of tallyho prints dates as 2024-1-5.",
                },
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
                },
                {"type": "text", "text": "Screenshot above. Please pad months and days."},
            ],
        },
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "Find the formatter first.",
            "tool_calls": json.dumps(
                [
                    {
                        "id": "call_q1",
                        "name": "shell",
                        "arguments": {"cmd": "grep -rn strftime src"},
                    },
                    {
                        "id": "call_q2",
                        "name": "read",
                        "arguments": {"path": "src/tallyho/export.py"},
                    },
                ]
            ),
        },
        {
            "role": "tool",
            "tool_call_id": "call_q1",
            "content": "src/tallyho/export.py:41: return f'{d.year}-{d.month}-{d.day}'\n",
        },
        {
            "role": "tool",
            "tool_call_id": "call_q2",
            "content": numbered_source("export.py", 12),
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_q3",
                    "type": "function",
                    "function": {
                        "name": "shell",
                        "arguments": {"cmd": "pytest -q tests/test_export.py"},
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_q3",
            "content": "1 failed, 11 passed in 0.4s\n",
            "error": {"code": "EXIT_1", "message": "1 failed, 11 passed in 0.4s"},
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Dates are now zero-padded."}],
        },
    ]


def openai_request() -> dict:
    tools = [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": text,
                "parameters": {"type": "object"},
            },
        }
        for name, text in (("run", "Run a command"), ("open_file", "Show a file"))
    ]
    return {
        "model": "gpt-4.1",
        "tools": tools,
        "messages": [
            {
                "role": "system",
                "content": "You fix bugs in the checkout at /src. Be brief.",
            },
            {"role": "user", "content": "Why does `make lint` fail?"},
            {
                "role": "assistant",
                "content": "Running it.",
                "tool_calls": [
                    {
                        "id": "call_r1",
                        "type": "function",
                        "function": {"name": "run", "arguments": '{"cmd": "make lint"}'},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_r1",
                "name": "run",
                "content": "src/app.py:3:1: F401 'os' imported but unused\n",
            },
            {"role": "assistant", "content": "An unused import in src/app.py line 3."},
        ],
    }


def openai_response() -> dict:
    """A response object that also carries its request: the log is both."""
    reply = {
        "role": "assistant",
        "content": "Reading both files.",
        "tool_calls": [
            {
                "id": "call_s1",
                "type": "function",
                "function": {"name": "open_file", "arguments": '{"path": "setup.cfg"}'},
            },
            {
                "id": "call_s2",
                "type": "function",
                "function": {"name": "open_file", "arguments": '{"path": "tox.ini"}'},
            },
        ],
    }
    return {
        "id": "chatcmpl-0001",
        "object": "chat.completion",
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You review Python packaging."},
            {"role": "user", "content": "Is the flake8 config duplicated?"},
        ],
        "choices": [
            {"index": 0, "message": reply, "finish_reason": "tool_calls"},
            {
                "index": 1,
                "message": {"role": "assistant", "content": "Maybe."},
                "finish_reason": "stop",
            },
        ],
    }


# --- Anthropic Messages API -------------------------------------------------------------


def anthropic_request() -> dict:
    tools = [
        {
            "name": "bash",
            "description": "Run a shell command",
            "input_schema": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
            },
        },
        {
            "name": "view",
            "description": "Show a file",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
            },
        },
    ]
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "tools": tools,
        "system": [
            {"type": "text", "text": "You are a coding agent in /srv/pinecone-notes."},
            {
                "type": "text",
                "text": "Prefer small diffs.",
                "cache_control": {"type": "ephemeral"},
            },
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "The note titles render without their emoji.",
                    },
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": "image/png",
                            "data": "iVBORw0KGgo=",
                        },
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "Probably an encoding issue.",
                        "signature": "c2lnLTE=",
                    },
                    {
                        "type": "text",
                        "text": "Let me look at the renderer and its tests.",
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_a1",
                        "name": "view",
                        "input": {"path": "notes/render.py"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_a2",
                        "name": "bash",
                        "input": {"command": "pytest -q tests/test_render.py"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_a1",
                        "content": [
                            {"type": "text", "text": numbered_source("render.py", 12)}
                        ],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_a2",
                        "is_error": True,
                        "content": "Exit code 1\n"
                        "FAILED tests/test_render.py::test_emoji_title",
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_a3",
                        "name": "bash",
                        "input": {"command": "sed -i 's/ascii/utf-8/' notes/render.py"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a3", "content": ""},
                    {
                        "type": "text",
                        "text": "Also check the RSS feed uses the same codec.",
                    },
                ],
            },
            {"role": "assistant", "content": "Both now encode as UTF-8."},
        ],
    }


# --- Claude Code ------------------------------------------------------------------------


class ClaudeSession:
    """Lines of a Claude Code session file, with uuids and timestamps that count up."""

    def __init__(self):
        self.lines, self.count, self.parent = [], 0, None

    def _base(self, kind: str) -> dict:
        self.count += 1
        uuid = f"5e1d0000-0000-4000-8000-{self.count:012d}"
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/ledgerlite",
            "sessionId": "5e1d0000-aaaa-4bbb-8ccc-000000000001",
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": f"2026-03-02T10:{self.count // 60:02d}:"
            f"{self.count % 60:02d}.000Z",
        }
        self.parent = uuid
        return line

    def user(self, content):
        self.lines.append(
            {**self._base("user"), "message": {"role": "user", "content": content}}
        )

    def result(self, tool_id: str, content, error=False, then_text=None):
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
        if error:
            block["is_error"] = True
        blocks = [block] + ([{"type": "text", "text": then_text}] if then_text else [])
        line = {
            **self._base("user"),
            "message": {"role": "user", "content": blocks},
            "toolUseResult": {"interrupted": False, "isImage": False},
        }
        self.lines.append(line)

    def block(self, message_id: str, block: dict):
        """One content block of an API response: Claude Code writes one a line."""
        self.lines.append(
            {
                **self._base("assistant"),
                "requestId": f"req_{message_id}",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [block],
                    "stop_reason": None,
                    "usage": {"input_tokens": 12, "output_tokens": 40},
                },
            }
        )

    def other(self, kind: str, **fields):
        if kind in ("progress", "system"):
            self.lines.append({**self._base(kind), **fields})
        else:  # snapshot and queue records have no uuid chain
            self.lines.append({"type": kind, **fields})


def tool_use(tool_id, name, **arguments):
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}


def text(value):
    return {"type": "text", "text": value}


def claude_code_session() -> list:
    s = ClaudeSession()
    s.other(
        "queue-operation",
        operation="enqueue",
        timestamp="2026-03-02T09:59:58.000Z",
        sessionId="5e1d0000-aaaa-4bbb-8ccc-000000000001",
        content="wrap_text cuts words in half",
    )
    s.other(
        "file-history-snapshot",
        messageId="snap-1",
        isSnapshotUpdate=False,
        snapshot={"trackedFileBackups": {}, "timestamp": "2026-03-02T10:00:00.000Z"},
    )
    s.user(
        "wrap_text in ledgerlite/format.py cuts words in half when the width is small. "
        "Fix it and add a test."
    )
    s.block(
        "msg_01",
        {
            "type": "thinking",
            "thinking": "Read the function, then its tests.",
            "signature": "c2ln",
        },
    )
    s.block(
        "msg_01", text("I'll read the function and look for its tests at the same time.")
    )
    s.block("msg_01", tool_use("toolu_01", "Read", file_path="ledgerlite/format.py"))
    s.result("toolu_01", numbered_source("ledgerlite/format.py", 12))  # between its lines
    s.other(
        "progress",
        data={"type": "hook_progress", "hookName": "PostToolUse"},
        toolUseID="toolu_01",
    )
    s.block("msg_01", tool_use("toolu_02", "Grep", pattern="wrap_text", path="tests"))
    s.result("toolu_02", [text("tests/test_format.py:12: def test_wrap_text_basic():")])
    s.block("msg_02", text("There is one basic test. Let me run it."))
    s.block(
        "msg_02",
        tool_use("toolu_03", "Bash", command="python -m pytest tests/test_format.py -q"),
    )
    s.other(
        "progress",
        data={"type": "bash_progress", "output": "running..."},
        toolUseID="toolu_03",
    )
    s.result(
        "toolu_03",
        "Exit code 1\nFAILED tests/test_format.py::test_wrap_long_word\n"
        "1 failed, 7 passed in 0.21s",
        error=True,
    )
    s.block(
        "msg_03",
        tool_use(
            "toolu_04",
            "Edit",
            file_path="ledgerlite/format.py",
            old_string="return [text[i:i + width]",
            new_string="return textwrap.wrap(text, width) or ['']  #",
        ),
    )
    s.result("toolu_04", "The file ledgerlite/format.py has been updated.")
    s.other(
        "system",
        subtype="informational",
        level="info",
        content="Context left until auto-compact: 38%",
    )
    s.block("msg_04", text("wrap_text now breaks at spaces; the failing test passes."))
    s.user("Good. Also keep the leading indentation of each paragraph.")
    s.block(
        "msg_05",
        {
            "type": "thinking",
            "thinking": "textwrap has initial_indent.",
            "signature": "c2ln",
        },
    )
    s.block(
        "msg_05",
        tool_use(
            "toolu_05",
            "Edit",
            file_path="ledgerlite/format.py",
            old_string="textwrap.wrap(text, width)",
            new_string="textwrap.wrap(text, width, initial_indent=lead)",
        ),
    )
    s.result(
        "toolu_05",
        "The file ledgerlite/format.py has been updated.",
        then_text="And please run the whole suite this time.",
    )
    s.block("msg_06", tool_use("toolu_06", "Bash", command="python -m pytest -q"))
    s.result("toolu_06", pytest_output("test_format.py", 64))
    s.block("msg_07", text("All 64 tests pass. wrap_text keeps the indentation now."))
    s.other(
        "file-history-snapshot",
        messageId="snap-2",
        isSnapshotUpdate=True,
        snapshot={"trackedFileBackups": {"ledgerlite/format.py": {"version": 2}}},
    )
    return s.lines


# --- Codex CLI --------------------------------------------------------------------------


class Rollout:
    """Lines of a Codex rollout file."""

    def __init__(self):
        self.lines = []

    def add(self, kind: str, **payload):
        second = len(self.lines)
        self.lines.append(
            {
                "timestamp": f"2026-04-11T08:{second // 60:02d}:{second % 60:02d}.000Z",
                "type": kind,
                "payload": payload,
            }
        )

    def item(self, kind: str, **fields):
        self.add("response_item", type=kind, **fields)

    def message(self, role: str, words: str):
        part = "output_text" if role == "assistant" else "input_text"
        self.item("message", role=role, content=[{"type": part, "text": words}])

    def call(self, call_id: str, command: str):
        self.item(
            "function_call",
            name="shell_command",
            call_id=call_id,
            arguments=json.dumps({"command": command, "workdir": "/home/dev/tallyho"}),
        )

    def output(self, call_id: str, output):
        self.item("function_call_output", call_id=call_id, output=output)

    def tokens(self, total: int):
        self.add(
            "event_msg",
            type="token_count",
            info={
                "total_token_usage": {"input_tokens": total, "output_tokens": total // 20}
            },
        )

    def turn(self):
        self.add(
            "turn_context",
            cwd="/home/dev/tallyho",
            approval_policy="on-request",
            sandbox_policy={"type": "workspace-write"},
            model="gpt-5-codex",
            effort="medium",
        )


def shell(output: str, code: int = 0) -> str:
    return f"Exit code: {code}\nWall time: 0.4 seconds\nOutput:\n{output}"


def codex_rollout() -> list:
    r = Rollout()
    r.add(
        "session_meta",
        id="0199aa00-0000-7000-8000-000000000001",
        timestamp="2026-04-11T08:00:00.000Z",
        cwd="/home/dev/tallyho",
        originator="codex_cli_rs",
        cli_version="0.58.0",
        instructions=None,
        base_instructions={
            "text": "You are Codex, a coding agent in a terminal. Make small, "
            "tested changes and explain them briefly."
        },
    )
    r.message(
        "developer",
        "<permissions instructions>Writes are allowed inside the workspace."
        "</permissions instructions>",
    )
    r.message(
        "user",
        "<environment_context>\n  <cwd>/home/dev/tallyho</cwd>\n  <shell>bash</shell>"
        "\n</environment_context>",
    )
    task = "Add a --json flag to `tallyho report` that prints the totals as JSON."
    r.message("user", task)
    r.add("event_msg", type="user_message", message=task, images=[])
    r.turn()
    r.item("reasoning", summary=[], content=None, encrypted_content="gAAAAB-opaque-1")
    r.call("call_c1", "rg -n 'def report' src")
    r.call("call_c2", "cat src/tallyho/report.py")  # parallel with call_c1
    r.output("call_c1", shell("src/tallyho/cli.py:88:def report(args):\n"))
    r.output("call_c2", shell(numbered_source("src/tallyho/report.py", 12)))
    r.tokens(9100)
    r.item("reasoning", summary=[], content=None, encrypted_content="gAAAAB-opaque-2")
    r.message("assistant", "I'll add the flag and a JSON renderer next to the text one.")
    r.item(
        "custom_tool_call",
        name="apply_patch",
        call_id="call_c3",
        status="completed",
        input="*** Begin Patch\n*** Update File: src/tallyho/report.py\n@@\n"
        "+import json\n*** End Patch\n",
    )
    r.item(
        "custom_tool_call_output",
        call_id="call_c3",
        output=json.dumps(
            {
                "output": "Success. Updated the following files:\n"
                "M src/tallyho/report.py\n",
                "metadata": {"exit_code": 0, "duration_seconds": 0.0},
            }
        ),
    )
    r.call("call_c4", "python -m pytest -q tests/test_report.py")
    r.output(
        "call_c4",
        shell(
            "FAILED tests/test_report.py::test_json_flag - KeyError: 'total'\n"
            "1 failed, 9 passed in 0.52s\n",
            code=1,
        ),
    )
    r.item(
        "web_search_call",
        status="completed",
        action={"type": "search", "query": "argparse store_true default"},
    )
    r.item(
        "custom_tool_call",
        name="apply_patch",
        call_id="call_c5",
        status="completed",
        input="*** Begin Patch\n*** Update File: src/tallyho/report.py\n@@\n-    'sum'\n"
        "+    'total'\n*** End Patch\n",
    )
    r.item(
        "custom_tool_call_output",
        call_id="call_c5",
        output=json.dumps({"output": "Success.", "metadata": {"exit_code": 0}}),
    )
    r.call("call_c6", "python -m pytest -q")
    r.output("call_c6", shell(pytest_output("test_report.py", 48, project="tallyho")))
    done = "Added `--json`: `tallyho report --json` prints the totals as one JSON object."
    r.message("assistant", done)
    r.add("event_msg", type="agent_message", message=done)
    r.tokens(15800)
    again = "Thanks. Document the flag in the README too."
    r.message("user", again)
    r.add("event_msg", type="user_message", message=again, images=[])
    r.turn()
    r.call("call_c7", "grep -n 'tallyho report' README.md")
    r.output("call_c7", shell("41:    tallyho report [--month M]\n"))
    r.item(
        "custom_tool_call",
        name="apply_patch",
        call_id="call_c8",
        input="*** Begin Patch\n*** Update File: README.md\n@@\n"
        "-    tallyho report [--month M]\n"
        "+    tallyho report [--month M] [--json]\n*** End Patch\n",
    )
    r.item("custom_tool_call_output", call_id="call_c8", output="Success.")
    r.message("assistant", "The README lists --json now.")
    r.add("event_msg", type="agent_message", message="The README lists --json now.")
    return r.lines


def codex_event_users() -> list:
    """An older rollout: no base_instructions, and the user turns only as event_msg."""
    r = Rollout()
    r.add(
        "session_meta",
        id="0188bb00-0000-7000-8000-000000000002",
        timestamp="2026-01-20T14:00:00.000Z",
        cwd="/home/dev/atlas-docs",
        cli_version="0.31.0",
        instructions=None,
    )
    r.turn()
    r.add(
        "event_msg",
        type="user_message",
        message="Why does `make docs` fail on a clean checkout?",
        images=[],
    )
    r.item("reasoning", summary=[], content=None, encrypted_content="gAAAAB-opaque-3")
    r.item(
        "local_shell_call",
        call_id="call_d1",
        status="completed",
        action={
            "type": "exec",
            "command": ["bash", "-lc", "make docs"],
            "timeout_ms": 60000,
        },
    )
    r.output(
        "call_d1",
        json.dumps(
            {
                "output": "sphinx-build: not found\nmake: *** [docs] Error 127\n",
                "metadata": {"exit_code": 127, "duration_seconds": 0.1},
            }
        ),
    )
    r.item(
        "function_call",
        name="shell",
        call_id="call_d2",
        arguments=json.dumps({"command": ["bash", "-lc", "cat requirements-docs.txt"]}),
    )
    r.item(
        "function_call",
        name="shell",
        call_id="call_d3",
        arguments=json.dumps(
            {"command": ["bash", "-lc", "git log -3 --oneline -- Makefile"]}
        ),
    )
    # the outputs arrive in the other order; the loader puts them in call order
    r.output("call_d3", {"content": "fatal: not a git repository", "success": False})
    r.output(
        "call_d2",
        json.dumps({"output": "sphinx>=7\nfuro\n", "metadata": {"exit_code": 0}}),
    )
    answer = "Sphinx is only in requirements-docs.txt, which `make docs` never installs."
    r.message("assistant", answer)
    r.add("event_msg", type="agent_message", message=answer)
    r.tokens(4200)
    r.add(
        "event_msg",
        type="user_message",
        message="Install them into the venv and try again.",
        images=[],
    )
    r.item(
        "local_shell_call",
        call_id="call_d4",
        status="completed",
        action={
            "type": "exec",
            "command": [
                "bash",
                "-lc",
                "pip install -r requirements-docs.txt && make docs",
            ],
        },
    )
    r.output(
        "call_d4",
        json.dumps(
            {"output": build_log("sphinx-build", 45), "metadata": {"exit_code": 0}}
        ),
    )
    r.message("assistant", "Installed; `make docs` builds all 45 pages.")
    return r.lines


# --- SWE-agent and mini-swe-agent -------------------------------------------------------

SWE_SYSTEM = (
    "SETTING: You are an autonomous programmer working in a command line with a "
    "special file viewer. Solve the issue in the repository at /testbed."
)
SWE_TASK = (
    "<uploaded_files>\n/testbed\n</uploaded_files>\nI've uploaded a repository. "
    "<pr_description>\nconfy.load() ignores values set to 0 in the environment; "
    "CONFY_RETRIES=0 gives the default 3.\n</pr_description>\nMake the minimal change."
)


def swe_call(call_id: str, name: str, **arguments) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def sweagent_tools() -> dict:
    """A function-calling run: tool_call_ids lists, and call ids the model reused."""
    history = [
        {
            "role": "system",
            "content": SWE_SYSTEM,
            "agent": "main",
            "message_type": "system_prompt",
        },
        {
            "role": "user",
            "content": SWE_TASK,
            "agent": "main",
            "message_type": "observation",
            "tags": ["template"],
        },
    ]

    def step(thought, call, observation, as_string=False):
        history.append(
            {
                "role": "assistant",
                "content": thought,
                "thought": thought,
                "action": call["function"]["arguments"],
                "agent": "main",
                "tool_calls": json.dumps([call]) if as_string else [call],
                "message_type": "action",
            }
        )
        history.append(
            {
                "role": "tool",
                "content": f"OBSERVATION:\n{observation}",
                "agent": "main",
                "message_type": "observation",
                "tool_call_ids": [call["id"]],
            }
        )

    step(
        "Find the loader.",
        swe_call("call_00", "bash", command="grep -rn 'def load' /testbed"),
        "/testbed/confy/loader.py:30:def load(prefix='CONFY_'):",
    )
    step(
        "Open it.",
        swe_call(
            "call_00",
            "str_replace_editor",
            command="view",
            path="/testbed/confy/loader.py",
        ),
        numbered_source("confy/loader.py", 12),
        as_string=True,
    )  # the same id, next turn
    step(
        "Replace the truthiness test.",
        swe_call(
            "call_01",
            "str_replace_editor",
            command="str_replace",
            path="/testbed/confy/loader.py",
            old_str="if value:",
            new_str="if value is not None:",
        ),
        "No replacement was performed, old_str `if value:` did not appear verbatim in "
        "/testbed/confy/loader.py.",
    )
    step(
        "Check the exact spelling.",
        swe_call("call_02", "bash", command="grep -n 'if .*value' confy/loader.py"),
        "52:        if env_value:",
    )
    step(
        "Now with the right name.",
        swe_call(
            "call_00",
            "str_replace_editor",
            command="str_replace",  # reused again
            path="/testbed/confy/loader.py",
            old_str="if env_value:",
            new_str="if env_value is not None:",
        ),
        "The file /testbed/confy/loader.py has been edited.",
    )
    step(
        "Submit.",
        swe_call("call_03", "submit"),
        "diff --git a/confy/loader.py b/confy/loader.py\n-        if env_value:\n"
        "+        if env_value is not None:",
    )
    trajectory = [
        {
            "action": "grep -rn 'def load' /testbed",
            "observation": "...",
            "response": "Find the loader.",
            "thought": "Find the loader.",
            "execution_time": 0.1,
            "state": {"working_dir": "/testbed"},
        }
    ]
    return {
        "environment": "swe_main",
        "trajectory": trajectory,
        "history": history,
        "info": {
            "exit_status": "submitted",
            "submission": "diff --git a/confy/loader.py",
        },
        "replay_config": json.dumps({"agent": {"model": {"name": "gpt-4o"}}}),
    }


def sweagent_text() -> dict:
    """A text-action run: a long demonstration, then observations as user messages."""
    demo = (
        "Here is a demonstration of how to correctly accomplish this task.\n"
        + "".join(
            f"DISCUSSION\nStep {n}: look before editing.\n```\nopen file_{n}.py\n```\n"
            f"[File: /demo/file_{n}.py (120 lines total)]\n"
            for n in range(40)
        )
        + "(end of demonstration)"
    )
    history = [
        {
            "role": "system",
            "content": SWE_SYSTEM,
            "agent": "main",
            "message_type": "system_prompt",
        },
        {
            "role": "user",
            "content": demo,
            "agent": "main",
            "is_demo": True,
            "message_type": "demonstration",
        },
        {
            "role": "user",
            "content": SWE_TASK,
            "agent": "main",
            "message_type": "observation",
        },
    ]
    for thought, command, output in (
        (
            "First I reproduce the bug.",
            "python -c 'import confy; print(confy.load())'",
            'Traceback (most recent call last):\n  File "<string>", line 1\n'
            "ModuleNotFoundError: No module named 'confy'",
        ),
        (
            "The package is under src; open the loader.",
            "open src/confy/loader.py",
            numbered_source("src/confy/loader.py", 12),
        ),
        (
            "Edit line 52.",
            "edit 52:52\n        if env_value is not None:\nend_of_edit",
            "File updated. Please review the changes.",
        ),
        ("Done.", "submit", "diff --git a/src/confy/loader.py b/src/confy/loader.py"),
    ):
        history.append(
            {
                "role": "assistant",
                "content": f"DISCUSSION\n{thought}\n\n```\n{command}\n```",
                "thought": thought,
                "action": command,
                "agent": "main",
                "message_type": "action",
            }
        )
        history.append(
            {
                "role": "user",
                "content": f"{output}\n(Open file: n/a)\nbash-$",
                "agent": "main",
                "message_type": "observation",
            }
        )
    return {
        "environment": "swe_main",
        "trajectory": [],
        "history": history,
        "info": {"exit_status": "submitted"},
    }


def mini_observation(code: int, output: str) -> dict:
    return {
        "role": "user",
        "content": f"<returncode>{code}</returncode>\n<output>\n{output}</output>",
        "extra": {"returncode": code},
    }


def mini_action(thought: str, command: str) -> dict:
    return {
        "role": "assistant",
        "content": f"THOUGHT: {thought}\n\n```bash\n{command}\n```",
        "extra": {"actions": [{"command": command}], "cost": 0.002},
    }


def mini_swe_agent() -> dict:
    messages = [
        {
            "role": "system",
            "content": "You are a helpful assistant that can interact with a "
            "computer shell to solve programming tasks.",
        },
        {
            "role": "user",
            "content": "<pr_description>\nunits.to_celsius(32) returns 0.01, "
            "not 0.\n</pr_description>",
        },
        mini_action("Find the function.", "grep -rn to_celsius src"),
        mini_observation(0, "src/units/temp.py:8:def to_celsius(f):\n"),
        mini_action("Read the module.", "nl -ba src/units/temp.py"),
        mini_observation(0, numbered_source("src/units/temp.py", 12)),
        mini_action("Run the tests.", "python -m pytest -q tests/test_temp.py"),
        mini_observation(
            1, "FAILED tests/test_temp.py::test_freezing - assert 0.01 == 0\n"
        ),
        mini_action(
            "Use exact arithmetic and submit.",
            "sed -i 's/0.5555/5 \\/ 9/' src/units/temp.py && "
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff",
        ),
        {
            "role": "user",
            "content": "",
            "extra": {
                "exit_status": "Submitted",
                "submission": "diff --git a/src/units/temp.py",
            },
        },
    ]
    return {
        "info": {
            "mini_version": "2.0.0",
            "exit_status": "Submitted",
            "model_stats": {"instance_cost": 0.01, "api_calls": 4},
        },
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1",
    }


def mini_swe_agent_list() -> list:
    """The older plain list of {role, content}."""
    return [
        {"role": "system", "content": "You solve tasks with one bash command per reply."},
        {"role": "user", "content": "Make `slug('Ünïcode')` return 'unicode'."},
        {"role": "assistant", "content": "THOUGHT: look\n\n```bash\ncat slug.py\n```"},
        {
            "role": "user",
            "content": "<returncode>0</returncode>\n<output>\ndef slug(s):\n"
            "    return s.lower()\n</output>",
        },
        {
            "role": "assistant",
            "content": "THOUGHT: normalize first\n\n```bash\n"
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
        },
    ]


# --- OpenHands --------------------------------------------------------------------------


class Events:
    """An OpenHands event list; a model response is shared by the actions it made."""

    def __init__(self):
        self.events = []

    def add(self, **event):
        number = len(self.events)
        self.events.append(
            {
                "id": number,
                "timestamp": f"2026-05-07T16:{number // 60:02d}:{number % 60:02d}.000000",
                **event,
            }
        )
        return number

    def response(self, response_id: str, words: str, *calls):
        """The model response: (call id, function name, arguments) each."""
        return {
            "id": response_id,
            "model": "claude-sonnet-4-5",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": words,
                        "tool_calls": [
                            {
                                "id": i,
                                "type": "function",
                                "function": {
                                    "name": name,
                                    "arguments": json.dumps(arguments),
                                },
                            }
                            for i, name, arguments in calls
                        ],
                    },
                }
            ],
        }

    def act(self, action: str, response: dict, call: tuple, **args):
        meta = {
            "function_name": call[1],
            "tool_call_id": call[0],
            "model_response": response,
            "total_calls_in_response": len(
                response["choices"][0]["message"]["tool_calls"]
            ),
        }
        return self.add(
            source="agent",
            message=f"Running {action}",
            action=action,
            tool_call_metadata=meta,
            args=args,
        )

    def observe(self, kind: str, cause: int, content: str, call=None, **extras):
        event = {
            "source": "agent" if call else "environment",
            "message": kind,
            "cause": cause,
            "observation": kind,
            "content": content,
            "extras": extras,
        }
        if call:
            event["tool_call_metadata"] = {
                "function_name": call[1],
                "tool_call_id": call[0],
            }
        self.add(**event)


OH_TOOLS = [
    {
        "type": "function",
        "function": {"name": name, "description": name, "parameters": {"type": "object"}},
    }
    for name in ("execute_bash", "str_replace_editor", "think", "finish")
]


def openhands_events() -> list:
    e = Events()
    e.add(
        source="agent",
        message="You are OpenHands agent.",
        action="system",
        args={
            "content": "You are OpenHands agent, a helpful AI assistant that can "
            "interact with a computer to solve tasks.",
            "tools": OH_TOOLS,
            "openhands_version": "0.59.0",
            "agent_class": "CodeActAgent",
        },
    )
    task = "Make fetch_rates retry on HTTP 503, at most three times."
    e.add(
        source="user",
        message=task,
        action="message",
        args={"content": task, "image_urls": None, "wait_for_response": False},
    )
    recall = e.add(
        source="user",
        message="Retrieving content for: Make fetch_rates",
        action="recall",
        args={"recall_type": "workspace_context", "query": task},
    )
    e.add(
        source="environment",
        message="",
        observation="agent_state_changed",
        content="",
        extras={"agent_state": "running"},
    )
    e.observe(
        "recall", recall, "Added workspace context", recall_type="workspace_context"
    )
    h1 = ("toolu_h1", "execute_bash", {"command": "grep -n 'def fetch_rates' -r rates"})
    h2 = (
        "toolu_h2",
        "str_replace_editor",
        {"command": "view", "path": "/workspace/rates/client.py"},
    )
    r1 = e.response(
        "chatcmpl-h1", "I'll look at the client while searching for callers.", h1, h2
    )
    a = e.act(
        "run",
        r1,
        h1,
        command=h1[2]["command"],
        is_input=False,
        thought=r1["choices"][0]["message"]["content"],
    )
    b = e.act("read", r1, h2, path=h2[2]["path"], impl_source="oh_aci", view_range=None)
    e.observe(
        "run",
        a,
        "rates/client.py:22:def fetch_rates(base):",
        h1,
        command=h1[2]["command"],
        metadata={"exit_code": 0, "working_dir": "/workspace"},
    )
    e.observe("read", b, numbered_source("rates/client.py", 12), h2, path=h2[2]["path"])
    steps = [
        (
            "edit",
            (
                "toolu_h3",
                "str_replace_editor",
                {
                    "command": "str_replace",
                    "path": "/workspace/rates/client.py",
                    "old_str": "resp = get(url)",
                    "new_str": "resp = retry(get, url, on=(503,), times=3)",
                },
            ),
            "edit",
            "The file /workspace/rates/client.py has been edited.",
            {},
        ),
        (
            "run",
            ("toolu_h4", "execute_bash", {"command": "pytest -q tests/test_client.py"}),
            "run",
            "FAILED tests/test_client.py::test_retry_503 - NameError: name 'retry'\n"
            "1 failed, 5 passed",
            {"metadata": {"exit_code": 1}},
        ),
        (
            "think",
            ("toolu_h5", "think", {"thought": "retry is not imported."}),
            "think",
            "Your thought has been logged.",
            {},
        ),
        (
            "run",
            (
                "toolu_h6",
                "execute_bash",
                {
                    "command": "sed -i '1i from rates.util import retry'"
                    " rates/client.py && pytest -q"
                },
            ),
            "run",
            "6 passed in 0.31s",
            {"metadata": {"exit_code": 0}},
        ),
    ]
    for number, (action, call, kind, output, extras) in enumerate(steps, 2):
        response = e.response(f"chatcmpl-h{number}", "", call)
        cause = e.act(action, response, call, **call[2])
        e.observe(kind, cause, output, call, **extras)
    e.add(
        source="agent", message="", cause=None, observation="null", content="", extras={}
    )
    e.add(
        source="agent",
        message="",
        action="change_agent_state",
        args={"agent_state": "awaiting_user_input", "thought": ""},
    )
    finish = ("toolu_h7", "finish", {"message": "done"})
    e.act(
        "finish",
        e.response("chatcmpl-h6", "", finish),
        finish,
        final_thought="fetch_rates now retries a 503 up to three times.",
        outputs={},
        thought="",
    )
    e.add(
        source="environment",
        message="",
        observation="agent_state_changed",
        content="",
        extras={"agent_state": "finished"},
    )
    return e.events


def openhands_eval() -> dict:
    e = Events()
    e.add(
        source="agent",
        message="",
        action="system",
        args={
            "content": "You are OpenHands agent. Solve the issue in /workspace/pyfmt.",
            "tools": OH_TOOLS,
        },
    )
    task = "pyfmt collapses blank lines inside triple-quoted strings. Fix it."
    e.add(source="user", message=task, action="message", args={"content": task})
    e1 = (
        "call_e1",
        "str_replace_editor",
        {"command": "view", "path": "/workspace/pyfmt/fmt.py"},
    )
    cause = e.act(
        "read",
        e.response("resp-e1", "Opening the formatter.", e1),
        e1,
        path=e1[2]["path"],
    )
    e.observe(
        "error",
        cause,
        "Invalid `path` parameter: /workspace/pyfmt/fmt.py does not exist.",
        e1,
        error_id="",
    )
    e2 = ("call_e2", "execute_bash", {"command": "nl -ba src/pyfmt/lines.py"})
    e3 = ("call_e3", "execute_bash", {"command": "git status --short"})
    r2 = e.response("resp-e2", "Reading the line rules and the work tree.", e2, e3)
    a = e.act("run", r2, e2, command="nl -ba src/pyfmt/lines.py")
    b = e.act("run", r2, e3, command="git status --short")
    # answered first, placed second
    e.observe("run", b, "", e3, metadata={"exit_code": 0})
    lines = numbered_source("src/pyfmt/lines.py", 12)
    e.observe("run", a, lines, e2, metadata={"exit_code": 0})
    user_run = e.add(
        source="user", message="", action="run", args={"command": "python -V"}
    )
    e.observe("run", user_run, "Python 3.12.4", metadata={"exit_code": 0})
    e.add(
        source="agent",
        message="",
        action="message",
        args={
            "content": "The blank-line rule is in src/pyfmt/lines.py. Shall I change it?"
        },
    )
    e.add(source="user", message="", action="message", args={"content": "Yes, go ahead."})
    e4 = (
        "call_e4",
        "str_replace_editor",
        {
            "command": "str_replace",
            "path": "/workspace/src/pyfmt/lines.py",
            "old_str": "if not line:",
            "new_str": "if not line and not in_string:",
        },
    )
    cause = e.act("edit", e.response("resp-e3", "", e4), e4, **e4[2])
    e.observe(
        "edit", cause, "The file /workspace/src/pyfmt/lines.py has been edited.", e4
    )
    finish = ("call_e5", "finish", {})
    e.act(
        "finish",
        e.response("resp-e4", "Blank lines inside strings are kept now.", finish),
        finish,
        final_thought="",
        thought="",
    )
    return {
        "instance_id": "pyfmt__pyfmt-88",
        "instruction": task,
        "metadata": {
            "agent_class": "CodeActAgent",
            "max_iterations": 50,
            "llm_config": {"model": "claude-sonnet-4-5"},
        },
        "history": e.events,
        "test_result": {"git_patch": "diff --git a/src/pyfmt/lines.py"},
        "error": None,
    }


# --- Gemini CLI -------------------------------------------------------------------------


def gemini_call(call_id, name, args, output=None, error=None, status="success"):
    response = {"output": output} if error is None else {"error": error}
    return {
        "id": call_id,
        "name": name,
        "args": args,
        "status": status,
        "result": [
            {"functionResponse": {"id": call_id, "name": name, "response": response}}
        ],
        "timestamp": "2026-06-01T12:00:05.000Z",
        "displayName": name,
        "resultDisplay": output or error,
        "renderOutputAsMarkdown": False,
    }


def gemini_session() -> dict:
    def message(number, kind, content, **extra):
        return {
            "id": f"9a7b0000-{number:04d}",
            "timestamp": f"2026-06-01T12:00:{number:02d}.000Z",
            "type": kind,
            "content": content,
            **extra,
        }

    root = "/home/dev/gitstat"
    calls = [
        gemini_call(
            "view_file-1-aa",
            "view_file",
            {"absolute_path": f"{root}/gitstat/filters.py"},
            output=numbered_source("gitstat/filters.py", 12),
        ),
        gemini_call(
            "view_file-1-bb",
            "view_file",
            {"absolute_path": f"{root}/tests/filter.py"},
            error=f"File not found: {root}/tests/filter.py",
            status="error",
        ),
        gemini_call(
            "run_shell_command-1-cc",
            "run_shell_command",
            {"command": "pytest -q tests/test_filters.py"},
            output="Command: pytest -q tests/test_filters.py\nStdout: 2 failed, "
            "9 passed\nExit Code: 1",
        ),
    ]
    fix = gemini_call(
        "replace-2-dd",
        "replace",
        {
            "file_path": f"{root}/gitstat/filters.py",
            "old_string": "datetime.fromisoformat(since)",
            "new_string": "parse_aware(since)",
        },
        output="Successfully modified file.",
    )
    suite = gemini_call(
        "run_shell_command-3-ee",
        "run_shell_command",
        {"command": "pytest -q"},
        output=pytest_output("test_filters.py", 57, project="gitstat"),
    )
    return {
        "sessionId": "9a7b0000-1111-4222-8333-444455556666",
        "projectHash": "3f9c" * 16,
        "startTime": "2026-06-01T12:00:00.000Z",
        "lastUpdated": "2026-06-01T12:00:30.000Z",
        "messages": [
            message(
                1, "user", "The --since filter of gitstat ignores time zones. Fix it?"
            ),
            message(2, "info", "Checkpointing is enabled."),
            message(
                3,
                "gemini",
                "Reading the filter and its tests, and running them.",
                thoughts=[
                    {
                        "subject": "Plan",
                        "description": "Look at the parsing.",
                        "timestamp": "2026-06-01T12:00:03.000Z",
                    }
                ],
                tokens={"input": 5120, "output": 88, "cached": 0, "total": 5208},
                model="gemini-2.5-pro",
                toolCalls=calls,
            ),
            message(4, "gemini", "", toolCalls=[fix], model="gemini-2.5-pro"),
            message(
                5,
                "gemini",
                "`--since` values are now read as aware datetimes.",
                model="gemini-2.5-pro",
            ),
            message(6, "user", [{"text": "Thanks! Run the full suite once more."}]),
            message(7, "gemini", "", toolCalls=[suite], model="gemini-2.5-pro"),
            message(
                8, "gemini", [{"text": "All 57 tests pass."}], model="gemini-2.5-pro"
            ),
            message(9, "warning", "Approaching the daily request limit."),
        ],
    }


def gemini_session_jsonl() -> list:
    """The newer JSONL recording: a record written again in place, $set, and a rewind."""
    head = {
        "sessionId": "9a7b0000-7777-4888-8999-000011112222",
        "projectHash": "7e1d" * 16,
        "startTime": "2026-06-02T09:00:00.000Z",
        "lastUpdated": "2026-06-02T09:00:00.000Z",
        "kind": "main",
    }
    grep = gemini_call(
        "grep-1-aa",
        "search_file_content",
        {"pattern": "--verbose"},
        output="cli.py:14: parser.add_argument('--verbose')",
    )
    running = dict(grep, status="executing", result=None)
    edit = gemini_call(
        "replace-2-bb",
        "replace",
        {
            "file_path": "cli.py",
            "old_string": "'--verbose'",
            "new_string": "'--debug', '--verbose'",
        },
        output="Successfully modified file.",
    )

    def message(name, kind, content, **extra):
        return {
            "id": name,
            "timestamp": "2026-06-02T09:00:01.000Z",
            "type": kind,
            "content": content,
            **extra,
        }

    return [
        head,
        message("m1", "user", [{"text": "Rename the --verbose flag to --debug."}]),
        message("m2", "gemini", "", toolCalls=[running]),
        {"$set": {"lastUpdated": "2026-06-02T09:00:02.000Z"}},
        message("m2", "gemini", "", toolCalls=[grep]),  # the same record, now finished
        message("m3", "gemini", "It is defined once, in cli.py."),
        message("m4", "user", [{"text": "Actually call it --trace."}]),
        message("m5", "gemini", "OK, --trace it is."),
        {"$rewindTo": "m4"},
        message("m6", "user", [{"text": "Keep --verbose as an alias of --debug."}]),
        message("m7", "gemini", "", toolCalls=[edit]),
        message("m8", "gemini", "--debug is the flag now; --verbose still works."),
    ]


# --- broken files -----------------------------------------------------------------------


def damaged_jsonl() -> str:
    good = [
        json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}),
        json.dumps(
            {
                "type": "assistant",
                "message": {"id": "m1", "role": "assistant", "content": [text("Hello.")]},
            }
        ),
    ]
    broken = '{"type": "user" "message": {"role": "user", "content": "and now?"}}'
    return "\n".join(good + ["", broken]) + "\n"


def unknown_shape() -> dict:
    return {
        "title": "standup notes",
        "entries": [
            {"who": "ana", "said": "CI is green again."},
            {"who": "li", "said": "Release on Friday."},
        ],
    }


# --- writing ----------------------------------------------------------------------------


def as_json(value) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False) + "\n"


def as_jsonl(lines) -> str:
    return "".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
        for line in lines
    )


def fixtures() -> dict:
    """File name -> exact text of every fixture."""
    return {
        "openai_chat.json": as_json(openai_chat()),
        "openai_request.json": as_json(openai_request()),
        "openai_response.json": as_json(openai_response()),
        "anthropic_request.json": as_json(anthropic_request()),
        "claude_code_session.jsonl": as_jsonl(claude_code_session()),
        "codex_rollout.jsonl": as_jsonl(codex_rollout()),
        "codex_event_users.jsonl": as_jsonl(codex_event_users()),
        "sweagent_tools.traj": as_json(sweagent_tools()),
        "sweagent_text.traj": as_json(sweagent_text()),
        "mini_swe_agent.traj.json": as_json(mini_swe_agent()),
        "mini_swe_agent_list.json": as_json(mini_swe_agent_list()),
        "openhands_events.json": as_json(openhands_events()),
        "openhands_eval.json": as_json(openhands_eval()),
        "gemini_session.json": as_json(gemini_session()),
        "gemini_session.jsonl": as_jsonl(gemini_session_jsonl()),
        "damaged.jsonl": damaged_jsonl(),
        "unknown_shape.json": as_json(unknown_shape()),
    }


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, content in fixtures().items():
        (OUT / name).write_text(content, encoding="utf-8")
        print(f"wrote {(OUT / name).relative_to(ROOT)} ({len(content.encode()):,} bytes)")


if __name__ == "__main__":
    sys.exit(main())
