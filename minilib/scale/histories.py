"""Long coding-agent histories, generated: sessions far past the article's 13 calls.

`generate_history(tool_calls, seed)` writes a deterministic session in the
chat-completions shape: a system prompt, a first user task, then rounds of one
assistant message with its tool calls (2-4 at once in some rounds) and one tool
message answering each call, and a final answer. Results are what a coding agent
reads: log-like ASCII, file contents, search hits, folder listings, diffs, and some
CJK notes; from 200 characters to 60 KB, about 1.4k estimated tokens a tool call on
average; some fail with ``"error": {"code", "message"}``. Every first line names
facts (paths, error codes, build numbers, counts), as real tool output does, because
the first line is what a quoting summary keeps.

The same `seed` always gives the same messages (only `random.Random(seed)` decides),
so a 1,000-call measurement can be repeated exactly, on any machine.
`GeneratedConversation` plays a history back through `minilib.loop.replay` like a
recorded log, so it can be replayed through any window.
"""

import json
import math
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Dict, List, Mapping, Tuple

from ..messages import check_int
from ..tokens import count_cjk, estimate_message_tokens
from .recorded import RecordedConversation

MIN_RESULT_CHARS = 200
MAX_RESULT_CHARS = 60_000

SYSTEM_PROMPT = (
    "You are a coding agent working in the mini-agent repository. Use the tools to "
    "read, search and run things; never guess file contents. Keep answers short and "
    "name the files you changed."
)
# What the person says when they come back (user_turns > 1), chosen by position.
FOLLOW_UPS = (
    "Good. Now check the same failure on the release branch.",
    "Also keep the changelog in step, please.",
    "继续：把剩下的失败测试也看一下。",
    "Before you go on: does the config still load?",
    "Run the whole suite once more and tell me what fails.",
)
TASK = (
    "The nightly build of main fails since 10-28 and the release of v0.4 is blocked. "
    "Find why (see build #412 and logs/build.log), fix it, make the test suite pass, "
    "and update docs/RELEASE.md. 发布前请对照 docs/RELEASE.md 的清单逐项确认。"
)

MODULES = (
    "window",
    "aging",
    "summary",
    "ranges",
    "loop",
    "tokens",
    "trace",
    "tools",
    "session",
    "cli",
    "store",
    "budget",
)
FOLDERS = ("src/agent", "src/agent/paths", "tests", "scripts", "docs", "logs")
WORDS = (
    "window",
    "threshold",
    "summary",
    "batch",
    "worker",
    "cache",
    "token",
    "round",
    "message",
    "pairing",
    "result",
    "retry",
    "config",
    "build",
    "release",
    "timeout",
    "buffer",
    "parser",
    "request",
    "session",
)
COMPONENTS = ("scheduler", "worker", "linker", "fetcher", "runner", "cache", "api")
LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")
ERRORS = (
    ("NOT_FOUND", "no such file: {path}"),
    ("TIMEOUT", "command did not finish in {seconds} s"),
    ("E2BIG", "argument list too long for {path}"),
    ("EACCES", "permission denied: {path}"),
    ("BAD_ARGUMENTS", "path must be a non-empty string"),
    ("EXIT_2", "make exited with status 2"),
)
# Notes a team writes in Chinese: CJK counts one token a character, so these are dense.
CJK_SENTENCES = (
    "夜间构建在链接阶段失败，错误码 E2BIG，参数列表过长。",
    "修复已在分支 fix/link-args 上提交，等待评审后合入主干。",
    "发布前必须跑完整测试套件，并更新发布说明。",
    "超时阈值从 30 秒调到 90 秒之后，偶发失败消失了。",
    "缓存目录不要提交到仓库，否则构建产物会互相覆盖。",
    "上下文窗口超过阈值时，先老化工具结果，再做滚动摘要。",
    "第 412 号问题记录了复现步骤和完整日志。",
    "评审意见：测试覆盖不足，请补充并行调用的用例。",
)
REASONS = (
    "to see how the {word} is handled there",
    "because the last run failed with {code}",
    "since build #{number} points at it",
    "to check the {word} limit of {number}",
    "before changing {path}",
    "to confirm the fix for {code} is merged",
    "as the log names batch {number} there",
)
CJK_TITLES = ("发布记录", "构建排查笔记", "评审意见汇总", "窗口治理设计")


