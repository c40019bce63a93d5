"""The six compression paths on one session: tokens per round, extra calls, facts kept.

Each path runs in the smallest pipeline that can govern the bundled session. A
group-level path (truncation, summaries, store groups) cannot help in round 1,
where the newest tool result alone is 4,000+ tokens and sits in the protected tail,
so it runs after aging (the store has its own content-level offload instead);
aging runs alone; budgeting runs before the article's pipeline. Every run uses
the same ContextWindow, the same threshold and the same fact probe.

`python -m minilib.compare` prints the tables; `--write docs/six_paths.md` writes
them as markdown (the README's table comes from there).
"""

import argparse
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .aging import ToolResultAging
from .budgeting import InputBudgeting, PromptSection, declaration_section
from .facts import STATES, Fact, count_states, load_facts, probe
from .hierarchical import HierarchicalSummary
from .loop import run_loop
from .messages import check_int
from .model import ScriptedModel
from .session import DATA_DIR, DEFAULT_SESSION, Session, load_session
from .store import RECALL_DECLARATION, RECALL_TOOL, ExternalStore, OffloadGroups, OffloadToolResults, RecallTool, ToolsWithRecall
from .summary import RollingSummary
from .tokens import TokenCounter, estimate_text_tokens, estimate_tokens
from .trace import Tracer
from .truncation import SlidingWindowTruncation
from .window import ContextOverflowError, ContextWindow

DEFAULT_FACTS = DATA_DIR / "facts.json"
RECALL_SESSION = DATA_DIR / "session_recall.json"
TRANSCRIPTS_DIR = DATA_DIR / "transcripts"
ARTICLE = dict(threshold=1200, head_chars=160, tail_chars=120, min_chars=240, protect_tail=4)


@dataclass(frozen=True)
class PathSpec:
    """One compression path: its pipeline builder and its main parameter (the notebook's slider)."""

    key: str
    title: str
    pipeline: str
    parameter: str
    default: int
    choices: Tuple[int, ...]
    build: Callable = field(repr=False, compare=False)


# --- the budgeting scenario: the session's prompt as a harness would assemble it ---------------

def _function(name: str, description: str, properties: Mapping[str, str], required: Sequence[str]) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {k: {"type": "string", "description": v}
                                                        for k, v in properties.items()},
                       "required": list(required)}}}


WORKSPACE_DECLARATIONS = (
    _function("read_file", "Read a UTF-8 text file of the workspace.", {"path": "path relative to the workspace"},
              ["path"]),
    _function("list_dir", "List a folder of the workspace: names, and sizes of files.",
              {"path": "folder relative to the workspace, default ."}, []),
    _function("search_text", "Search the workspace for a regular expression; one line per match.",
              {"pattern": "a Python regular expression", "path": "file or folder to search, default ."},
              ["pattern"]),
)
OUTPUT_FORMAT = ("## 输出格式\n结论先行：第一句给出能否发布；随后逐条列出阻塞项，每条注明来源文件路径、"
                 "行号和原文里的数字；最后列出仍需人工确认的事项。不要写没有经工具查证的推测。")
EXAMPLE = ("## 示例\n用户：v0.2 能发布吗？\n助手：先读 logs/build.log。\n（工具回报：nightly #301 FAILED: "
           "test_tools.py::case_004）\n助手：不能发布。1. nightly #301 失败（logs/build.log 第 88 行），"
           "失败用例 test_tools.py::case_004；2. CHANGELOG.md 未列出已知问题。需人工确认：失败是否与本次改动有关。")


def prompt_sections(session: Session) -> List[PromptSection]:
    """The session's system prompt split as a harness builds it: what the task needs is required."""
    return ([PromptSection("core", session.system, required=True)]
            + [declaration_section(d, required=True) for d in WORKSPACE_DECLARATIONS]
            + [PromptSection("output_format", OUTPUT_FORMAT, priority=2),
               declaration_section(RECALL_DECLARATION, required=False, priority=1),
               PromptSection("example", EXAMPLE, priority=0)])


