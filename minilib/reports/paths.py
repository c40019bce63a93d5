"""The six compression paths as rows: one dict per run or per fact, with the column
titles to show them under.

`minilib.policies.registry` runs the paths; this module only turns its `PathRun`s into
rows of plain values, which the lab shows as DataFrames and the docs as markdown
(`six_paths_page`). Each `*_COLUMNS` is a sequence of (row key, column title).
"""

from typing import List, Mapping, Optional, Sequence

from ..measure.facts import STATES, Fact
from ..policies.registry import (
    PATHS,
    PathRun,
    default_facts,
    default_session,
    run_baseline_probe,
    run_path,
    tool_outputs,
)
from ..session import DATA_DIR, Session
from ..tokens import estimate_text_tokens

COMPARISON_COLUMNS = (
    ("path", "path"),
    ("pipeline", "pipeline"),
    ("setting", "main parameter"),
    ("completes", "completes"),
    ("last_window", "tokens, last round"),
    ("tokens_sent", "tokens sent, all rounds"),
    ("extra_calls", "extra calls"),
    ("kept", "facts kept"),
    ("recallable", "recallable"),
    ("traceable", "traceable"),
    ("lost", "lost"),
)
# The grounded table: what the final answer got right and what looking things up cost.
GROUNDED_COLUMNS = (
    ("path", "path"),
    ("setting", "main parameter"),
    ("completes", "completes"),
    ("facts_right", "final answer: facts right"),
    ("lost_facts", "facts it lost"),
    ("lookup_rounds", "look-up rounds"),
    ("lookup_calls", "look-up calls"),
    ("tokens_sent", "tokens sent, all rounds"),
    ("extra_tokens", "extra tokens (vs not grounded)"),
)
TOKENIZER_COLUMNS = (
    ("text", "text"),
    ("chars", "characters"),
    ("estimate", "estimate"),
    ("o200k_base", "o200k_base"),
    ("o200k_base_error", "estimate error vs o200k"),
    ("cl100k_base", "cl100k_base"),
    ("cl100k_base_error", "estimate error vs cl100k"),
)


class Listed(str):
    """Items shown as one text, "a, b, c", that keep their `items`: a table in a
    browser sets each item unbroken (a fact id such as `status-58-in-review` would
    otherwise break at its hyphens), markdown and text show the text."""

    items: tuple

    def __new__(cls, items: Sequence[str], empty: str = "-"):
        listed = super().__new__(cls, ", ".join(items) or empty)
        listed.items = tuple(items)
        return listed


def _status(run: PathRun) -> str:
    return "yes" if run.completed else f"overflow at round {len(run.rounds)}"


def _grounded_cells(run: PathRun) -> dict:
    outcome = run.grounded
    return {
        "facts_right": outcome.facts_right,
        "lost_facts": Listed(outcome.lost) if outcome.finished else "no final answer",
        "lookup_rounds": outcome.lookup_rounds,
        "lookup_calls": outcome.lookup_calls,
        "extra_tokens": outcome.extra_tokens,
        "finished": "yes" if outcome.finished else "no",
    }


def comparison_rows(runs: Mapping[str, PathRun], baseline: PathRun) -> List[dict]:
    """One row per run, after the baseline's: the COMPARISON_COLUMNS; grounded runs
    (baseline included) add the GROUNDED_COLUMNS. A key that is not a path names its row
    itself (e.g. a path on another session)."""
    total = len(baseline.final_states)
    rows = [
        {
            "path": "0 no compression",
            "pipeline": "none",
            "setting": "-",
            "completes": "yes (over the window)",
            "last_window": baseline.final_tokens,
            "tokens_sent": baseline.tokens_sent,
            "extra_calls": 0,
            **{state: baseline.final_count(state) for state in STATES},
            "total": total,
            **(_grounded_cells(baseline) if baseline.grounded else {}),
        }
    ]
    for key, run in runs.items():
        spec = PATHS.get(key) or PATHS[run.path]
        rows.append(
            {
                "path": spec.title if key in PATHS else key,
                "pipeline": spec.pipeline,
                "setting": f"{run.parameter}={run.value}",
                "completes": _status(run),
                "last_window": run.final_tokens,
                "tokens_sent": run.tokens_sent,
                "extra_calls": run.extra_model_calls + run.recall_calls,
                **{state: run.final_count(state) for state in STATES},
                "total": total,
                **(_grounded_cells(run) if run.grounded else {}),
            }
        )
    return rows


