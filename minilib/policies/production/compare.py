"""Every production policy on one log, one row each: what it sent and what it cost.

`compare_policies(log, keys, window_tokens)` replays the log under each policy
(`replay_policy`) and measures each run from its own windows (`RunMeter`): rounds
completed or the overflow round, tokens sent (sum and peak), the facts the agent used
that each window kept, left restorable or lost, the prompt cache reused and written and
its cost, the windows that broke pairing and the summary calls the policy added. The
facts are read from the log once and shared by every run. A row is the dict
`compress --report` writes, plus `policy`, `windows_invalid` and `summary_calls`;
`trace_folder` keeps each policy's trace (its windows by message ids, every tool
output whole) in `<folder>/<policy>/trace.jsonl`.
"""

from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

from ...logs.replay import with_output_ids
from ...measure.cache import DEFAULT_PRICES
from ...measure.costs import ESTIMATED, RunCosts, RunMeter
from ...measure.used_facts import used_facts
from ...messages import is_observation, output_id
from ...tokens import TokenCounter, estimate_tokens, tool_call_name
from ...trace import Tracer
from . import POLICIES, build_policy
from .run import PolicyRun, per_message_counter, replay_policy

COLUMNS = (
    ("policy", "policy"),
    ("rounds", "rounds"),
    ("overflow_round", "overflow"),
    ("tokens_sent", "tokens sent"),
    ("tokens_peak", "peak"),
    ("facts_used", "facts used"),
    ("facts_kept", "kept"),
    ("facts_restorable", "restorable"),
    ("facts_lost", "lost"),
    ("cache_reused_tokens", "cache reused"),
    ("cache_written_tokens", "cache written"),
    ("cache_cost", "cache cost"),
    ("windows_invalid", "broken windows"),
    ("summary_calls", "summary calls"),
)


def policy_row(run: PolicyRun, costs: RunCosts) -> dict:
    """The report's keys for one policy's run, with what only a policy has."""
    return {
        "policy": run.policy,
        **costs.report(),
        "windows_invalid": len(run.invalid_rounds),
        "invalid_rounds": run.invalid_rounds,
        "summary_calls": run.summary_calls,
        "overflow": run.overflow,
    }


def measure_policy(
    messages: Sequence[Mapping],
    key: str,
    window_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    *,
    counted_with: str = ESTIMATED,
    prices: str = DEFAULT_PRICES,
    used=None,
    tracer: Optional[Tracer] = None,
    **parameters,
) -> dict:
    """One policy's row on `messages` (a log's); `used` is the log's `used_facts`
    when the caller has it (it is the same for every policy)."""
    prepared = with_output_ids(messages)
    used = used_facts(prepared) if used is None else used
    policy = build_policy(key, window_tokens, count_tokens, **parameters)
    meter = RunMeter(used, per_message_counter(count_tokens), prices)
    names: Dict[str, str] = {}

    def on_window(step, window, arrived, measured):
        for message in arrived:  # outputs arrive after the call that asked for them
            for call in message.get("tool_calls") or ():
                names[call["id"]] = tool_call_name(call)
            if message.get("role") == "tool" or is_observation(message):
                named = output_id(message)
                tool = names.get(named, "environment")
                # it answers the call of the round before this one
                meter.output(named, tool, step - 1, message.get("content"))
                if tracer is not None:
                    tracer.tool_call(
                        step - 1, named, tool, "{}", message.get("content") or ""
                    )
        meter.sent(step, window, measured=measured)
        if tracer is not None:
            tracer.model_call(step, "decision", window, replies[step])

    replies = [m for m in prepared if m["role"] == "assistant"]
    run = replay_policy(prepared, policy, on_window)
    costs = meter.costs(run.rounds_total, run.overflow_round, counted_with)
    return policy_row(run, costs)


def compare_policies(
    messages: Sequence[Mapping],
    keys: Optional[Sequence[str]] = None,
    window_tokens: int = 200_000,
    count_tokens: TokenCounter = estimate_tokens,
    *,
    counted_with: str = ESTIMATED,
    prices: str = DEFAULT_PRICES,
    trace_folder: Optional[Path] = None,
) -> List[dict]:
    """One row a policy (all of them unless `keys`), in the order given."""
    keys = list(POLICIES) if keys is None else list(keys)
    unknown = [key for key in keys if key not in POLICIES]
    if unknown:
        raise ValueError(
            f"unknown policy {unknown[0]!r}; expected one of {', '.join(POLICIES)}"
        )
    prepared = with_output_ids(messages)
    used = used_facts(prepared)
    rows = []
    for key in keys:
        tracer = Tracer() if trace_folder is not None else None
        rows.append(
            measure_policy(
                prepared,
                key,
                window_tokens,
                count_tokens,
                counted_with=counted_with,
                prices=prices,
                used=used,
                tracer=tracer,
            )
        )
        if tracer is not None:
            tracer.write_jsonl(Path(trace_folder) / key / "trace.jsonl")
    return rows


def format_comparison(rows: Sequence[Mapping]) -> str:
    """The rows as a fixed-width table, then what stopped the policies that stopped."""
    cells = [[title for _, title in COLUMNS]]
    for row in rows:
        cells.append(
            [
                "-"
                if row[key] is None
                else f"{row[key]:,.0f}"
                if isinstance(row[key], (int, float))
                else str(row[key])
                for key, _ in COLUMNS
            ]
        )
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(line, widths))
        )
        for line in cells
    ]
    for row in rows:
        if row["overflow"]:
            lines.append(f"{row['policy']}: stopped at round {row['overflow_round']}: ")
            lines[-1] += row["overflow"][:160]
    return "\n".join(lines)
