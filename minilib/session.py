"""The bundled session: load it, replay it with and without compression, compare round by
round.

A session file holds the system prompt, the task and the scripted assistant replies
(chat-completions shape); the tool results come from really running the tools on
the session's workspace folder. `run_session` is what the CLI, the notebooks and
the sliders all call, so every number they show comes from the same code.

Example: the article's terminal card, round 13 of the bundled session.

    >>> run = run_session(load_session())
    >>> last = run.rounds[13]
    >>> last.baseline_tokens, last.tokens_after, run.model_decisions
    (17991, 1193, 14)
    >>> sum(r.aged for r in run.rounds), sum(r.summarized for r in run.rounds)
    (8, 1)
"""

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .loop import LiveConversation, Replay, replay
from .messages import check_int, read_json_file, validate_messages
from .model import ScriptedModel
from .tokens import TokenCounter, estimate_tokens
from .tools import ToolResult, Workspace
from .trace import Tracer
from .window import Compression, ContextOverflowError, Settings, article_window

# data/ ships in the package as minilib.data, so an installed wheel finds it too.
DATA_DIR = Path(str(files("minilib.data")))
DEFAULT_SESSION = DATA_DIR / "session.json"


class SessionFileError(ValueError):
    """A session file that cannot be used; the text names the file and the field."""


