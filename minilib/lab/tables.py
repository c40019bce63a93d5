"""Tables for the notebooks: rounds of a run, trace events, and the messages of one
window.

Each builder returns a pandas DataFrame of plain values (tests compare those);
`to_html` renders one for an ipywidgets.HTML with thousands separators and ✓ marks,
without pandas' random element ids, so the same table always gives the same HTML.
`TABLE_CSS` (from `style`) styles it and goes on a page once; `HtmlTable` shows a table
in a notebook cell the same way.
"""

import html
import json
import numbers
import re
import unicodedata
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import pandas as pd

from ..markers import is_aged, is_summary
from ..messages import protected_head_length
from ..reports.paths import Listed
from ..session import SessionRun
from ..tokens import estimate_message_tokens, tool_call_name
from ..trace import event_records
from .style import (
    PREVIEW_CHARS,
    PROSE_TABLE_CSS,
    SCROLLING_TABLE_CSS,
    SCROLLING_TABLE_HEIGHT_PX,
    TABLE_CSS,
    UNBROKEN_ITEM,
)

COMPRESSION_EVENTS = ("context_compression", "context_overflow")


def rounds_table(run: SessionRun) -> pd.DataFrame:
    """One row per governed round: baseline beside compressed, as in the CLI's table."""
    columns, rows = round_rows(run)
    return pd.DataFrame(rows, columns=columns).set_index(columns[0])


def round_rows(run: SessionRun) -> Tuple[List[str], List[list]]:
    """`rounds_table` as plain lists, its columns and a row a round (the first column is
    the index): what the dashboard renders on every slider change, with `rows_html`."""
    columns = [
        "round",
        "baseline tokens",
        "baseline msgs",
        "tokens before",
        "tokens sent",
        "msgs sent",
        "aging",
        "summary",
    ]
    rows = [
        [
            r.round,
            r.baseline_tokens,
            r.baseline_messages,
            r.tokens_before,
            r.tokens_after,
            r.messages_after,
            r.aged,
            r.summarized,
        ]
        for r in run.rounds
    ]
    return columns, rows


def describe_event(event: str, payload: Mapping) -> tuple:
    """(what, detail) of one trace record, in a line a student can read."""
    if event == "context_compression":
        indexes = payload["affected_indexes"]
        span = (
            f"#{indexes[0]}–#{indexes[-1]}"
            if len(indexes) > 2
            else ", ".join(f"#{i}" for i in indexes)
        )
        return payload["strategy"], (
            f"{payload['before_tokens']:,} → {payload['after_tokens']:,} tokens, "
            f"{payload['before_messages']} → {payload['after_messages']} messages, "
            f"changed {span}"
        )
    if event == "context_overflow":
        return (
            "ContextOverflowError",
            f"{payload['tokens']:,} tokens after compression, "
            f"threshold {payload['threshold']:,}",
        )
    if event == "model_call":
        reply = payload["reply"]
        if payload["purpose"] == "summary":
            return (
                "summary",
                f"{len(payload['input'])} messages in → {len(reply):,} characters of "
                "summary",
            )
        calls = [tool_call_name(call) for call in reply.get("tool_calls") or ()]
        return "decision", f"{len(payload['input'])} messages in → " + (
            ", ".join(calls) or "final answer"
        )
    if event == "tool_call":
        error = payload.get("error")
        outcome = (
            f"error {error['code']}"
            if error
            else f"{len(payload['output']):,} characters"
        )
        return payload["name"], f"{_arguments(payload['arguments'])} → {outcome}"
    return event, json.dumps(payload, ensure_ascii=False)[:80]


def _arguments(arguments: str) -> str:
    try:
        values = json.loads(arguments)
    except ValueError:
        return arguments
    return (
        ", ".join(f"{value}" for value in values.values())
        if isinstance(values, dict)
        else arguments
    )


def trace_events_table(
    run: SessionRun, events: Optional[Iterable[str]] = COMPRESSION_EVENTS
) -> pd.DataFrame:
    """The run's trace records of the given kinds (all kinds when `events` is None), one
    row each."""
    columns, rows = event_rows(run, events)
    return pd.DataFrame(rows, columns=columns).set_index(columns[0])


def event_rows(
    run: SessionRun, events: Optional[Iterable[str]] = COMPRESSION_EVENTS
) -> Tuple[List[str], List[list]]:
    """`trace_events_table` as plain lists, as `round_rows` gives the rounds."""
    wanted = None if events is None else set(events)
    rows = []
    for record in event_records(run.tracer.records):
        if wanted is not None and record["event"] not in wanted:
            continue
        what, detail = describe_event(record["event"], record["payload"])
        payload = record["payload"]
        rows.append([record["seq"], payload.get("step"), record["event"], what, detail])
    return ["seq", "round", "event", "what", "detail"], rows


