"""The bundled session: load it, replay it with and without compression, compare round by round.

A session file holds the system prompt, the task and the scripted assistant replies
(chat-completions shape); the tool results come from really running the tools on
the session's workspace folder. `run_session` is what the CLI, the notebooks and
the sliders all call, so every number they show comes from the same code.
"""

import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .loop import answer_tool_call, run_loop
from .messages import check_int, read_json_file, validate_messages
from .model import ScriptedModel
from .tokens import TokenCounter, estimate_tokens
from .tools import ToolResult, Workspace
from .trace import Tracer
from .window import Compression, ContextOverflowError, article_window

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DEFAULT_SESSION = DATA_DIR / "session.json"


class SessionFileError(ValueError):
    """A session file that cannot be used; the text names the file and the field."""


@dataclass(frozen=True)
class Settings:
    """The knobs of the article's pipeline, at the article's values."""

    threshold: int = 1200
    head_chars: int = 160
    tail_chars: int = 120
    min_chars: int = 240
    protect_tail: int = 4

    def __post_init__(self):
        check_int("threshold", self.threshold, minimum=1)
        for name in ("head_chars", "tail_chars", "min_chars", "protect_tail"):
            check_int(name, getattr(self, name))


class CachedTools:
    """Runs each distinct tool call once: replays ask the same questions every time."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self._results: Dict[Tuple[str, str], ToolResult] = {}

    def call(self, name: str, arguments) -> ToolResult:
        key = (name, arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True))
        if key not in self._results:
            self._results[key] = self.workspace.call(name, arguments)
        return self._results[key]


@dataclass(eq=False)
class Session:
    """A scripted session: where it came from, its opening messages and its replies."""

    path: Path
    name: str
    system: str
    task: str
    replies: List[dict]
    workspace: Path
    tools: CachedTools = field(repr=False, default=None)

    def __post_init__(self):
        if self.tools is None:
            self.tools = CachedTools(Workspace(self.workspace))

    def opening_messages(self) -> List[dict]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.task}]

    @property
    def tool_call_count(self) -> int:
        return sum(len(reply.get("tool_calls") or []) for reply in self.replies)


def load_session(path=DEFAULT_SESSION, extra_tools: Sequence[str] = ()) -> Session:
    """Read and check a session file; errors name the file and the field.

    Every tool the replies call must be a workspace tool or one of `extra_tools`
    (tools the harness adds itself, such as an external store's `recall`).
    """
    path = Path(path)
    data = read_json_file(path, "session", SessionFileError)
    if not isinstance(data, dict):
        raise SessionFileError(f"{path}: expected a JSON object with name, system, task, replies and workspace")
    for key, kind in (("name", str), ("system", str), ("task", str), ("replies", list), ("workspace", str)):
        if not isinstance(data.get(key), kind):
            raise SessionFileError(f"{path}: field '{key}' is missing or not a {kind.__name__}")
    for index, reply in enumerate(data["replies"]):
        if not isinstance(reply, dict) or reply.get("role") != "assistant":
            raise SessionFileError(f"{path}: replies[{index}] must be an assistant message")
    try:
        # The tools answer the calls at replay, so the script holds no tool results.
        validate_messages(data["replies"], where="replies", expect_tool_results=False)
    except ValueError as error:
        raise SessionFileError(f"{path}: {error}") from None
    workspace = (path.parent / data["workspace"]).resolve()
    if not workspace.is_dir():
        raise SessionFileError(f"{path}: field 'workspace' names {data['workspace']}, which is not a folder")
    session = Session(path, data["name"], data["system"], data["task"], data["replies"], workspace)
    known = set(session.tools.workspace.tools) | set(extra_tools)
    for index, reply in enumerate(data["replies"]):
        for number, call in enumerate(reply.get("tool_calls") or []):
            name = call["function"]["name"]
            if name not in known:
                raise SessionFileError(f"{path}: replies[{index}].tool_calls[{number}] calls unknown tool {name!r}")
    return session


@dataclass(frozen=True)
class Round:
    """One model call: the baseline window beside the compressed one."""

    round: int
    baseline_tokens: int
    baseline_messages: int
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    aged: bool
    summarized: bool


@dataclass
class SessionRun:
    """Everything one replay produced: rounds, compressions, the trace, the final window."""

    settings: Settings
    rounds: List[Round]
    compressions: List[Compression]
    final_messages: List[Mapping]
    final_tokens: int
    tracer: Tracer
    overflow: Optional[ContextOverflowError] = None

    @property
    def model_decisions(self) -> int:
        """Model calls that decided the next step (the article's 14)."""
        return sum(1 for call in self.tracer.events("model_call") if call["purpose"] == "decision")

    @property
    def summary_calls(self) -> int:
        """Model calls made by the rolling summary: compression is not free."""
        return sum(1 for call in self.tracer.events("model_call") if call["purpose"] == "summary")

    @property
    def tool_calls(self) -> int:
        return len(self.tracer.events("tool_call"))

    def rounds_as_dicts(self) -> List[dict]:
        return [round_.__dict__.copy() for round_ in self.rounds]


@dataclass(frozen=True)
class Baseline:
    """The session replayed with no compression: per-round tokens and messages."""

    tokens: Tuple[int, ...]
    messages: Tuple[int, ...]
    final_messages: Tuple[Mapping, ...]
    final_tokens: int


@lru_cache(maxsize=8)
def run_baseline(session: Session, count_tokens: TokenCounter = estimate_tokens) -> Baseline:
    """The uncompressed replay; cached because no slider changes it."""
    tokens, counts = [], []

    def observe(step, window, compressions):
        tokens.append(count_tokens(window))
        counts.append(len(window))

    messages = run_loop(ScriptedModel(session.replies), session.opening_messages(), session.tools, on_round=observe)
    return Baseline(tuple(tokens), tuple(counts), tuple(messages), count_tokens(messages))


def run_session(session: Session, settings: Settings = Settings(), count_tokens: TokenCounter = estimate_tokens) -> SessionRun:
    """Replay the session through the article's ContextWindow at `settings`.

    A ContextOverflowError does not escape: it ends the run and is kept in
    `run.overflow`, with the rounds that completed before it.
    """
    if not isinstance(settings, Settings):
        raise TypeError(f"settings must be a minilib Settings, got {type(settings).__name__}")
    baseline = run_baseline(session, count_tokens)
    model = ScriptedModel(session.replies)
    window = article_window(model.summarize, threshold=settings.threshold, head_chars=settings.head_chars,
                            tail_chars=settings.tail_chars, min_chars=settings.min_chars,
                            protect_tail=settings.protect_tail, count_tokens=count_tokens)
    tracer = Tracer()
    rounds: List[Round] = []
    compressions: List[Compression] = []
    messages = session.opening_messages()

    def observe(step, window_messages, step_compressions):
        compressions.extend(step_compressions)
        first = step_compressions[0] if step_compressions else None
        after_tokens = count_tokens(window_messages)
        strategies = {c.strategy for c in step_compressions}
        rounds.append(Round(
            round=step,
            baseline_tokens=baseline.tokens[step],
            baseline_messages=baseline.messages[step],
            tokens_before=first.before_tokens if first else after_tokens,
            tokens_after=after_tokens,
            messages_before=first.before_messages if first else len(window_messages),
            messages_after=len(window_messages),
            aged="tool_result_aging" in strategies,
            summarized="rolling_summary" in strategies,
        ))

    overflow = None
    try:
        run_loop(model, messages, session.tools, context_window=window, tracer=tracer, on_round=observe)
    except ContextOverflowError as error:
        overflow = error
    return SessionRun(settings, rounds, compressions, messages, count_tokens(messages), tracer, overflow)


def window_before_round(session: Session, settings: Settings, round_number: int,
                        count_tokens: TokenCounter = estimate_tokens):
    """The message list just before round `round_number` is governed, and the window that governs it.

    Replays the compressed session up to that round; for stepping one round of the
    state machine (`window.walk(messages, round_number)`).
    """
    check_int("round_number", round_number)
    model = ScriptedModel(session.replies)
    window = article_window(model.summarize, threshold=settings.threshold, head_chars=settings.head_chars,
                            tail_chars=settings.tail_chars, min_chars=settings.min_chars,
                            protect_tail=settings.protect_tail, count_tokens=count_tokens)
    messages = session.opening_messages()
    for step in range(round_number + 1):
        if step == round_number:
            return messages, window
        window.before_model_call(messages, None, step)
        reply = model.complete(messages)
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            break
        messages.extend(answer_tool_call(call, session.tools) for call in calls)
    raise ValueError(f"round_number {round_number} is past the end of the session ({step + 1} rounds)")


def with_settings(settings: Settings, **changes) -> Settings:
    """A copy of `settings` with some knobs changed (validated)."""
    return replace(settings, **changes)