class CachedTools:
    """Runs each distinct tool call once: replays ask the same questions every time."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self._results: Dict[Tuple[str, str], ToolResult] = {}

    def call(self, name: str, arguments) -> ToolResult:
        key = (
            name,
            arguments
            if isinstance(arguments, str)
            else json.dumps(arguments, sort_keys=True),
        )
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
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.task},
        ]

    def conversation(
        self, model=None, tools=None, system: Optional[str] = None
    ) -> LiveConversation:
        """The session as a replayable conversation: its replies, its
        tools, its opening."""
        opening = self.opening_messages()
        if system is not None:
            opening[0] = {"role": "system", "content": system}
        model = ScriptedModel(self.replies) if model is None else model
        return LiveConversation(model, self.tools if tools is None else tools, opening)


def load_session(path=DEFAULT_SESSION, extra_tools: Sequence[str] = ()) -> Session:
    """Read and check a session file; errors name the file and the field.

    Every tool the replies call must be a workspace tool or one of `extra_tools`
    (tools the harness adds itself, such as an external store's `recall`).
    """
    path = Path(path)
    data = read_json_file(path, "session", SessionFileError)
    if not isinstance(data, dict):
        raise SessionFileError(
            f"{path}: expected a JSON object "
            "with name, system, task, replies and workspace"
        )
    for key, kind in (
        ("name", str),
        ("system", str),
        ("task", str),
        ("replies", list),
        ("workspace", str),
    ):
        if not isinstance(data.get(key), kind):
            raise SessionFileError(
                f"{path}: field '{key}' is missing or not a {kind.__name__}"
            )
    for index, reply in enumerate(data["replies"]):
        if not isinstance(reply, dict) or reply.get("role") != "assistant":
            raise SessionFileError(
                f"{path}: replies[{index}] must be an assistant message"
            )
    try:
        # The tools answer the calls at replay, so the script holds no tool results.
        validate_messages(data["replies"], where="replies", expect_tool_results=False)
    except ValueError as error:
        raise SessionFileError(f"{path}: {error}") from None
    workspace = (path.parent / data["workspace"]).resolve()
    if not workspace.is_dir():
        raise SessionFileError(
            f"{path}: field 'workspace' names {data['workspace']}, which is not a folder"
        )
    session = Session(
        path, data["name"], data["system"], data["task"], data["replies"], workspace
    )
    known = set(session.tools.workspace.tools) | set(extra_tools)
    for index, reply in enumerate(data["replies"]):
        for number, call in enumerate(reply.get("tool_calls") or []):
            name = call["function"]["name"]
            if name not in known:
                raise SessionFileError(
                    f"{path}: replies[{index}].tool_calls[{number}] "
                    f"calls unknown tool {name!r}"
                )
    return session


SUMMARY_STRATEGIES = ("rolling_summary", "hierarchical_summary")


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
    """Everything one replay produced: rounds, compressions, the trace,
    the final window."""

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
        return self.tracer.count("model_call", "decision")

    @property
    def summary_calls(self) -> int:
        """Model calls made by the rolling summary: compression is not free."""
        return self.tracer.count("model_call", "summary")

    @property
    def tool_calls(self) -> int:
        return self.tracer.count("tool_call")

    def rounds_as_dicts(self) -> List[dict]:
        return [round_.__dict__.copy() for round_ in self.rounds]


@dataclass(frozen=True)
class Baseline:
    """A replay with no compression: per-round tokens and messages."""

    tokens: Tuple[int, ...]
    messages: Tuple[int, ...]
    final_messages: Tuple[Mapping, ...]
    final_tokens: int

    @classmethod
    def of(cls, run: Replay, count_tokens: TokenCounter = estimate_tokens) -> "Baseline":
        return cls(
            tuple(r.tokens_before for r in run.rounds),
            tuple(r.messages_before for r in run.rounds),
            tuple(run.messages),
            count_tokens(run.messages),
        )


def session_run(
    settings: Settings,
    governed: Replay,
    baseline: Baseline,
    count_tokens: TokenCounter = estimate_tokens,
    baseline_round: Callable[[int], Optional[int]] = lambda number: number,
) -> SessionRun:
    """A governed replay beside its uncompressed baseline, round by round.

    `baseline_round(n)` is the baseline round beside governed round n (None: none, as
    for a grounded model's extra look-up round).
    """
    rounds = []
    for r in governed.rounds:
        beside = baseline_round(r.round)
        rounds.append(
            Round(
                r.round,
                None if beside is None else baseline.tokens[beside],
                None if beside is None else baseline.messages[beside],
                r.tokens_before,
                r.tokens_after,
                r.messages_before,
                r.messages_after,
                "tool_result_aging" in r.strategies,
                any(name in SUMMARY_STRATEGIES for name in r.strategies),
            )
        )
    return SessionRun(
        settings,
        rounds,
        governed.compressions,
        governed.messages,
        count_tokens(governed.messages),
        governed.tracer,
        governed.overflow,
    )


@lru_cache(maxsize=8)
def run_baseline(
    session: Session, count_tokens: TokenCounter = estimate_tokens
) -> Baseline:
    """The uncompressed replay; cached because no slider changes it."""
    return Baseline.of(
        replay(session.conversation(), None, count_tokens=count_tokens), count_tokens
    )


def run_session(
    session: Session,
    settings: Settings = Settings(),
    count_tokens: TokenCounter = estimate_tokens,
) -> SessionRun:
    """Replay the session through the article's ContextWindow at `settings`.

    A ContextOverflowError does not escape: it ends the run and is kept in
    `run.overflow`, with the rounds that completed before it.
    """
    model = ScriptedModel(session.replies)
    window = article_window(model.summarize, settings, count_tokens)
    governed = replay(
        session.conversation(model), window, tracer=Tracer(), count_tokens=count_tokens
    )
    return session_run(
        settings, governed, run_baseline(session, count_tokens), count_tokens
    )


def window_before_round(
    session: Session,
    settings: Settings,
    round_number: int,
    count_tokens: TokenCounter = estimate_tokens,
):
    """The message list just before round `round_number` is governed, and the window that
    governs it.

    For stepping one round of the state machine (`window.walk(messages, round_number)`).
    """
    check_int("round_number", round_number)
    model = ScriptedModel(session.replies)
    window = article_window(model.summarize, settings, count_tokens)
    run = replay(
        session.conversation(model),
        window,
        count_tokens=count_tokens,
        until_round=round_number,
    )
    return run.messages, window
