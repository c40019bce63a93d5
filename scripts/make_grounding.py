"""Write data/grounding.json: which planted facts each scripted reply rests on, and how
to find each fact again.

The grounded mode of the scripted model (minilib.model, minilib.measure.grounding)
reads it. For each of the 14 replies of data/session.json, `uses_facts` lists the
facts (data/facts.json ids) the reply's words rest on, with `cite`, the words of the
reply each one backs (replaced by 〔未知:<fact id>〕 when the model cannot see the
fact). For each fact, `lookups` holds the cheapest workspace call that shows it again:
the script tries the call that first showed it, a search for the fact's text in the
file it stood in, in the whole workspace, and a search for its whole line there, runs
each on the workspace, keeps those whose hits (not just the header, which repeats the
pattern) show the fact, and writes the one whose output is fewest tokens.
Deterministic; a test checks the committed file.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.measure.facts import load_facts
from minilib.measure.grounded_model import UNKNOWN_MARK
from minilib.measure.grounding import evidence, literal_pattern, load_grounding
from minilib.session import load_session
from minilib.tokens import estimate_text_tokens

DATA = ROOT / "data"
OUT = DATA / "grounding.json"

# reply index -> (fact id, the words of the reply that rest on it). Only what a reply
# states from a tool result counts; a plan ("读 X") or a question rests on nothing.
USES = {
    # "笔记说 10-28 夜间构建失败": the notes' row "nightly 10-28 FAILED: E2BIG ..."
    2: [("code-e2big", "10-28 夜间构建失败")],
    3: [("code-e2big", "E2BIG")],  # "日志报 E2BIG"
    4: [("path-checklist", "docs/release_checklist.md")],  # "笔记要求 ... 对照"
    5: [("code-not-found", "清单文件不存在")],
    # "RELEASE.md 要求超时至少 60 秒，读 config/agent.toml"
    7: [("num-at-least-60", "至少 60 秒"), ("path-config", "config/agent.toml")],
    # "测试报告里有超时失败，读 tests/report.txt"
    9: [("code-timeout-error", "超时失败"), ("path-report", "tests/report.txt")],
    10: [("num-1-of-3", "三次挂一次")],
    # the final answer
    13: [
        ("num-nightly-412", "nightly #412"),
        ("code-e2big", "E2BIG"),
        ("status-58-in-review", "#58 未合入"),
        ("num-timeout-30", "tool_timeout_s=30"),
        ("num-at-least-60", "要求的 60"),
        ("num-1-of-3", "test_parallel_calls 不稳定"),
    ],
}


def call_arguments(**arguments) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def first_calls(session) -> dict:
    """tool_call_id -> (name, arguments JSON) of every scripted call."""
    return {
        call["id"]: (call["function"]["name"], call["function"]["arguments"])
        for reply in session.replies
        for call in reply.get("tool_calls") or ()
    }


def source_line(name: str, arguments: str, output: str, text: str):
    """(file, line) where `text` stood in the output of a read or a search, or None."""
    for line in output.splitlines():
        if name == "read_file" and text in line:
            return json.loads(arguments)["path"], line
        if name == "search_text" and line.count(":") >= 2:
            file, _, rest = line.split(":", 2)
            if text in rest.removeprefix(" "):
                return file, rest.removeprefix(" ")
            if text in file:  # the fact is the file's name: its first hit shows it
                return file, rest.removeprefix(" ")
    return None


def candidates(name: str, arguments: str, output: str, text: str):
    """The look-ups to try for one fact, in order of preference on a tie."""
    found = [(name, arguments)]  # the call that first showed it, again
    located = source_line(name, arguments, output, text)
    if located is not None:
        file, line = located
        found += [
            ("search_text", call_arguments(pattern=literal_pattern(text), path=file)),
            ("search_text", call_arguments(pattern=literal_pattern(text))),
            ("search_text", call_arguments(pattern=literal_pattern(line), path=file)),
        ]
    return found


def cheapest_lookup(session, fact, calls) -> dict:
    name, arguments = calls[fact.first_call]
    output = session.tools.call(name, arguments).content
    best = None
    for tool, args in candidates(name, arguments, output, fact.text):
        shown = session.tools.call(tool, args).content
        if fact.text not in evidence(tool, shown):
            continue
        cost = estimate_text_tokens(shown)
        if best is None or cost < best[0]:
            best = (cost, tool, args)
    if best is None:
        raise SystemExit(f"make_grounding: no look-up shows fact {fact.id}")
    return {"name": best[1], "arguments": best[2], "output_tokens": best[0]}


def grounding_document() -> dict:
    session = load_session(DATA / "session.json")
    facts = load_facts(DATA / "facts.json")
    calls = first_calls(session)
    document = {
        "session": "session.json",
        "facts": "facts.json",
        "about": "the planted facts each scripted reply rests on (uses_facts: fact id "
        "and the words of the reply it backs) and, per fact, the cheapest workspace "
        "call that shows it again; read by the scripted model's grounded mode",
        "unknown_marker": UNKNOWN_MARK,
        "replies": [
            {
                "reply": index,
                "uses_facts": [
                    {"fact": fact, "cite": cite} for fact, cite in USES.get(index, ())
                ],
            }
            for index in range(len(session.replies))
        ],
        "lookups": {fact.id: cheapest_lookup(session, fact, calls) for fact in facts},
    }
    return document, session, facts


def main() -> None:
    document, session, facts = grounding_document()
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    OUT.write_text(text, encoding="utf-8")
    load_grounding(session, facts, OUT)  # the library's checks, on what was written
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
