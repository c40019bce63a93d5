"""Write docs/six_paths.md, the command the page names:
`python scripts/write_six_paths.py --write docs/six_paths.md [--no-tokenizers]`.

The same as `python -m minilib.reports six-paths`; the page is built by
minilib.reports.six_paths_page.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from minilib.reports.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["six-paths", *sys.argv[1:]]))