def required_prompt_tokens(session: Session, count_tokens: TokenCounter = estimate_tokens) -> int:
    sections = prompt_sections(session)
    return InputBudgeting(sections, 0, count_tokens).prompt_tokens([s for s in sections if s.required])


# --- pipelines ------------------------------------------------------------------------------------

@dataclass
class Pipeline:
    """What one run needs: the strategies, the tools the agent may call, the store, the system prompt."""

    strategies: list
    tools: object
    store: Optional[ExternalStore] = None
    system: Optional[str] = None


def _aging(count_tokens):
    return ToolResultAging(ARTICLE["head_chars"], ARTICLE["tail_chars"], ARTICLE["min_chars"], count_tokens)


def _truncation(session, value, count_tokens, model):
    return Pipeline([_aging(count_tokens), SlidingWindowTruncation(value)], session.tools)


def _aging_only(session, value, count_tokens, model):
    return Pipeline([ToolResultAging(value, ARTICLE["tail_chars"], ARTICLE["min_chars"], count_tokens)], session.tools)


def _rolling(session, value, count_tokens, model):
    return Pipeline([_aging(count_tokens), RollingSummary(model.summarize, value, count_tokens)], session.tools)


def _hierarchical(session, value, count_tokens, model):
    return Pipeline([_aging(count_tokens), HierarchicalSummary(value, ARTICLE["protect_tail"], count_tokens)],
                    session.tools)


def _store(session, value, count_tokens, model):
    store = ExternalStore()
    strategies = [OffloadToolResults(store, ARTICLE["min_chars"], ARTICLE["head_chars"], ARTICLE["tail_chars"],
                                     count_tokens),
                  OffloadGroups(store, value, count_tokens)]
    return Pipeline(strategies, ToolsWithRecall(session.tools, RecallTool(store)), store)


def _budgeting(session, value, count_tokens, model):
    budget = InputBudgeting(prompt_sections(session), value, count_tokens)
    return Pipeline([budget, _aging(count_tokens), RollingSummary(model.summarize, ARTICLE["protect_tail"],
                                                                  count_tokens)],
                    session.tools, system=budget.full_prompt)


PATHS: Dict[str, PathSpec] = {p.key: p for p in (
    PathSpec("truncation", "1 sliding-window truncation", "aging → truncation", "protect_tail", 4,
          (0, 1, 2, 4, 6, 8, 10), _truncation),
    PathSpec("aging", "2 tool-result aging", "aging alone", "head_chars", 160,
          (0, 40, 80, 160, 320, 640), _aging_only),
    PathSpec("rolling_summary", "3 rolling summary", "aging → rolling summary (the article)", "protect_tail", 4,
          (0, 1, 2, 4, 6, 8, 10), _rolling),
    PathSpec("hierarchical", "4 hierarchical summary", "aging → hierarchical summary", "key_lines", 3,
          (0, 1, 2, 3, 5, 8, 12), _hierarchical),
    PathSpec("store", "5 external store + recall", "store results → store groups", "protect_tail", 4,
          (0, 1, 2, 4, 6, 8, 10), _store),
    PathSpec("budgeting", "6 input-side budgeting", "budgeting → aging → rolling summary", "budget_tokens", 400,
          (300, 350, 400, 450, 500, 600), _budgeting),
)}


# --- one run, probed every round ----------------------------------------------------------------

@dataclass(frozen=True)
class ProbedRound:
    round: int
    tokens: int
    messages: int
    strategies: Tuple[str, ...]
    facts: Mapping[str, int]  # state -> count, plus "not_yet"


@dataclass
class PathRun:
    """One path at one setting on one session: every round, the final fact states, the costs."""

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


def _probe_outputs(tracer: Tracer) -> Dict[str, str]:
    return {event["tool_call_id"]: event["output"] for event in tracer.events("tool_call")}


