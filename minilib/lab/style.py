"""How the lab looks: colours, sizes, CSS and trace names, in one place.

Every figure, table and widget of `minilib.lab` takes them from here, so a colour means
the same thing in every chapter and a size is changed once. Sizes are pixels unless the
name says otherwise. Most widths follow from one screen: a 1280 x 720 projector with
JupyterLab's file browser open leaves a notebook's output area 848 px wide.
"""

# ---- colours ---------------------------------------------------------------------------

# plotly's default palette: the same hue for the same thing in every chapter.
BLUE = "#1f77b4"
ORANGE = "#ff7f0e"
GREEN = "#2ca02c"
RED = "#d62728"
PURPLE = "#9467bd"
BROWN = "#8c564b"
GREY = "#7f7f7f"
PINK = "#e377c2"

BASELINE_COLOR = "#8c8c8c"  # the session without compression: the backdrop, not the news
COMPRESSED_COLOR = BLUE
THRESHOLD_COLOR = RED
AGING_COLOR = ORANGE
SUMMARY_COLOR = PURPLE
OVERFLOW_COLOR = RED
RECORDED_COLOR = "#222"  # what a log recorded (API usage): what the lab is judged against
OTHER_PATHS_COLOR = "#d0d0d0"  # chapter 8: the paths a panel is not about, faint
SYMBOL_KEY_COLOR = "#444"  # a legend entry that explains a symbol, not a path
GRID_COLOR, TEXT_COLOR = "#EBF0F8", "#2a3f5f"  # plotly_white's grid and text colours

STATE_COLORS = {  # chapter 5's state machine
    "measure": BLUE,
    "tool_result_aging": AGING_COLOR,
    "rolling_summary": SUMMARY_COLOR,
    "send": GREEN,
    "overflow": OVERFLOW_COLOR,
}
ROLE_COLORS = {"system": GREY, "user": GREEN, "assistant": BLUE, "tool": RED}
# the aging sliders: one colour a handle, so the three are told apart at a glance
HANDLE_COLORS = {"head_chars": BLUE, "tail_chars": GREEN, "min_chars": RED}
PATH_COLORS = {  # chapter 8: one colour per path, the same in every figure
    # a hue, not grey: a panel draws its path in colour over the others in grey
    "truncation": PINK,
    "aging": ORANGE,
    "rolling_summary": BLUE,
    "hierarchical": PURPLE,
    "store": GREEN,
    "budgeting": BROWN,
}

# Boxes of text: a run that stopped (or a file that cannot be read), one that went
# through, and a plain report.
# chapter 7.11: the calls a fit saw and those held out from it, shaded apart
FITTED_SHADE = "rgba(31, 119, 180, 0.08)"
HELD_OUT_SHADE = "rgba(44, 160, 44, 0.10)"
SCROLLING_TABLE_HEIGHT_PX = 320  # a long table scrolls inside this, not a text dump
# Beside chapter 9's budget while the article's unbounded summary is ticked
UNBOUNDED_NOTE = "the article's summary has no budget: untick it to set one"
PROBLEM_CSS = "color:#a61b1b;background:#fdecea;"
NOTE_COLOR = "#555"  # a quiet note beside a control, still readable (contrast 7.5)
FINE_CSS = "color:#1e4620;background:#edf7ed;"
REPORT_CSS = "background:#f6f8fa;"
ANSWER_TEXT_COLOR = "#333"

# The state diagram's ink: the transition just taken and the text, the other
# transitions, their arrowheads, their labels, and the note at the entry.
DIAGRAM_INK = "#222"
DIAGRAM_EDGE_COLOR = "#999"
DIAGRAM_ARROW_COLOR = "#777"
DIAGRAM_LABEL_COLOR = "#444"
DIAGRAM_NOTE_COLOR = "#555"

CODE_HIGHLIGHT_STYLE = "friendly"  # pygments' style for the library's source

# ---- trace and panel names -------------------------------------------------------------

# The session figure's traces in figure order; updates and tests find traces by name.
TOKEN_TRACES = ("baseline", "compressed", "threshold", "aging", "summary", "overflow")
MESSAGE_TRACES = ("baseline messages", "compressed messages")
TRACE_NAMES = TOKEN_TRACES + MESSAGE_TRACES
# The zoom under them in the lab's figure; each named after the token trace it repeats.
ZOOM_TRACES = (
    "window (zoom)",
    "threshold (zoom)",
    "aging (zoom)",
    "summary (zoom)",
    "overflow (zoom)",
    "off the scale (zoom)",
)
LAB_TRACE_NAMES = TRACE_NAMES + ZOOM_TRACES
# Plain lines in the lab's figure: every marker is styled again on each redraw, and these
# ones mark nothing a round did (the baseline does not depend on the settings; the message
# counts are read from the lines and the table). The compressed tokens keep a marker per
# round.
LAB_LINES_ONLY = ("baseline", "baseline messages", "compressed messages")
# The two points of a round in the zoom, as its hover text names them.
BEFORE, SENT = "before compression", "sent"

