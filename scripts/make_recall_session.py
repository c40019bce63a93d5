"""Write data/session_recall.json: the bundled session, plus one `recall` before the
answer.

The same 13 tool calls as data/session.json; then, having found that the #58 fix
is not in the code, the agent recalls from the external store the line of the
notes about #58 (cut out of the window since round 1) and quotes it in its answer.
It needs a harness with an external store (minilib.policies.store): without one, `recall`
is an unknown tool. Deterministic; a test checks the committed file.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import make_session  # noqa: E402

OUT = ROOT / "data" / "session_recall.json"

RECALL_STEP = {
    "role": "assistant",
    "content": "#58 的修复没进代码。笔记里有 #58 的状态记录，但已移出窗口：从外部存储召回 call_01 中提到 #58 的行。",
    "tool_calls": [
        {
            "id": "call_14",
            "type": "function",
            "function": {
                "name": "recall",
                "arguments": json.dumps(
                    {"id": "call_01", "grep": "#58"}, ensure_ascii=False
                ),
            },
        }
    ],
}
FINAL_ANSWER = {
    "role": "assistant",
    "content": (
        "结论：v0.3 明天不能发布。1. nightly #412 因 E2BIG 失败，笔记记录 E2BIG fix (#58) still in review，"
        "修复未合入；2. tool_timeout_s=30 低于要求的 60，test_parallel_calls 不稳定。"
    ),
}


def recall_session_document() -> dict:
    document = make_session.session_document()
    document["name"] = "mini-agent v0.3 release check (13 tool calls + 1 recall)"
    document["replies"] = document["replies"][:-1] + [RECALL_STEP, FINAL_ANSWER]
    return document


def main() -> None:
    OUT.write_text(
        json.dumps(recall_session_document(), ensure_ascii=False, indent=2) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
