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

What each row adds about the policy itself:
- `overhead_tokens`: the system prompt and tool definitions the policy's trigger and
  the overflow check add to every window (its agent's documented default, or the
  `overhead_tokens=` given: a value measured from the log, the first call's recorded
  input beyond its messages, applies to every policy, since every policy replays the
  same session with the same prompt and tools). `tokens_sent` and the cache figures
  count the messages alone.
- `compaction_rounds`: the rounds before which the replayed policy replaced its
  history (a compaction, a summary, a condensation), each with the tokens its trigger
  counted just before, overhead included.
- `recorded_compaction_rounds`, for the policy whose agent wrote the log (a Claude
  Code log and `claude-code`, a Codex rollout and `codex`; `agent_log=` given): the
  rounds before which the agent's own harness compacted, numbered as the replay numbers
  them (the log's assistant messages before the compaction), each with the tokens the
  agent recorded before it where its log says (Claude Code's `preTokens`; a Codex
  `compacted` line records none) and the tokens the replay counted before that round.
  Every other row has None there.
"""

import gc
import operator
import re
import textwrap
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ...agents import own_row_policies
from ...logs.base import LoadedLog
from ...logs.replay import with_output_ids
from ...measure.cache import DEFAULT_PRICES, KnownCounts
from ...measure.compactions import measure_compactions
from ...measure.costs import ESTIMATED, RunCosts, RunMeter
from ...measure.used_facts import used_facts
from ...messages import is_observation, output_id
from ...tokens import (
    TokenCounter,
    estimate_message_tokens,
    estimate_tokens,
    tool_call_name,
)
from ...trace import Tracer
from . import POLICIES, build_policy
from .base import Policy
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
    ("overhead_tokens", "overhead"),
)
# the policy that models the agent whose log it is, by the log's shape
AGENT_POLICY = own_row_policies()  # log shape -> the key of its agent's own policy
PRE_TOKENS = re.compile(r"([\d,]+) tokens before")


def policy_row(run: PolicyRun, costs: RunCosts, policy: Optional[Policy] = None):
    """The report's keys for one policy's run, with what only a policy has."""
    row = {
        "policy": run.policy,
        **costs.report(),
        "windows_invalid": len(run.invalid_rounds),
        "invalid_rounds": run.invalid_rounds,
        "summary_calls": run.summary_calls,
        "overflow": run.overflow,
    }
    if policy is not None:
        row["overhead_tokens"] = policy.overhead_tokens
        row["compaction_rounds"] = [
            {"round": c.round, "tokens_before": c.tokens_before}
            for c in policy.compactions
        ]
        row["recorded_compaction_rounds"] = None
        # what each round sent: the window, the overhead, and the history a file
        # that begins mid-session lacks where the policy carries it (the agent's own)
        unseen = getattr(policy, "unseen_by_round", ())
        row["round_tokens"] = [
            tokens + policy.overhead_tokens + (unseen[i] if i < len(unseen) else 0)
            for i, tokens in enumerate(run.tokens)
        ]
        # results cleared in place (Claude Code's microcompact), by round
        row["microcompaction_rounds"] = list(getattr(policy, "microcompactions", []))
    return row


def rounds_before(log: LoadedLog) -> List[int]:
    """For each index into the log's messages, the assistant messages before it: the
    round an event recorded there came before."""
    before = [0]
    for message in log.messages:
        before.append(before[-1] + (message["role"] == "assistant"))
    return before


def recorded_rounds(log: LoadedLog) -> List[dict]:
    """The agent's own compactions in `log`, by the round they came before (the log's
    assistant messages before them), with the tokens before where the log says."""
    replies = rounds_before(log)
    found = []
    for compaction in log.compactions:
        said = PRE_TOKENS.search(compaction.detail or "")
        tokens = int(said.group(1).replace(",", "")) if said else None
        entry = {"round": replies[compaction.at], "tokens_before": tokens}
        if compaction.manual:  # the user's /compact, which the replay follows
            entry["manual"] = True
        found.append(entry)
    return found


def calibrated_window(
    log: LoadedLog,
    window_tokens: int = 200_000,
    count_tokens: TokenCounter = estimate_tokens,
) -> Optional[int]:
    """The window at which the log's messages stand to it as what the agent counted
    stood to the real window: `window_tokens` times the log's tokens before its first
    recorded compaction over the tokens the agent recorded there. A bundled or abridged
    log holds a fraction of what its agent saw; replaying it at this window puts the
    policy's trigger where the agent's was. None when the log records no tokens."""
    for entry in recorded_rounds(log):
        if entry["tokens_before"]:
            replies = [i for i, m in enumerate(log.messages) if m["role"] == "assistant"]
            before = replies[entry["round"]] if entry["round"] < len(replies) else None
            held = count_tokens(list(log.messages[:before]))
            return max(1, round(window_tokens * held / entry["tokens_before"]))
    return None


def with_recorded(row: dict, log: Optional[LoadedLog]) -> dict:
    """`row` with the agent's recorded compactions, when its policy wrote the log."""
    round_tokens = row.pop("round_tokens", [])
    if log is None or AGENT_POLICY.get(log.shape) != row["policy"]:
        return row
    recorded = recorded_rounds(log)
    before = {c["round"]: c["tokens_before"] for c in row["compaction_rounds"]}
    for entry in recorded:  # what the replay counted before it sent that round
        at = entry["round"]
        sent = round_tokens[at] if at < len(round_tokens) else None
        entry["replay_tokens"] = before.get(at, sent)
    row["recorded_compaction_rounds"] = recorded
    row["tokens_per_round"] = round_tokens
    if log.usage:  # what the API counted for the agent's own calls, beside the replay
        row["recorded_usage"] = {
            "calls": len(log.usage),
            "input_tokens": sum(usage.input_tokens for usage in log.usage),
            "replay_input_tokens": sum(round_tokens),
            **per_call_error(log, round_tokens),
        }
    row["first_disagreement"] = first_disagreement(
        row["compaction_rounds"], recorded, len(round_tokens)
    )
    return row


