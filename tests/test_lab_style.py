"""The lab's look lives in `minilib.lab.style`, and its builders stay small.

The figures are built panel by panel from data: the session figure and the lab's figure
share the helpers that add a panel and set up its axes, so their common panels agree.
"""

import ast
from pathlib import Path

from minilib import Settings, run_baseline, run_session
from minilib.lab import style
from minilib.lab.figures import lab_figure, session_figure

LAB = Path(style.__file__).parent
LONGEST_FUNCTION = 60  # lines, def to last line: about a screen
# Module-level constants that are content, not look: the knobs' ranges, table columns,
# the state machine's words and transitions, the trace events a table lists.
CONTENT_CONSTANTS = {
    "SLIDERS",
    "FINE_SCALE",
    "PATH_COLUMNS",
    "NOT_REACHED",
    "OBSERVATION",
    "CUT_COLUMNS",
    "LOG_SETTINGS",
    "GRID_POINTS",
    "EXPLORER_COLUMNS",
    "STATE_SUBTITLES",
    "EDGES",
    "COMPRESSION_EVENTS",
    "LOG_WINDOW",
    "GENERATED_LOGS",
    "BUNDLED_TRANSCRIPTS",
    "POLICY_WINDOWS",
    "TOKEN_PARAMETERS",
    "STORED_ROWS",
    "EXERCISES",
    "BILL_LOG",
    "BILL_THRESHOLDS",
    "POOR_FIT",
    "NO_FIGURE",
    "FEW_ROUNDS",
    "OVERHEAD_PAST_FIRST",
    # what the chapters' exercises are about: their grids, logs and facts
    "GRID",
    "FACT",
    "BUDGETS",
    "UNBOUNDED_THRESHOLDS",
    "TEN_TURNS",
    "ONE_TASK",
}


def _modules():
    for path in sorted(LAB.rglob("*.py")):  # the exercises' package too
        name = str(path.relative_to(LAB))
        yield name, ast.parse(path.read_text(encoding="utf-8"))


def _assigned(node) -> list:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = []
    for target in targets:
        elements = target.elts if isinstance(target, ast.Tuple) else [target]
        names += [element.id for element in elements if isinstance(element, ast.Name)]
    return names


def test_no_function_of_the_lab_is_longer_than_a_screen():
    long = {
        f"{name}:{node.name}": node.end_lineno - node.lineno + 1
        for name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > LONGEST_FUNCTION
    }
    assert long == {}


def test_colours_sizes_css_and_trace_names_live_in_the_style_module():
    elsewhere = {
        f"{name}:{constant}"
        for name, tree in _modules()
        if name != "style.py"
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for constant in _assigned(node)
        if constant not in CONTENT_CONSTANTS
    }
    assert elsewhere == set(), "move these to minilib/lab/style.py"


def _trace(figure, name):
    return next(trace for trace in figure.data if trace.name == name)


def test_both_figures_draw_the_article_panels_alike(session):
    run, baseline = run_session(session, Settings(threshold=900)), run_baseline(session)
    article = session_figure(run, baseline, widget=False)
    lab = lab_figure(run, baseline, widget=False)
    for name in style.TRACE_NAMES:
        drawn, again = _trace(article, name), _trace(lab, name)
        assert (drawn.x, drawn.y, drawn.legendgroup, drawn.line.color) == (
            again.x,
            again.y,
            again.legendgroup,
            again.line.color,
        ), name
        assert drawn.marker.color == again.marker.color, name
    for axis in ("xaxis", "xaxis2", "yaxis", "yaxis2"):
        assert article.layout[axis].range == lab.layout[axis].range, axis
    assert _trace(lab, "compressed").line.color == style.COMPRESSED_COLOR
    assert _trace(lab, "window (zoom)").legendgroup == "compressed"
    assert lab.layout.width == style.LAB_WIDTH
    assert article.layout.width == style.SESSION_FIGURE_WIDTH
