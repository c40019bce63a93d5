"""Write docs/grounded.md, the command the page names:
`python scripts/write_grounded.py --write docs/grounded.md`.

The same as `python -m minilib.reports grounded`; the page is built by
minilib.reports.grounded_page.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from minilib.reports.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["grounded", *sys.argv[1:]]))
