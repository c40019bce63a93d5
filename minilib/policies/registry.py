"""The six compression paths on one session: tokens per round, extra calls, facts kept.

Each path runs in the smallest pipeline that can govern the bundled session. A
group-level path (truncation, summaries, store groups) cannot help in round 1,
where the newest tool result alone is 4,000+ tokens and sits in the protected tail,
so it runs after aging (the store has its own content-level offload instead);
aging runs alone; budgeting runs before the article's pipeline. Every run uses
the same ContextWindow, the same threshold (the article's `Settings`) and the same
fact probe. `minilib.reports` turns the runs into rows and tables (docs/six_paths.md).
With `grounded=True` a run replays the grounded script (the agent looks up what its
window lacks; minilib.measure.grounding) and also measures what its final answer got
right and what the look-ups cost; `keep_unseen=True` switches aging to age-after-seen.
"""

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..aging import ToolResultAging
from ..loop import replay
from ..measure.facts import Fact, count_states, load_facts, probe
from ..measure.grounded_model import GroundedModel
from ..measure.grounding import LOOKUP_PREFIX as LOOKUP
from ..measure.grounding import GroundedOutcome, grounded_outcome, session_grounding
from ..messages import check_int
from ..model import ScriptedModel
from ..session import DATA_DIR, DEFAULT_SESSION, Session, load_session
from ..summary import RollingSummary
from ..tokens import TokenCounter, estimate_tokens
from ..tools import WORKSPACE_DECLARATIONS
from ..trace import Tracer
from ..window import ContextOverflowError, ContextWindow, Settings
from .budgeting import InputBudgeting, PromptSection, declaration_section
from .hierarchical import HierarchicalSummary
from .store import (
    RECALL_DECLARATION,
    RECALL_TOOL,
    ExternalStore,
    OffloadGroups,
    OffloadToolResults,
    RecallTool,
    ToolsWithRecall,
)
from .truncation import SlidingWindowTruncation

DEFAULT_FACTS = DATA_DIR / "facts.json"
RECALL_SESSION = DATA_DIR / "session_recall.json"
PROMPT_SECTIONS = DATA_DIR / "prompt_sections.json"
ARTICLE = Settings()


@dataclass(frozen=True)
class PathSpec:
    """One compression path: its pipeline builder and its main parameter
    (the notebook's slider)."""

    key: str
    title: str
    pipeline: str
    parameter: str
    default: int
    choices: Tuple[int, ...]
    build: Callable = field(repr=False, compare=False)


def prompt_sections(session: Session) -> List[PromptSection]:
    """The session's system prompt, split as data/prompt_sections.json says."""
    sections = []
    for entry in json.loads(PROMPT_SECTIONS.read_text(encoding="utf-8"))["sections"]:
        source, required, priority = (
            entry.get("source"),
            entry.get("required", False),
            entry.get("priority", 0),
        )
        if source == "session_system":
            sections.append(PromptSection("core", session.system, required=True))
        elif source == "workspace_tools":
            sections += [
                declaration_section(d, required=required) for d in WORKSPACE_DECLARATIONS
            ]
        elif source == "recall_tool":
            sections.append(
                declaration_section(
                    RECALL_DECLARATION, required=required, priority=priority
                )
            )
        else:
            sections.append(
                PromptSection(entry["name"], entry["text"], required, priority)
            )
    return sections


# --- pipelines
# ------------------------------------------------------------------------------------


@dataclass
class Pipeline:
    """What one run needs: the strategies, the tools the agent may call, the store, the
    system prompt."""

    strategies: list
    tools: object
    store: Optional[ExternalStore] = None
    system: Optional[str] = None


# `keep_unseen` is ToolResultAging's age-after-seen option (off: the article's rule).
# The store path has no aging: its offload cuts the newest result either way.


def _aging(count_tokens, keep_unseen=False, head_chars=ARTICLE.head_chars):
    return ToolResultAging(
        head_chars,
        ARTICLE.tail_chars,
        ARTICLE.min_chars,
        count_tokens,
        keep_unseen=keep_unseen,
    )


def _truncation(session, value, count_tokens, model, keep_unseen=False):
    return Pipeline(
        [_aging(count_tokens, keep_unseen), SlidingWindowTruncation(value)],
        session.tools,
    )


def _aging_only(session, value, count_tokens, model, keep_unseen=False):
    return Pipeline([_aging(count_tokens, keep_unseen, value)], session.tools)


def _rolling(session, value, count_tokens, model, keep_unseen=False):
    return Pipeline(
        [
            _aging(count_tokens, keep_unseen),
            RollingSummary(model.summarize, value, count_tokens),
        ],
        session.tools,
    )


def _hierarchical(session, value, count_tokens, model, keep_unseen=False):
    return Pipeline(
        [
            _aging(count_tokens, keep_unseen),
            HierarchicalSummary(value, ARTICLE.protect_tail, count_tokens),
        ],
        session.tools,
    )