def message_groups(messages: Sequence[Mapping]) -> list:
    """A group label per message: "head", "summary", or the id of the tool call it belongs
    to.

    An assistant message and the tool messages answering its calls share a label, so
    the rows a rolling summary must fold together (a closed group) read as one.
    """
    head = protected_head_length(messages)
    labels, owner = [], {}
    for index, message in enumerate(messages):
        ids = [call.get("id") for call in message.get("tool_calls") or ()]
        if index < head:
            labels.append("head")
        elif is_summary(message):
            labels.append("summary")
        elif ids:
            label = "+".join(ids)
            owner.update({call_id: label for call_id in ids})
            labels.append(label)
        elif message.get("role") == "tool":
            labels.append(owner.get(message.get("tool_call_id"), "unpaired"))
        else:
            labels.append("")
    return labels


def protection(messages: Sequence[Mapping], protect_tail: int) -> list:
    """Why each message is out of the summary's reach: "head", "tail" or ""."""
    head = protected_head_length(messages)
    tail_start = max(head, len(messages) - protect_tail)
    return [
        "head" if i < head else "tail" if i >= tail_start else ""
        for i in range(len(messages))
    ]


def scroll_box(table_html: str) -> str:
    """A long table in a frame that scrolls, its header in view: a log's table of a
    few hundred rows stays one screen high."""
    return (
        SCROLLING_TABLE_CSS
        + f'<div class="ccl-scrolling" style="max-height:{SCROLLING_TABLE_HEIGHT_PX}px;'
        + 'overflow:auto">'
        + table_html
        + "</div>"
    )


def display_width(text: str) -> int:
    """Columns `text` takes in a table: two for a wide (CJK) character, one otherwise."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def preview(content: Optional[str], columns: int = PREVIEW_CHARS) -> str:
    """The start of a content on one line, at most `columns` display columns (a CJK
    character takes two), with … when cut."""
    text = (content or "").replace("\n", " ⏎ ")
    if display_width(text) <= columns:
        return text
    kept, width = [], 1  # the ellipsis takes one column
    for ch in text:
        width += display_width(ch)
        if width > columns:
            break
        kept.append(ch)
    return "".join(kept).rstrip() + "…"


def messages_table(
    messages: Sequence[Mapping],
    protect_tail: int,
    changes: Optional[Mapping[int, str]] = None,
    preview_columns: int = PREVIEW_CHARS,
) -> pd.DataFrame:
    """The window one message a row: role, tokens, protected, aged, group, what changed,
    and a preview of at most `preview_columns` display columns."""
    changes = changes or {}
    rows = [
        {
            "#": index,
            "role": message.get("role"),
            "tokens": estimate_message_tokens(message),
            "protected": protected,
            "aged": is_aged(message),
            "group": group,
            "changed": changes.get(index, ""),
            "content": preview(message.get("content"), preview_columns),
        }
        for index, (message, protected, group) in enumerate(
            zip(messages, protection(messages, protect_tail), message_groups(messages))
        )
    ]
    columns = ["#", "role", "tokens", "protected", "aged", "group", "changed", "content"]
    return pd.DataFrame(rows, columns=columns).set_index("#")


def _text(value) -> str:
    """A cell as the tables show it: ✓ for True, thousands separators, nothing for a
    missing value."""
    if isinstance(value, (bool, np.bool_)):
        return "✓" if value else ""
    if isinstance(value, numbers.Integral):  # numpy's integers too (a DataFrame's)
        return f"{value:,}"
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    return str(value)


def _cell(value) -> str:
    if isinstance(value, Listed) and value.items:  # each item unbroken, not the list
        return ", ".join(UNBROKEN_ITEM.format(html.escape(item)) for item in value.items)
    return html.escape(_text(value))


def to_html(
    table: pd.DataFrame,
    highlight_rows: Iterable = (),
    css_class: str = "ccl-table",
    empty: str = "no rows",
    cell_titles: Optional[Mapping[str, Sequence[str]]] = None,
    align: Optional[Mapping[str, str]] = None,
) -> str:
    """A DataFrame as a small HTML table; rows whose index is in `highlight_rows` are
    marked; `cell_titles[column][row]` is a cell's hover text ("" for none), e.g. the
    whole text of a cut preview; `align[column]` ("left" or "right") sets a column's
    alignment where the table's CSS would set another (`numbers_right`).

    Written by hand rather than with DataFrame.to_html/Styler: it runs on every slider
    change (a few hundred microseconds instead of milliseconds) and has no random ids.
    """
    titles = {
        table.columns.get_loc(column): list(texts)
        for column, texts in (cell_titles or {}).items()
    }
    align = dict(align or {})
    styles = {
        # the index's name, where given, aligns the row names (-1: before column 0)
        -1 if column == (table.index.name or "") else table.columns.get_loc(column): (
            f' style="text-align:{side}"'
        )
        for column, side in align.items()
    }
    return _html_table(
        [table.index.name or ""] + list(table.columns),
        zip(table.index, table.itertuples(index=False)),
        set(highlight_rows),
        titles,
        css_class,
        empty,
        styles,
    )


def numbers_right(table: pd.DataFrame, *also: str) -> Dict[str, str]:
    """`to_html`'s `align` for a table whose numbers may fall in the last two columns
    (which the tables' CSS sets left, for text): each column of numbers (not of
    True/False), and the columns named in `also`, right."""
    numeric = [
        column
        for column in table.columns
        if pd.api.types.is_numeric_dtype(table[column])
        and not pd.api.types.is_bool_dtype(table[column])
    ]
    return {column: "right" for column in [*numeric, *also]}


def rows_html(
    columns: Sequence[str],
    rows: Iterable[Sequence],
    css_class: str = "ccl-table",
    empty: str = "no rows",
) -> str:
    """What `to_html` renders for the DataFrame of `rows` indexed by its first column,
    without building one: the dashboard redraws two tables on every slider change, and
    pandas took half of its callback's time."""
    body = ((row[0], row[1:]) for row in rows)
    return _html_table(list(columns), body, set(), {}, css_class, empty)


