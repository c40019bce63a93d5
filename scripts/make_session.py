"""Write the bundled session: data/workspace/ and data/session.json.

Deterministic (no clock, a fixed random seed), so running it again gives
byte-identical files; `make data` runs it and a test checks the committed files
match. The story: an agent is asked whether mini-agent v0.3 can ship tomorrow and
investigates a small workspace with 13 tool calls before answering.

The article's own workspace is not published, so this one was written to be
believable and sized so that replaying it reproduces the article's figures (see
the fidelity table in docs/fidelity.md). The size knobs are the constants below; nothing
here knows the figures themselves.
"""

import datetime
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
WORKSPACE = DATA / "workspace"

NOTES_LINES = 200  # the article: a 200-line notes file ...
NOTES_WIDTH = 81  # ... of 16,400 characters: 200 lines of 81 characters plus a newline
BUILD_LOG_TEST_LINES = 86  # size knobs for the uncompressed baseline
REPORT_PASSED_LINES = 78
# nightly build number -> (date, commit); the flaky parallel test failed in some
NIGHTLIES = {
    405: ("2026-10-21", "3e90a1b"),
    406: ("2026-10-22", "c2d7f05"),
    407: ("2026-10-23", "e61b8d2"),
    408: ("2026-10-24", "51d0c7e"),
    409: ("2026-10-25", "a8e3b19"),
    410: ("2026-10-26", "0f2c6d4"),
    411: ("2026-10-27", "77b91ae"),
    412: ("2026-10-28", "9c41e2a"),
}
FLAKY_NIGHTLIES = {405, 409, 411}

SYSTEM_PROMPT = (
    "你是 mini-agent，一个在本地工作区里做只读调查的编码助手。"
    "可用工具：read_file 读文件，list_dir 列目录，search_text 搜索。"
    "先查证再下结论，结论里引用文件路径和具体数字。"
)
TASK = (
    "v0.3 计划明天发布。根据工作区里的笔记、构建日志、配置和测试报告，"
    "找出未解决的发布阻塞项，给出能否发布的结论。"
)

# --- long_notes.txt: the team's running log, one fixed-width row per entry ----------

AREAS = ["loop", "tools", "compress", "ci", "docs", "release", "tests", "model"]
OWNERS = ["lin", "zhao", "chen", "wu", "maya", "omar"]
ROUTINE_NOTES = [
    "standup: no blockers",
    "review of loop refactor, 2 nits left",
    "merged PR #{n}: typo fixes in docs",
    "bumped ruff to 0.8, no new findings",
    "cleaned up old branches",
    "pair session on the tool registry",
    "triaged {n} new issues, none urgent",
    "renamed run_tools -> run_tool_calls",
    "added type hints to loop.py",
    "docs: explained max_steps in README",
    "CI cache hit rate back to 90%",
    "flake8 -> ruff migration done",
    "wrote ADR-{n}: keep stdlib-only core",
    "benchmark: 14 rounds in {n} ms",
    "retro: fewer meetings, more pairing",
    "fixed Windows path bug in list_dir",
    "search_text now skips binary files",
    "added golden trace for M2 errors",
    "updated demo gif in README",
    "merged PR #{n}: scripted model cleanup",
    "reviewed aging header format",
    "rolling summary keeps last 4 msgs",
    "moved fixtures to tests/fixtures/",
    "read_file limit raised to 64 KiB",
    "pinned python 3.11 in CI image",
]
# Facts the investigation will depend on, at fixed rows.
PLANTED_NOTES = {
    40: ("tests", "wu", "test_parallel_calls flaky on runner-2"),
    71: ("tools", "lin", "tool_timeout_s=30 may be low for parallel"),
    118: ("ci", "chen", "nightly 10-28 FAILED: E2BIG in run_shell"),
    150: ("release", "maya", "checklist: docs/release_checklist.md"),
    176: ("ci", "chen", "E2BIG fix (#58) still in review"),
    189: ("tests", "wu", "test_parallel_calls failed 3/10 runs"),
}


# The log runs from the start of the cycle to the day before the release; the nightly
# failure of 10-28 is logged on that day (row 118), the rest follows in the last two
# weeks.
LOG_START, NIGHTLY_FAILED, LOG_END = (
    datetime.date(2026, 9, 1),
    datetime.date(2026, 10, 28),
    datetime.date(2026, 11, 10),
)
NIGHTLY_FAILED_ROW = 118


