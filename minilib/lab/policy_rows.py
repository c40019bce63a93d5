"""A log's policy rows as a person compares them: every policy's row at a window, the
catalogue of policies, the comparison table and the words for a row's problems
(chapters 8, 10 and the projector page).
"""

from functools import lru_cache
from typing import List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from ..policies.production import POLICIES, build_policy
from ..reports.rounds import plural
from .log_runs import LogRuns
from .six_paths import NumberTable
from .tables import HtmlTable, prose_table


def policy_rows(
    runs: LogRuns, window: int, values: Optional[Mapping[str, object]] = None
) -> List[dict]:
    """Every policy's row at `window`; `values` sets policies' main parameters."""
    values = values or {}
    return [runs.row(key, window, values.get(key)) for key in available_policies()]


@lru_cache(maxsize=1)
def available_policies() -> Tuple[str, ...]:
    """The policies this installation can run (langchain-trim needs langchain-core)."""
    keys = []
    for key in POLICIES:
        try:
            build_policy(key, 200_000)
        except ImportError:
            continue
        keys.append(key)
    return tuple(keys)


def rounds_cell(row: Mapping) -> str:
    if "error" in row:
        return f"not run: {row['error']}"
    if row["overflow_round"] is None:
        return f"{row['rounds']:,} / {row['rounds_total']:,}"
    return f"stopped at {row['overflow_round']:,}"


def summaries_cell(row: Mapping) -> str:
    """Summary calls, marked where the lab's own summary stands in for an LLM (not
    when there were none: nothing stood in)."""
    calls = f"{row['summary_calls']:,}"
    stood_in = POLICIES[row["policy"]].stand_in and row["summary_calls"]
    return calls + " (stand-in)" if stood_in else calls


def policy_catalogue() -> pd.DataFrame:
    """Each policy in a sentence: what it does, its main parameter, whether its summary
    is the stand-in, and the overhead (system prompt and tool definitions) it adds to
    every window, in tokens at a 200,000-token window (scaled down with a smaller one)."""
    return pd.DataFrame(
        [
            {
                "policy": key,
                "what it does": policy.summary,
                "slider": policy.main_parameter,
                "LLM summary": "stand-in" if policy.stand_in else "",
                "overhead": policy.DEFAULT_OVERHEAD_TOKENS,
            }
            for key, policy in POLICIES.items()
            if key in available_policies()
        ]
    ).set_index("policy")


def catalogue_table() -> HtmlTable:
    """`policy_catalogue` as a cell shows it: its sentences and names left, as text
    reads, each row from its top and each name on one line; the overhead right, as
    numbers line up."""
    return prose_table(policy_catalogue())


def comparison_table(rows: Sequence[Mapping]) -> HtmlTable:
    """`comparison_frame` as the lab's tables look (a notebook cell's output), its
    headers and long cells wrapped to fit the notebook; a policy's name and its rounds
    stay on one line."""
    return NumberTable(comparison_frame(rows), keep_first=True)


def share_text(share: float) -> str:
    """A share as a whole percent that never says more than it is: "100%" only when it
    is all, "0%" for nothing or less than a half (never "-0%"), and a share just short
    of all is "99%"."""
    if share >= 1:
        return "100%"
    percent = round(share * 100)
    if percent >= 100:
        return "99%"
    return f"{percent}%"  # an int: a small negative share rounds to "0%", never "-0%"


def saved_percent(row: Mapping) -> str:
    """Tokens saved as the table and the chart both write it (62.5% is "62%" in both;
    99.6% is "99%", never "100%" when not all; a saving under 0.5% is "0%")."""
    return share_text(row["tokens_saved"])


def cache_percent(row: Mapping) -> str:
    return f"{row['cache_cost'] / max(row['uncached_cost'], 1):.0%}"


def row_problems(row: Mapping) -> List[str]:
    """What went wrong in a run, in words: a stop, windows an API would reject, facts
    lost. Empty for a run with none."""
    if "error" in row:
        return [f"not run: {row['error']}"]
    problems = []
    if row["overflow_round"] is not None:
        problems.append(f"stopped at round {row['overflow_round']:,}")
    if row.get("windows_invalid"):
        problems.append(plural(row["windows_invalid"], "broken window"))
    if row.get("task_gone_rounds"):
        problems.append(f"the task gone from {plural(row['task_gone_rounds'], 'window')}")
    if row.get("facts_lost"):
        problems.append(plural(row["facts_lost"], "fact") + " lost")
    return problems


def same_run(one: Mapping, other: Mapping) -> bool:
    """Whether two rows of a policy are the same run, as the lab shows runs: how far it
    ran, what it sent, the facts it kept and lost, what the cache cost."""
    if "error" in one or "error" in other:
        return False
    measured = ("rounds", "tokens_sent", "facts_kept", "facts_lost", "cache_cost")
    return all(one[name] == other[name] for name in measured)


def comparison_frame(rows: Sequence[Mapping]) -> pd.DataFrame:
    """The rows as a table: one line a policy, the numbers a person compares. A policy
    that refused its setting says why in its rounds cell, its other cells empty."""
    return pd.DataFrame([comparison_cells(row) for row in rows]).set_index("policy")


def comparison_cells(row: Mapping) -> dict:
    if "error" in row:
        return {"policy": row["policy"], "rounds": rounds_cell(row)}
    return {
        "policy": row["policy"],
        "rounds": rounds_cell(row),
        "tokens sent": f"{row['tokens_sent']:,}",
        # a run that stopped saved nothing: the agent failed there; one that broke
        # windows sent what an API rejects (as in the chart, and beside its slider)
        "saved": "none"
        if row["overflow_round"] is not None or broke_windows(row)
        else saved_percent(row),
        "kept": row["facts_kept"],
        "restorable": row["facts_restorable"],
        "lost": row["facts_lost"],
        "cache cost": cache_percent(row),
        "broken": row["windows_invalid"],
        "summaries": summaries_cell(row),
    }


def broke_windows(row: Mapping) -> bool:
    """Whether a run went on (it neither stopped nor was refused) sending windows an API
    rejects: what it saved is no saving."""
    return (
        "error" not in row
        and row["overflow_round"] is None
        and bool(row.get("windows_invalid"))
    )


def lost_task(row: Mapping) -> bool:
    """Whether a run sent windows without its task (the log's first user message, or
    a summary quoting it): what it saved, it saved by forgetting what it was for."""
    return "error" not in row and bool(row.get("task_gone_rounds"))