def _store(session, value, count_tokens, model, keep_unseen=False):
    store = ExternalStore()
    strategies = [
        OffloadToolResults(
            store, ARTICLE.min_chars, ARTICLE.head_chars, ARTICLE.tail_chars, count_tokens
        ),
        OffloadGroups(store, value, count_tokens),
    ]
    return Pipeline(strategies, ToolsWithRecall(session.tools, RecallTool(store)), store)


def _budgeting(session, value, count_tokens, model, keep_unseen=False):
    budget = InputBudgeting(prompt_sections(session), value, count_tokens)
    return Pipeline(
        [
            budget,
            _aging(count_tokens, keep_unseen),
            RollingSummary(model.summarize, ARTICLE.protect_tail, count_tokens),
        ],
        session.tools,
        system=budget.full_prompt,
    )


PATHS: Dict[str, PathSpec] = {
    p.key: p
    for p in (
        PathSpec(
            "truncation",
            "1 sliding-window truncation",
            "aging → truncation",
            "protect_tail",
            4,
            (0, 1, 2, 4, 6, 8, 10),
            _truncation,
        ),
        PathSpec(
            "aging",
            "2 tool-result aging",
            "aging alone",
            "head_chars",
            160,
            (0, 40, 80, 160, 320, 640),
            _aging_only,
        ),
        PathSpec(
            "rolling_summary",
            "3 rolling summary",
            "aging → rolling summary (the article)",
            "protect_tail",
            4,
            (0, 1, 2, 4, 6, 8, 10),
            _rolling,
        ),
        PathSpec(
            "hierarchical",
            "4 hierarchical summary",
            "aging → hierarchical summary",
            "key_lines",
            3,
            (0, 1, 2, 3, 5, 8, 12),
            _hierarchical,
        ),
        PathSpec(
            "store",
            "5 external store + recall",
            "store results → store groups",
            "protect_tail",
            4,
            (0, 1, 2, 4, 6, 8, 10),
            _store,
        ),
        PathSpec(
            "budgeting",
            "6 input-side budgeting",
            "budgeting → aging → rolling summary",
            "budget_tokens",
            400,
            (300, 350, 400, 450, 500, 600),
            _budgeting,
        ),
    )
}


# --- one run, probed every round
# ----------------------------------------------------------------


@dataclass(frozen=True)
class ProbedRound:
    round: int
    tokens: int
    messages: int
    strategies: Tuple[str, ...]
    facts: Mapping[str, int]  # state -> count, plus "not_yet"


@dataclass
class PathRun:
    """One path at one setting on one session: every round, the final fact
    states, the costs."""

    path: str
    parameter: str
    value: int
    threshold: int
    rounds: List[ProbedRound]
    final_states: Dict[str, str]
    extra_model_calls: int
    recall_calls: int
    overflow: Optional[ContextOverflowError]
    tracer: Tracer
    store: Optional[ExternalStore]
    # grounded mode: what the final answer got right and what looking things up cost
    grounded: Optional[GroundedOutcome] = None
    keep_unseen: bool = False  # aging waited until the model had seen a result

    @property
    def completed(self) -> bool:
        return self.overflow is None

    @property
    def final_tokens(self) -> int:
        """Tokens of the last window sent to the model (the one it answered from)."""
        return self.rounds[-1].tokens if self.rounds else 0

    @property
    def tokens_sent(self) -> int:
        """All tokens sent over the run: what a provider bills for input."""
        return sum(r.tokens for r in self.rounds)

    def final_count(self, state: str) -> int:
        return sum(1 for s in self.final_states.values() if s == state)


def tool_outputs(tracer: Tracer) -> Dict[str, str]:
    """Every tool call's full output in a run, by call id: what the probe searches."""
    return {
        event["tool_call_id"]: event["output"] for event in tracer.events("tool_call")
    }


def _probed_run(
    session: Session,
    facts: Sequence[Fact],
    window: Optional[ContextWindow],
    pipeline: "Pipeline",
    model: ScriptedModel,
    count_tokens: TokenCounter,
):
    """Replay with the fact probe run on the window sent in every round."""
    tracer = Tracer()
    rounds: List[ProbedRound] = []
    states: Dict[str, str] = {}

    def observe(step, window_messages, compressions):
        nonlocal states
        states = probe(facts, window_messages, tool_outputs(tracer), pipeline.store)
        rounds.append(
            ProbedRound(
                step,
                count_tokens(window_messages),
                len(window_messages),
                tuple(c.strategy for c in compressions),
                count_states(states, len(facts)),
            )
        )

    conversation = session.conversation(model, pipeline.tools, pipeline.system)
    run = replay(
        conversation, window, tracer=tracer, count_tokens=count_tokens, on_round=observe
    )
    return rounds, states, tracer, run.overflow


def _grounded_model(session: Session, facts: Sequence[Fact], grounded: bool):
    if not grounded:
        return ScriptedModel(session.replies)
    return GroundedModel(session.replies, session_grounding(session, tuple(facts)))


