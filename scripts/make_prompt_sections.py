"""Write data/prompt_sections.json: the system prompt a harness would assemble for the
session.

Input-side budgeting (path 6) needs a prompt built from sections, some required and
some optional. The sections' order and the optional texts are data; the required
parts come from elsewhere at run time (the session's own system prompt, and the
tool declarations `minilib.tools` and the store publish), named here by `source`.
Deterministic: running it again gives a byte-identical file; a test checks it.
"""

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "prompt_sections.json"

OUTPUT_FORMAT = (
    "## 输出格式\n结论先行：第一句给出能否发布；随后逐条列出阻塞项，每条注明来源文件路径、"
    "行号和原文里的数字；最后列出仍需人工确认的事项。不要写没有经工具查证的推测。"
)
EXAMPLE = (
    "## 示例\n用户：v0.2 能发布吗？\n助手：先读 logs/build.log。\n（工具回报：nightly #301 "
    "FAILED: test_tools.py::case_004）\n助手：不能发布。1. nightly #301 失败（logs/build.log "
    "第 88 行），失败用例 test_tools.py::case_004；2. CHANGELOG.md 未列出已知问题。"
    "需人工确认：失败是否与本次改动有关。"
)

SECTIONS = [
    {"source": "session_system", "required": True},
    {"source": "workspace_tools", "required": True},
    {"name": "output_format", "text": OUTPUT_FORMAT, "priority": 2},
    {"source": "recall_tool", "required": False, "priority": 1},
    {"name": "example", "text": EXAMPLE, "priority": 0},
]


def main() -> None:
    text = json.dumps({"sections": SECTIONS}, ensure_ascii=False, indent=2) + "\n"
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