NEAR = 10  # rounds: a replayed compaction this close to a recorded one reproduces it


def per_call_error(log: LoadedLog, round_tokens: Sequence[int]) -> dict:
    """(replay - API) / API over the calls the log records usage for and the replay
    reached: the median and the p90 of its size."""
    numbers = {}
    for index, message in enumerate(log.messages):
        if message["role"] == "assistant":
            numbers[index] = len(numbers)
    errors = sorted(
        abs(round_tokens[numbers[u.message]] - u.input_tokens) / u.input_tokens
        for u in log.usage
        if u.input_tokens > 0
        and u.message in numbers
        and numbers[u.message] < len(round_tokens)
    )
    if not errors:
        return {}
    return {
        "median_abs_error": errors[len(errors) // 2],
        "p90_abs_error": errors[min(len(errors) - 1, int(0.9 * len(errors)))],
    }


def first_disagreement(
    replayed: Sequence[Mapping], recorded: Sequence[Mapping], rounds: int
) -> Optional[str]:
    """Where the replay first parts from what the agent recorded: a recorded
    compaction with no replayed one within `NEAR` rounds, or a replayed one with no
    recorded one near it; None when every one is matched."""
    events = []
    for entry in recorded:
        if entry["round"] >= rounds:
            continue  # the replay stopped before it
        if not any(abs(c["round"] - entry["round"]) <= NEAR for c in replayed):
            events.append(
                (
                    entry["round"],
                    f"the agent compacted before round {entry['round']}; "
                    f"the replay did not within {NEAR} rounds",
                )
            )
    for entry in replayed:
        if not any(abs(c["round"] - entry["round"]) <= NEAR for c in recorded):
            events.append(
                (
                    entry["round"],
                    f"the replay compacted before round {entry['round']}; "
                    f"the agent did not within {NEAR} rounds",
                )
            )
    return min(events)[1] if events else None


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
    agent_log: Optional[LoadedLog] = None,
    counted: Optional[Dict[int, KnownCounts]] = None,
    **parameters,
) -> dict:
    """One policy's row on `messages` (a log's); `used` is the log's `used_facts`
    when the caller has it (it is the same for every policy); `agent_log`, the log
    `messages` came from, adds the agent's recorded compactions to its policy's row;
    `counted` keeps the log's messages counted once for every policy run with it."""
    prepared = with_output_ids(messages)
    measurement = PolicyMeasurement(
        prepared,
        key,
        window_tokens,
        count_tokens,
        counted_with=counted_with,
        prices=prices,
        tracer=tracer,
        agent_log=agent_log,
        counted=counted,
        **parameters,
    )
    measurement.facts_found(used_facts(prepared) if used is None else used)
    measurement.replay()
    return measurement.row()