def grounded_rows() -> List[dict]:
    """Every path at its default setting, grounded, after the grounded baseline; extra
    tokens signed ("+1,234"), as the docs show them."""
    runs = {key: run_path(key, grounded=True) for key in PATHS}
    rows = comparison_rows(runs, run_baseline_probe(grounded=True))
    for row in rows:
        row["extra_tokens"] = f"{row['extra_tokens']:+,}"
    return rows


def fact_rows(
    runs: Mapping[str, PathRun], facts: Optional[Sequence[Fact]] = None
) -> List[dict]:
    """One row per fact: its state at the last round under each run."""
    facts = default_facts() if facts is None else facts
    return [
        {
            "fact": f"`{fact.text}`",
            "kind": fact.kind,
            "first": fact.first_call,
            **{key: run.final_states.get(fact.id, "-") for key, run in runs.items()},
        }
        for fact in facts
    ]


def kind_rows(
    runs: Mapping[str, PathRun], facts: Optional[Sequence[Fact]] = None
) -> List[dict]:
    """Per kind of fact (paths, numbers, ...): how many each run keeps
    verbatim, as "kept/total"."""
    facts = default_facts() if facts is None else facts
    kinds = sorted({fact.kind for fact in facts}, key=[f.kind for f in facts].index)
    rows = []
    for kind in kinds:
        ids = [fact.id for fact in facts if fact.kind == kind]
        rows.append(
            {
                "kind": kind,
                **{
                    key: f"{sum(run.final_states.get(i) == 'kept' for i in ids)}"
                    f"/{len(ids)}"
                    for key, run in runs.items()
                },
            }
        )
    return rows


def _tokenizer_samples(session: Session) -> List[tuple]:
    """(label, text): parts of the session, then every bundled transcript and log."""
    outputs = tool_outputs(run_baseline_probe(session).tracer)
    replies = [r.get("content") or "" for r in session.replies]
    samples = [
        ("English: CI log (logs/build.log)", outputs["call_03"]),
        ("English: prose (docs/RELEASE.md)", outputs["call_07"]),
        ("English: config (config/agent.toml)", outputs["call_08"]),
        (
            "Chinese: system prompt, task, the agent's replies",
            "\n".join([session.system, session.task] + replies),
        ),
        ("Mixed: all 13 tool outputs", "\n".join(outputs.values())),
    ]
    # the bundled transcripts one by one, then the small logs in each agent's own shape
    # together (one row however many shapes the readers learn)
    for path in sorted((DATA_DIR / "transcripts").glob("*.json*")):
        samples.append((f"bundled transcript {path.name}", _text_of(path)))
    logs = [_text_of(path) for path in sorted((DATA_DIR / "logs").iterdir())]
    logs = [text for text in logs if text is not None]
    samples.append((f"constructed logs, all {len(logs)} files", "\n".join(logs)))
    return samples


def _text_of(path) -> Optional[str]:
    """The text a log's messages carry; None for the damaged and unknown examples."""
    from ..logs.replay import TranscriptFileError, load_transcript

    try:
        messages = load_transcript(path).messages
    except TranscriptFileError:
        return None
    return "\n".join(m.get("content") or "" for m in messages)


def tokenizer_rows(session: Optional[Session] = None) -> List[dict]:
    """The estimate against o200k_base and cl100k_base on English, Chinese and mixed
    text (needs bpe-openai: minilib.measure.tokenizers)."""
    from ..measure.tokenizers import ENCODINGS, text_counter

    rows = []
    for label, text in _tokenizer_samples(session or default_session()):
        row = {"text": label, "chars": len(text), "estimate": estimate_text_tokens(text)}
        for name in ENCODINGS:
            real = text_counter(name)(text)
            row[name] = real
            row[f"{name}_error"] = f"{(row['estimate'] - real) / real:+.0%}"
        rows.append(row)
    return rows