@dataclass(frozen=True)
class ToolKind:
    """A tool of the generated agent: how often it is called, how big its output is."""

    name: str
    weight: float
    min_chars: int
    max_chars: int


# Weights and size ranges set so a long session averages ~1.4k estimated tokens per
# call (checked by the tests), with the long tail of logs a real build produces.
TOOL_KINDS = (
    ToolKind("read_file", 0.30, 600, 30_000),
    ToolKind("search_text", 0.16, 200, 8_000),
    ToolKind("list_dir", 0.08, 200, 2_000),
    ToolKind("run_tests", 0.10, 3_000, 60_000),
    ToolKind("run_shell", 0.09, 300, 50_000),
    ToolKind("git_log", 0.05, 400, 4_000),
    ToolKind("edit_file", 0.15, 200, 1_200),
    ToolKind("read_notes", 0.08, 200, 3_000),
)


@dataclass(frozen=True)
class HistoryStats:
    """What a generated history holds, for tests and for the benchmark's header."""

    tool_calls: int
    rounds: int
    parallel_rounds: int
    errors: int
    cjk_results: int
    smallest_result: int
    largest_result: int
    tokens: int

    @property
    def tokens_per_call(self) -> float:
        return self.tokens / self.tool_calls if self.tool_calls else 0.0


@dataclass(frozen=True)
class GeneratedHistory:
    """A generated session: its messages, and the parameters that reproduce it."""

    tool_calls: int
    seed: int
    messages: Tuple[Mapping, ...]
    repeat_ids: bool = False

    def conversation(self) -> "GeneratedConversation":
        return GeneratedConversation(self)

    def stats(self) -> HistoryStats:
        return history_stats(self.messages)


class GeneratedConversation(RecordedConversation):
    """A generated history played back like a recorded log (see `minilib.logs.replay`):
    its assistant messages are the replies, its tool messages arrive after them."""

    def __init__(self, history: GeneratedHistory):
        super().__init__(history.messages)
        self.history = history


def history_stats(messages) -> HistoryStats:
    results = [m for m in messages if m.get("role") == "tool"]
    sizes = [len(m["content"]) for m in results] or [0]
    callers = [m for m in messages if m.get("tool_calls")]
    return HistoryStats(
        tool_calls=sum(len(m["tool_calls"]) for m in callers),
        rounds=sum(1 for m in messages if m.get("role") == "assistant"),
        parallel_rounds=sum(1 for m in callers if len(m["tool_calls"]) > 1),
        errors=sum(1 for m in results if m.get("error") is not None),
        cjk_results=sum(1 for m in results if count_cjk(m["content"]) > 0),
        smallest_result=min(sizes),
        largest_result=max(sizes),
        tokens=sum(estimate_message_tokens(m) for m in messages),
    )


