"""Write data/grounding.json: which planted facts each scripted reply rests on, and where
the session showed each fact.

The grounded mode of the scripted model (minilib.measure.grounded_model,
minilib.measure.grounding) reads it. For each of the 14 replies of data/session.json,
`uses_facts` lists the facts (data/facts.json ids) the reply's words rest on, with
`cite`, the words of the reply each one backs (replaced by 〔未知:<fact id>〕 when the
model cannot see the fact). Every reply that names a fact declares it: its text, a
form below, or a `#number` of its text (`#58`, `#412`). `forms` lists other verbatim
texts that state a fact (the configuration writes the timeout with spaces).
`places` lists, for each fact, every scripted call whose output shows it (its text or a
form, not just in a search's header, which repeats the pattern) and the file it stands
in: the model may look a fact up only through a place whose id, path or command its
window still names. No look-up is written here: the model builds each one from its
window when it runs.
Deterministic; a test checks the committed file.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.measure.facts import load_facts
from minilib.measure.grounded_model import UNKNOWN_MARK
from minilib.measure.grounding import evidence, load_grounding
from minilib.session import load_session

DATA = ROOT / "data"
OUT = DATA / "grounding.json"

# reply index -> (fact id, the words of the reply that rest on it). Only what a reply
# states from a tool result counts; a plan ("读 X") or a question rests on nothing,
# unless it names a fact.
USES = {
    # "笔记说 10-28 夜间构建失败": the notes' row "nightly 10-28 FAILED: E2BIG ..."
    2: [("code-e2big", "10-28 夜间构建失败")],
    3: [("code-e2big", "E2BIG")],  # "日志报 E2BIG"
    4: [("path-checklist", "docs/release_checklist.md")],  # "笔记要求 ... 对照"
    5: [("code-not-found", "清单文件不存在")],
    # "RELEASE.md 要求超时至少 60 秒，读 config/agent.toml"
    7: [("num-at-least-60", "至少 60 秒"), ("path-config", "config/agent.toml")],
    # "配置里 tool_timeout_s = 30": the configured value, read from config/agent.toml
    8: [("num-timeout-30", "tool_timeout_s = 30")],
    # "测试报告里有超时失败，读 tests/report.txt"
    9: [("code-timeout-error", "超时失败"), ("path-report", "tests/report.txt")],
    10: [("num-1-of-3", "三次挂一次")],
    # "#58 的修复进代码了吗？": #58 is the E2BIG fix still in review
    12: [("status-58-in-review", "#58")],
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

# fact id -> other verbatim texts that state it
FORMS = {
    "num-timeout-30": ["tool_timeout_s = 30"],  # config/agent.toml, as the file has it
}


def scripted_calls(session) -> list:
    """(tool_call_id, name, arguments JSON) of every scripted call, in call order."""
    return [
        (call["id"], call["function"]["name"], call["function"]["arguments"])
        for reply in session.replies
        for call in reply.get("tool_calls") or ()
    ]


def files_showing(name: str, arguments: str, output: str, forms) -> list:
    """The files of the workspace where a call's output shows one of `forms`: the file
    read, the files of the search hits that show it, or the folder listed."""
    shown = evidence(name, output)
    if not any(form in shown for form in forms):
        return []
    if name == "search_text":
        files = []
        for line in shown.splitlines():
            file, _, rest = line.partition(":")
            if any(form in rest or form in file for form in forms):
                files.append(file)
        return list(dict.fromkeys(files))
    return [json.loads(arguments).get("path", ".")]


def places(session, fact) -> list:
    forms = [fact.text, *FORMS.get(fact.id, ())]
    found = []
    for call, name, arguments in scripted_calls(session):
        output = session.tools.call(name, arguments).content
        for file in files_showing(name, arguments, output, forms):
            found.append(
                {"call": call, "name": name, "arguments": arguments, "file": file}
            )
    if not found or found[0]["call"] != fact.first_call:
        raise SystemExit(f"make_grounding: fact {fact.id} is not first shown where said")
    return found


def grounding_document() -> dict:
    session = load_session(DATA / "session.json")
    facts = load_facts(DATA / "facts.json")
    document = {
        "session": "session.json",
        "facts": "facts.json",
        "about": "the planted facts each scripted reply rests on (uses_facts: fact id "
        "and the words of the reply it backs), other verbatim forms of a fact, and "
        "per fact every scripted call whose output shows it and the file it stands "
        "in (the pointers a window may keep); read by the scripted model's grounded "
        "mode, which builds each look-up from its window",
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
        "forms": FORMS,
        "places": {fact.id: places(session, fact) for fact in facts},
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