TOKENS_PANEL_TITLE = "Tokens sent to the model, per round"
MESSAGES_PANEL_TITLE = "Messages per round"
ZOOM_PANEL_TITLE = (
    "Zoom on the threshold: each drop is one round's compression (measured → sent)"
)

# Chapter 8: the paths' short names, for the legend and the explorer's table (the
# figures' panels use the registry's titles).
PATH_SHORT_NAMES = {
    "truncation": "1 truncation",
    "aging": "2 aging",
    "rolling_summary": "3 rolling summary",
    "hierarchical": "4 hierarchical",
    "store": "5 store + recall",
    "budgeting": "6 budgeting",
}

# ---- figure sizes and scales -----------------------------------------------------------

SESSION_FIGURE_WIDTH, SESSION_FIGURE_HEIGHT = 840, 500  # beside the file browser
# 840 px: a FigureWidget in JupyterLab does not follow its box, and the notebook is
# 848 px beside the file browser (width=None, on the projector page, follows the page).
LAB_WIDTH, LAB_HEIGHT = 840, 720
# The dashboard's figure in a notebook: under two rows of sliders and the status box,
# the whole of it on one 1280 x 720 screen of JupyterLab (599 px of notebook between
# the toolbar and the status bar). The projector page has no JupyterLab around it: its
# title line above, and the figure follows the page's width.
DASHBOARD_HEIGHT = 420
# The lab's figure: margins for the axis titles, and under the round axis its title and
# the legend (fixed: no margin is recomputed per redraw); between the top panels and the
# zoom, their round labels and the zoom's title.
LAB_MARGIN = dict(l=80, r=30, t=40, b=80)
ZOOM_GAP = 62
ZOOM_TITLE_LIFT = 8  # px above the zoom's top edge
ORIGIN_LABEL_GAP = 6  # px between an axis and its tick labels, where two meet at 0
PRESENT_HEIGHT = 460
# chapter 1's bars: the zoom's axis ends above the short messages (77 tokens at most)
MESSAGE_FIGURE_HEIGHT, MESSAGE_ZOOM_TOKENS = 560, 120
# An explorer's controls and the chart they drive fit one screen at 1280x720 beside
# the file browser (~590 px of notebook): the six paths' three rows of sliders, its
# reset button and chart; chapter 9's slider, status and chart.
SIX_PATHS_FIGURE_WIDTH, SIX_PATHS_FIGURE_HEIGHT = 820, 440
SCALE_FIGURE_WIDTH, SCALE_FIGURE_HEIGHT = 840, 560
SCALE_EXPLORER_HEIGHT = 460
POLICY_FIGURE_WIDTH, POLICY_FIGURE_HEIGHT = 840, 460  # chapter 10: one marker a policy
PANEL_TITLE_SIZE = 13  # chapter 10's three panel titles, apart at 780 px
BAR_LABEL_OUTSIDE = dict(textposition="outside", cliponaxis=False)  # after its bar
# Chapter 10: a run that broke windows, its saved bar hatched (and its legend entry)
BROKEN_PATTERN = dict(shape="/", fgcolor=RED, solidity=0.3)
BROKEN_TRACE = "hatched: broken windows"
FONT_SIZE, TITLE_SIZE, LEGEND_SIZE = 14, 16, 15  # readable from the back of a classroom
SESSION_TITLE_SIZE = 15
DEFAULT_TICK_SIZE = 12  # plotly's, where a figure sets none
# the narrowest panel a round axis serves (the messages panel, 38% of 840 px less the
# margins) and the lab's zoom (the figure's whole width): what its labels must fit
ROUND_PANEL_WIDTH, ZOOM_PANEL_WIDTH = 260, 700
# A line's marker per round (6 px) and a gap: closer than this, the markers merge.
ROUND_MARKER_SPACING = 6 + 2
# chapter 9's status: three lines of 1.45 em, and room for a fourth (a narrow window)
STATUS_LINE_HEIGHT, STATUS_BOX_HEIGHT = "1.45", "4.5em"  # three lines