# The messages (references to them: a window is a list) that replays waiting for the
# facts may keep in one process, about 130 MB: a long log's replays wait for them then,
# rather than keep gigabytes of windows.
MAX_WAITING_MESSAGES = 16_000_000
# the task is looked for by this much of its first line (a summary may cut it after)
TASK_LINE_CHARS = 60


class PolicyMeasurement:
    """One policy replayed on a log (`replay`) and measured window by window
    (`RunMeter`), for `measure_policy`. Judging the facts needs the log's facts, which
    the replay does not: a replay may run before they are found (by another process),
    every other measure taken as its windows come and the windows kept until
    `facts_found` gives the facts, then judged in the order they were sent, as if the
    facts had been there all along."""

    def __init__(
        self,
        prepared: Sequence[Mapping],
        key: str,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        counted_with: str = ESTIMATED,
        prices: str = DEFAULT_PRICES,
        tracer: Optional[Tracer] = None,
        agent_log: Optional[LoadedLog] = None,
        counted: Optional[Dict[int, KnownCounts]] = None,
        **parameters,
    ):
        self.prepared = prepared  # with output ids (`with_output_ids`)
        self.policy = build_policy(key, window_tokens, count_tokens, **parameters)
        self.counted_with, self.prices = counted_with, prices
        self.tracer, self.agent_log = tracer, agent_log
        counted = {} if counted is None else counted
        self.count_message = per_message_counter(count_tokens)
        self.known = _known(counted, count_tokens, self.count_message, prepared)
        self.estimates = None  # the article's estimate beside another count: once
        if self.count_message is not estimate_message_tokens:
            self.estimates = _known(
                counted, estimate_message_tokens, estimate_message_tokens, prepared
            )
        self.replies = [m for m in prepared if m["role"] == "assistant"]
        # the task: the log's first user message; a window that holds neither it nor
        # a summary quoting its first line has lost what the agent was asked to do
        self.task = next((m for m in prepared if m["role"] == "user"), None)
        text = (self.task or {}).get("content") or ""
        self.task_line = text.strip().split("\n", 1)[0][:TASK_LINE_CHARS]
        self.task_gone: List[int] = []  # the rounds whose window lost it
        self.logged = {id(message) for message in prepared}
        self._carrying: Dict[int, tuple] = {}  # id(message) -> (it, holds the task)
        self.meter = RunMeter(
            None, self.count_message, self.prices, known_estimates=self.estimates
        )
        self.run: Optional[PolicyRun] = None
        self._names: Dict[str, str] = {}  # call id -> tool name
        # the messages the windows waiting for the facts hold, a message counted in
        # each window holding it
        self.waiting_messages = 0
        # Where the facts come from when those windows hold more messages than
        # `waiting_room`: waited for then, and the rest judged as sent. None: the
        # windows wait, however many.
        self.wait_for_facts: Optional[Callable[[], object]] = None
        self.waiting_room = MAX_WAITING_MESSAGES

    @property
    def used(self):
        """The log's facts, once given (`facts_found`); None before."""
        return None if self.meter.facts is None else self.meter.facts.used

    def facts_found(self, used) -> None:
        """The log's `used_facts`: the windows sent so far are judged now."""
        self.meter.facts_found(used)
        self.waiting_messages = 0

    def replay(self) -> PolicyRun:
        self.run = replay_policy(self.prepared, self.policy, self._sent, self.known)
        return self.run

    def _sent(self, step, window, arrived, measured) -> None:
        self._measure(step, window, arrived, measured)
        if self.meter.facts is None:  # the window waits for the facts
            self.waiting_messages += len(window)
            if (
                self.waiting_messages > self.waiting_room
                and self.wait_for_facts is not None
            ):
                self.facts_found(self.wait_for_facts())

    def _measure(self, step, window, arrived, measured) -> None:
        meter, names, tracer = self.meter, self._names, self.tracer
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
        if self.task_line and not self.holds_task(window):
            self.task_gone.append(step)
        if tracer is not None:
            tracer.model_call(step, "decision", window, self.replies[step])

    def holds_task(self, window) -> bool:
        """Whether `window` holds the task: the message itself (near the start, as a
        policy keeps it), a message quoting its first line, or a summary the policy
        wrote (a message not of the log, not a cleared result): a real summary
        carries the task, and what a stand-in keeps of it is not the policy's."""
        if any(message is self.task for message in window[:4]):
            return True
        return any(map(self._carries_task, window))

    def _carries_task(self, message: Mapping) -> bool:
        """`holds_task` of one message, found once: a window sends the same
        messages round after round (held with its answer, so its id stays its own)."""
        known = self._carrying.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        carries = self.task_line in (message.get("content") or "") or (
            message.get("role") != "tool" and id(message) not in self.logged
        )
        self._carrying[id(message)] = (message, carries)
        return carries

    def row(self) -> dict:
        """The policy's row (`policy_row`, with the agent's own record)."""
        if self.meter.facts is None or self.run is None:
            raise RuntimeError("a row needs the replay run and the log's facts given")
        run = self.run
        costs = self.meter.costs(run.rounds_total, run.overflow_round, self.counted_with)
        row = with_recorded(policy_row(run, costs, self.policy), self.agent_log)
        row["task_gone_rounds"] = len(self.task_gone)
        return row


