"""Chapter 10's views: the policies production agents run, side by side on one log.

`policy_rows` replays a log under each policy (`minilib.policies.production`) and
measures each run from its own windows; `comparison_frame` shows the rows as a table,
`tradeoff_figure` as tokens saved against facts lost, coloured by the prompt-cache
cost. `PolicyLab` puts a log chooser (the bundled generated sessions and transcripts,
or an upload), the model's window and one slider per policy's main parameter on them:
a slider re-runs its own policy only. Every number shown is computed by the library.
"""

import gzip
import html
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..logs import LogFileError, decoded_text, split_upload
from ..logs.replay import load_transcript, parse_transcript, with_output_ids
from ..policies.production import POLICIES, build_policy
from ..reports.rounds import plural
from ..scale.histories import generate_history
from ..session import DATA_DIR
from ..tokens import estimate_message_tokens, estimate_tokens
from .numbers import boxed_slider, format_number, short_count
from .shown import ShownAsWidget, reading_line, upload_files
from .six_paths import NumberTable, table_html
from .style import (
    AGING_COLOR,
    BAR_LABEL_OUTSIDE,
    BROKEN_PATTERN,
    BROKEN_TRACE,
    COMPRESSED_COLOR,
    NOTE_COLOR,
    OVERFLOW_COLOR,
    POLICY_FIGURE_HEIGHT,
    POLICY_FIGURE_WIDTH,
    POLICY_LAB_CSS,
    POLICY_LABEL_WIDTH,
    POLICY_SLIDER_WIDTH,
    PROBLEM_CSS,
    REPORT_CSS,
    STATUS_LINE_HEIGHT,
    SUMMARY_COLOR,
    TEXT_COLOR,
    WRAPPED_TEXT_CSS,
)
from .tables import HtmlTable, prose_table

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
POLICY_WINDOWS = (200_000, 32_000, 8_000)
# A main parameter that is a token count moves over a share of the window.
TOKEN_PARAMETERS = {
    "threshold",
    "max_tokens",
    "auto_compact_token_limit",
    "trigger",
    "prune_protect",
}


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
            f"half of calls, plus {counting.overhead:,} tokens a call (the calibrated "
            "overhead)"
        )
    else:
        words += "; counted as the harness sent each window"
        if counting.overhead is not None:
            words += (
                f", plus {counting.overhead:,} tokens a call (its first call's overhead)"
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
    if row.get("facts_lost"):
        problems.append(plural(row["facts_lost"], "fact") + " lost")
    return problems


def row_readout(row: Mapping, inert: str = "", same_as: str = "") -> str:
    """A policy's row in one line, beside its slider. Problems come first and in red (a
    stop, broken windows, lost facts), and a run with one is never shown as a saving: a
    stopped run saved nothing, it failed; a run with broken windows sent windows an API
    rejects. A clean run (it ran every round) says tokens saved, facts kept and tokens
    sent, in three figures (`1.88M`) so that the line fits beside a slider at 1280
    pixels with the file browser open; the exact line, rounds too, is on hover.
    `inert`, why the slider can change nothing on this log, goes on a second line; else
    `same_as`, the value the slider just left when the run is the same (so a move that
    changed nothing is not taken for one that did not register). The table under the
    sliders has every column."""
    problems = row_problems(row)
    sent = row.get("tokens_sent", 0)
    if "error" in row:
        text = whole = problems[0]
    elif problems:
        text = " · ".join(problems) + f" · {short_count(sent)} sent"
        whole = " · ".join(problems) + f" · {plural(sent, 'token')} sent"
    else:
        # what a policy is chosen by first: a narrow column cuts the line's end
        kept = f"{saved_percent(row)} saved · {row['facts_kept']} kept"
        text = f"{kept} · {short_count(sent)} sent"
        whole = f"{kept} · {rounds_cell(row)} rounds · {plural(sent, 'token')} sent"
    style = PROBLEM_CSS + "padding:0 4px;" if problems else ""
    line = (
        f'<div title="{html.escape(whole)}" style="white-space:nowrap;overflow:hidden;'
        f'text-overflow:ellipsis;{style}">{html.escape(text)}</div>'
    )
    second, title = "", ""
    if inert:
        second, title = (
            f"no effect: {inert}",
            f"this slider changes nothing here: {inert}",
        )
    elif same_as:
        second = title = f"the same run as at {same_as}"
    if second:  # on a line of its own, short enough to be read without hovering
        line += (
            f'<div class="ccl-policy-inert" title="{html.escape(title)}" '
            f'style="font-size:11px;line-height:13px;color:{NOTE_COLOR};'
            'white-space:nowrap;overflow:hidden;text-overflow:ellipsis">'
            f"{html.escape(second)}</div>"
        )
    # two lines in the height of one slider row: the first line no taller than its text
    tight = "line-height:17px;" if second else ""
    return f'<div class="ccl-policy-readout" style="font-size:13px;{tight}">{line}</div>'


def same_run(one: Mapping, other: Mapping) -> bool:
    """Whether two rows of a policy are the same run, as the lab shows runs: how far it
    ran, what it sent, the facts it kept and lost, what the cache cost."""
    if "error" in one or "error" in other:
        return False
    measured = ("rounds", "tokens_sent", "facts_kept", "facts_lost", "cache_cost")
    return all(one[name] == other[name] for name in measured)


def inert_reason(runs: LogRuns, key: str, window: int, slider) -> str:
    """Why `slider` can change nothing of `key`'s run on this log ("" when it can): the
    run at the slider's two ends is the same run. Checked again for each log and window,
    not on every move."""
    if slider.min == slider.max:
        return "one value at this window"
    ends = [runs.row(key, window, value) for value in (slider.min, slider.max)]
    if not same_run(*ends):
        return ""
    if key.startswith("claude-code") and not runs.timestamps:
        return "no timestamps: never idle"
    if ends[0]["overflow_round"] is not None:
        return f"it stops at round {ends[0]['overflow_round']:,} anyway"
    return "the same run at every value"


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


def tradeoff_traces(rows: Sequence[Mapping]) -> List[dict]:
    """The figure's bar traces, one bar a policy in every panel: tokens saved
    (`saved_bars`) and the legend's key to its hatching (no bars, in the legend only
    when a run broke windows); the facts lost and restorable; the cache's cost. Always
    the same five, so a figure on screen is updated trace by trace. One that refused
    its setting gets no bar anywhere (the table says why)."""
    names = [row["policy"] for row in rows]
    hatched_key = dict(
        x=[None],
        y=[None],
        orientation="h",
        name=BROKEN_TRACE,
        marker=dict(color=COMPRESSED_COLOR, pattern=BROKEN_PATTERN),
        xaxis="x",
        yaxis="y",
        showlegend=any(map(broke_windows, rows)),
    )

    def ran_or_zero(value) -> list:
        return [0 if "error" in row else value(row) for row in rows]

    cost = ran_or_zero(
        lambda row: round(100 * row["cache_cost"] / max(row["uncached_cost"], 1))
    )
    return [
        saved_bars(rows),
        hatched_key,
        _panel_bars(
            names, 2, ran_or_zero(lambda r: r["facts_lost"]), "facts lost", OVERFLOW_COLOR
        ),
        _panel_bars(
            names,
            2,
            ran_or_zero(lambda r: r["facts_restorable"]),
            "restorable",
            AGING_COLOR,
        ),
        _panel_bars(
            names,
            3,
            cost,
            "cache cost",
            SUMMARY_COLOR,
            text=["" if "error" in row else cache_percent(row) for row in rows],
            **BAR_LABEL_OUTSIDE,
        ),
    ]


def saved_bars(rows: Sequence[Mapping]) -> dict:
    """The tokens each policy saved. A policy whose window overflowed gets no bar, only
    "stopped at round N" in red: it saved nothing, the agent failed there; one that
    refused its setting, only "not run" in red. One that sent windows an API rejects
    (broken pairing) gets its bar hatched and, in red, how many it broke instead of a
    share: what it cut by breaking them is not a saving an agent could have had."""
    stopped = ["error" in row or row["overflow_round"] is not None for row in rows]
    broken = [broke_windows(row) for row in rows]
    return _panel_bars(
        [row["policy"] for row in rows],
        1,
        [
            0 if stop else round(100 * row["tokens_saved"], 1)
            for row, stop in zip(rows, stopped)
        ],
        "tokens saved",
        dict(
            color=COMPRESSED_COLOR,
            pattern=BROKEN_PATTERN | dict(shape=["/" if bad else "" for bad in broken]),
        ),
        text=[saved_text(row) for row in rows],
        textfont=dict(
            color=[
                OVERFLOW_COLOR if stop or bad else TEXT_COLOR
                for stop, bad in zip(stopped, broken)
            ]
        ),
        **BAR_LABEL_OUTSIDE,
    )


def broke_windows(row: Mapping) -> bool:
    """Whether a run went on (it neither stopped nor was refused) sending windows an API
    rejects: what it saved is no saving."""
    return (
        "error" not in row
        and row["overflow_round"] is None
        and bool(row.get("windows_invalid"))
    )


def _panel_bars(names: list, column: int, x: list, name: str, color, **more) -> dict:
    """One bar a policy in the figure's panel `column` (its axes x, x2, x3 and y, y2,
    y3); `color` a colour, or a whole marker (a colour and a pattern)."""
    axis = "" if column == 1 else str(column)
    return dict(
        orientation="h",
        y=names,
        x=x,
        name=name,
        marker=color if isinstance(color, dict) else dict(color=color),
        xaxis=f"x{axis}",
        yaxis=f"y{axis}",
        **more,
    )


def saved_text(row: Mapping) -> str:
    """The label of a policy's bar of tokens saved: the table's percentage, or why
    there is no bar."""
    if "error" in row:
        return "not run (the table says why)"
    if row["overflow_round"] is not None:
        return f"stopped at round {row['overflow_round']:,}"
    if broke_windows(row):  # short: it sits between the bar and the next panel
        return f"{row['windows_invalid']:,} broken"
    return saved_percent(row)


def tradeoff_figure(rows: Sequence[Mapping], title: str = "") -> go.Figure:
    """One row a policy, three panels side by side: what it saved, what it lost, what
    the cache cost (a bar chart names every policy; a scatter piled their labels up)."""
    figure = make_subplots(
        rows=1,
        cols=3,
        shared_yaxes=True,
        horizontal_spacing=0.05,
        column_widths=[0.4, 0.3, 0.3],
        subplot_titles=(
            "tokens saved (%)",
            "facts lost, restorable",
            "cache cost (% of uncached)",
        ),
    )
    figure.add_traces([go.Bar(**trace) for trace in tradeoff_traces(rows)])
    figure.update_yaxes(autorange="reversed", row=1, col=1)  # the table's order, top down
    # room for "stopped at round N", and for "240 broken" after a bar at 99%
    figure.update_xaxes(range=[0, 150], tickvals=[0, 25, 50, 75, 100], row=1, col=1)
    figure.update_xaxes(range=[0, 130], row=1, col=3)
    figure.update_layout(
        title=title,
        barmode="stack",
        width=POLICY_FIGURE_WIDTH,
        height=POLICY_FIGURE_HEIGHT,
        template="plotly_white",
        margin=dict(l=180, r=20, t=70, b=40),
        # in the panels' order, left to right (stacked bars list theirs reversed)
        legend=dict(orientation="h", y=-0.08, traceorder="normal"),
    )
    return figure


def lab_chart_title(log: str, window: int) -> str:
    return f"{log} at a {window:,}-token window"


def accepts(key: str, window: int, value) -> bool:
    """Whether policy `key` at `window` takes `value` for its main parameter: asked of
    the policy itself (its constructor checks its settings), so a slider offers what the
    policy accepts whatever its defaults and checks are."""
    try:
        build_policy(key, window, **{POLICIES[key].main_parameter: value})
    except ValueError:
        return False
    return True


def slider_grid(default, name: str, window: int) -> Tuple[list, object]:
    """The values a slider could take on its grid (before asking the policy), and its
    step: a share in 5% steps, a token count in 40ths of the window, a count up to four
    times its default."""
    if isinstance(default, float):
        return [round(0.05 * i, 2) for i in range(1, 20)], 0.05
    if name in TOKEN_PARAMETERS:
        step = max(window // 40, 1)
        return list(range(step, max(window, default) + 1, step)), step
    top = max(20, 4 * default)
    step = max(1, top // 40)
    # counted from the default, so the handle can rest on it: a grid from 1 in steps of
    # 10 put an attention window of 100 between 91 and 101
    lowest = 0 if default == 0 else 1
    below = range(default, lowest - 1, -step)
    return sorted({*below, *range(default, top + 1, step)}), step


def accepted_range(key: str, window: int, grid: Sequence, default) -> Tuple:
    """(lowest, highest) of the grid's values the policy accepts, the default always
    among them: a slider between them never offers a value its policy refuses."""
    taken = [value for value in grid if accepts(key, window, value)]
    if not taken:
        return default, default
    return min(taken[0], default), max(taken[-1], default)


def slider_for(key: str, window: int) -> widgets.Widget:
    """A slider on a policy's main parameter, starting at its default for `window`,
    over the values the policy accepts (`accepted_range`)."""
    policy = build_policy(key, window)
    name = POLICIES[key].main_parameter
    default = policy.parameters()[name]
    grid, step = slider_grid(default, name, window)
    low, high = accepted_range(key, window, grid, default)
    common = dict(
        description=f"{key}: {name}",
        continuous_update=False,
        style={"description_width": POLICY_LABEL_WIDTH},
        layout=widgets.Layout(width=POLICY_SLIDER_WIDTH),
    )
    if isinstance(default, float):
        slider = widgets.FloatSlider(default, min=low, max=high, step=step, **common)
    elif name in TOKEN_PARAMETERS:
        slider = widgets.IntSlider(
            default, min=low, max=high, step=step, readout_format=",d", **common
        )
    else:
        slider = widgets.IntSlider(default, min=low, max=high, step=step, **common)
    slider.add_class(f"ccl-policy-slider-{key}")
    return slider


def uploaded_log(upload: widgets.FileUpload):
    """The name and the log (a LoadedLog) of the files uploaded together: the log, read
    with the files its agent keeps beside it (Cline's usage record)."""
    name, content, beside = split_upload(upload_files(upload))
    return name, parse_transcript(decoded_text(content, name), name, beside=beside)


class PolicyLab(ShownAsWidget):
    """A log, a window and a slider a policy: the table and the trade-off figure."""

    def __init__(
        self, log: str = "generated session, 200 tool calls, 4 user turns", window=32_000
    ):
        self.runs: Dict[str, LogRuns] = {}
        self._add_log_controls(log, window)
        self.sliders: Dict[str, widgets.Widget] = {}
        self.readouts: Dict[str, widgets.HTML] = {}
        # a slider a line, its policy's row in one line beside it: every slider and
        # what it does on one 1280 x 720 screen (the whole table is under them)
        self.slider_box = widgets.GridBox(
            layout=widgets.Layout(
                grid_template_columns="max-content max-content minmax(0, 1fr)",
                grid_gap="0 10px",
                align_items="center",
            )
        )
        self.table = widgets.HTML()
        # A readout's line is cut with "…" (whole on hover) where its column is narrow:
        # the widget's own box must be allowed to be narrower than the line for that.
        self.readout_style = widgets.HTML(
            POLICY_LAB_CSS, layout=widgets.Layout(display="none")
        )
        # drawn first with the rows the sliders start at (their defaults): the ones
        # `reset` shows, computed once
        defaults = {key: default_value(key, window) for key in available_policies()}
        self.figure = go.FigureWidget(
            tradeoff_figure(
                policy_rows(self.current(), window, defaults),
                lab_chart_title(self.choice.value, window),
            )
        )
        self._holding = False  # while the log list changes: one reset, at its end
        self.choice.observe(lambda change: self._on_log(), "value")
        self.window.observe(lambda change: self._on_log(), "value")
        self.upload.observe(lambda change: self.take_upload(), "value")
        # The log, then each slider beside its policy's row (all on one 1280 x 720
        # screen), then what the log is and the whole table, the chart under it.
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.choice, self.window, self.upload]),
                self.problem,
                self.readout_style,
                self.slider_box,
                self.status,
                self.table,
                self.figure,
            ]
        )
        self.widget.add_class("ccl-policy-lab")
        self.reset()

    def _add_log_controls(self, log: str, window: int) -> None:
        """The log list, the window list, the upload button, and the lines under them."""
        self.choice = widgets.Dropdown(
            options=list(GENERATED_LOGS) + list(BUNDLED_TRANSCRIPTS),
            value=log,
            description="log",
            layout=widgets.Layout(width="440px"),
        )
        self.window = widgets.Dropdown(
            options=[(f"{w:,}", w) for w in POLICY_WINDOWS],
            value=window,
            description="window",
            layout=widgets.Layout(width="200px"),
        )
        # any file: the shape is found from the content, never the file name
        # several files at once: one task's files (Cline's two) are read together
        self.upload = widgets.FileUpload(accept="", multiple=True)
        self.problem = widgets.HTML()  # an upload refused, under the button that did it
        self.status = widgets.HTML()

    def current(self) -> LogRuns:
        name = self.choice.value
        if name not in self.runs:
            self.runs[name] = log_runs(name)
        return self.runs[name]

    def take_upload(self) -> None:
        if not self.upload.value:
            return
        # said at once, where the refusal of a bad file would be: a large log takes
        # seconds to read and replay, which must not look like nothing
        self.problem.value = (
            f'<div class="ccl-reading" style="{REPORT_CSS}padding:4px 10px;'
            f'{WRAPPED_TEXT_CSS}">'
            + html.escape(
                reading_line(upload_files(self.upload), "running every policy on it")
            )
            + "</div>"
        )
        try:
            name, log = uploaded_log(self.upload)
        except LogFileError as error:
            self.problem.value = (
                f'<div style="{PROBLEM_CSS}padding:4px 10px;{WRAPPED_TEXT_CSS}">'
                f"{html.escape(str(error))}<br>The table below still shows "
                f"<b>{html.escape(self.choice.value)}</b>.</div>"
            )
            return
        # the last log's table goes at once: the screen never shows two logs
        self.table.value = ""
        label = f"uploaded: {name}"
        runs = self.runs[label] = LogRuns(log=log)
        options = [o for o in self.choice.options if not o.startswith("uploaded: ")]
        # A Dropdown whose options change picks their first for a moment: held, so the
        # first log's table is neither computed nor shown before the uploaded one's.
        self._holding = True
        try:
            self.choice.options = options + [label]
            self.choice.value = label
            if runs.counting is not None:  # the window its agent ran at
                self._show_window(runs.counting.window)
        finally:
            self._holding = False
        self.reset()
        self.problem.value = ""  # read and replayed: the line has done its work

    def _show_window(self, window: int) -> None:
        """`window` chosen in the window list, added to it if it is not one of them."""
        if window not in [value for _, value in self.window.options]:
            windows = sorted({value for _, value in self.window.options} | {window})
            self.window.options = [(f"{w:,}", w) for w in reversed(windows)]
        self.window.value = window

    def _on_log(self) -> None:
        if not self._holding:
            self.reset()

    def reset(self) -> List[dict]:
        """New sliders at the defaults for this window, and every row again."""
        self.sliders = {
            key: slider_for(key, self.window.value) for key in available_policies()
        }
        self.readouts = {key: widgets.HTML() for key in self.sliders}
        self.boxes = {key: boxed_slider(slider) for key, slider in self.sliders.items()}
        self.number_boxes = list(self.boxes.values())
        for key, box in self.boxes.items():
            # a note has a line of its own under its box and row (seventeen rows share
            # the box's column, and a note in it would wrap to five lines), and none
            # when empty; it goes when another control is used
            box.note_css = "display:block;line-height:15px"
            box.empty_note_display = box.note.layout.display = "none"
            box.text.observe(lambda change, key=key: self._notes_but(key), "value")
        for key, slider in self.sliders.items():
            slider.observe(lambda change, key=key: self._moved(key, change), "value")
            self.readouts[key].add_class(f"ccl-policy-readout-{key}")
        self.inert = {}  # found after the table is on screen (`note_inert`)
        parts = []
        for number, key in enumerate(self.sliders):
            # each in its own cell, placed (a note that appears must not push the
            # grid's later items a column along): the slider, its box and its line,
            # and under the box and the line its note. `grid_area`, as ipywidgets
            # never hands `grid_row` and `grid_column` to the page.
            top = 2 * number + 1
            cells = (
                (self.sliders[key], f"{top} / 1 / {top + 1} / 2"),
                (self.boxes[key].text, f"{top} / 2 / {top + 1} / 3"),
                (self.readouts[key], f"{top} / 3 / {top + 1} / 4"),
                (self.boxes[key].note, f"{top + 1} / 2 / {top + 2} / 4"),
            )
            for part, area in cells:
                part.layout.grid_area = area
                parts.append(part)
        self.slider_box.children = parts
        # what the chart shows, named as the chapter's earlier charts are: it changes
        # with the log and the window, so here, not on every slider move
        self.figure.layout.title.text = lab_chart_title(
            self.choice.value, self.window.value
        )
        rows = self.render()
        self.note_inert(rows)
        return rows

    def note_inert(self, rows: List[dict]) -> None:
        """Beside each slider that can change nothing of its policy's run on this log,
        why. Found once the table and the chart are on screen: it runs each policy at
        its slider's two ends, twice the work of the table, which must not keep the
        table from the student."""
        self.inert = {
            key: reason
            for key, slider in self.sliders.items()
            if (reason := inert_reason(self.current(), key, self.window.value, slider))
        }
        for row in rows:
            if row["policy"] in self.inert:
                key = row["policy"]
                self.readouts[key].value = row_readout(row, self.inert[key])

    def _moved(self, key: str, change) -> List[dict]:
        """A slider moved: every row again, and where its run is the one it had at the
        value it left, its line says so."""
        before = next((row for row in self.rows if row["policy"] == key), None)
        rows = self.render()
        after = next(row for row in rows if row["policy"] == key)
        if before is not None and same_run(before, after) and key not in self.inert:
            self.readouts[key].value = row_readout(
                after, same_as=format_number(change["old"])
            )
        return rows

    def _notes_but(self, key: str) -> None:
        """Every box's note gone but `key`'s: a box's value shown anew (typed, or its
        slider moved) means the student is on that one now."""
        for other, box in self.boxes.items():
            if other != key and box.note.value:
                box.clear_note()

    def values(self) -> Dict[str, object]:
        return {key: slider.value for key, slider in self.sliders.items()}

    def render(self) -> List[dict]:
        runs = self.current()
        rows = policy_rows(runs, self.window.value, self.values())
        used = runs.facts_used
        self.status.value = (
            f'<div style="line-height:{STATUS_LINE_HEIGHT}">'
            f"<b>{html.escape(self.choice.value)}</b>: "
            f"{plural(len(runs.baseline.per_round), 'round')}, "
            f"{plural(used, 'fact')} the agent used; "
            + counting_words(runs, self.window.value)
            + "</div>"
        )
        # a policy's name and its rounds on one line, as in the chapter's tables
        self.table.value = table_html(comparison_frame(rows), keep_first=True)
        for row in rows:
            key = row["policy"]
            self.readouts[key].value = row_readout(row, self.inert.get(key, ""))
        fresh = tradeoff_traces(rows)
        with self.figure.batch_update():
            for shown, new in zip(self.figure.data, fresh):
                shown.update(new)
        self.rows = rows
        return rows

    def text_form(self) -> str:
        return "Policy lab (run the notebook to use the sliders)"
