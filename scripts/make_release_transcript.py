"""Write data/transcripts/m3_release_check.json: the bundled session, uncompressed, as a
plain JSON list of messages.

It is derived from data/session.json (every tool call run on data/workspace/), so it is
regenerated whenever the session is: replaying it gives exactly the table of
`python -m minilib run`. The other transcripts in data/transcripts/ are written by hand
and are their own source. Deterministic; a test checks the committed file.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib.session import load_session, run_baseline  # noqa: E402

OUT = ROOT / "data" / "transcripts" / "m3_release_check.json"


def main() -> None:
    messages = list(run_baseline(load_session()).final_messages)
    OUT.write_text(
        json.dumps(messages, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