def _known(counted, counter, count_message, messages) -> KnownCounts:
    """`messages` counted by `counter` (one message by `count_message`), once: kept in
    `counted` by the counter, with the counter, for every policy after."""
    known = counted.get(id(counter))
    if (
        known is None
        or known[0] is not counter
        or len(known[1].messages) != len(messages)
        or not all(map(operator.is_, known[1].messages, messages))
    ):
        known = (counter, KnownCounts(count_message, messages))
        counted[id(counter)] = known
    return known[1]


@contextmanager
def collector_paused():
    """Python's cycle collector off while the replays run, as it was after. The
    replays make objects by the hundred thousand and next to no cycles (a few hundred
    on the thousand-call log), and the collector's passes over them took a twentieth
    (one process) to a tenth (each of two) of compare's time; what cycles they leave
    go at its next pass."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compare_policies(
    messages: Sequence[Mapping],
    keys: Optional[Sequence[str]] = None,
    window_tokens: int = 200_000,
    count_tokens: TokenCounter = estimate_tokens,
    *,
    counted_with: str = ESTIMATED,
    prices: str = DEFAULT_PRICES,
    trace_folder: Optional[Path] = None,
    overhead_tokens: Optional[int] = None,
    agent_log: Optional[LoadedLog] = None,
    agent_count: Optional[TokenCounter] = None,
    agent_parameters: Optional[dict] = None,
    processes: int = 1,
    per_round: bool = False,
) -> List[dict]:
    """One row a policy (all of them unless `keys`), in the order given.
    `overhead_tokens` (a value measured from the log) replaces every policy's default
    overhead; `agent_log` (the log `messages` came from) adds the agent's recorded
    compactions to the row of the policy that models it. `processes` above 1 spreads
    the policies over that many processes where the system can fork one
    (`minilib.policies.production.processes`): the same rows, sooner on more cores.
    `per_round`: each row also holds what each round sent (`rounds_sent`, the
    overhead in it) and the part of it the last window began with
    (`rounds_reused`), what a bill of the run is priced from."""
    keys = list(POLICIES) if keys is None else list(keys)
    unknown = [key for key in keys if key not in POLICIES]
    if unknown:
        raise ValueError(
            f"unknown policy {unknown[0]!r}; expected one of {', '.join(POLICIES)}"
        )
    own = AGENT_POLICY.get(agent_log.shape) if agent_log is not None else None
    tasks = []
    for key in keys:
        parameters = (
            {} if overhead_tokens is None else {"overhead_tokens": overhead_tokens}
        )
        counter = count_tokens
        if key == own:  # the agent's own row: its count and its version's behaviour
            parameters.update(agent_parameters or {})
            counter = count_tokens if agent_count is None else agent_count
        tasks.append((key, counter, parameters))
    job = PolicyRows(
        with_output_ids(messages),
        tasks,
        window_tokens,
        counted_with,
        prices,
        agent_log,
        None if trace_folder is None else Path(trace_folder),
        per_round=per_round,
    )
    from .processes import rows_in_processes, usable_processes

    with collector_paused():
        if usable_processes(processes) > 1 and len(tasks) > 1:
            rows = rows_in_processes(job, usable_processes(processes))
        else:
            used = job.find_facts()
            rows = []
            for index in range(len(tasks)):
                measurement = job.measurement(index)
                measurement.facts_found(used)
                measurement.replay()
                rows.append(job.row(measurement))
    if agent_log is not None and agent_log.compactions:
        kept = standin_against_real(agent_log)
        for key, row in zip(keys, rows):
            if POLICIES[key].stand_in:
                row["standin_vs_real"] = kept
    return rows


@dataclass
class PolicyRows:
    """The rows `compare_policies` makes: one task a policy (its key, its count, its
    parameters), all on one log; the log's messages counted once for every task
    (`counted`, filled before any process is forked, so each shares it)."""

    prepared: Sequence[Mapping]  # the log's messages, with output ids
    tasks: List[Tuple[str, TokenCounter, dict]]
    window_tokens: int
    counted_with: str
    prices: str
    agent_log: Optional[LoadedLog]
    trace_folder: Optional[Path]
    counted: dict = field(default_factory=dict)
    per_round: bool = False  # rows keep what each round sent and reused

    def __post_init__(self):
        for _, counter, _ in self.tasks:
            count_message = per_message_counter(counter)
            _known(self.counted, counter, count_message, self.prepared)
            if count_message is not estimate_message_tokens:
                _known(
                    self.counted,
                    estimate_message_tokens,
                    estimate_message_tokens,
                    self.prepared,
                )

    def find_facts(self):
        """The log's facts (`used_facts`), the same for every task."""
        return used_facts(self.prepared)

    def measurement(self, index: int) -> PolicyMeasurement:
        """Task `index`, ready to replay; the facts may be given before or after."""
        key, counter, parameters = self.tasks[index]
        return PolicyMeasurement(
            self.prepared,
            key,
            self.window_tokens,
            counter,
            counted_with=self.counted_with,
            prices=self.prices,
            tracer=None if self.trace_folder is None else Tracer(),
            agent_log=self.agent_log,
            counted=self.counted,
            **parameters,
        )

    def row(self, measurement: PolicyMeasurement) -> dict:
        """A replayed task's row; its trace written when a trace folder is given."""
        row = measurement.row()
        if self.per_round:
            run, policy = measurement.run, measurement.policy
            unseen = getattr(policy, "unseen_by_round", ())
            row["rounds_sent"] = [
                tokens + policy.overhead_tokens + (unseen[i] if i < len(unseen) else 0)
                for i, tokens in enumerate(run.tokens)
            ]
            row["rounds_reused"] = [measured.reused for measured in run.cache]
            row["rounds_broke"] = [measured.broke for measured in run.cache]
            row["parameters"] = policy.parameters()
        if measurement.tracer is not None and self.trace_folder is not None:
            folder = self.trace_folder / measurement.policy.key
            measurement.tracer.write_jsonl(folder / "trace.jsonl")
        return row


