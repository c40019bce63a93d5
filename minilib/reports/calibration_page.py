"""docs/calibration.md: on every real log the project holds, how well the count
calibrated on the first half of its calls predicts the second half, and where the
replay of the agent's own policy compacts beside where the agent did.

Every number comes from running minilib on `data/real/` (SOURCES.md names each file's
origin); a test checks the committed page. Rewrite it after a change to the count,
a reader or the data: `python -m minilib.reports calibration --write docs/calibration.md`.
"""

from typing import List

from ..logs import load_log
from ..measure.calibration import calibrate
from ..policies.production.own_agent import own_agent_row
from ..session import DATA_DIR
from .markdown import markdown_table

COMMAND = "python -m minilib.reports calibration --write docs/calibration.md"
REAL = DATA_DIR / "real"

FIT_COLUMNS = (
    ("log", "log"),
    ("agent", "agent, version"),
    ("model", "model"),
    ("calls", "calls with usage"),
    ("ratio", "API tokens a lab token"),
    ("overhead", "overhead a call"),
    ("in_sample", "error, fitted on all"),
    ("held_out", "error, held out"),
)
REPLAY_COLUMNS = (
    ("log", "log"),
    ("agent", "agent, version"),
    ("recorded", "the agent compacted before rounds"),
    ("replayed", "the replay compacted before rounds"),
    ("per_call", "replay vs record per call (median, p90)"),
)

METHOD = """\
The lab counts what each call sent by the article's text rule (each message's text, its
calls' names and arguments, the thinking the model keeps; for Claude Code with a Claude
model the rule is reweighted by character class, `minilib/agents/claude_code/text.py`) and
learns from the log's recorded usage how the API's tokens relate to that count: one
ratio a model, what consecutive calls added by the API over what they added by the lab's
count (summed, the steps more than twice off the typical one left out), and one overhead
(the system prompt and tool definitions no log holds), the median of what each call
counted beyond it; where the fitted calls reach past a compaction, the calls after it
give the overhead and what the calls before it counted beyond that is history a file
that begins mid-session lacks. The walk follows the agent's own compactions, the
clearings it recorded and its resumes (before 2.1.80 a resumed session lost the parallel
tool calls off its parent chain), replays Claude Code's unrecorded 2.0.x microcompact by
the predicted count, and adds what Claude Code re-attaches after a compaction. **Held
out**: fitted on the first half of the calls, the median |error| on the second half,
which the fit never saw. Error: |predicted - recorded| / recorded, per call. The same
measures on 235 real sessions the project does not hold: [real_logs.md](real_logs.md).
"""


def real_logs() -> List:
    return sorted(
        path
        for path in REAL.glob("*/*.jsonl")
        if path.parent.name in ("claude-code", "pi")
    )


def fit_rows() -> List[dict]:
    rows = []
    for path in real_logs():
        log = load_log(path)
        calibration = calibrate(log)
        if calibration is None:
            continue
        for fit in calibration.fits.values():
            rows.append(
                {
                    "log": f"{path.parent.name}/{path.name}",
                    "agent": f"{log.agent} {log.agent_version}".strip(),
                    "model": fit.model,
                    "calls": fit.calls,
                    "ratio": f"{fit.ratio:.2f}",
                    "overhead": f"{fit.overhead:,}",
                    "in_sample": f"{calibration.in_sample['median_abs_error']:.1%}",
                    "held_out": f"{calibration.held_out['median_abs_error']:.1%}",
                }
            )
    return rows


def replay_rows() -> List[dict]:
    rows = []
    for path in real_logs():
        log = load_log(path)
        if log.agent != "claude-code":
            continue
        row, _ = own_agent_row(log, 200_000)
        if row is None:
            continue
        usage = row.get("recorded_usage") or {}
        rows.append(
            {
                "log": path.name,
                "agent": f"{log.agent} {log.agent_version}",
                "recorded": ", ".join(
                    str(c["round"]) for c in row["recorded_compaction_rounds"]
                )
                or "none",
                "replayed": ", ".join(str(c["round"]) for c in row["compaction_rounds"])
                or "none",
                "per_call": _per_call(usage),
            }
        )
    return rows


def _per_call(usage: dict) -> str:
    if "median_abs_error" not in usage:
        return "-"
    return f"{usage['median_abs_error']:.1%}, {usage['p90_abs_error']:.1%}"


def build_markdown() -> str:
    return "\n".join(
        [
            "# The count calibrated to the API's, on real logs",
            "",
            f"Written by `{COMMAND}`; every number below comes from running it.",
            "",
            METHOD,
            "## The fit, and its error on calls it was not fitted on",
            "",
            markdown_table(fit_rows(), FIT_COLUMNS),
            "",
            "## Claude Code's own policy, replayed on its own log",
            "",
            "The row `compare LOG` prints for the log's own agent: counted as calibrated "
            "on the first half of the calls, replayed as the version that wrote the log "
            "behaved, at the model's 200,000-token window.",
            "",
            markdown_table(replay_rows(), REPLAY_COLUMNS),
            "",
        ]
    )
