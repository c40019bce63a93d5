"""Write the rows chapter 10 shows when it runs: data/chapter10_rows.json.gz.

Chapter 10 replays its thousand-call session under every production policy at two
windows, and its lab opens on the 200-call session with a slider a policy, each
slider's two ends replayed too, to tell a slider that can change nothing: some ninety
replays before a class sees anything. Its log list offers the thousand-call session
with one task too: picking it costs its seventeen policies at the defaults and at
each slider's two ends, about fifty replays of a thousand calls (seconds, not the
second a control may take), so its rows are stored as well, and each log's facts (the
ones the agent used, as `used_facts` finds them): a row not stored then replays its
policy without reading the thousand-call log for facts first. The rows are computed here, by the same code
the chapter runs (`minilib.lab.policies_view.LogRuns` on the log as generated), and
stored; the chapter reads them for those settings and computes any other row when it
is asked for. tests/test_packaging.py checks the file is what this script writes now,
as it checks every file a script makes.

    python scripts/make_chapter10_rows.py            # rewrite the file
    python scripts/make_chapter10_rows.py --check    # exit 1 if it would change
"""

import argparse
import gzip
import json
import sys
from pathlib import Path

from minilib.lab.log_runs import STORED_ROWS, LogRuns, log_messages
from minilib.lab.policies_view import POLICY_WINDOWS, slider_for
from minilib.lab.policy_rows import available_policies
from minilib.measure.used_facts import used_as_data

DATA = Path(__file__).resolve().parent.parent / "data"
LONG = "generated session, 1,000 tool calls, 10 user turns"
LAB = "generated session, 200 tool calls, 4 user turns"
ONE_TASK = "generated session, 1,000 tool calls, one task"
# The chapter's cells ask for the long session's rows at its policies' defaults; its
# lab opens on the 200-call session, and offers the long ones: at each window the lab
# offers, the rows at the defaults and at each slider's two ends.
SHOWN = tuple((log, window) for log in (LONG, LAB, ONE_TASK) for window in POLICY_WINDOWS)


def rows() -> dict:
    """{log name: what the chapter reads of it}, computed now."""
    logs = {}
    for name, window in SHOWN:
        if name not in logs:
            runs = LogRuns(log_messages(name))  # no stored rows: every one replayed
            logs[name] = {
                "runs": runs,
                "rounds": list(runs.baseline.per_round),
                "facts_used": runs.facts_used,
                "timestamps": runs.timestamps,
                "rows": [],
            }
        log = logs[name]
        for key in available_policies():
            slider = slider_for(key, window)
            ends = [value for value in (slider.min, slider.max) if value != slider.value]
            for value in [None, *dict.fromkeys(ends)]:
                row = log["runs"].row(key, window, value)
                log["rows"].append([key, window, value, row])
    for log in logs.values():
        runs = log.pop("runs")
        # the facts the agent used, as found now: a slider moved to a value not
        # stored replays one policy and reads the facts from here, not the log again
        # (kept as its JSON text, read only when a row not stored needs it)
        log["facts"] = json.dumps(used_as_data(runs.used, runs.messages))
    return logs


def text(logs: dict) -> str:
    """The file: one row a line, so a change shows as the rows it changes; each row
    as its own JSON text, which the chapter reads only when it shows the row."""
    lines = ["{"]
    for number, (name, log) in enumerate(logs.items()):
        lines.append(f"{json.dumps(name)}: {{")
        for field in ("rounds", "facts_used", "timestamps", "facts"):
            lines.append(f"{json.dumps(field)}: {json.dumps(log[field])},")
        lines.append('"rows": [')
        lines.append(
            ",\n".join(
                json.dumps(
                    [key, window, value, json.dumps(row, ensure_ascii=False)],
                    ensure_ascii=False,
                )
                for key, window, value, row in log["rows"]
            )
        )
        lines.append("]}" + ("," if number < len(logs) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def packed(written: str) -> bytes:
    """Gzipped, with no time in it: the same rows give the same bytes."""
    return gzip.compress(written.encode("utf-8"), mtime=0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if it would change")
    args = parser.parse_args(argv)
    written = packed(text(rows()))
    path = DATA / Path(STORED_ROWS).name  # this checkout's data/, where it is run
    if args.check:
        same = path.exists() and path.read_bytes() == written
        print(f"{path}: {'up to date' if same else 'would change'}")
        return 0 if same else 1
    path.write_bytes(written)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