def standin_against_real(log: LoadedLog) -> dict:
    """Over the compactions `log` records: of the facts the agent used after each that a
    tool had shown before it, how many its real summary held, and how many the lab's
    stand-in summary of the same history, given the same room, holds: how far a row
    that rests on the stand-in is from a real summary, on this log."""
    reports = [report.as_dict() for report in measure_compactions(log)]
    return {
        "compactions": len(reports),
        "facts_after": sum(r["facts_after"] for r in reports),
        "real_held": sum(r["held"] for r in reports),
        "standin_held": sum(r["standin_held"] for r in reports),
    }


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
    lines += compaction_lines(rows)
    lines += standin_lines(rows)
    return "\n".join(lines)


def standin_lines(rows: Sequence[Mapping]) -> List[str]:
    """One line for the rows whose summaries are the lab's stand-in: what it keeps of
    the facts used after the log's real compactions, beside the real summaries."""
    named = [row["policy"] for row in rows if row.get("standin_vs_real")]
    if not named:
        return []
    kept = next(row["standin_vs_real"] for row in rows if row.get("standin_vs_real"))
    compactions = "compaction" if kept["compactions"] == 1 else "compactions"
    text = (
        f"stand-in summaries: of the {kept['facts_after']} facts the agent used after "
        f"its {kept['compactions']} {compactions} that a tool had shown before, the "
        f"real summaries held {kept['real_held']}, the lab's stand-in given the same "
        f"room {kept['standin_held']} (rows: {', '.join(named)})"
    )
    return textwrap.wrap(text, 100, subsequent_indent="  ", break_on_hyphens=False)


