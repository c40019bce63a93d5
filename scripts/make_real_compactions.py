"""Write data/real_compactions.json: every compaction the real logs under data/real/
record, measured (`minilib.measure.compactions`), one object a compaction.

Measuring them takes about 1.5 s (the pi session's facts most of it), longer than a
chapter should make a class wait, so chapter 7's table of them and chapter 10's
sentence on the stand-in read this file. Deterministic; a test checks the committed
file against what this script writes now.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.logs.replay import load_transcript
from minilib.measure.compactions import measure_compactions

REAL = ROOT / "data" / "real"
OUT = ROOT / "data" / "real_compactions.json"
# what a row keeps of `CompactionReport.as_dict()`: the fact lists are in the logs
FIELDS = (
    "number",
    "round",
    "trigger",
    "tokens_before",
    "last_call_tokens",
    "lab_tokens_before",
    "summary_tokens",
    "standin_tokens",
    "replaced",
    "facts_after",
    "held",
    "reread",
    "neither",
    "restorable",
    "standin_held",
    "standin_restorable",
)


def real_compactions() -> list:
    rows = []
    for path in sorted(REAL.rglob("*.jsonl")):
        for report in measure_compactions(load_transcript(path)):
            measured = report.as_dict()
            row = {"log": path.relative_to(REAL).as_posix()}
            row.update((name, measured[name]) for name in FIELDS)
            rows.append(row)
    return rows


def main() -> None:
    text = json.dumps(real_compactions(), indent=1, ensure_ascii=False) + "\n"
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
