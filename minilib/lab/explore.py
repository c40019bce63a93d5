"""Views for the chapter notebooks 00-04: tables, bar charts, side-by-side text and small
widgets.

Nothing here compresses anything: every number comes from the core (`minilib.tokens`,
`minilib.aging`, `minilib.summary`). Each widget's callback is a pure function of the
widget values (`estimate_readout`, `aging_view`), so a test can set `.value` and
compare the output with the core's own numbers.
"""

import html
from typing import Iterable, Mapping, NamedTuple, Optional, Sequence, Tuple

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from IPython.display import HTML
from plotly.subplots import make_subplots

from ..aging import ToolResultAging, aged_content
from ..markers import is_aged
from ..messages import protected_head_length
from ..model import first_line_of_result
from ..ranges import range_candidates
from ..reports import plural
from ..tokens import (
    count_cjk,
    estimate_message_tokens,
    estimate_text_tokens,
    estimate_tokens,
    tool_call_name,
)
from .numbers import boxed_slider, note_under, notes_but
from .shown import ShownAsWidget
from .style import (
    AGING_SLIDER_WIDTH,
    HANDLE_COLORS,
    MESSAGE_FIGURE_HEIGHT,
    MESSAGE_ZOOM_TOKENS,
    NOTE_COLOR,
    PANE_MIN_WIDTH,
    ROLE_COLORS,
    SLIDER_LABEL_WIDTH,
    TEXT_COLOR,
)
from .tables import HtmlTable, preview, shown_table


def _one_line(text: str, width: int = 48) -> str:
    """`text` on one line, at most `width` display columns (a CJK character takes
    two: the session's Chinese previews fit the table as its English ones do)."""
    return preview(" ".join((text or "").split()), width)


def _link(message: Mapping) -> str:
    """What ties a message to its partner: the calls it makes, or the call it answers."""
    if message.get("tool_calls"):
        return ", ".join(
            f"{call['id']} {tool_call_name(call)}" for call in message["tool_calls"]
        )
    if message.get("role") == "tool":
        return f"answers {message.get('tool_call_id')}"
    return ""


# ---------------------------------------------------------------- 01: where the tokens go


def message_table(messages: Sequence[Mapping]) -> pd.DataFrame:
    """One row per message: role, call/answer id, characters, estimated
    tokens, a preview."""
    rows = [
        {
            "role": message.get("role"),
            "link": _link(message),
            "chars": len(message.get("content") or ""),
            "tokens": estimate_message_tokens(message),
            "preview": _one_line(message.get("content") or ""),
        }
        for message in messages
    ]
    return pd.DataFrame(
        rows, columns=["role", "link", "chars", "tokens", "preview"]
    ).rename_axis("index")


def tokens_by_role(messages: Sequence[Mapping]) -> pd.DataFrame:
    """Messages and tokens per role, with each role's share of the whole list."""
    table = message_table(messages)
    by_role = table.groupby("role").agg(
        messages=("tokens", "size"), tokens=("tokens", "sum")
    )
    by_role = by_role.reindex([role for role in ROLE_COLORS if role in by_role.index])
    by_role["share"] = (by_role["tokens"] / by_role["tokens"].sum()).round(3)
    return by_role


def role_table(by_role: pd.DataFrame) -> HtmlTable:
    """`tokens_by_role` as a cell shows it (`shown_table`), each share in per cent to
    a tenth: 77 tokens of 18,000 read 0.4%, not 0%."""
    shares = [f"{share:.1%}" for share in by_role["share"]]
    return shown_table(by_role.assign(share=shares), "share")