def _rounds(entries: Sequence[Mapping]) -> str:
    if not entries:
        return "none"
    return ", ".join(
        f"{entry['round']} ("
        + (
            "tokens not recorded"
            if entry["tokens_before"] is None
            else f"{entry['tokens_before']:,} tokens"
        )
        + (", manual: the user's /compact" if entry.get("manual") else "")
        + ")"
        for entry in entries
    )


def compaction_lines(rows: Sequence[Mapping]) -> List[str]:
    """One line a policy that compacted, or whose agent wrote the log: the rounds its
    replay compacted before, beside the rounds the agent did."""
    lines = []
    for row in rows:
        replayed = row.get("compaction_rounds") or []
        recorded = row.get("recorded_compaction_rounds")
        if not replayed and recorded is None:
            continue
        line = f"{row['policy']}: replay compacted before rounds {_rounds(replayed)}"
        if recorded is not None:
            line += f"; the agent, before rounds {_rounds(recorded)}"
            counted = [
                f"{entry['replay_tokens']:,}"
                for entry in recorded
                if entry.get("replay_tokens") is not None
            ]
            if counted:
                line += f"; the replay counted {', '.join(counted)} tokens there"
        if row.get("recorded_usage"):
            usage = row["recorded_usage"]
            line += (
                f"; the API counted {usage['input_tokens']:,} input tokens over "
                f"{usage['calls']} calls, the replay {usage['replay_input_tokens']:,} "
                "over all its rounds"
            )
            if "median_abs_error" in usage:
                line += (
                    f"; per call the replay is off the record by "
                    f"{usage['median_abs_error']:.1%} (median), "
                    f"{usage['p90_abs_error']:.1%} (p90)"
                )
        if recorded is not None:
            line += "; " + (
                f"it first disagrees where {row['first_disagreement']}"
                if row.get("first_disagreement")
                else f"every compaction within {NEAR} rounds of the agent's"
            )
        lines.append(line)
    return lines
