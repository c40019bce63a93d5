"""The package's layout: the article's system is a reading list that imports only
itself and the standard library; everything else builds on it, never the reverse."""

import ast
import doctest
import importlib
import sys
from pathlib import Path

import pytest

import minilib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "minilib"
CORE = (
    "tokens",
    "messages",
    "markers",
    "ranges",
    "strategy",
    "aging",
    "summary",
    "window",
    "trace",
    "loop",
    "tools",
    "model",
    "session",
)
# the only places that may import pandas, plotly or ipywidgets (and the optional extras)
PRESENTATION = "lab"


def imported_modules(path: Path, top_level_only: bool = False):
    """(module, line) of every import in `path`, relative imports made absolute."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body if top_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and not node.level:
            yield node.module, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1])
            if node.module:
                yield f"{base}.{node.module}", node.lineno
            else:  # `from . import x` imports the module x
                for alias in node.names:
                    yield f"{base}.{alias.name}", node.lineno


def test_every_core_module_imports_only_core_modules_and_the_standard_library():
    allowed = {f"minilib.{name}" for name in CORE} | {"minilib.data"}  # data, no code
    for name in CORE:
        path = PACKAGE / f"{name}.py"
        for module, line in imported_modules(path):
            top = module.split(".")[0]
            if top == "minilib":
                assert module in allowed, f"{path.name}:{line} imports {module}"
            else:
                assert top in sys.stdlib_module_names, f"{path.name}:{line}: {module}"


@pytest.mark.parametrize("name", CORE)
def test_each_core_module_ends_its_docstring_with_a_worked_example_that_runs(name):
    module = importlib.import_module(f"minilib.{name}")
    assert ">>> " in module.__doc__.split("Example", 1)[-1], f"{name}.py has no example"
    # long lines of an example's output wrap at 90 columns
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 1 and result.failed == 0


def test_the_package_top_holds_the_core_and_nothing_else():
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert modules == set(CORE)


def test_the_package_exports_the_articles_system_only():
    for module, line in imported_modules(PACKAGE / "__init__.py"):
        assert module.split(".", 1)[1] in CORE, f"__init__.py:{line} imports {module}"
    for name in minilib.__all__:
        module = getattr(getattr(minilib, name), "__module__", "minilib.markers")
        assert module.split(".")[1] in CORE, f"minilib.{name} comes from {module}"


def test_only_the_presentation_layer_goes_beyond_the_standard_library():
    # an optional extra (a real tokenizer) is imported inside the function that uses it
    for path in PACKAGE.rglob("*.py"):
        if PRESENTATION in path.relative_to(PACKAGE).parts:
            continue
        for module, line in imported_modules(path, top_level_only=True):
            top = module.split(".")[0]
            assert top in sys.stdlib_module_names or top == "minilib", (
                f"{path.relative_to(ROOT)}:{line} imports {module}"
            )


def test_no_addition_is_imported_by_the_core_through_a_side_door():
    # importing the core alone loads no addition (an import inside a function would
    # otherwise pass the static check above)
    import subprocess

    code = (
        "import sys, minilib; "
        "print(sorted(m for m in sys.modules if m.startswith('minilib.')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    for name in eval(loaded):
        assert name.split(".")[1] in CORE + ("data",), f"import minilib loads {name}"


CLI = PACKAGE / "cli"
LONGEST_CLI_FUNCTION = 60  # lines, def to last line: about a screen


def test_the_command_line_is_one_module_a_command():
    from minilib.cli.main import COMMANDS, build_parser

    for name, module in COMMANDS.items():
        assert module.__file__ == str(CLI / f"{name}.py")
    subcommands = build_parser()._subparsers._group_actions[0].choices
    assert sorted(subcommands) == sorted(COMMANDS)


def test_no_function_of_the_command_line_is_longer_than_a_screen():
    long = {
        f"{path.name}:{node.name}": node.end_lineno - node.lineno + 1
        for path in sorted(CLI.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > LONGEST_CLI_FUNCTION
    }
    assert long == {}


def test_the_log_readers_and_the_long_log_machinery_import_one_way():
    # logs replays a log through the production window scale builds; scale (and the
    # generated histories it replays) never reaches back into the readers
    for path in sorted((PACKAGE / "scale").glob("*.py")):
        for module, line in imported_modules(path):
            assert not module.startswith("minilib.logs"), f"{path.name}:{line}: {module}"


LONGEST_REPLAY_FUNCTION = 60  # lines: the log replay reads as steps


def test_the_log_replay_reads_as_steps():
    path = PACKAGE / "logs" / "replay.py"
    long = {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > LONGEST_REPLAY_FUNCTION
    }
    assert long == {}