def _outcome(model, tracer, rounds, plain: Optional["PathRun"]):
    return grounded_outcome(
        model,
        tracer,
        sum(r.tokens for r in rounds),
        None if plain is None else plain.tokens_sent,
    )


def run_path(
    path: str,
    value: Optional[int] = None,
    *,
    session: Optional[Session] = None,
    facts: Optional[Sequence[Fact]] = None,
    threshold: int = ARTICLE.threshold,
    count_tokens: TokenCounter = estimate_tokens,
    grounded: bool = False,
    keep_unseen: bool = False,
) -> PathRun:
    """Replay `session` through one path at `value` of its main parameter; probe the facts
    every round.

    `grounded=True` replays the grounded script (minilib.measure.grounding): the model
    looks up what its window lacks (with `recall` on the store path) and `grounded`
    holds the outcome, its extra tokens measured against the same run without
    grounding. `keep_unseen=True` ages a tool result only once the model has seen it.
    """
    if path not in PATHS:
        raise ValueError(f"unknown path {path!r}; expected one of {', '.join(PATHS)}")
    spec = PATHS[path]
    value = spec.default if value is None else check_int(spec.parameter, value)
    check_int("threshold", threshold, minimum=1)
    session = session or default_session()
    facts = default_facts() if facts is None else facts
    plain = None
    if grounded:
        plain = run_path(
            path,
            value,
            session=session,
            facts=facts,
            threshold=threshold,
            count_tokens=count_tokens,
            keep_unseen=keep_unseen,
        )
    model = _grounded_model(session, facts, grounded)
    pipeline = spec.build(session, value, count_tokens, model, keep_unseen=keep_unseen)
    if grounded and isinstance(pipeline.tools, ToolsWithRecall):
        model.grounding = model.grounding.with_recall()  # the harness offers recall
    window = ContextWindow(threshold, pipeline.strategies, count_tokens)
    rounds, states, tracer, overflow = _probed_run(
        session, facts, window, pipeline, model, count_tokens
    )
    extra = sum(
        1 for call in tracer.events("model_call") if call["purpose"] != "decision"
    )
    recalls = sum(  # the script's own recalls; grounded look-ups are counted apart
        1
        for call in tracer.events("tool_call")
        if call["name"] == RECALL_TOOL and not call["tool_call_id"].startswith(LOOKUP)
    )
    return PathRun(
        path,
        spec.parameter,
        value,
        threshold,
        rounds,
        states,
        extra,
        recalls,
        overflow,
        tracer,
        pipeline.store,
        _outcome(model, tracer, rounds, plain) if grounded else None,
        keep_unseen,
    )


def run_baseline_probe(
    session: Optional[Session] = None,
    facts: Optional[Sequence[Fact]] = None,
    count_tokens: TokenCounter = estimate_tokens,
    grounded: bool = False,
) -> PathRun:
    """No compression at all: every fact stays, and every round is over the threshold.

    Grounded, nothing is ever missing, so it makes no look-up and no extra token."""
    session = session or default_session()
    facts = default_facts() if facts is None else facts
    model = _grounded_model(session, facts, grounded)
    pipeline = Pipeline([], session.tools)
    rounds, states, tracer, _ = _probed_run(
        session, facts, None, pipeline, model, count_tokens
    )
    plain = run_baseline_probe(session, facts, count_tokens) if grounded else None
    outcome = _outcome(model, tracer, rounds, plain) if grounded else None
    return PathRun("none", "-", 0, 0, rounds, states, 0, 0, None, tracer, None, outcome)


@lru_cache(maxsize=1)
def default_session() -> Session:
    return load_session(DEFAULT_SESSION)


@lru_cache(maxsize=1)
def default_facts() -> Tuple[Fact, ...]:
    return tuple(load_facts(DEFAULT_FACTS))


def load_recall_session(path=RECALL_SESSION) -> Session:
    """A session whose agent may call `recall`: checked like any session, with recall as a
    known tool."""
    return load_session(path, extra_tools=[RECALL_TOOL])


# --- many runs at once
# ---------------------------------------------------------------------------------------


def default_runs(session: Optional[Session] = None) -> Dict[str, PathRun]:
    """Every path at its default setting (the article's values where the
    article has them)."""
    return {key: run_path(key, session=session) for key in PATHS}


def sweep(path: str, session: Optional[Session] = None) -> List[PathRun]:
    """One path at each of its slider's values."""
    return [run_path(path, value, session=session) for value in PATHS[path].choices]


def full_prompt_tokens(
    session: Optional[Session] = None, count_tokens: TokenCounter = estimate_tokens
) -> int:
    """Tokens of the whole assembled prompt: the budget at which path 6 cuts nothing."""
    sections = prompt_sections(session or default_session())
    return InputBudgeting(sections, 0, count_tokens).prompt_tokens(sections)
