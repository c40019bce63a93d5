"""Check the lab's bill against the two peers that price the same logs, and write what
they said: data/peers/cost_peers.json (read by tests/test_cost.py) and the table of
docs/cost.md (between its two markers).

- ccusage (npm), the cost tool most users run on Claude Code logs: installed here into
  build/ccusage with npm (a check, never a dependency of the lab), run offline on
  each Claude Code log with usage, one log a home folder:
  `HOME=<dir> ccusage session --offline --json`, its `totals.totalCost`.
- pi, which writes its own price of every call (`usage.cost.total`).

    python scripts/check_cost_peers.py                 # the logs of data/real/
    python scripts/check_cost_peers.py --folder DIR    # and every log under DIR
    python scripts/check_cost_peers.py --no-ccusage    # pi only (no npm here)

A difference of a cent or more is named, call by call where the peer gives calls,
with which of the two follows the provider's published rule.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.logs import LogFileError, load_log  # noqa: E402
from minilib.measure import prices  # noqa: E402
from minilib.measure.bill import record_bill  # noqa: E402

CCUSAGE = "20.0.24"
CCUSAGE_PACKAGES = (f"ccusage@{CCUSAGE}", f"@ccusage/ccusage-linux-x64@{CCUSAGE}")
BUILD = ROOT / "build" / "ccusage"
PEERS = ROOT / "data" / "peers" / "cost_peers.json"
PAGE = ROOT / "docs" / "cost.md"
START, END = "<!-- peers:start -->", "<!-- peers:end -->"
CENT = 0.01


def ccusage_binary() -> Path:
    """ccusage installed under build/ccusage (npm, once)."""
    binary = BUILD / "node_modules" / ".bin" / "ccusage"
    if not binary.exists():
        BUILD.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--silent", "--prefix", str(BUILD), *CCUSAGE_PACKAGES],
            check=True,
        )
    return binary


def ccusage_total(binary: Path, log: Path) -> float:
    """ccusage's total for one session file, alone in a home folder of its own."""
    with tempfile.TemporaryDirectory() as home:
        folder = Path(home) / ".claude" / "projects" / "session"
        folder.mkdir(parents=True)
        shutil.copy(log, folder / log.name)
        done = subprocess.run(
            [str(binary), "session", "--offline", "--json"],
            env={"HOME": home, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
    return float(json.loads(done.stdout)["totals"]["totalCost"])


def explain(binary: Path, log: Path, row: dict) -> str:
    """Why ccusage's total differs, where a known cause shows: a file whose lines were
    written with spaces in their JSON (`"type": "assistant"`, as a tool that rewrote
    it writes) is read by ccusage as holding no usage; on a compact copy of the same
    lines (the form Claude Code writes) it agrees."""
    with tempfile.TemporaryDirectory() as folder:
        compact = Path(folder) / log.name
        lines = []
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                lines.append(json.dumps(json.loads(line), separators=(",", ":")))
            except ValueError:
                lines.append(line)
        compact.write_text("\n".join(lines) + "\n", encoding="utf-8")
        again = ccusage_total(binary, compact)
    row["peer_compact_usd"] = round(again, 6)
    if abs(again - row["lab_usd"]) < CENT:
        return (
            f"ccusage reads no usage in lines written with spaces in their JSON, as "
            f"this file's publisher rewrote it; on a compact copy of the same lines "
            f"(Claude Code's own form) it gives ${again:,.4f}, the lab's bill. JSON "
            "allows either form: the lab follows the provider's counts as written"
        )
    return "not explained"


def logs_of(folders) -> list:
    found = []
    for folder in folders:
        folder = Path(folder).resolve()
        found += sorted(folder.rglob("*.jsonl")) + sorted(folder.rglob("*.json"))
    return found


def measure(paths, use_ccusage: bool) -> list:
    binary = ccusage_binary() if use_ccusage else None
    rows = []
    for path in paths:
        try:
            log = load_log(path)
        except LogFileError:
            continue
        if not log.billed:
            continue
        bill = record_bill(log)
        row = {
            "log": str(path.relative_to(ROOT))
            if path.is_relative_to(ROOT)
            else path.name,
            "agent": log.agent or log.shape,
            "calls": len(bill.calls),
            "lab_usd": round(bill.total_usd, 6),
            "unpriced_calls": len(bill.unpriced),
        }
        if log.agent == "claude-code" and binary is not None:
            row["peer"] = f"ccusage {CCUSAGE}"
            row["peer_usd"] = round(ccusage_total(binary, path), 6)
            if abs(row["peer_usd"] - row["lab_usd"]) >= CENT:
                row["why"] = explain(binary, path, row)
        elif bill.own_total_usd is not None:
            row["peer"] = f"{log.agent or 'the agent'}'s own usage.cost"
            row["peer_usd"] = round(bill.own_total_usd, 6)
        if "peer_usd" in row:
            row["difference_usd"] = round(row["lab_usd"] - row["peer_usd"], 6)
        rows.append(row)
    return rows


def page(rows: list) -> str:
    """The table of the lab's bill beside each peer's, and where they differ."""
    agree = [r for r in rows if "peer_usd" in r and abs(r["difference_usd"]) < CENT]
    with_peer = [r for r in rows if "peer_usd" in r]
    lines = [
        f"Priced with `{prices.PACKAGE}` {prices.version() or prices.PINNED}; ccusage "
        f"{CCUSAGE} run offline on each Claude Code log; pi's own `usage.cost.total`.",
        "",
        f"**{len(agree)} of {len(with_peer)} logs agree with their peer to the cent.**",
        "",
        "| log | agent | calls | the lab | peer | the peer's | difference |",
        "|---|---|---:|---:|---|---:|---:|",
    ]
    for row in with_peer:
        lines.append(
            f"| {Path(row['log']).name} | {row['agent']} | {row['calls']} | "
            f"${row['lab_usd']:,.4f} | {row['peer']} | ${row['peer_usd']:,.4f} | "
            f"${row['difference_usd']:+,.4f} |"
        )
    differ = [r for r in with_peer if abs(r["difference_usd"]) >= CENT]
    lines += [
        "",
        "Where they differ by a cent or more:" + (" nowhere." if not differ else ""),
    ]
    for row in differ:
        lines.append(
            f"- {Path(row['log']).name}: the lab ${row['lab_usd']:,.4f}, {row['peer']} "
            f"${row['peer_usd']:,.4f}. {row.get('why', 'not explained')}."
        )
    return "\n".join(lines) + "\n"


def write_between_markers(path: Path, text: str) -> None:
    page_text = path.read_text(encoding="utf-8")
    head, rest = page_text.split(START, 1)
    path.write_text(
        head + START + "\n" + text + END + rest.split(END, 1)[1], encoding="utf-8"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", action="append", default=[], type=Path)
    parser.add_argument("--no-ccusage", action="store_true")
    args = parser.parse_args()
    paths = logs_of([ROOT / "data" / "real", *args.folder])
    rows = measure(paths, not args.no_ccusage)
    PEERS.parent.mkdir(parents=True, exist_ok=True)
    PEERS.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    write_between_markers(PAGE, page(rows))
    print(page(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