def message_tokens_figure(
    messages: Sequence[Mapping],
    title: str = "Estimated tokens per message",
    zoom_tokens: int = MESSAGE_ZOOM_TOKENS,
) -> go.Figure:
    """A static bar chart: one bar per message, coloured by role (one legend entry per
    role). Two panels on one x axis: every bar on a linear axis (the tool results
    dwarf the rest), and the same bars with the axis cut at `zoom_tokens`, where the
    short messages are tall enough to read; there each bar is labelled with its
    tokens, and a bar cut off at the top says so (its size and an arrow up)."""
    table = message_table(messages)
    figure = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.14,
        row_heights=[0.6, 0.4],
        subplot_titles=(
            "every message, one linear axis",
            f"the same messages, axis cut at {zoom_tokens:,} tokens: the short ones",
        ),
    )
    for role, color in ROLE_COLORS.items():
        rows = table[table["role"] == role]
        if rows.empty:
            continue
        bar = dict(
            x=rows.index.tolist(),
            y=rows["tokens"].tolist(),
            name=role,
            legendgroup=role,
            marker_color=color,
            customdata=rows[["link", "chars"]].values.tolist(),
            hovertemplate="message %{x}: %{y:,} "
            "tokens<br>%{customdata[0]}<br>%{customdata[1]:,} chars",
        )
        figure.add_bar(**bar, row=1, col=1)
        figure.add_bar(**bar, showlegend=False, row=2, col=1)
        _label_zoomed_bars(figure, rows["tokens"], zoom_tokens)
    figure.update_yaxes(title_text="estimated tokens", tickformat=",", row=1, col=1)
    figure.update_yaxes(
        title_text="tokens", range=[0, zoom_tokens], fixedrange=True, row=2, col=1
    )
    figure.update_xaxes(title_text="message index", row=2, col=1)
    figure.update_layout(
        title=title,
        template="plotly_white",
        height=MESSAGE_FIGURE_HEIGHT,
        margin=dict(l=60, r=20, t=80, b=50),
        legend_title_text="role",
        bargap=0.15,
    )
    return figure


def _label_zoomed_bars(figure: go.Figure, tokens: pd.Series, zoom_tokens: int) -> None:
    """Each bar of the zoom (x: its message index) says its tokens above it; a bar the
    zoom cuts off says so inside its top: its size and an arrow up (► turned upright)."""
    for index, size in tokens.items():
        cut = size > zoom_tokens
        figure.add_annotation(
            x=index,
            y=zoom_tokens if cut else size,
            text=f"{size:,} ►" if cut else f"{size:,}",
            showarrow=False,
            yanchor="top" if cut else "bottom",
            textangle=-90,
            font={"size": 10, "color": "white" if cut else TEXT_COLOR},
            xref="x2",
            yref="y2",
        )


# ---------------------------------------------------------------- 02: the token estimate


def token_breakdown(text: str) -> dict:
    """How the estimate of one string is made up, every part from minilib.tokens."""
    cjk = count_cjk(text)
    message = {"role": "user", "content": text}
    return {
        "chars": len(text),
        "cjk": cjk,
        "other": len(text) - cjk,
        "tokens": estimate_text_tokens(text),
        "message_tokens": estimate_message_tokens(message),
    }


def token_examples(texts: Iterable[str]) -> pd.DataFrame:
    """One row per text: its characters, CJK and other counts, and
    the estimated tokens."""
    rows = [dict(text=text, **token_breakdown(text)) for text in texts]
    return pd.DataFrame(
        rows, columns=["text", "chars", "cjk", "other", "tokens", "message_tokens"]
    )


def estimate_readout(text: str) -> str:
    """The text box's readout (HTML): the estimate and the arithmetic behind it."""
    parts = token_breakdown(text)
    return (
        f"<b>{plural(parts['tokens'], 'token')}</b> for "
        f"{plural(parts['chars'], 'character')}: "
        f"{parts['cjk']:,} CJK × 1 + ⌈{parts['other']:,} other ÷ 4⌉ = {parts['cjk']:,} + "
        f"{parts['tokens'] - parts['cjk']:,}"
        "<br>as one message (+4 structure): "
        f"<b>{plural(parts['message_tokens'], 'token')}</b>"
    )


class TokenEstimateBox(ShownAsWidget):
    """A text box whose readout shows the estimate as you type."""

    def __init__(self, text: str = ""):
        if not isinstance(text, str):
            raise TypeError(
                f"TokenEstimateBox takes a text (a str), got {type(text).__name__}"
            )
        self.text = widgets.Textarea(
            value=text,
            placeholder="type or paste any text",
            layout=widgets.Layout(width="100%", height="6em"),
        )
        self.readout = widgets.HTML(estimate_readout(text))
        self.text.observe(
            lambda change: setattr(
                self.readout, "value", estimate_readout(change["new"])
            ),
            "value",
        )
        self.widget = widgets.VBox([self.text, self.readout])


