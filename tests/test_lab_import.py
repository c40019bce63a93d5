"""Importing the lab and drawing its first widget figure skips jsonschema's IRI
grammar (seconds to build as it is imported), and hides nothing afterwards."""

import importlib.util
import subprocess
import sys

import pytest

CHECK = """
import sys
from minilib.lab.dashboard import LongSessionDashboard
LongSessionDashboard(present=True)
import jsonschema._format as formats
print("rfc3987_syntax" in sys.modules, "iri" in formats.draft7_format_checker.checkers)
import rfc3987_syntax
print(rfc3987_syntax.__name__)
"""


@pytest.mark.skipif(
    importlib.util.find_spec("rfc3987_syntax") is None,
    # pyproject.toml pins jsonschema below 4.25, which does not bring it; an
    # environment with a later jsonschema (the lab installed beside other packages) does
    reason="rfc3987_syntax is not installed: nothing to skip",
)
def test_the_lab_imports_jsonschema_without_the_iri_grammar():
    done = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "rfc3987_syntax"]