HEADROOM = 1.06  # room above the highest point, so markers are not clipped
LOG_AXIS_FLOOR = 50  # tokens; below the smallest window (the protected head alone is 135)
# readable log labels (a log axis labels every minor tick by default), up to a long real
# log's uncompressed windows; an axis shows those within its range
LOG_TICKS = [10**power * step for power in range(1, 7) for step in (1, 2, 5)]
# A long log's uncompressed windows dwarf what was sent: past this ratio chapter 7's token
# panel is drawn on a log scale, or the compressed line lies flat on the axis.
LOG_SCALE_RATIO = 20
ZOOM_FACTOR = 1.5  # the zoom ends at 150% of the threshold: room to see a window go over
OFF_SCALE_AT = 0.95  # a value above the zoom's top is drawn at this fraction of it
# How far, in rounds, the aging and summary markers of one round are drawn apart: in a
# round where both fired the star would hide the triangle (a student counts one aging
# too few).
MARKER_OFFSET = 0.2
# Every axis of the lab's figure: what plotly_white set, and tick labels that are not
# measured again on each redraw (`ticklabeloverflow="allow"`: these never overflow).
LAB_AXIS_STYLE = dict(
    ticks="", linecolor=GRID_COLOR, zeroline=False, ticklabeloverflow="allow"
)

OVERFLOW_SYMBOL = "x"  # a run that overflowed: its last window, drawn as a cross
# chapter 8's trade-off chart: the row under 0 facts where a run that overflowed sits
NO_ANSWER_Y, NO_ANSWER_FILL = -2, "rgba(214, 39, 40, 0.08)"
# Chapter 8's panels (tokens): an overflow's tokens can be far above the axis, so its
# cross is drawn at most this high (clear of the panel's title above and of the threshold
# line below), and its label low, below every path's line from round 9 on (lowest: 434).
OVERFLOW_DRAWN_AT = 1330
OVERFLOW_LABEL_AT = 150

# ---- widget sizes ----------------------------------------------------------------------

# The dashboard's status box has a fixed size, so crossing into an overflow moves
# nothing: five lines of 13 px, each at most ~64 characters (460 px), beside the
# dashboard's buttons in the 848-px notebook.
STATUS_HEIGHT = "100px"
STATUS_LINES = 5  # what STATUS_HEIGHT holds
STATUS_MIN_WIDTH = "460px"
SLIDER_LABEL_WIDTH = "90px"
# The dashboard's sliders: three a row, two rows, each a third of the width (280 px
# beside the file browser, wider on the projector page).
SLIDER_COLUMNS = 3
# a printed line wraps before this many characters: the notebook's output area at 1280 px
PRINTED_COLUMNS = 100
# In a notebook the figure has a fixed width (LAB_WIDTH): the controls above it no wider,
# on a wide screen too (on the projector page both follow the page).
CONTROLS_MAX_WIDTH = "848px"
WIDE_SLIDER_WIDTH = "520px"  # one slider a row (chapters 9 and 10), its label included
# chapter 10: a slider a line, its label whole ("claude-code-cache-editing: keep_recent"),
# its policy's row in one line beside it, in 848 px
POLICY_SLIDER_WIDTH, POLICY_LABEL_WIDTH = "470px", "270px"
# Chapter 8's explorer: two sliders a row (label, track, the box beside it), so its six
# sliders and the chart fit one 1280 x 720 screen in JupyterLab.
PATH_SLIDER_WIDTH, PATH_LABEL_WIDTH, PATH_BOX_WIDTH = "330px", "195px", "72px"
AGING_SLIDER_WIDTH = "640px"  # chapter 3: a long track for a fine scale of characters
# Chapter 3's panes: wide enough for an 81-column log line at 12 px monospace; narrower,
# they stack instead of wrapping the rows (a chapter about where text is cut must not cut
# it).
PANE_MIN_WIDTH = "610px"
# The stepper's fixed heights: the explanation holds 3 lines (every step of the bundled
# session says its piece in 2 or 3), the table about 11 rows; more scrolls inside them,
# so the widget's height is the same on every step and round.
EXPLANATION_HEIGHT = 72
TABLE_HEIGHT = 330