def _log_date(row: int) -> datetime.date:
    """Dates rise with the rows: evenly up to the nightly failure, then evenly to the
    end."""
    if row <= NIGHTLY_FAILED_ROW:
        return LOG_START + datetime.timedelta(
            days=row * (NIGHTLY_FAILED - LOG_START).days // NIGHTLY_FAILED_ROW
        )
    rows_after = NOTES_LINES - 4 - NIGHTLY_FAILED_ROW
    return NIGHTLY_FAILED + datetime.timedelta(
        days=(row - NIGHTLY_FAILED_ROW) * (LOG_END - NIGHTLY_FAILED).days // rows_after
    )


def _row(date: str, area: str, owner: str, note: str) -> str:
    note_width = NOTES_WIDTH - len(f"| {date} | {area:<8} | {owner:<5} |  |")
    return f"| {date} | {area:<8} | {owner:<5} | {note:<{note_width}} |"


def _rule(text: str) -> str:
    """A decoration line `==== text ====` of NOTES_WIDTH characters (CJK counts as
    one)."""
    return f"==== {text} ".ljust(NOTES_WIDTH, "=")


def long_notes() -> str:
    rng = random.Random(3)
    lines = [
        _rule("mini-agent team log, v0.3 cycle (newest last)"),
        _row("date      ", "area", "owner", "note"),
    ]
    for row in range(NOTES_LINES - 3):
        date = _log_date(row).isoformat()
        if row in PLANTED_NOTES:
            area, owner, note = PLANTED_NOTES[row]
        else:
            area, owner = rng.choice(AREAS), rng.choice(OWNERS)
            note = rng.choice(ROUTINE_NOTES).format(n=rng.randint(12, 97))
        lines.append(_row(date, area, owner, note))
    lines.append(_rule("交接：before tagging, check the build and the timeout"))
    assert all(len(line) == NOTES_WIDTH for line in lines), (
        "every notes line has the same width"
    )
    return "\n".join(lines) + "\n"


# --- the rest of the workspace ---------------------------------------------------------

README = """# mini-agent

A teaching agent harness: a loop, three read-only tools and context compression.
Version 0.3 adds the compression module (tool-result aging, rolling summary).

- `src/mini_agent/` the package
- `docs/` release process and design notes
- `logs/` CI output, newest build last
"""

CHANGELOG = """# Changelog

## v0.3 (unreleased)
- compression: tool-result aging and rolling summary
- loop: optional context_window argument

## v0.2
- structured tool errors with codes
"""

AGENT_TOML = """# mini-agent runtime configuration (read at start-up)

[model]
name = "scripted"
max_output_tokens = 1024

[loop]
max_steps = 50
stop_on_tool_error = false

[tools]
# seconds a single tool call may run before it is cancelled
tool_timeout_s = 30
# parallel tool calls share this pool
max_parallel_calls = 4
read_file_max_bytes = 65536
run_shell_max_output = 1048576   # 1 MiB; larger output is passed via argv (see #58)

[compression]
threshold_tokens = 1200
aging_head_chars = 160
aging_tail_chars = 120
aging_min_chars = 240
summary_protect_tail = 4

[paths]
workspace = "."
notes = "long_notes.txt"
release_doc = "docs/RELEASE.md"

[retry]
# retries apply to transient tool errors only (not to E2BIG or timeouts)
max_attempts = 2
backoff_s = [5, 10]

[logging]
trace_dir = "traces"
level = "info"
keep_days = 14
"""

RELEASE_MD = """# Releasing mini-agent

This file is the release process. The checklist that used to live in
docs/release_checklist.md was merged into section 3 below on 2026-11-02.

## 1. Branch and freeze

1. Announce the freeze in the team log (long_notes.txt) one day ahead.
2. Create `release/vX.Y` from main. Only fixes for release blockers land after that.
3. A release blocker is: a failing nightly build, a failing or flaky test in the
   integration suite, or a configuration value known to break a supported workflow.

## 2. Build and test

1. The nightly build (logs/build.log) must be green for the release commit.
   A red nightly is a blocker even when the failure "looks unrelated".
2. Run the full suite three times: `make test-all REPEAT=3`. Any test that fails
   once in three runs is flaky and counts as failing.
3. Keep the test report (tests/report.txt) with the release notes.

## 3. Checklist

- [ ] nightly build green on the release commit
- [ ] no failing or flaky tests in tests/report.txt
- [ ] config/agent.toml reviewed: tool_timeout_s must be at least 60 since
      parallel tool calls (#41) share one timeout budget
- [ ] run_shell_max_output documented; outputs above it must not go through argv
- [ ] CHANGELOG.md lists every user-visible change and every known issue
- [ ] docs build without warnings
- [ ] version bumped in src/mini_agent/__init__.py

## 4. Tag and publish

1. Tag `vX.Y.0` on the release branch and push the tag.
2. CI publishes the wheel; check it installs in a clean venv.
3. Post the release notes, including known issues, in the team log.

## 5. After the release

1. Merge the release branch back to main.
2. Reopen main for features.
3. Write the retro notes within a week.

## Appendix: why the timeout rule exists

Since #41 the loop runs up to max_parallel_calls tool calls at once, and the
timeout is a budget for the whole batch, not for each call. With four parallel
searches over a large workspace, 30 seconds was exceeded in CI on 2026-10-21
(test_parallel_calls). Until per-call timeouts land, the budget must be at least
60 seconds. The rule is checked by hand during the release; see section 3.
"""

