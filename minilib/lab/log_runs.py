"""The runs of a log under every production policy, shared by chapters 8, 9 and 10:
the logs a class can pick (generated sessions and bundled transcripts), a log's rows
computed once a policy, window and setting (`LogRuns`), the rows stored for chapter
10's own logs.
"""

import gzip
import html
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from ..logs.replay import load_transcript, with_output_ids
from ..policies.production import POLICIES, build_policy
from ..scale.histories import generate_history
from ..session import DATA_DIR
from ..tokens import estimate_message_tokens, estimate_tokens

# The logs a class can pick: generated sessions (long and regular) and the bundled
# transcripts (short, real-shaped).
# (tool calls, times the person speaks): several production rules cut only at a
# person's turn, so the long session has the follow-ups an interactive one has.
GENERATED_LOGS = {
    "generated session, 1,000 tool calls, 10 user turns": (1000, 10),
    "generated session, 200 tool calls, 4 user turns": (200, 4),
    "generated session, 1,000 tool calls, one task": (1000, 1),
}
BUNDLED_TRANSCRIPTS = (
    "m3_release_check.json",
    "coding_agent_fix.json",
    "cjk_refactor.jsonl",
)


@lru_cache(maxsize=8)
def log_messages(name: str) -> Tuple[dict, ...]:
    """The messages of a log the chapter offers, by its name."""
    if name in GENERATED_LOGS:
        calls, turns = GENERATED_LOGS[name]
        return tuple(generate_history(calls, user_turns=turns).messages)
    return tuple(load_transcript(DATA_DIR / "transcripts" / name).messages)


@dataclass(frozen=True)
class Baseline:
    """The log sent whole every round: what "tokens saved" is measured against."""

    per_round: Tuple[int, ...]  # tokens of the uncompressed window at each round

    def sent_over(self, rounds: int) -> int:
        return sum(self.per_round[:rounds])


def baseline(
    messages: Sequence[Mapping], count_message=estimate_message_tokens
) -> Baseline:
    """Each round's whole log before it, a message counted by `count_message` (the
    count the policies' rows are counted by: saved 0% is a policy that cut nothing)."""
    per_round, total = [], 0
    for message in messages:
        if message["role"] == "assistant":
            per_round.append(total)
        total += count_message(message)
    return Baseline(tuple(per_round))


# The rows chapter 10 shows when it runs, on its own logs at their settings, as
# scripts/make_chapter10_rows.py computes them (a test checks the file is what the
# script writes): a Run All, the lab's first screen and a pick of one of its generated
# logs read them instead of replaying a thousand-call log fifty to ninety times. Any
# other row is computed when asked.
STORED_ROWS = DATA_DIR / "chapter10_rows.json.gz"


@lru_cache(maxsize=1)
def stored_rows() -> Dict[str, dict]:
    """{log name: {"rounds": the whole log's tokens a round, "facts_used": n,
    "timestamps": bool, "facts": the facts the agent used (`used_as_data`'s JSON text),
    "rows": {(policy, window, value): the row's JSON text}}}.

    A row is kept as its text until it is asked for (`LogRuns.row` reads it then):
    a text is one object, where a row read is hundreds, each of which the kernel's
    garbage collector would scan again and again for the rest of the session."""
    if not STORED_ROWS.exists():
        return {}
    stored = json.loads(gzip.decompress(STORED_ROWS.read_bytes()))
    return {
        name: {
            **log,
            "rows": {
                (key, window, value): row for key, window, value, row in log["rows"]
            },
        }
        for name, log in stored.items()
    }