# Text cut to fit, in characters: a table's content preview in display columns (a CJK
# character takes two), the stepper's narrower one, and a cut cell's hover text.
PREVIEW_CHARS = 40
PREVIEW_COLUMNS = 34
# Notebook 07's cut list: the longest tool name and error code shown (the whole text is
# the cell's hover text), so the table fits the 848-px notebook.
LOG_TOOL_COLUMNS, LOG_ERROR_COLUMNS = 18, 12
TITLE_CHARS = 600
# The columns of a table of compactions (`CompactionReport.as_dict()` keys), named.
COMPACTION_COLUMNS = {
    "round": "round",
    "trigger": "trigger",
    "tokens_before": "tokens before",
    "last_call_tokens": "last call's prompt",
    "summary_tokens": "summary tokens",
    "facts_after": "facts after",
    "held": "held",
    "reread": "re-read",
    "reread_tokens": "re-read tokens",
    "neither": "neither",
    "restorable": "restorable",
    "standin_held": "stand-in held",
    "standin_restorable": "stand-in restorable",
}
# Preformatted report text wrapped at its spaces, never inside a word or a path
# (JupyterLab's own CSS breaks a <pre> line anywhere).
WRAPPED_TEXT_CSS = "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word;"
# An item of a listed cell (fact ids) kept on one line: ids break at their hyphens.
UNBROKEN_ITEM = '<span style="white-space:nowrap">{}</span>'

# ---- the state diagram (an SVG) -------------------------------------------------------

# Drawn at its view box's size, labels 11.5-14 px: larger, it pushed the message table
# below the fold of a 1280 x 720 screen. In a narrower output area it shrinks to fit.
DIAGRAM_VIEW_BOX = (720, 300)
DIAGRAM_MAX_WIDTH = "720px"
NODE_CENTERS = {  # (x, y) in the view box
    "measure": (360, 150),
    "tool_result_aging": (150, 52),
    "rolling_summary": (570, 52),
    "send": (150, 250),
    "overflow": (570, 250),
}
NODE_HALF = (92, 27)  # half width, half height of every node

# ---- CSS -------------------------------------------------------------------------------

# 14 px and narrow padding: the per-round table (9 columns) fits the 848-px notebook.
TABLE_CSS = """<style>
.ccl-table { border-collapse: collapse; font-size: 14px;
  font-variant-numeric: tabular-nums; }
.ccl-table th, .ccl-table td { padding: 3px 7px; border-bottom: 1px solid #ddd;
  text-align: right; white-space: nowrap; }
.ccl-table thead th { border-bottom: 2px solid #888; }
.ccl-table th:nth-last-child(-n+2) { text-align: left; }
.ccl-table td:nth-last-child(-n+2) { text-align: left; }
.ccl-table tr.ccl-changed td, .ccl-table tr.ccl-changed th { background: #fff3cd; }
.ccl-table.ccl-shown { font-size: 13px; }
.ccl-table.ccl-shown th, .ccl-table.ccl-shown td { white-space: normal;
  padding: 3px 5px; }
.ccl-table.ccl-shown thead th { vertical-align: bottom; }
</style>"""

# A table of sentences (chapter 10's catalogue): each row read from its top, its name
# on one line (a policy's hyphens are not places to break), code set as code.
PROSE_TABLE_CSS = """<style>
.ccl-table.ccl-prose td, .ccl-table.ccl-prose tbody th { vertical-align: top; }
.ccl-table.ccl-prose tbody th { white-space: nowrap; }
.ccl-table.ccl-prose code { font-size: 12px; padding: 0 2px; background: #f2f2f2; }
</style>"""

# A long table in a frame that scrolls (chapter 07's calibration): its header row stays
# in view while the rows scroll under it, and a row is one line but for its last cell.
SCROLLING_TABLE_CSS = """<style>
.ccl-scrolling thead th { position: sticky; top: 0; z-index: 1;
  background: var(--jp-layout-color0, white); box-shadow: inset 0 -2px 0 #888; }
.ccl-scrolling tbody td:not(:last-child) { white-space: nowrap; }
</style>"""

# Chapter 10's lab: a readout beside its slider is one line, cut with "…" where the
# column is narrower (a 1280-px screen with the file browser open): its HTML widget's
# content box may shrink below the line's width, so the line's own ellipsis applies.
# Its table's rows as tight as text, not the widgets' 28-px lines: its seventeen rows
# then leave the chart below them a screen nearer.
# On a wide screen (a 1920 projector, the file browser open) the chart stands beside
# the sliders, so moving one shows the chart move; at 1280 it is under the table.
POLICY_LAB_CSS = """<style>
.ccl-policy-lab .widget-html[class*="ccl-policy-readout-"] > .widget-html-content {
  min-width: 0; }
.ccl-policy-lab .ccl-table { line-height: 1.35; }
@media (min-width: 1800px) {
  .ccl-policy-lab { display: grid !important; align-items: start;
    grid-template-columns: minmax(0, 1fr) 780px; column-gap: 16px; }
  .ccl-policy-lab .ccl-policy-sliders .widget-slider { width: 360px !important; }
  .ccl-policy-lab > * { grid-column: 1 / -1; }
  .ccl-policy-lab > .ccl-policy-sliders { grid-column: 1; grid-row: 3; }
  .ccl-policy-lab > .ccl-policy-chart { grid-column: 2; grid-row: 3; }
}
</style>"""

