"""What a session would have cost at another threshold: one policy replayed on one log
at each of several thresholds, each run's bill, compactions and facts lost.

The log is read, counted and its facts found once; each threshold is one replay of the
policy with its threshold parameter (`Policy.threshold_parameter`: Claude Code's
auto-compact trigger, Codex's `auto_compact_token_limit`, ...) set to it, counted in
the one unit `compare` counts the log in, and priced as `compare --cost` prices a
row. The agent's own policy keeps what the log records of its version (its clearings,
resumes, the user's /compact), so at the agent's own threshold it is the agent's own
row.
"""

from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

from ...logs.replay import with_output_ids
from . import POLICIES
from .compare import AGENT_POLICY, PolicyRows, collector_paused


@dataclass(frozen=True)
class SweepPoint:
    """One threshold's run."""

    threshold: int
    bill_usd: float
    compaction_usd: float
    compactions: int
    facts_lost: int
    facts_used: int
    calls: int  # the rounds it sent
    tokens_sent: int
    stopped_at: Optional[int]  # the round it could not send, if any

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def parse_range(text: str) -> List[int]:
    """`FROM:TO:STEP` in tokens (a `k` suffix for thousands) as the list of thresholds,
    TO included; ValueError naming what is wrong."""
    parts = text.split(":")
    if len(parts) != 3:
        raise ValueError(f"{text!r}: expected FROM:TO:STEP, e.g. 100k:180k:10k")
    start, stop, step = (_tokens(part) for part in parts)
    if step <= 0 or stop < start:
        raise ValueError(f"{text!r}: STEP must be > 0 and TO at least FROM")
    values = list(range(start, stop + 1, step))
    if len(values) > 200:
        raise ValueError(f"{text!r}: {len(values)} thresholds; at most 200 in one sweep")
    return values


def _tokens(text: str) -> int:
    cleaned = text.strip().lower().replace(",", "").replace("_", "")
    scale = 1000 if cleaned.endswith("k") else 1
    try:
        value = float(cleaned.rstrip("k")) * scale
    except ValueError:
        raise ValueError(f"{text!r} is not a number of tokens") from None
    if value < 1 or value != int(value):
        raise ValueError(f"{text!r} is not a whole number of tokens >= 1")
    return int(value)


def threshold_parameter(key: str) -> str:
    """The name of policy `key`'s threshold; ValueError for a policy that has none."""
    if key not in POLICIES:
        raise ValueError(f"unknown policy {key!r}; expected one of {', '.join(POLICIES)}")
    name = POLICIES[key].threshold_parameter
    if not name:
        with_one = [k for k, p in POLICIES.items() if p.threshold_parameter]
        raise ValueError(
            f"{key} compresses by no token threshold; a sweep takes one of "
            + ", ".join(with_one)
        )
    return name


def sweep_log(
    log,
    key: str,
    thresholds: Sequence[int],
    counting,
    processes: int = 1,
    progress: Optional[Callable[[int], None]] = None,
    model: Optional[str] = None,
) -> List[SweepPoint]:
    """Policy `key` on `log` at each threshold (see the module text). `counting` is
    how `compare` counts the log (`cli.compare.row_counting`'s `RowCounting`);
    `model` prices a log that names none (UnpricedModel otherwise)."""
    from ...measure.predicted_bill import log_pricing, policy_bill
    from .processes import rows_in_processes, usable_processes

    name = threshold_parameter(key)
    pricing = log_pricing(log, counting.overhead or 0, model)  # refuses before replaying
    own = AGENT_POLICY.get(log.shape) == key
    base = {} if counting.overhead is None else {"overhead_tokens": counting.overhead}
    if own:
        base.update(counting.agent_parameters or {})
    counter = (
        counting.agent_count if own and counting.agent_count else counting.count_tokens
    )
    tasks = [(key, counter, {**base, name: value}) for value in thresholds]
    job = PolicyRows(
        with_output_ids(log.messages),
        tasks,
        counting.window,
        counting.counted_with,
        "anthropic-5m",
        log,
        None,
        per_round=True,
    )
    with collector_paused():
        if usable_processes(processes) > 1 and len(tasks) > 1:
            rows = rows_in_processes(job, usable_processes(processes))
        else:
            used, rows = job.find_facts(), []
            for index in range(len(tasks)):
                measurement = job.measurement(index)
                measurement.facts_found(used)
                measurement.replay()
                rows.append(job.row(measurement))
                if progress is not None:
                    progress(index + 1)
    points = []
    for value, row in zip(thresholds, rows):
        bill = policy_bill(row, pricing)
        points.append(
            SweepPoint(
                value,
                round(bill.total_usd, 4),
                round(bill.compaction_usd, 4),
                len(row["compaction_rounds"]),
                row["facts_lost"],
                row["facts_used"],
                row["rounds"],
                row["tokens_sent"],
                row["overflow_round"],
            )
        )
    return points


def format_sweep(points: Sequence[SweepPoint], key: str, recorded_usd=None) -> List[str]:
    """A line a threshold, and the sentence a person asks for."""
    lines = [
        f"{'threshold':>10} {'bill':>10} {'compaction calls':>17} {'compactions':>12} "
        f"{'facts lost':>11} {'calls':>6}"
    ]
    for p in points:
        stopped = (
            f" (stopped at round {p.stopped_at})" if p.stopped_at is not None else ""
        )
        lines.append(
            f"{p.threshold:>10,} {'$' + format(p.bill_usd, ',.2f'):>10} "
            f"{'$' + format(p.compaction_usd, ',.2f'):>17} {p.compactions:>12} "
            f"{p.facts_lost:>11} {p.calls:>6}{stopped}"
        )
    if recorded_usd is not None:
        lines.append(f"the record: ${recorded_usd:,.2f} (what the provider billed)")
    cheapest = min(points, key=lambda p: p.bill_usd)
    lines.append(
        f"at {cheapest.threshold:,} this session would have cost "
        f"${cheapest.bill_usd:,.2f} under {key}, compacted {cheapest.compactions} "
        f"times and lost {cheapest.facts_lost} of the {cheapest.facts_used} facts the "
        "agent used later (the cheapest threshold swept)"
    )
    return lines