SOURCES = {
    "__init__.py": '__version__ = "0.3.0.dev0"\n',
    "loop.py": "def run_loop(model, messages, tools, *, context_window=None, "
    "max_steps=50):\n    ...\n",
    "tools.py": (
        "def run_shell(command, *, max_output=1048576):\n"
        "    # TODO(#58): large outputs still go through argv and fail with E2BIG\n"
        "    ...\n"
    ),
    "compression.py": "class ContextWindow:\n    threshold = 1200\n",
}

DOCS_EXTRA = {
    "design.md": "# Design\n\nloop -> model adapter -> tools; compression sits before "
    "every model call.\n",
    "faq.md": "# FAQ\n\nWhy stdlib only? So the teaching code runs anywhere without "
    "installs.\n",
}


def build_log() -> str:
    """The last nightly builds, newest last: the E2BIG failure repeats in each one."""
    rng = random.Random(28)
    modules = [
        "test_loop",
        "test_tools",
        "test_tokens",
        "test_aging",
        "test_summary",
        "test_window",
        "test_trace",
    ]
    lines = [f"CI log: the last {len(NIGHTLIES)} nightly builds of main, newest last"]
    for number, (date, commit) in NIGHTLIES.items():
        lines += [
            "",
            f"nightly #{number}  {date}  commit {commit}  runner-2 (debian-12, python "
            "3.11)",
            "step checkout ........ ok",
            f"step install ......... ok ({rng.randint(380, 460) / 10} s)",
            "step lint ............ ok",
            "step test-unit ....... started",
        ]
        for case in range(BUILD_LOG_TEST_LINES):
            module = modules[case % len(modules)]
            lines.append(
                f"  tests/{module}.py::case_{case:03d} PASSED  [{rng.randint(2, 95):>3} "
                "ms]"
            )
        parallel = "FAILED (timeout)" if number in FLAKY_NIGHTLIES else "PASSED"
        lines += [
            f"  tests/test_parallel.py::test_parallel_calls {parallel}",
            f"step test-unit ....... {'FAILED' if number in FLAKY_NIGHTLIES else 'ok'}",
            "step test-integration  started",
            "  tests/integration/test_shell.py::test_large_output",
            "    run_shell output of 1,342,177 bytes is passed via argv (#58)",
            "    OSError: [Errno 7] Argument list too long: E2BIG",
            "    retry 1/2 after 5 s: E2BIG again",
            "    retry 2/2 after 10 s: E2BIG again, giving up",
            "  tests/integration/test_shell.py::test_large_output FAILED",
            f"nightly #{number} FAILED: E2BIG in run_shell (#58); exit code 2",
        ]
    return "\n".join(lines) + "\n"


def test_report() -> str:
    rng = random.Random(21)
    lines = [
        "pytest report: make test-all REPEAT=3  (2026-11-10, runner-2)",
        "platform linux, python 3.11.9, pytest 8.3.3",
        "",
    ]
    for number in range(REPORT_PASSED_LINES):
        run = 1 + number % 3
        lines.append(
            f"run {run}  tests/test_{['loop', 'tools', 'window', 'trace'][number % 4]}.py::"
            f"case_{number:03d} PASSED ({rng.randint(1, 60)} ms)"
        )
    lines += [
        "run 2  tests/test_parallel.py::test_parallel_calls FAILED (30.0 s)",
        "       TimeoutError: batch of 4 tool calls exceeded tool_timeout_s=30",
        "run 3  tests/test_parallel.py::test_parallel_calls PASSED (27.9 s)",
        "",
        "summary: 3 runs, 1 flaky test (test_parallel_calls failed 1 of 3)",
        "verdict: NOT green; flaky counts as failing (docs/RELEASE.md 2.2)",
    ]
    return "\n".join(lines) + "\n"


