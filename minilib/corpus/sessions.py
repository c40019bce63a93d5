"""One session of a corpus, measured: the task every engine runs, one a session.

`session_rows(path, policy, thresholds, model)` reads one session file (any shape the
readers take), replays `policy` on it at each threshold (`sweep_log`) and returns a row
a threshold of numbers only: the bill, the compactions, the facts lost, the calls,
and the held-out error of the count where the log records usage. A file that cannot
be read gives one row saying why. Nothing of a session's text is returned: session
files hold secrets, and the rows must be safe to share. Each row carries the file's
path and a digest of its bytes (`key`), by which a rerun knows a session it has done.
"""

import hashlib
import re
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

# The files a folder's sessions are looked for in: the readers' shapes (JSON lines,
# JSON, SWE-agent trajectories, Aider's histories).
SUFFIXES = (".jsonl", ".json", ".traj")
HISTORY_NAMES = (".aider.chat.history.md", ".aider.llm.history")
NOT_SESSIONS = ("SOURCES.json", "package.json", "tsconfig.json")


def session_files(folder: Path) -> List[Path]:
    """The files under `folder` that may be sessions, in a stable order."""
    found = []
    for path in sorted(Path(folder).rglob("*")):
        if not path.is_file() or path.name in NOT_SESSIONS:
            continue
        if path.suffix in SUFFIXES or path.name.endswith(HISTORY_NAMES):
            found.append(path)
    return found


def content_key(path: Path) -> str:
    """A digest of the file's bytes: the same session wherever the file lies."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:20]


def session_rows(
    path,
    policy: str,
    thresholds: Sequence[int],
    model: Optional[str] = None,
) -> List[dict]:
    """The rows of one session (see the module text). Never raises for a bad file:
    what went wrong is the row's `error`."""
    path = Path(path)
    base = {"path": str(path), "key": ""}
    try:
        base["key"] = content_key(path)
        rows = list(_measured(path, policy, thresholds, model, base))
    except Exception as error:  # one session's fault never stops a corpus
        return [{**base, "error": _why(error)}]
    return rows


def _measured(path, policy, thresholds, model, base) -> Iterator[dict]:
    from ..cli.compare import row_counting
    from ..logs import load_log
    from ..measure.calibration import calibrate
    from ..policies.production.sweep import sweep_log

    log = load_log(path)
    counting = row_counting(log)
    points = sweep_log(log, policy, list(thresholds), counting, model=model)
    calibration = calibrate(log) if log.usage else None
    held_out = calibration.held_out.get("median_abs_error") if calibration else None
    recorded = None
    if log.billed:
        from ..measure.bill import record_bill

        recorded = round(record_bill(log).total_usd, 6)
    for point in points:
        yield {
            **base,
            "error": "",
            "agent": log.agent or log.shape,
            "model": model or log.model,
            "policy": policy,
            "threshold": point.threshold,
            "bill_usd": point.bill_usd,
            "compaction_usd": point.compaction_usd,
            "compactions": point.compactions,
            "facts_lost": point.facts_lost,
            "facts_used": point.facts_used,
            "calls": point.calls,
            "stopped_at": -1 if point.stopped_at is None else point.stopped_at,
            "recorded_usd": recorded,
            "held_out_error": held_out,
        }


def _why(error: Exception) -> str:
    """One line, without the file's content: the readers' messages name places (a
    line, a field), not text; anything else only by its kind."""
    from ..logs import LogFileError

    if isinstance(error, LogFileError):
        text = str(error).split(": ", 1)[-1]
        # a value the reader quoted could be the session's text: never written
        text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
        return text[:160]
    if isinstance(error, LookupError):  # a model the price data does not know
        return str(error)[:160]
    return f"{type(error).__name__}"