def run_path(path: str, value: Optional[int] = None, *, session: Optional[Session] = None,
             facts: Optional[Sequence[Fact]] = None, threshold: int = ARTICLE["threshold"],
             count_tokens: TokenCounter = estimate_tokens) -> PathRun:
    """Replay `session` through one path at `value` of its main parameter; probe the facts every round."""
    if path not in PATHS:
        raise ValueError(f"unknown path {path!r}; expected one of {', '.join(PATHS)}")
    spec = PATHS[path]
    value = spec.default if value is None else check_int(spec.parameter, value)
    check_int("threshold", threshold, minimum=1)
    session = session or default_session()
    facts = default_facts() if facts is None else facts
    model = ScriptedModel(session.replies)
    pipeline = spec.build(session, value, count_tokens, model)
    window = ContextWindow(threshold, pipeline.strategies, count_tokens)
    tracer = Tracer()
    messages = session.opening_messages()
    if pipeline.system is not None:
        messages[0] = {"role": "system", "content": pipeline.system}
    rounds: List[ProbedRound] = []
    states: Dict[str, str] = {}

    def observe(step, window_messages, compressions):
        nonlocal states
        states = probe(facts, window_messages, _probe_outputs(tracer), pipeline.store)
        rounds.append(ProbedRound(step, count_tokens(window_messages), len(window_messages),
                                  tuple(c.strategy for c in compressions), count_states(states, len(facts))))

    overflow = None
    try:
        run_loop(model, messages, pipeline.tools, context_window=window, tracer=tracer, on_round=observe)
    except ContextOverflowError as error:
        overflow = error
    extra = sum(1 for call in tracer.events("model_call") if call["purpose"] != "decision")
    recalls = sum(1 for call in tracer.events("tool_call") if call["name"] == "recall")
    return PathRun(path, spec.parameter, value, threshold, rounds, states, extra, recalls, overflow, tracer,
                   pipeline.store)


def run_baseline_probe(session: Optional[Session] = None, facts: Optional[Sequence[Fact]] = None,
                       count_tokens: TokenCounter = estimate_tokens) -> PathRun:
    """No compression at all: every fact stays, and every round is over the threshold."""
    session = session or default_session()
    facts = default_facts() if facts is None else facts
    tracer = Tracer()
    rounds: List[ProbedRound] = []
    states: Dict[str, str] = {}

    def observe(step, window_messages, compressions):
        nonlocal states
        states = probe(facts, window_messages, _probe_outputs(tracer))
        rounds.append(ProbedRound(step, count_tokens(window_messages), len(window_messages), (),
                                  count_states(states, len(facts))))

    run_loop(ScriptedModel(session.replies), session.opening_messages(), session.tools, tracer=tracer,
             on_round=observe)
    return PathRun("none", "-", 0, 0, rounds, states, 0, 0, None, tracer, None)


@lru_cache(maxsize=1)
def default_session() -> Session:
    return load_session(DEFAULT_SESSION)


@lru_cache(maxsize=1)
def default_facts() -> Tuple[Fact, ...]:
    return tuple(load_facts(DEFAULT_FACTS))


def load_recall_session(path=RECALL_SESSION) -> Session:
    """A session whose agent may call `recall`: checked like any session, with recall as a known tool."""
    return load_session(path, extra_tools=[RECALL_TOOL])


# --- tables ---------------------------------------------------------------------------------------

def default_runs(session: Optional[Session] = None) -> Dict[str, PathRun]:
    """Every path at its default setting (the article's values where the article has them)."""
    return {key: run_path(key, session=session) for key in PATHS}


def sweep(path: str, session: Optional[Session] = None) -> List[PathRun]:
    """One path at each of its slider's values."""
    return [run_path(path, value, session=session) for value in PATHS[path].choices]


def _status(run: PathRun) -> str:
    return "yes" if run.completed else f"overflow at round {len(run.rounds)}"


