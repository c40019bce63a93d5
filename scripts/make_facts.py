"""Write data/facts.json: the facts planted in the bundled session's tool results.

Each fact is a string the release investigation depends on, with the tool call
whose output first shows it. Before writing, the script runs the session's tools
and checks every declaration (present in that output, absent from every earlier
one), so the file can never claim a fact the tools do not produce. Deterministic:
running it again gives a byte-identical file; a test checks the committed one.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.measure.facts import (
    Fact,  # noqa: E402
    check_facts,  # noqa: E402
)
from minilib.session import load_session  # noqa: E402

OUT = ROOT / "data" / "facts.json"

# (id, kind, verbatim text, first tool call, why it matters)
FACTS = [
    (
        "path-checklist",
        "path",
        "docs/release_checklist.md",
        "call_01",
        "the notes point to a checklist that no longer exists",
    ),
    (
        "path-integration-test",
        "path",
        "tests/integration/test_shell.py",
        "call_03",
        "the failing integration test",
    ),
    (
        "path-config",
        "path",
        "config/agent.toml",
        "call_04",
        "where tool_timeout_s is set",
    ),
    (
        "path-tools-src",
        "path",
        "src/mini_agent/tools.py",
        "call_04",
        "the file with the unfixed TODO(#58)",
    ),
    (
        "path-report",
        "path",
        "tests/report.txt",
        "call_07",
        "the release process names the test report",
    ),
    ("code-e2big", "error_code", "E2BIG", "call_01", "the nightly failure"),
    ("code-errno7", "error_code", "[Errno 7]", "call_03", "the OS error behind E2BIG"),
    (
        "code-not-found",
        "error_code",
        "NOT_FOUND",
        "call_05",
        "the checklist file is gone",
    ),
    (
        "code-timeout-error",
        "error_code",
        "TimeoutError",
        "call_09",
        "the flaky test's failure (the timeout search shows it first)",
    ),
    (
        "num-timeout-30",
        "number",
        "tool_timeout_s=30",
        "call_01",
        "the configured timeout",
    ),
    (
        "num-flaky-3-of-10",
        "number",
        "failed 3/10 runs",
        "call_01",
        "how flaky the parallel test is",
    ),
    (
        "num-argv-bytes",
        "number",
        "1,342,177 bytes",
        "call_03",
        "the output size that breaks argv",
    ),
    (
        "num-nightly-412",
        "number",
        "nightly #412 FAILED",
        "call_03",
        "the newest nightly is red",
    ),
    (
        "num-merged-date",
        "number",
        "on 2026-11-02",
        "call_07",
        "when the checklist moved into RELEASE.md",
    ),
    (
        "num-at-least-60",
        "number",
        "at least 60",
        "call_07",
        "the timeout the release rule requires",
    ),
    (
        "num-parallel-4",
        "number",
        "max_parallel_calls = 4",
        "call_08",
        "why the batch timeout is shared",
    ),
    (
        "num-1-of-3",
        "number",
        "failed 1 of 3",
        "call_10",
        "the flaky result in the release run",
    ),
    (
        "cmd-test-all",
        "command",
        "make test-all REPEAT=3",
        "call_07",
        "the release test command",
    ),
    (
        "status-58-in-review",
        "status",
        "E2BIG fix (#58) still in review",
        "call_01",
        "the fix has not landed",
    ),
]


def tool_outputs(session):
    """Full output of every tool call of the session, by id, in call order."""
    outputs = {}
    for reply in session.replies:
        for call in reply.get("tool_calls") or ():
            outputs[call["id"]] = session.tools.call(
                call["function"]["name"], call["function"]["arguments"]
            ).content
    return outputs


def facts_document():
    facts = [Fact(*row) for row in FACTS]
    outputs = tool_outputs(load_session())
    check_facts(facts, outputs, list(outputs))
    return {
        "session": "session.json",
        "about": "strings planted in the tool results of data/session.json; first_call "
        "is the tool call whose "
        "output first shows each one (checked by scripts/make_facts.py and "
        "tests/test_facts.py)",
        "facts": [
            {
                "id": f.id,
                "kind": f.kind,
                "text": f.text,
                "first_call": f.first_call,
                "note": f.note,
            }
            for f in facts
        ],
    }


def main() -> None:
    OUT.write_text(
        json.dumps(facts_document(), ensure_ascii=False, indent=2) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {OUT} ({len(FACTS)} facts)")


if __name__ == "__main__":
    main()