def session_replies() -> list:
    steps = [
        ("先读 long_notes.txt 了解发布状态。", "read_file", {"path": "long_notes.txt"}),
        ("笔记提到构建和超时，先看工作区里有哪些文件。", "list_dir", {"path": "."}),
        (
            "笔记说 10-28 夜间构建失败，读 logs/build.log 查失败原因。",
            "read_file",
            {"path": "logs/build.log"},
        ),
        (
            "日志报 E2BIG，搜一下它在工作区里出现在哪些地方，修复是否已合入。",
            "search_text",
            {"pattern": "E2BIG"},
        ),
        (
            "笔记要求发布前对照 docs/release_checklist.md，读这份清单。",
            "read_file",
            {"path": "docs/release_checklist.md"},
        ),
        (
            "清单文件不存在，列出 docs 目录看它被移到了哪里。",
            "list_dir",
            {"path": "docs"},
        ),
        (
            "清单可能并进了发布流程文档，读 docs/RELEASE.md。",
            "read_file",
            {"path": "docs/RELEASE.md"},
        ),
        (
            "RELEASE.md 要求超时至少 60 秒，读 config/agent.toml。",
            "read_file",
            {"path": "config/agent.toml"},
        ),
        (
            "配置里 tool_timeout_s = 30，搜超时的记录。",
            "search_text",
            {"pattern": "timeout"},
        ),
        (
            "测试报告里有超时失败，读 tests/report.txt。",
            "read_file",
            {"path": "tests/report.txt"},
        ),
        (
            "test_parallel_calls 三次挂一次，搜它的历史记录。",
            "search_text",
            {"pattern": "test_parallel_calls"},
        ),
        (
            "看 CHANGELOG.md 有没有记录这两个已知问题。",
            "read_file",
            {"path": "CHANGELOG.md"},
        ),
        (
            "最后看 src/mini_agent，#58 的修复进代码了吗？",
            "list_dir",
            {"path": "src/mini_agent"},
        ),
    ]
    replies = []
    for number, (thought, tool, arguments) in enumerate(steps, start=1):
        replies.append(
            {
                "role": "assistant",
                "content": thought,
                "tool_calls": [
                    {
                        "id": f"call_{number:02d}",
                        "type": "function",
                        "function": {
                            "name": tool,
                            "arguments": json.dumps(arguments, ensure_ascii=False),
                        },
                    }
                ],
            }
        )
    replies.append(
        {
            "role": "assistant",
            "content": (
                "结论：v0.3 明天不能发布。1. nightly #412 因 E2BIG 失败，#58 未合入；"
                "2. tool_timeout_s=30 低于要求的 60，test_parallel_calls 不稳定。"
            ),
        }
    )
    return replies


PROJECT_FILES = {
    "Makefile": "test:\n\tpython -m unittest discover -s tests\n",
    "pyproject.toml": '[project]\nname = "mini-agent"\nversion = '
    '"0.3.0.dev0"\nrequires-python = ">=3.11"\n',
    "LICENSE": "MIT License\n\nCopyright (c) 2026 the mini-agent authors\n",
    ".gitignore": "__pycache__/\n.venv/\ntraces/\n",
    "SECURITY.md": "# Security\n\nReport vulnerabilities privately to the maintainers.\n",
    "scripts/dump_trace.py": "# prints every trace record of a run\n",
    "CONTRIBUTING.md": "# Contributing\n\nOne change per PR; every PR needs a test and "
    "a line in CHANGELOG.md.\n",
}


def workspace_files() -> dict:
    files = {
        **PROJECT_FILES,
        "long_notes.txt": long_notes(),
        "README.md": README,
        "CHANGELOG.md": CHANGELOG,
        "config/agent.toml": AGENT_TOML,
        "docs/RELEASE.md": RELEASE_MD,
        "logs/build.log": build_log(),
        "tests/report.txt": test_report(),
    }
    files.update({f"src/mini_agent/{name}": text for name, text in SOURCES.items()})
    files.update({f"docs/{name}": text for name, text in DOCS_EXTRA.items()})
    return files


def session_document() -> dict:
    return {
        "name": "mini-agent v0.3 release check (13 tool calls)",
        "workspace": "workspace",
        "system": SYSTEM_PROMPT,
        "task": TASK,
        "replies": session_replies(),
    }


def main() -> None:
    if WORKSPACE.exists():
        for path in sorted(WORKSPACE.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
    for relative, text in workspace_files().items():
        path = WORKSPACE / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    text = json.dumps(session_document(), ensure_ascii=False, indent=2) + "\n"
    (DATA / "session.json").write_text(text, encoding="utf-8")
    print(f"wrote {DATA / 'session.json'} and {len(workspace_files())} workspace files")


if __name__ == "__main__":
    main()