def _html_table(
    header_names, body_rows, marked, titles, css_class, empty, styles=None
) -> str:
    """The table: `header_names` (the index's first), then per (index, values) a row;
    `styles[column]` an attribute each of that column's cells carries."""
    styles = styles or {}
    header = "".join(
        f"<th{styles.get(number - 1, '')}>{html.escape(str(name))}</th>"
        for number, name in enumerate(header_names)
    )
    body = []
    for number, (index, row) in enumerate(body_rows):
        style = ' class="ccl-changed"' if index in marked else ""
        cells = "".join(
            f"<td{_title(titles, column, number)}{styles.get(column, '')}>"
            f"{_cell(value)}</td>"
            for column, value in enumerate(row)
        )
        name_style = styles.get(-1, "")
        body.append(f"<tr{style}><th{name_style}>{_cell(index)}</th>{cells}</tr>")
    if not body:
        span = len(header_names)
        body.append(f'<tr><td colspan="{span}"><i>{html.escape(empty)}</i></td></tr>')
    rows = "".join(body)
    return (
        f'<table class="{css_class}"><thead><tr>{header}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _title(titles: Mapping[int, list], column: int, row: int) -> str:
    text = titles[column][row] if column in titles else ""
    return f' title="{html.escape(text)}"' if text else ""


class HtmlTable:
    """A table as the dashboard shows it (✓ marks, thousands separators), for a notebook
    cell.

    `TABLE_CSS` comes with it: a static output is rendered once, not on every keypress.
    """

    def __init__(self, table: pd.DataFrame, extra_css: str = "", **to_html_options):
        self.table = table
        self.html = TABLE_CSS + extra_css + to_html(table, **to_html_options)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        # the text form nbval compares and a viewer without HTML shows
        return self.table.map(_text).rename(index=_text).to_string()


def shown_table(table: pd.DataFrame, *numbers: str) -> HtmlTable:
    """A table as a notebook cell shows it: thousands separators, its numbers
    (and the columns named in `numbers`) right-aligned, its text left (compute with
    the DataFrame itself)."""
    # text may wrap at its spaces, so a table of sentences fits the notebook
    return HtmlTable(
        table, align=_shown_align(table, numbers), css_class="ccl-table ccl-shown"
    )


def _shown_align(table: pd.DataFrame, numbers: Sequence[str]) -> Dict[str, str]:
    align = dict.fromkeys(table.columns, "left")  # text reads from its left edge
    align.update(numbers_right(table, *numbers))
    if not pd.api.types.is_numeric_dtype(table.index):  # row names are text too
        align[table.index.name or ""] = "left"
    return align


def prose_table(table: pd.DataFrame, *numbers: str) -> HtmlTable:
    """`shown_table` for a table whose cells are sentences: each row read from its
    top, the row names on one line, and `code` in backticks set as code (the text
    form keeps the backticks)."""
    shown = HtmlTable(
        table,
        extra_css=PROSE_TABLE_CSS,
        align=_shown_align(table, numbers),
        css_class="ccl-table ccl-shown ccl-prose",
    )
    shown.html = re.sub(r"`([^`<>\n]+)`", r"<code>\1</code>", shown.html)
    return shown