class LogRuns:
    """One log's rows, one a policy and parameter value, computed once each.

    Given the name of a log the chapter offers, it starts from the rows stored for it
    (`stored_rows`, which keep its facts too), and reads the log and counts it only
    when a row not stored is asked for."""

    def __init__(
        self, messages: Optional[Sequence[Mapping]] = None, name: str = "", log=None
    ):
        self.name = name
        # a log read whole (an upload) that records its usage is run as `compare` runs
        # it: counted as its harness sent, its overhead measured, its agent's own row
        # calibrated (`log_counting`); without usage, each policy's defaults
        self.log = log
        self.counting = None
        if log is not None:
            from ..policies.production.own_agent import log_counting

            messages, self.counting = log.messages, log_counting(log)
        self._messages = None if messages is None else with_output_ids(list(messages))
        self._baselines: Dict[int, Baseline] = {}  # id(counter) -> its baseline
        self._used = None
        self._baseline = None
        self._stored = stored_rows().get(name, {}) if name else {}
        self._rows: Dict[tuple, dict] = dict(self._stored.get("rows", {}))
        self._counted: dict = {}  # the log's messages counted once for every row

    @property
    def messages(self) -> List[dict]:
        if self._messages is None:
            self._messages = with_output_ids(list(log_messages(self.name)))
        return self._messages

    @property
    def used(self):
        """The facts the agent used (`used_facts`), found when first needed, or read
        from the stored rows where they were found when the rows were made."""
        if self._used is None:
            # imported when a row not stored is asked for: a Run All reads them all
            from ..measure.used_facts import used_facts, used_from_data

            if "facts" in self._stored:
                facts = json.loads(self._stored["facts"])
                self._used = used_from_data(facts, self.messages)
            else:
                self._used = used_facts(self.messages)
        return self._used

    @property
    def baseline(self) -> "Baseline":
        if self._baseline is None:
            stored = self._stored.get("rounds")
            self._baseline = (
                Baseline(tuple(stored)) if stored else baseline(self.messages)
            )
        return self._baseline

    def baseline_for(self, count) -> "Baseline":
        """The baseline in the tokens of `count`, the count a row was run with."""
        if count is estimate_tokens:
            return self.baseline
        if id(count) not in self._baselines:
            from ..policies.production.run import per_message_counter

            self._baselines[id(count)] = baseline(
                self.messages, per_message_counter(count)
            )
        return self._baselines[id(count)]

    @property
    def facts_used(self) -> int:
        """How many distinct facts the agent used."""
        if self._used is None and "facts_used" in self._stored:
            return self._stored["facts_used"]
        return len(self.used.facts)

    @property
    def timestamps(self) -> bool:
        """Whether the log's messages carry timestamps."""
        if "timestamps" in self._stored:
            return self._stored["timestamps"]
        return any("timestamp" in message for message in self.messages)

    def row(self, key: str, window: int, value=None) -> dict:
        """The row of `key` at `window` (its main parameter at `value`). A setting the
        policy refuses (its ValueError), or any other error of one policy, gives a row
        that says so (`refused_row`): one row's error never stops the others."""
        parameter = POLICIES[key].main_parameter
        if value is not None and value == default_value(key, window):
            value = None  # the policy as built by default: one row, not two
        settings = {} if value is None else {parameter: value}
        found = self._rows.get((key, window, value))
        if isinstance(found, str):  # stored: read when first asked for
            found = self._rows[(key, window, value)] = json.loads(found)
        if found is None:
            from ..policies.production.compare import measure_policy

            count, how = estimate_tokens, {}
            if self.counting is not None:
                count, parameters = self.counting.run_with(key)
                how = dict(
                    parameters,
                    counted_with=self.counting.counted_with,
                    agent_log=self.log,
                )
            try:
                found = measure_policy(
                    self.messages,
                    key,
                    window,
                    count,
                    used=self.used,
                    counted=self._counted,
                    **{**how, **settings},
                )
            except Exception as error:  # shown in its row, the other rows go on
                found = refused_row(key, error)
            else:
                found.pop("cut")  # each output's fate: the chapter shows none
                found["tokens_saved"] = saved_share(found, self.baseline_for(count))
            self._rows[(key, window, value)] = found
        return found


def counting_words(runs: LogRuns, window: int) -> str:
    """How the rows of `runs` at `window` were counted, in words."""
    counting = runs.counting
    if counting is None:
        return f"window {window:,} tokens (estimated)"
    words = f"window {window:,} tokens"
    if window == counting.window:
        why = counting.window_why
        if why.startswith("a stated default"):  # set here with the window control
            why = why[:-1] + "; choose the window above to set it)"
        words += f" ({html.escape(why)})"
    if counting.calibrated:
        words += (
            "; every row in one unit: API tokens, as calibrated on the log's first "
            "half of calls. A row's tokens sent are its messages'; every call also "
            f"sent {counting.overhead:,} tokens of system prompt and tools (the "
            "calibrated overhead), the same in every row"
        )
        if counting.poor_fit is not None:
            words += (
                f". <b>The fit is poor on this log</b>: off by {counting.poor_fit:.0%} "
                "on the calls it did not see (7.11 shows where), so every row's "
                "count is as unsure"
            )
    else:
        words += "; counted as the harness sent each window"
        if counting.overhead is not None:
            words += (
                ". A row's tokens sent are its messages'; every call also sent "
                f"{counting.overhead:,} tokens of system prompt and tools (its first "
                "call's record beyond its messages), the same in every row"
            )
    if counting.own_key is not None:
        words += (
            f"; <b>{counting.own_key}</b>, the agent's own, replayed as the version "
            "that wrote the log"
        )
    return words


@lru_cache(maxsize=None)
def default_value(key: str, window: int):
    """The value of policy `key`'s main parameter when built for `window` by default."""
    return build_policy(key, window).parameters()[POLICIES[key].main_parameter]


@lru_cache(maxsize=8)
def log_runs(name: str) -> LogRuns:
    """The rows of a log the chapter offers, by its name: one `LogRuns` a log, shared
    by the chapter's cells and its lab."""
    return LogRuns(name=name)


def refused_row(key: str, error: Exception) -> dict:
    """The row of a policy that did not run: its name and why, nothing measured."""
    reason = str(error) or type(error).__name__
    if not isinstance(error, ValueError):  # not a refused setting: name what it is
        reason = f"{type(error).__name__}: {reason}"
    return {"policy": key, "error": reason}


def saved_share(row: Mapping, reference: Baseline) -> float:
    """Tokens saved against sending the whole log, over the rounds the policy sent."""
    whole = reference.sent_over(row["rounds"])
    return 1 - row["tokens_sent"] / whole if whole else 0.0