def comparison_rows(runs: Mapping[str, PathRun], baseline: PathRun) -> List[dict]:
    """One row per run: the README table's columns."""
    total = len(baseline.final_states)
    rows = [{"path": "0 no compression", "pipeline": "none", "setting": "-", "completes": "yes (over the window)",
             "last_window": baseline.final_tokens, "tokens_sent": baseline.tokens_sent, "extra_calls": 0,
             **{state: baseline.final_count(state) for state in STATES}, "total": total}]
    for key, run in runs.items():
        spec = PATHS.get(key) or PATHS[run.path]
        rows.append({"path": spec.title if key in PATHS else key, "pipeline": spec.pipeline,
                     "setting": f"{run.parameter}={run.value}", "completes": _status(run),
                     "last_window": run.final_tokens, "tokens_sent": run.tokens_sent,
                     "extra_calls": run.extra_model_calls + run.recall_calls,
                     **{state: run.final_count(state) for state in STATES}, "total": total})
    return rows


def markdown_table(rows: Sequence[Mapping], columns: Sequence[Tuple[str, str]]) -> str:
    lines = ["| " + " | ".join(title for _, title in columns) + " |",
             "|" + "|".join("---" if i < 2 else "---:" for i in range(len(columns))) + "|"]
    for row in rows:
        cells = [f"{row[key]:,}" if isinstance(row[key], int) else str(row[key]) for key, _ in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


COMPARISON_COLUMNS = (("path", "path"), ("pipeline", "pipeline"), ("setting", "main parameter"),
                      ("completes", "completes"), ("last_window", "tokens, last round"),
                      ("tokens_sent", "tokens sent, all rounds"), ("extra_calls", "extra calls"),
                      ("kept", "facts kept"), ("recallable", "recallable"), ("traceable", "traceable"),
                      ("lost", "lost"))


def tokenizer_rows(session: Optional[Session] = None) -> List[dict]:
    """The estimate against o200k_base and cl100k_base on English, Chinese and mixed text."""
    from .tokenizers import ENCODINGS, text_counter
    session = session or default_session()
    outputs = _probe_outputs(run_baseline_probe(session).tracer)
    replies = [r.get("content") or "" for r in session.replies]
    samples = [
        ("English: CI log (logs/build.log)", outputs["call_03"]),
        ("English: prose (docs/RELEASE.md)", outputs["call_07"]),
        ("English: config (config/agent.toml)", outputs["call_08"]),
        ("Chinese: system prompt, task, the agent's replies", "\n".join([session.system, session.task] + replies)),
        ("Mixed: all 13 tool outputs", "\n".join(outputs.values())),
    ]
    for path in sorted(TRANSCRIPTS_DIR.glob("*.json*")) if TRANSCRIPTS_DIR.is_dir() else ():
        from .transcripts import load_transcript
        text = "\n".join(m.get("content") or "" for m in load_transcript(path).messages)
        samples.append((f"transcript {path.name}", text))
    rows = []
    for label, text in samples:
        row = {"text": label, "chars": len(text), "estimate": estimate_text_tokens(text)}
        for name in ENCODINGS:
            real = text_counter(name)(text)
            row[name] = real
            row[f"{name}_error"] = f"{(row['estimate'] - real) / real:+.0%}"
        rows.append(row)
    return rows


TOKENIZER_COLUMNS = (("text", "text"), ("chars", "characters"), ("estimate", "estimate"),
                     ("o200k_base", "o200k_base"), ("o200k_base_error", "estimate error vs o200k"),
                     ("cl100k_base", "cl100k_base"), ("cl100k_base_error", "estimate error vs cl100k"))


def render_markdown(runs: Mapping[str, PathRun], baseline: PathRun, recall_run: PathRun, unbudgeted_run: PathRun,
                    fact_table: str, tokenizer_table: Optional[str]) -> str:
    total = len(baseline.final_states)
    rows = comparison_rows({**runs, "5b store, session with one recall (data/session_recall.json)": recall_run,
                            "6b the same full prompt, nothing cut": unbudgeted_run}, baseline)
    parts = [
        "# The six compression paths on the bundled session",
        "",
        "Generated by `python -m minilib.compare --write docs/six_paths.md`; do not edit by hand.",
        "",
        f"The 13-call session, window threshold {ARTICLE['threshold']:,} tokens (estimate), the article's aging "
        f"(head {ARTICLE['head_chars']}, tail {ARTICLE['tail_chars']}, min {ARTICLE['min_chars']} characters) "
        f"and protected tail ({ARTICLE['protect_tail']} messages). {total} facts are planted in the tool results "
        "(data/facts.json: file paths, error codes, numbers, a command, a status). At the last round — the window "
        "the model answers from — each fact is *kept* (verbatim in the window), *recallable* (in the external "
        "store under an id the window names), *traceable* (the window names the tool call whose full output in "
        "the run log holds it) or *lost*. Extra calls are summary model calls plus recall tool calls.",
        "",
        markdown_table(rows, COMPARISON_COLUMNS),
        "",
        "Rows 1–5 send the session's own short system prompt. Row 6 sends the prompt a harness would build "
        "(the core prompt, three required tool declarations, and optional sections: an output format, the recall "
        "tool's declaration, an example) and cuts the optional ones to the budget; compare it with row 6b, the "
        "same prompt uncut, not with rows 1–5. A row that overflows ends the loop without an answer; its fact "
        "columns are those of the last window it sent.",
        "",
        "## Fact by fact, at the last round",
        "",
        fact_table,
    ]
    if tokenizer_table is not None:
        parts += ["", "## The estimate against real tokenizers", "",
                  "Text tokens only (no per-message overhead). Error = (estimate − real) / real.", "",
                  tokenizer_table]
    return "\n".join(parts) + "\n"


def full_prompt_tokens(session: Optional[Session] = None, count_tokens: TokenCounter = estimate_tokens) -> int:
    sections = prompt_sections(session or default_session())
    return InputBudgeting(sections, 0, count_tokens).prompt_tokens(sections)


def fact_rows(runs: Mapping[str, PathRun], facts: Optional[Sequence[Fact]] = None) -> List[dict]:
    """One row per fact: its state at the last round under each run."""
    facts = default_facts() if facts is None else facts
    return [{"fact": f"`{fact.text}`", "kind": fact.kind, "first": fact.first_call,
             **{key: run.final_states.get(fact.id, "-") for key, run in runs.items()}} for fact in facts]


def kind_rows(runs: Mapping[str, PathRun], facts: Optional[Sequence[Fact]] = None) -> List[dict]:
    """Per kind of fact (paths, numbers, ...): how many each run keeps verbatim, as "kept/total"."""
    facts = default_facts() if facts is None else facts
    kinds = sorted({fact.kind for fact in facts}, key=[f.kind for f in facts].index)
    rows = []
    for kind in kinds:
        ids = [fact.id for fact in facts if fact.kind == kind]
        rows.append({"kind": kind, **{key: f"{sum(run.final_states.get(i) == 'kept' for i in ids)}/{len(ids)}"
                                      for key, run in runs.items()}})
    return rows


def build_markdown(include_tokenizers: bool = True) -> str:
    runs = default_runs()
    recall = run_path("store", session=load_recall_session())
    unbudgeted = run_path("budgeting", full_prompt_tokens())
    every = {**runs, "store+recall": recall}
    fact_table = markdown_table(fact_rows(every), [("fact", "fact"), ("kind", "kind"), ("first", "first in")]
                                + [(key, key) for key in every])
    fact_table += "\n\nKept verbatim at the last round, by kind:\n\n" + markdown_table(
        kind_rows(every), [("kind", "kind")] + [(key, key) for key in every])
    tokenizer_table = markdown_table(tokenizer_rows(), TOKENIZER_COLUMNS) if include_tokenizers else None
    return render_markdown(runs, run_baseline_probe(), recall, unbudgeted, fact_table, tokenizer_table)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minilib.compare", description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="write the markdown tables to this file")
    parser.add_argument("--no-tokenizers", action="store_true", help="leave out the real-tokenizer table")
    args = parser.parse_args(argv)
    include = not args.no_tokenizers
    if include:
        from .tokenizers import available, INSTALL_HINT
        if not available():
            print(f"python -m minilib.compare: the tokenizer table needs bpe-openai: {INSTALL_HINT}; "
                  "or pass --no-tokenizers", file=sys.stderr)
            return 2
    text = build_markdown(include)
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(text, encoding="utf-8")
        print(f"wrote {args.write}")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