# Only inside the stepper: rows as tight as text (not the widgets' 28 px line height), and
# a header row that stays in view while the table scrolls.
STEPPER_CSS = """<style>
.ccl-state-stepper .ccl-table { line-height: 1.35; }
.ccl-state-stepper .ccl-table thead th { position: sticky; top: 0; z-index: 1;
  background: var(--jp-layout-color0, white); box-shadow: inset 0 -2px 0 #888; }
</style>"""

# Chapter 8's tables: numbers right-aligned, and text that may wrap at its spaces, so a
# wide table narrows before it scrolls. The explorer's cells do not wrap (`ccl-nowrap`):
# its rows keep their height as the sliders move. Chapter 10's comparison keeps its
# names, its rounds and its summaries on one line (KEEP_FIRST_CSS, `ccl-keep-first`:
# `claude-code-cache-editing`, `753 / 753`, `72 (stand-in)`), and only its headers and
# other cells wrap; a point smaller and narrower padding keep it within the 848-px
# notebook.
SIX_PATHS_CSS = """<style>
.ccl-table.ccl-six { font-size: 14px; }
.ccl-table.ccl-six th:nth-child(n), .ccl-table.ccl-six td:nth-child(n) {
  padding: 3px 6px; text-align: right; white-space: normal; vertical-align: bottom; }
.ccl-table.ccl-six tbody th:nth-child(n), .ccl-table.ccl-six thead th:first-child {
  text-align: left; }
.ccl-table.ccl-six.ccl-nowrap tbody th:nth-child(n),
.ccl-table.ccl-six.ccl-nowrap td:nth-child(n) { white-space: nowrap; }
</style>"""
SIX_PATHS_TABLE = "ccl-table ccl-six"
KEEP_FIRST_CSS = """<style>
.ccl-table.ccl-six.ccl-keep-first { font-size: 13px; }
.ccl-table.ccl-six.ccl-keep-first th:nth-child(n),
.ccl-table.ccl-six.ccl-keep-first td:nth-child(n) { padding: 3px 4px; }
.ccl-table.ccl-six.ccl-keep-first tbody th:nth-child(n),
.ccl-table.ccl-six.ccl-keep-first td:nth-child(2),
.ccl-table.ccl-six.ccl-keep-first td:last-child { white-space: nowrap; }
</style>"""

# Notebook 07's log report (with TABLE_CSS): headers wrap at their spaces, so its two
# tables fit the 848-px notebook; the cells stay on one line. Numbers right, text left:
# the cut list's tool, error, fate and recoverable; the paths' names and outcomes.
LOG_TABLE_CSS = """<style>
.ccl-table.ccl-log thead th { white-space: normal; vertical-align: bottom; }
.ccl-table.ccl-log th, .ccl-table.ccl-log td { text-align: right; }
.ccl-table.ccl-log :is(th, td):first-child,
.ccl-table.ccl-log-cut :is(th, td):is(:nth-child(2), :nth-child(3), :nth-child(6),
  :nth-child(7)),
.ccl-table.ccl-log-paths :is(th, td):nth-child(2) { text-align: left; }
</style>"""
LOG_CUT_TABLE = "ccl-table ccl-log ccl-log-cut"
LOG_PATHS_TABLE = "ccl-table ccl-log ccl-log-paths"

# the line beside a number box: what was typed could not be read (red), or was moved to
# fit the slider's range or grid (amber)
NOTE_PROBLEM = "color:#b00020"
NOTE_MOVED = "color:#7a5c00"

# Chapter 11 and the corpus sweep: the bill's bars, the threshold chosen on a slider
SWEEP_CHOSEN_COLOR, SWEEP_OTHER_COLOR = BLUE, "#9ecae9"
COMPACTION_CALLS_COLOR = "#0b3c66"  # the compaction calls' part of a bill, darker
SWEEP_FIGURE_HEIGHT = 460