@lru_cache(maxsize=8)
def generate_history(
    tool_calls: int,
    seed: int = 0,
    *,
    parallel_share: float = 0.15,
    error_share: float = 0.07,
    repeat_ids: bool = False,
    user_turns: int = 1,
) -> GeneratedHistory:
    """A session of `tool_calls` tool calls, the same one for the same arguments.

    `user_turns` above 1 has the person come back with a follow-up that many times
    less one, evenly spread over the calls, as an interactive session does (the
    compaction rules of several production agents cut only at a person's turn); the
    rest of the session is the same as with one turn.

    `parallel_share` of the rounds make 2-4 calls at once; `error_share` of the results
    fail. With `repeat_ids=True` every assistant message numbers its calls call_1,
    call_2, ... again, as some providers do: pairing is by position, not by a global id.
    Cached, and the messages are a tuple: copy before changing one.
    """
    check_int("tool_calls", tool_calls, minimum=1)
    check_int("seed", seed)
    for name, share in (("parallel_share", parallel_share), ("error_share", error_share)):
        if not 0 <= share <= 1:
            raise ValueError(f"{name} must be between 0 and 1, got {share!r}")
    writer = _HistoryWriter(random.Random(seed), repeat_ids)
    messages: List[dict] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": TASK},
    ]
    check_int("user_turns", user_turns, minimum=1)
    # the calls after which the person speaks again
    follow_ups = {tool_calls * turn // user_turns for turn in range(1, user_turns)}
    left = tool_calls
    while left > 0:
        width = 1
        if left > 1 and writer.rng.random() < parallel_share:
            width = min(left, writer._int(2, 4))
        messages.extend(writer.round(width, error_share))
        done = tool_calls - left
        left -= width
        for _ in range(sum(done < at <= tool_calls - left for at in follow_ups)):
            messages.append({"role": "user", "content": FOLLOW_UPS[len(messages) % 5]})
    messages.append(writer.final_answer())
    return GeneratedHistory(tool_calls, seed, tuple(messages), repeat_ids)


class _HistoryWriter:
    """The state of one generation: the random source, the call numbering, the files
    the agent has seen (so later rounds come back to them, as agents do)."""

    def __init__(self, rng: random.Random, repeat_ids: bool):
        self.rng = rng
        self.repeat_ids = repeat_ids
        self.serial = 0
        self.day = 1
        self.paths = [self._new_path() for _ in range(24)]
        self.kinds = [kind for kind in TOOL_KINDS]
        self.weights = [kind.weight for kind in TOOL_KINDS]
        self.builders: Dict[str, Callable[[int], Tuple[str, str, str]]] = {
            "read_file": self._file,
            "search_text": self._search,
            "list_dir": self._listing,
            "run_tests": self._tests,
            "run_shell": self._shell,
            "git_log": self._git_log,
            "edit_file": self._edit,
            "read_notes": self._notes,
        }

    # random.choice and randint are exact but slow; this scaled draw is as deterministic
    # and five times faster, which matters at a million draws a session.
    def _pick(self, options):
        return options[int(self.rng.random() * len(options))]

    def _int(self, low: int, high: int) -> int:
        return low + int(self.rng.random() * (high - low + 1))

    # --- rounds ------------------------------------------------------------------------

    def round(self, width: int, error_share: float) -> List[dict]:
        rng = self.rng
        calls, results, intents = [], [], []
        for number in range(1, width + 1):
            kind = rng.choices(self.kinds, self.weights)[0]
            self.serial += 1
            call_id = f"call_{number}" if self.repeat_ids else f"call_{self.serial:05d}"
            size = self._size(kind)
            arguments, intent, content = self.builders[kind.name](size)
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": kind.name, "arguments": arguments},
                }
            )
            intents.append(intent)
            result = {"role": "tool", "tool_call_id": call_id, "content": content}
            if rng.random() < error_share:
                result = self._failed(call_id, json.loads(arguments), size)
            results.append(result)
        assistant = {"role": "assistant", "content": self._thought(intents)}
        if rng.random() < 0.04:
            assistant["content"] = None  # a model may call tools without saying why
        assistant["tool_calls"] = calls
        return [assistant, *results]

    def final_answer(self) -> dict:
        path = self._pick(self.paths)
        return {
            "role": "assistant",
            "content": (
                f"Fixed the E2BIG failure (build #412): the link step now passes its "
                f"objects through a response file; changed {path} and docs/RELEASE.md; "
                "the test suite passes."
            ),
        }

    def _thought(self, intents: List[str]) -> str:
        sentences = []
        for intent in intents:
            if count_cjk(intent):
                sentences.append(intent + "。")
                continue
            # Models say why they call a tool, and the why names what they saw last.
            reason = self._pick(REASONS).format(
                word=self._pick(WORDS),
                code=self._pick(ERRORS)[0],
                number=self._int(300, 4800),
                path=self._pick(self.paths),
            )
            sentences.append(f"{intent[0].upper()}{intent[1:]} {reason}.")
        return " ".join(sentences)

    def _size(self, kind: ToolKind) -> int:
        low, high = math.log(kind.min_chars), math.log(kind.max_chars)
        return int(math.exp(self.rng.uniform(low, high)))

    def _failed(self, call_id: str, arguments: Mapping, size: int) -> dict:
        code, template = self._pick(ERRORS)
        path = arguments.get("path") or self._pick(self.paths)
        message = template.format(path=path, seconds=self._pick((30, 60, 90, 120)))
        lines = [f"error {code}: {message}"]
        # What the tool printed before it failed: a stderr tail, up to a few KB.
        lines += self._log_lines(min(size, 4_000))
        content = _fit("\n".join(lines), MIN_RESULT_CHARS, max(size, MIN_RESULT_CHARS))
        return {
            "role": "tool",
            "tool_call_id": call_id,
            "content": content,
            "error": {"code": code, "message": message},
        }

    # --- what each tool prints (arguments, intent, content) ---------------------------

    def _file(self, size: int):
        path = self._pick_path()
        body = self._code_lines(path, size)
        header = f"[File: {path} ({len(body)} lines total)]"
        content = _fit("\n".join([header, *body]), MIN_RESULT_CHARS, size)
        return _arguments(path=path), f"read {path}", content

    def _search(self, size: int):
        pattern = self._pick(
            ("E2BIG", "threshold", "ContextOverflowError", "timeout", "#412", "retry")
        )
        folder = self._pick(FOLDERS)
        hits = _lines_until(
            size,
            lambda: (
                f"{self._pick_path()}:{self._int(1, 900)}:     "
                f"{self._code_line()} # {pattern}"
            ),
        )
        lines = [f"{len(hits)} matches for {pattern!r} in {folder}", *hits]
        content = _fit("\n".join(lines), MIN_RESULT_CHARS, size)
        intent = f"search {folder} for {pattern}"
        return _arguments(pattern=pattern, path=folder), intent, content

    def _listing(self, size: int):
        folder = self._pick(FOLDERS)

        def entry() -> str:
            name = f"{self._pick(WORDS)}_{self._pick(MODULES)}"
            if self.rng.random() < 0.15:
                return f"{name}/"
            extension = self._pick((".py", ".md", ".txt", ".log", ".json"))
            return f"{name}{extension}  {self._int(28, 90_000)} bytes"

        entries = _lines_until(size, entry)
        content = _fit("\n".join(entries), MIN_RESULT_CHARS, size)
        return _arguments(path=folder), f"list {folder}", content

    def _tests(self, size: int):
        target = self._pick(("tests", "tests/test_window.py", "tests/test_summary.py"))
        failed, passed = self._pick((0, 0, 1, 2, 3, 7)), self._int(40, 900)
        seconds = self._int(2, 600) / 10
        header = f"pytest {target}: {failed} failed, {passed} passed in {seconds}s"
        body = self._log_lines(size)
        content = _fit("\n".join([header, *body]), MIN_RESULT_CHARS, size)
        return _arguments(target=target), f"run the tests in {target}", content

    def _shell(self, size: int):
        command = self._pick(
            ("make build", "make lint", "ls -la build", "du -sh .cache", "make nightly")
        )
        status = self._pick((0, 0, 0, 1, 2))
        header = f"$ {command}  # exit {status} after {self._int(1, 900) / 10}s"
        content = _fit(
            "\n".join([header, *self._log_lines(size)]), MIN_RESULT_CHARS, size
        )
        return _arguments(command=command), f"run {command}", content

    def _git_log(self, size: int):

        def entry() -> str:
            commit = "".join(self._pick("0123456789abcdef") for _ in range(40))
            kind = self._pick(("fix", "feat", "docs", "test"))
            subject = f"{self._pick(WORDS)} {self._pick(WORDS)} (#{self._int(300, 480)})"
            return f"commit {commit}\nDate:   {self._date()}\n    {kind}: {subject}\n"

        lines = _lines_until(size, entry)
        content = _fit("\n".join(lines), MIN_RESULT_CHARS, size)
        return (
            _arguments(max_count=self._int(5, 40)),
            "read the recent commits",
            content,
        )

    def _edit(self, size: int):
        path = self._pick_path()
        added, removed = self._int(1, 40), self._int(0, 30)
        hunks = self._int(1, 5)
        lines = [f"applied {hunks} hunks to {path} (+{added} -{removed} lines)"]
        lines += _lines_until(size, lambda: f"{self._pick('+-')}    {self._code_line()}")
        content = _fit("\n".join(lines), MIN_RESULT_CHARS, size)
        return _arguments(path=path), f"edit {path}", content

    def _notes(self, size: int):
        path = f"notes/{self._pick(('release', 'build', 'review', 'design'))}_zh.md"
        title = self._pick(CJK_TITLES)
        lines = [f"# {title} v0.{self._int(2, 4)}：{self._pick(CJK_SENTENCES)}"]
        lines += _lines_until(
            size,
            lambda: (
                f"- {self._date()} {self._pick(CJK_SENTENCES)}（见 {self._pick_path()}）"
            ),
        )
        content = _fit("\n".join(lines), MIN_RESULT_CHARS, size)
        return _arguments(path=path), f"读 {path} 了解背景", content

    # --- building blocks --------------------------------------------------------------

    def _new_path(self) -> str:
        folder = self._pick(FOLDERS[:3])
        module = self._pick(MODULES)
        return (
            f"{folder}/test_{module}.py" if folder == "tests" else f"{folder}/{module}.py"
        )

    def _pick_path(self) -> str:
        # Agents come back to the same files; now and then they find a new one.
        if self.rng.random() < 0.1:
            self.paths.append(self._new_path())
        return self._pick(self.paths)

    def _date(self) -> str:
        return f"2026-{self._int(9, 11):02d}-{self._int(1, 28):02d}"

    def _code_line(self) -> str:
        a, b = self._pick(WORDS), self._pick(WORDS)
        shape = self._int(0, 4)
        if shape == 0:
            return f"def {a}_{b}(self, {b}: int = {self._int(0, 4096)}):"
        if shape == 1:
            return f"    return self.{a}.{b}({self._pick(WORDS)})"
        if shape == 2:
            return f"    if {a} > self.{b}_limit:  # see #{self._int(300, 480)}"
        if shape == 3:
            return f"        raise {a.title()}Error(f'{{{b}}} over {self._int(1, 99)}')"
        return f"    {a}_{b} = {self._pick(WORDS)}[{self._int(0, 64)}:]"

    def _code_lines(self, path: str, size: int) -> List[str]:
        lines = [f'"""{path}: the {self._pick(WORDS)} logic of the agent."""']
        total = len(lines[0])
        while total < size:
            line = self._code_line()
            lines.append(line)
            total += len(line) + 1
        return lines

    def _log_lines(self, size: int) -> List[str]:
        lines, total = [], 0
        while total < size:
            level = self._pick(LEVELS)
            second = self._int(0, 86_399)
            stamp = f"{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"
            component = self._pick(COMPONENTS)
            if level == "ERROR":
                text = (
                    f"{self._pick(('E2BIG', 'TIMEOUT', 'EACCES'))} while linking "
                    f"{self._int(1, 4000)} objects"
                )
            else:
                what = f"{self._pick(WORDS)} {self._pick(WORDS)}"
                text = f"{what} batch={self._int(1, 9999)} took {self._int(1, 3000)} ms"
            line = f"2026-11-{self._int(1, 28):02d}T{stamp}Z {level} {component}: {text}"
            lines.append(line)
            total += len(line) + 1
        return lines


def _lines_until(size: int, make_line: Callable[[], str]) -> List[str]:
    """Lines from `make_line` until they hold `size` characters (newlines included)."""
    lines, total = [], 0
    while total < size:
        line = make_line()
        lines.append(line)
        total += len(line) + 1
    return lines


def _arguments(**values) -> str:
    return json.dumps(values, ensure_ascii=False)


def _fit(text: str, low: int, high: int) -> str:
    """`text` cut to at most `high` characters (at a line end when one is near), padded
    to `low` with a closing line when it is shorter."""
    if len(text) > high:
        cut = text.rfind("\n", 0, high)
        text = text[:cut] if cut > high * 0.8 else text[:high]
    while len(text) < low:
        text += "\n(end of output)"
    return text[: max(high, low)]
