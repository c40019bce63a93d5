"""Write the recorded transcripts in data/transcripts/ for `python -m minilib compress`
and notebook 07.

Deterministic (fixed seeds, no clock): running it again gives byte-identical files,
and a test checks that the committed files are exactly what it writes. Never edit
the files by hand. Four transcripts, in the three shapes the loader accepts:

- coding_agent_fix.json: a chat-completions request ({"model", "tools", "messages"}).
  An English coding agent fixes a failing test: long pytest runs, parallel file
  reads, a missing file, a failing lint, a long git diff.
- cjk_refactor.jsonl: JSONL, one message a line. A Chinese-speaking user and agent
  rename a config key across a service; CJK logs and docs, a timeout, parallel
  searches, and a second user turn half-way.
- agent_trajectory.json: the agent-trajectory dataset shape: tool_calls stored as a
  JSON string, arguments as objects, some content as a list of text parts.
- m3_release_check.json: the bundled session (data/session.json), uncompressed, as a
  plain JSON list. Replaying it gives exactly the table of `python -m minilib run`.
"""

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "transcripts"
sys.path.insert(0, str(ROOT))

# noqa: E402  (the checkout's own minilib)
from minilib.session import load_session, run_baseline


class Transcript:
    """Builds a chat-completions message list with OpenAI-style call ids from a seeded
    generator."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.messages = []

    def _call_id(self) -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return "call_" + "".join(self.rng.choice(alphabet) for _ in range(24))

    def system(self, text):
        self.messages.append({"role": "system", "content": text})

    def user(self, text):
        self.messages.append({"role": "user", "content": text})

    def say(self, text):
        self.messages.append({"role": "assistant", "content": text})

    def act(self, text, *calls):
        """An assistant message making `calls` ((name, arguments, result[, error code])
        each), then the results."""
        ids = [self._call_id() for _ in calls]
        self.messages.append(
            {
                "role": "assistant",
                "content": text,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": call[0],
                            "arguments": json.dumps(call[1], ensure_ascii=False),
                        },
                    }
                    for call_id, call in zip(ids, calls)
                ],
            }
        )
        for call_id, call in zip(ids, calls):
            result = {"role": "tool", "tool_call_id": call_id, "content": call[2]}
            if len(call) > 3:
                result["error"] = {"code": call[3], "message": call[2].splitlines()[0]}
            self.messages.append(result)


def declare(name, description, **parameters):
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": kind} for key, kind in parameters.items()},
                "required": list(parameters),
            },
        },
    }


# --- 1. an English coding agent fixing a failing test
# ------------------------------------


def pytest_run(rng, failing, total=214):
    lines = [
        "============================= test session starts "
        "==============================",
        "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0",
        "rootdir: /repo",
        "configfile: pyproject.toml",
        "plugins: cov-5.0.0, xdist-3.6.1",
        f"collected {total} items",
        "",
    ]
    files = [
        "tests/test_cli.py",
        "tests/test_config.py",
        "tests/test_durations.py",
        "tests/test_io.py",
        "tests/test_parser.py",
        "tests/test_report.py",
        "tests/test_scheduler.py",
        "tests/test_units.py",
    ]
    for file in files:
        marks = "".join(
            "F" if (file, n) in failing else "." for n in range(total // len(files))
        )
        lines.append(f"{file} {marks}")
    lines.append("")
    if failing:
        lines.append(
            "=================================== FAILURES "
            "==================================="
        )
        for file, number in sorted(failing):
            name = f"test_parse_duration_case_{number}"
            lines += [
                f"___________________________ {name} ___________________________",
                "",
                f"    def {name}():",
                f'>       assert parse_duration("1h{number}m") == {3600 + 60 * number}',
                f"E       AssertionError: assert {3600 + number} == {3600 + 60 * number}",
                f'E        +  where {3600 + number} = parse_duration("1h{number}m")',
                "",
                f"{file}:{40 + number}: AssertionError",
            ]
            lines += [
                f"    frame {depth}: src/timekit/parser.py:{60 + depth} in _unit_seconds"
                for depth in range(6)
            ]
        lines.append(
            "=========================== short test summary info "
            "============================"
        )
        lines += [
            f"FAILED {file}::test_parse_duration_case_{number} - AssertionError"
            for file, number in sorted(failing)
        ]
    seconds = rng.randint(310, 390) / 100
    summary = (
        f"{len(failing)} failed, {total - len(failing)} passed"
        if failing
        else f"{total} passed"
    )
    lines.append(f"{'=' * 20} {summary}, 3 warnings in {seconds}s {'=' * 20}")
    return "\n".join(lines) + "\n"


def python_module(rng, name, functions):
    lines = [
        f'"""{name}: parsing of human-readable durations and sizes."""',
        "",
        "import re",
        "",
        'UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}',
        "",
        "",
    ]
    for function in functions:
        lines += [
            f"def {function}(text: str) -> int:",
            f'    """Parse {function.split("_")[-1]} values such as 1h30m."""',
        ]
        for step in range(rng.randint(8, 14)):
            lines.append(
                f"    value_{step} = len(text) * {rng.randint(2, 99)}  # step {step}"
            )
        lines += [
            "    total = 0",
            '    for amount, unit in re.findall(r"(\\d+)([smhd])", text):',
            "        total += int(amount) * UNITS.get(unit, 1)"
            if function != "_unit_seconds"
            else '        total += int(amount) * (1 if unit == "m" else UNITS[unit])  # '
            "bug: minutes as seconds",
            "    return total",
            "",
            "",
        ]
    return "\n".join(lines)


def coding_agent_fix() -> dict:
    rng = random.Random(7)
    t = Transcript(seed=70)
    t.system(
        "You are a coding agent working in a git checkout at /repo. Use run_shell to "
        "run commands, read_file "
        "to read files and apply_patch to edit them. Run the tests before and after "
        "every change, keep "
        "changes minimal, and finish with a short report of what you changed and why."
    )
    t.user(
        "CI is red on main: tests/test_durations.py fails since yesterday's refactor of "
        "timekit.parser. "
        "Find the cause, fix it, and make sure the whole suite and the linter pass."
    )
    failing = {("tests/test_durations.py", n) for n in (3, 7, 11, 19)}
    t.act(
        "Let me reproduce the failure first.",
        ("run_shell", {"command": "pytest -q"}, pytest_run(rng, failing)),
    )
    t.act(
        "All four failures are minute values in parse_duration. I'll read the parser "
        "and the failing test together.",
        (
            "read_file",
            {"path": "src/timekit/parser.py"},
            python_module(
                rng, "timekit.parser", ["parse_duration", "_unit_seconds", "parse_size"]
            ),
        ),
        (
            "read_file",
            {"path": "tests/test_durations.py"},
            "\n".join(
                f"def test_parse_duration_case_{n}():\n    assert "
                f'parse_duration("1h{n}m") == {3600 + 60 * n}\n'
                for n in range(24)
            ),
        ),
    )
    t.act(
        "_unit_seconds treats 'm' as 1 second. Who else calls it?",
        (
            "run_shell",
            {"command": "grep -rn _unit_seconds src tests"},
            "\n".join(
                f"src/timekit/{module}.py:{rng.randint(10, 200)}:    seconds = "
                "_unit_seconds(part)"
                for module in ("parser", "parser", "scheduler", "report", "units", "cli")
            )
            + "\n",
        ),
    )
    t.act(
        "The refactor notes should say why minutes changed.",
        (
            "read_file",
            {"path": "docs/refactor-notes.md"},
            "error NOT_FOUND: no such file: docs/refactor-notes.md",
            "NOT_FOUND",
        ),
    )
    t.act(
        "No notes; git log will tell.",
        (
            "run_shell",
            {"command": "git log --oneline -n 40"},
            "\n".join(
                f"{rng.getrandbits(28):07x} {message}"
                for message in [
                    "refactor(parser): one unit table for durations and sizes"
                ]
                + [
                    f"chore: {rng.choice(['bump deps', 'fix typo', 'update CI image', 'tidy imports'])}"
                    for _ in range(39)
                ]
            )
            + "\n",
        ),
    )
    t.act(
        "The refactor special-cased 'm' to mean minutes-or-megabytes and got it "
        "backwards. Fixing _unit_seconds.",
        (
            "apply_patch",
            {
                "path": "src/timekit/parser.py",
                "patch": '-        total += int(amount) * (1 if unit == "m" else '
                "UNITS[unit])\n"
                "+        total += int(amount) * UNITS[unit]",
            },
            "patched src/timekit/parser.py (1 hunk)",
        ),
    )
    t.act(
        "Re-running the suite.",
        ("run_shell", {"command": "pytest -q"}, pytest_run(rng, set())),
    )
    t.act(
        "Tests pass. Lint and the diff, in parallel.",
        (
            "run_shell",
            {"command": "ruff check src tests"},
            "exit code 1\n"
            + "\n".join(
                f"src/timekit/parser.py:{20 + n}:5: F841 Local variable `value_{n}` is "
                "assigned to but never used"
                for n in range(14)
            )
            + "\nFound 14 errors.\n[*] 0 fixable with the `--fix` option.\n",
            "EXIT_1",
        ),
        (
            "run_shell",
            {"command": "git diff"},
            "diff --git a/src/timekit/parser.py b/src/timekit/parser.py\nindex "
            "3f2a9c1..8be02d4 100644\n"
            "--- a/src/timekit/parser.py\n+++ b/src/timekit/parser.py\n@@ -31,7 +31,7 "
            "@@\n"
            + "\n".join(
                f"     value_{n} = len(text) * {n + 2}  # step {n}" for n in range(12)
            )
            + '\n-        total += int(amount) * (1 if unit == "m" else UNITS[unit])\n'
            "+        total += int(amount) * UNITS[unit]\n",
        ),
    )
    t.act(
        "The F841 findings are old (they predate the refactor, see git blame); main's "
        "CI runs ruff with "
        "--exit-zero on src/timekit. Checking the CI config to be sure.",
        (
            "read_file",
            {"path": ".github/workflows/ci.yml"},
            "name: ci\non: [push, pull_request]\njobs:\n  test:\n    runs-on: "
            "ubuntu-24.04\n    steps:\n"
            "      - uses: actions/checkout@v4\n      - uses: actions/setup-python@v5\n "
            "       with: {python-version: '3.11'}\n"
            "      - run: pip install -e .[test]\n      - run: ruff check --exit-zero "
            "src/timekit\n      - run: pytest -q\n",
        ),
    )
    t.say(
        "Fixed. Cause: the refactor of timekit.parser made _unit_seconds count 'm' as 1 "
        "second "
        "(src/timekit/parser.py), so every duration with minutes was off (4 failures in "
        "tests/test_durations.py). The fix uses the unit table for every unit. All 214 "
        "tests pass; the 14 "
        "ruff F841 findings predate the change and CI runs ruff with --exit-zero."
    )
    tools = [
        declare("run_shell", "Run a shell command in /repo", command="string"),
        declare("read_file", "Read a file of the checkout", path="string"),
        declare(
            "apply_patch",
            "Apply a unified diff to one file",
            path="string",
            patch="string",
        ),
    ]
    return {"model": "gpt-4.1-2025-04-14", "tools": tools, "messages": t.messages}


# --- 2. a Chinese-language refactor, JSONL
# ------------------------------------------------


def cjk_service_log(rng, lines):
    events = [
        "订单已创建",
        "库存扣减成功",
        "支付回调超时，重试中",
        "读取配置 payment.timeout_ms",
        "缓存未命中，回源查询",
        "用户会话已刷新",
        "消息已投递到队列 orders.v2",
    ]
    return (
        "\n".join(
            f"2026-11-{1 + n // 40:02d} 0{n % 10}:{n % 60:02d}:{(n * 7) % 60:02d} "
            f"[{rng.choice(['INFO', 'INFO', 'WARN'])}] order-svc: {rng.choice(events)} "
            f"(trace={rng.getrandbits(32):08x})"
            for n in range(lines)
        )
        + "\n"
    )


def cjk_refactor() -> list:
    rng = random.Random(11)
    t = Transcript(seed=110)
    t.system(
        "你是一个在代码仓库里工作的编程助手。可用工具：read_file 读文件，search_text 搜索，run_shell 执行命令。"
        "修改前先查证，回答用中文，引用文件路径。"
    )
    t.user(
        "把配置项 payment.timeout_ms 改名为 payment.timeout，单位改成秒。先找出所有用到它的地方。"
    )
    hits = [
        f'{path}:{rng.randint(5, 300)}: timeout_ms = cfg.get("payment.timeout_ms", '
        "3000)  # 支付超时（毫秒）"
        for path in (
            "services/order/pay.py",
            "services/order/retry.py",
            "services/refund/client.py",
            "config/default.yaml",
            "config/prod.yaml",
            "docs/配置说明.md",
        )
        for _ in range(3)
    ]
    t.act(
        "同时在代码和文档里搜索这个配置项。",
        (
            "search_text",
            {"pattern": "payment.timeout_ms", "path": "services"},
            "\n".join(hits[:9]) + "\n",
        ),
        (
            "search_text",
            {"pattern": "payment.timeout_ms", "path": "docs"},
            "\n".join(hits[15:]) + "\n",
        ),
    )
    t.act(
        "先看配置说明文档，确认单位约定。",
        (
            "read_file",
            {"path": "docs/配置说明.md"},
            "# 配置说明\n\n"
            + "\n".join(
                f"## {section}\n\n本节说明 {section} 的各个配置项。所有超时类配置目前以毫秒为单位，"
                "迁移计划见 ADR-12。默认值在 config/default.yaml 中定义，生产环境覆盖值在 config/prod.yaml。\n"
                for section in (
                    "支付",
                    "退款",
                    "库存",
                    "消息队列",
                    "缓存",
                    "日志",
                    "监控",
                    "告警",
                )
            ),
        ),
    )
    t.act(
        "看一下最近的服务日志，确认线上超时的实际情况。",
        (
            "run_shell",
            {"command": "tail -n 120 logs/order-svc.log"},
            cjk_service_log(rng, 120),
        ),
    )
    t.act(
        "日志里有支付回调超时。再跑一次集成测试看看基线。",
        (
            "run_shell",
            {"command": "make integration-test"},
            "error TIMEOUT: 命令运行超过 600 秒被终止（make integration-test）\n"
            + cjk_service_log(rng, 30),
            "TIMEOUT",
        ),
    )
    t.act(
        "集成测试超时，先跑单元测试。",
        (
            "run_shell",
            {"command": "pytest -q tests/unit"},
            "\n".join(
                f"tests/unit/test_{name}.py {'.' * rng.randint(20, 60)}"
                for name in ("pay", "retry", "refund", "config", "queue", "cache")
            )
            + "\n212 passed in 4.18s\n",
        ),
    )
    t.user("顺便把 docs/配置说明.md 里关于超时单位的说明也改一下。")
    t.act(
        "好的。先读 config/default.yaml 和 config/prod.yaml。",
        (
            "read_file",
            {"path": "config/default.yaml"},
            "\n".join(
                f"{key}: {value}  # {comment}"
                for key, value, comment in [
                    ("payment.timeout_ms", 3000, "支付超时，毫秒"),
                    ("refund.timeout_ms", 5000, "退款超时，毫秒"),
                    ("queue.retries", 5, "重试次数"),
                ]
                * 8
            )
            + "\n",
        ),
        (
            "read_file",
            {"path": "config/prod.yaml"},
            "payment.timeout_ms: 4500  # 生产环境放宽\n",
        ),
    )
    t.act(
        "按搜索结果逐个修改代码与配置。",
        (
            "run_shell",
            {
                "command": "python tools/rename_key.py payment.timeout_ms "
                "payment.timeout --ms-to-s"
            },
            "\n".join(f"已修改 {line.split(':')[0]}" for line in hits[:15])
            + "\n共修改 15 处\n",
        ),
    )
    t.act(
        "更新文档里的单位说明。",
        (
            "run_shell",
            {"command": "python tools/rename_key.py --docs docs/配置说明.md"},
            "已更新 docs/配置说明.md：支付超时改为以秒为单位（payment.timeout），其余超时项仍为毫秒，见 ADR-12。\n",
        ),
    )
    t.act(
        "再跑单元测试确认。",
        ("run_shell", {"command": "pytest -q tests/unit"}, "212 passed in 4.02s\n"),
    )
    t.say(
        "已完成：payment.timeout_ms 改名为 payment.timeout，单位改为秒，共修改 15 处（services/、config/）；"
        "docs/配置说明.md 已更新单位说明。单元测试 212 项全部通过；集成测试因运行超过 600 秒被终止，需要单独排查。"
    )
    return t.messages


# --- 3. the agent-trajectory dataset shape
# ------------------------------------------------


def agent_trajectory() -> dict:
    rng = random.Random(23)
    t = Transcript(seed=230)
    t.system(
        "You are an autonomous software engineer. Solve the issue in the repository at "
        "/workspace. "
        "Tools: bash (run a command), view (show a file with line numbers), edit "
        "(replace a unique string)."
    )
    t.user(
        "<issue>\nCSV export drops the last row when the file does not end with a "
        "newline.\n"
        "Steps: `csvkit-lite export data/sample.csv` prints 99 of 100 rows.\n</issue>"
    )
    t.act(
        "Explore the repository layout.",
        (
            "bash",
            {"command": "find . -name '*.py' | sort"},
            "\n".join(
                f"./{package}/{module}.py"
                for package in ("csvkit_lite", "csvkit_lite/io", "tests", "tests/io")
                for module in (
                    "__init__",
                    "reader",
                    "writer",
                    "export",
                    "dialect",
                    "utils",
                    "cli",
                    "errors",
                )
            )
            + "\n",
        ),
    )
    t.act(
        "Install in development mode and reproduce.",
        (
            "bash",
            {"command": "pip install -e . && csvkit-lite export data/sample.csv | wc -l"},
            "".join(
                f"Collecting {name}>={rng.randint(1, 9)}.{rng.randint(0, 20)}\n  "
                f"Downloading {name}-"
                f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}-py3-none-any.whl ({rng.randint(20, 900)} kB)\n"
                for name in (
                    "click",
                    "rich",
                    "pyyaml",
                    "attrs",
                    "typing-extensions",
                    "markdown-it-py",
                    "mdurl",
                    "pygments",
                    "tomli",
                    "packaging",
                    "pluggy",
                    "iniconfig",
                )
            )
            + "Successfully installed csvkit-lite-0.4.1 click-8.1.7 rich-13.7.1\n99\n",
        ),
    )
    t.act(
        "View the reader and the export command side by side.",
        (
            "view",
            {"path": "csvkit_lite/reader.py"},
            "\n".join(
                f"{n:>4}  "
                + (
                    "    while True:"
                    if n == 41
                    else "        if not chunk.endswith('\\n'): break  # BUG: drops a "
                    "final partial line"
                    if n == 47
                    else f"    line_{n} = buffer[{n}]"
                )
                for n in range(1, 121)
            ),
        ),
        (
            "view",
            {"path": "csvkit_lite/export.py"},
            "\n".join(
                f"{n:>4}  " + f"    rows.append(reader.next_row())  # {n}"
                for n in range(1, 81)
            ),
        ),
    )
    t.act(
        "Fix the reader so a final line without a newline is kept.",
        (
            "edit",
            {
                "path": "csvkit_lite/reader.py",
                "old": "        if not chunk.endswith('\\n'): break  # BUG: drops a "
                "final partial line",
                "new": "        if not chunk: break",
            },
            "The file csvkit_lite/reader.py has been edited.",
        ),
    )
    t.act(
        "Reproduce again and run the tests.",
        ("bash", {"command": "csvkit-lite export data/sample.csv | wc -l"}, "100\n"),
        (
            "bash",
            {"command": "python -m pytest -q tests"},
            "".join(
                f"tests/{name} {'.' * rng.randint(10, 40)}\n"
                for name in (
                    "test_reader.py",
                    "test_writer.py",
                    "test_export.py",
                    "io/test_dialect.py",
                )
            )
            + "E   FileNotFoundError: tests/fixtures/no_newline.csv\n1 failed, 118 "
            "passed in 2.31s\n",
            "EXIT_1",
        ),
    )
    t.act(
        "A test expects a fixture that does not exist yet; add it.",
        (
            "bash",
            {
                "command": "printf 'a,b\\n1,2' > tests/fixtures/no_newline.csv && "
                "python -m pytest -q tests"
            },
            "119 passed in 2.27s\n",
        ),
    )
    t.say(
        "The reader stopped at a final chunk without a newline "
        "(csvkit_lite/reader.py:47); it now stops only at "
        "the end of input. The export prints all 100 rows and 119 tests pass (one new "
        "fixture)."
    )
    # The dataset stores nested, variable-shaped fields as strings and arguments as
    # objects.
    stored = []
    for number, message in enumerate(t.messages):
        message = dict(message)
        if "tool_calls" in message:
            calls = [
                dict(
                    call,
                    function={
                        "name": call["function"]["name"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    },
                )
                for call in message["tool_calls"]
            ]
            message["tool_calls"] = json.dumps(calls, ensure_ascii=False)
        if message["role"] == "user" or (
            message["role"] == "assistant" and number % 4 == 0
        ):
            message["content"] = [{"type": "text", "text": message["content"]}]
        stored.append(message)
    return {
        "instance_id": "csvkit-lite__csvkit-lite-212",
        "model_name_or_path": "an-agent",
        "resolved": True,
        "messages": stored,
    }


# --- 4. the bundled session, uncompressed
# -------------------------------------------------


def m3_release_check() -> list:
    return list(run_baseline(load_session()).final_messages)


def write_json(path: Path, document) -> None:
    path.write_text(
        json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_json(OUT / "coding_agent_fix.json", coding_agent_fix())
    (OUT / "cjk_refactor.jsonl").write_text(
        "".join(
            json.dumps(message, ensure_ascii=False) + "\n" for message in cjk_refactor()
        ),
        encoding="utf-8",
    )
    write_json(OUT / "agent_trajectory.json", agent_trajectory())
    write_json(OUT / "m3_release_check.json", m3_release_check())
    for path in sorted(OUT.iterdir()):
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