# ---------------------------------------------------------------- 03: tool-result aging


def text_panels(panels: Sequence[Tuple[str, str]], height: str = "22em") -> str:
    """HTML: texts side by side under their titles, stacked when the page is narrow.

    Lines are never wrapped (`pre`), so an id is never split; a pane scrolls sideways
    and down when its text is longer than it.
    """
    columns = "".join(
        '<div style="min-width:0"><div '
        f'style="font-weight:bold;margin-bottom:4px">{html.escape(title)}</div>'
        f'<pre style="white-space:pre;max-height:{height};overflow:auto;'
        "border:1px solid #ccc;padding:6px;margin:0;"
        "font-family:var(--jp-code-font-family,monospace);"
        f'font-size:12px;line-height:1.35">{html.escape(text)}</pre></div>'
        for title, text in panels
    )
    return (
        '<div style="display:grid;grid-template-columns:'
        f"repeat(auto-fit,minmax(min(100%,{PANE_MIN_WIDTH}),1fr));"
        f'gap:12px;width:100%;box-sizing:border-box">{columns}</div>'
    )


def side_by_side(
    left_title: str, left: str, right_title: str, right: str, height: str = "22em"
) -> HTML:
    """Two texts side by side, as a static HTML output."""
    return HTML(text_panels([(left_title, left), (right_title, right)], height))


class AgingView(NamedTuple):
    """What aging does to one message at one setting of the knobs."""

    aged: Optional[dict]  # the aged copy, or None when the message is left alone
    before_tokens: int
    after_tokens: int  # equal to before_tokens when left alone
    verdict: str


def aging_view(
    message: Mapping, head_chars: int, tail_chars: int, min_chars: int
) -> AgingView:
    """Age `message` with ToolResultAging(head_chars, tail_chars, min_chars) and say what
    happened, and why."""
    aging = ToolResultAging(head_chars, tail_chars, min_chars)
    content = message.get("content") or ""
    before = estimate_tokens([message])
    aged = aging.age_message(message)
    if aged is not None:
        after = estimate_tokens([aged])
        return AgingView(
            aged,
            before,
            after,
            f"aged: {before:,} → {after:,} tokens ({len(content):,} → "
            f"{len(aged['content']):,} characters)",
        )
    if message.get("role") != "tool":
        reason = "left alone: only tool messages are aged"
    elif is_aged(message):
        reason = "left alone: already aged (its header starts with the marker)"
    elif len(content) <= min_chars:
        reason = f"left alone: {len(content):,} characters ≤ min_chars {min_chars:,}"
    else:
        error = message.get("error") or {}
        would_be = aged_content(
            content,
            head_chars,
            tail_chars,
            message.get("tool_call_id", ""),
            error.get("code"),
        )
        would_be_tokens = estimate_tokens([dict(message, content=would_be)])
        reason = (
            f"left alone: the aged form would cost {would_be_tokens:,} tokens, "
            f"not less than the original {before:,}"
        )
    return AgingView(None, before, before, reason)


FINE_SCALE = 1000  # characters: the aging sliders' first scale


