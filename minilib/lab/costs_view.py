"""Chapter 08's last section: what compression cost, measured from a log alone.

`log_costs_frame` replays bundled logs through the article's pipeline and measures
each run (`minilib.measure.costs`): the facts the agent used that were kept,
restorable or lost, and the prompt cache. `cache_rounds_frame` shows one replay round
by round: which compression broke the cache and how many unchanged tokens it made the
cache write again. `batching_frame` puts policies that compress at different moments
side by side on a long log: how often each broke the cache, and what that cost.
"""

from typing import Sequence

import pandas as pd

from ..logs.replay import ARTICLE, load_transcript, replay_transcript, with_output_ids
from ..measure.costs import ESTIMATED, RunCosts, measure_replay
from ..session import DATA_DIR
from ..tokens import estimate_message_tokens
from ..window import Settings
from .log_runs import LogRuns, log_messages


def replay_costs(name: str, settings: Settings = Settings()):
    """A bundled transcript replayed through the article's pipeline, and its costs."""
    log = load_transcript(DATA_DIR / "transcripts" / name)
    run = replay_transcript(log, settings, window=ARTICLE)
    costs = measure_replay(
        run,
        with_output_ids(log.messages),
        estimate_message_tokens,
        rounds_total=log.rounds,
        counted_with=ESTIMATED,
    )
    return run, costs


def _cost_share(costs: RunCosts) -> str:
    return f"{costs.cache.cost / max(costs.cache.uncached, 1):.0%}"


def log_costs_frame(
    names: Sequence[str], settings: Settings = Settings()
) -> pd.DataFrame:
    """One row a log: rounds, facts used and their fates, the cache and its cost."""
    rows = []
    for name in names:
        _, costs = replay_costs(name, settings)
        report = costs.report()
        rows.append(
            {
                "log": name,
                "rounds": f"{report['rounds']} / {report['rounds_total']}",
                "facts used": report["facts_used"],
                "kept": report["facts_kept"],
                "restorable": report["facts_restorable"],
                "lost": report["facts_lost"],
                "cache reused": report["cache_reused_tokens"],
                "written": report["cache_written_tokens"],
                "written again": report["cache_rewritten_tokens"],
                "cost": _cost_share(costs),
            }
        )
    return pd.DataFrame(rows).set_index("log")


def cache_rounds_frame(name: str, settings: Settings = Settings()) -> pd.DataFrame:
    """One replay round by round: what compressed, and what the cache did."""
    run, costs = replay_costs(name, settings)
    rows = []
    for governed, cached in zip(run.rounds, costs.cache_rounds):
        rows.append(
            {
                "round": governed.round,
                "compressed by": compressed_by(governed),
                "tokens sent": cached.tokens,
                "reused": cached.reused,
                "written": cached.written,
                "written again": cached.rewritten,
            }
        )
    return pd.DataFrame(rows).set_index("round")


def compressed_by(governed) -> str:
    """What compressed the window of one round: aging, the summary, both or nothing."""
    return ", ".join(
        name
        for name, ran in (("aging", governed.aged), ("summary", governed.summarized))
        if ran
    )


def batching_frame(
    log: str, window: int, keys: Sequence[str] = ("article-bounded", "article-batched")
) -> pd.DataFrame:
    """Policies on one long log: cache breaks, the summaries (compactions) among
    them, unchanged tokens written again, cost."""
    runs = LogRuns(log_messages(log))
    rows = []
    for key in keys:
        row = runs.row(key, window)
        rows.append(
            {
                "policy": key,
                "rounds": f"{row['rounds']} / {row['rounds_total']}",
                "tokens sent": row["tokens_sent"],
                "cache breaks": row["cache_breaks"],
                "summaries": row["summary_calls"],
                "written again": row["cache_rewritten_tokens"],
                "cache cost": f"{row['cache_cost'] / max(row['uncached_cost'], 1):.0%}",
                "facts lost": row["facts_lost"],
            }
        )
    return pd.DataFrame(rows).set_index("policy")