class AgingExplorer(ShownAsWidget):
    """Sliders for head_chars, tail_chars and min_chars over one tool message, original
    beside aged."""

    def __init__(
        self,
        message: Mapping,
        head_chars: int = 160,
        tail_chars: int = 120,
        min_chars: int = 240,
        height: str = "18em",
    ):
        self.message = message
        self.height = height
        length = len(message.get("content") or "")
        # On a 640-px track a range of 16,400 characters moves ~25 characters a pixel:
        # the useful range (a few hundred) would be a few pixels. So the sliders start on
        # a fine scale; the other scale reaches the message's length (rounded up to a
        # step), where min_chars spares the result and head + tail near the length make
        # aging decline.
        self.longest = max(FINE_SCALE, -(-length // 10) * 10)
        self.scale = widgets.ToggleButtons(
            options=[
                (f"fine: 0–{FINE_SCALE:,}", FINE_SCALE),
                (f"whole result: 0–{self.longest:,}", self.longest),
            ],
            value=FINE_SCALE
            if max(head_chars, tail_chars, min_chars) <= FINE_SCALE
            else self.longest,
            description="slider scale",
            style={"description_width": SLIDER_LABEL_WIDTH, "button_width": "200px"},
        )
        self.scale.observe(lambda change: self.rescale(change["new"]), "value")
        self.verdict = widgets.HTML()
        self.inert = widgets.HTML()  # why min_chars cannot matter on this scale
        self.view = widgets.HTML(layout=widgets.Layout(width="auto"))
        self.head, self.tail, self.min = self.sliders(
            (head_chars, tail_chars, min_chars), self.scale.value
        )
        self.update()
        self.widget = widgets.VBox(self.parts())
        self.widget.add_class("ccl-aging-explorer")

    def parts(self) -> tuple:
        rows = [
            note_under([slider, box])
            for slider, box in zip((self.head, self.tail, self.min), self.number_boxes)
        ]
        return (self.scale, *rows, self.inert, self.verdict, self.view)

    def sliders(self, values, maximum: int):
        """head_chars, tail_chars and min_chars on the scale 0..maximum, each with a
        box that reads a typed number as every box of the course does."""
        built = []
        for (name, color), value in zip(HANDLE_COLORS.items(), values):
            slider = widgets.IntSlider(
                min(value, maximum),
                min=0,
                max=maximum,
                readout_format=",d",
                step=10,
                description=name,
                style={"description_width": SLIDER_LABEL_WIDTH, "handle_color": color},
                layout=widgets.Layout(width=AGING_SLIDER_WIDTH),
            )
            slider.observe(self._moved, "value")
            built.append(slider)
        self.number_boxes = [
            boxed_slider(slider, unit="character", width="88px") for slider in built
        ]
        return built

    def _moved(self, change) -> None:
        pairs = zip((self.head, self.tail, self.min), self.number_boxes)
        notes_but(list(pairs), change.get("owner"))
        self.update()

    def rescale(self, maximum: int) -> None:
        """Put every slider on the scale 0..maximum, keeping values that fit.

        The sliders are built anew rather than given a new `max`: the browser's slider
        keeps its first range for the End key (End would stop at 1,000 on the whole
        result's scale)."""
        values = (self.head.value, self.tail.value, self.min.value)
        for slider in (self.head, self.tail, self.min):
            slider.close()
        self.head, self.tail, self.min = self.sliders(values, maximum)
        self.widget.children = self.parts()
        self.update()

    def update(self) -> AgingView:
        result = aging_view(
            self.message, self.head.value, self.tail.value, self.min.value
        )
        length = len(self.message.get("content") or "")
        self.inert.value = (
            # a line of text's own height: a widget's lines are 28 px, two of them apart
            f'<span style="color:{NOTE_COLOR};font-size:13px;display:block;'
            f'line-height:18px">min_chars: no effect '
            "on this scale. A result shorter than min_chars is left whole; this one is "
            f"{length:,} "
            "characters, past the scale's end (the whole-result scale reaches it)"
            "</span>"
            if self.min.max < length
            else ""
        )
        self.verdict.value = f"<b>{html.escape(result.verdict)}</b>"
        shown = (
            result.aged["content"]
            if result.aged is not None
            else self.message.get("content") or ""
        )
        # What the sliders change first: stacked on a narrow page, the original would
        # push it below a projector's fold.
        self.view.value = text_panels(
            [
                ("sent to the model", shown),
                ("original", self.message.get("content") or ""),
            ],
            self.height,
        )
        return result


# ---------------------------------------------------------------- 04: rolling summary


def zones_table(
    messages: Sequence[Mapping], protect_tail: int, span: Optional[range] = None
) -> pd.DataFrame:
    """One row per message with its zone: protected head, summarized (in `span`), kept, or
    protected tail."""
    head = protected_head_length(messages)
    tail_start = max(head, len(messages) - protect_tail)
    span = span if span is not None else range(0)
    table = message_table(messages)
    table["zone"] = [
        "protected head"
        if index < head
        else "summarized"
        if index in span
        else "protected tail"
        if index >= tail_start
        else "kept"
        for index in range(len(messages))
    ]
    return table[["zone", "role", "link", "tokens", "preview"]]


def candidates_table(messages: Sequence[Mapping], protect_tail: int) -> pd.DataFrame:
    """The range-narrowing loop step by step: each candidate [start, end), its last
    message, closed and why."""
    rows = []
    for step, candidate in enumerate(range_candidates(messages, protect_tail), start=1):
        last = messages[candidate.end - 1] if candidate.end > candidate.start else None
        rows.append(
            {
                "step": step,
                "range": f"[{candidate.start}, {candidate.end})",
                "messages": candidate.end - candidate.start,
                "last message": f"#{candidate.end - 1} {last.get('role')} "
                f"{_link(last)}".strip()
                if last
                else "",
                "closed": candidate.closed,
                "why": candidate.reason,
            }
        )
    return pd.DataFrame(
        rows, columns=["step", "range", "messages", "last message", "closed", "why"]
    ).set_index("step")


def fact_survival(
    facts: Sequence[str], summary_text: str, outputs: Mapping[str, str]
) -> pd.DataFrame:
    """For each fact: which tool outputs (by tool_call_id) contain it, and whether the
    summary still does."""
    rows = [
        {
            "fact": fact,
            "in tool outputs": ", ".join(
                call_id for call_id, output in outputs.items() if fact in output
            ),
            "in summary": fact in summary_text,
        }
        for fact in facts
    ]
    return pd.DataFrame(rows, columns=["fact", "in tool outputs", "in summary"])


def folded_results_table(
    folded: Sequence[Mapping], summary_text: str, outputs: Mapping[str, str]
) -> pd.DataFrame:
    """Each tool result a summary folded: full size (from the trace), size in the window,
    the line the summary quotes."""
    rows = []
    for message in folded:
        if message.get("role") != "tool":
            continue
        call_id = message.get("tool_call_id")
        # what scripted_summary quotes
        quoted = first_line_of_result(message.get("content") or "")
        rows.append(
            {
                "tool_call_id": call_id,
                "full output chars": len(outputs.get(call_id, "")),
                "chars in window": len(message.get("content") or ""),
                "aged": is_aged(message),
                "quoted line": _one_line(quoted, 36),
                "quoted chars": len(quoted) if quoted in summary_text else 0,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "tool_call_id",
            "full output chars",
            "chars in window",
            "aged",
            "quoted line",
            "quoted chars",
        ],
    )


def parallel_calls_example() -> list:
    """Chapter 4.4's small session: a task, one read, then one assistant message with
    two calls (build.log and agent.toml) answered by two results, one more read, and
    the answer. A summary must fold the two-call message with both its results, or
    neither."""

    def call(call_id: str, path: str) -> dict:
        arguments = f'{{"path": "{path}"}}'
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": "read_file", "arguments": arguments},
        }

    notes = "notes.txt: 20 lines\n" + "\n".join(
        f"10-{day:02} standup: no blockers" for day in range(1, 21)
    )
    return [
        {"role": "system", "content": "You are a careful coding agent."},
        {"role": "user", "content": "Can v0.3 ship?"},
        {
            "role": "assistant",
            "content": "Read the notes first.",
            "tool_calls": [call("a", "notes.txt")],
        },
        {"role": "tool", "tool_call_id": "a", "content": notes},
        {
            "role": "assistant",
            "content": "Read the log and the config together.",
            "tool_calls": [call("b", "build.log"), call("c", "agent.toml")],
        },
        {"role": "tool", "tool_call_id": "b", "content": "nightly FAILED: E2BIG"},
        {"role": "tool", "tool_call_id": "c", "content": "tool_timeout_s = 30"},
        {
            "role": "assistant",
            "content": "Check the tests.",
            "tool_calls": [call("d", "report.txt")],
        },
        {
            "role": "tool",
            "tool_call_id": "d",
            "content": "test_parallel_calls failed 1 of 3",
        },
        {"role": "assistant", "content": "It cannot ship."},
    ]
