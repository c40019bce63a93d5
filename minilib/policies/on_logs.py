"""The compression paths on a recorded log: what each would have sent, round by round.

The six-path comparison of chapter 8 runs the bundled session, whose tools really run
and whose facts are planted. A recorded log has neither: its replies and results are
fixed, so each path replays the same messages through its own window (the loop is
`minilib.loop.replay` with the log as the conversation). What can be measured is
the cost side: does the path get through every round, how many tokens does it send,
how many extra model calls does it make, and how many tool outputs does the last
window still hold whole. Input-side budgeting needs the prompt's sections, which a
log does not record, so it is listed and not run.
"""

from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence

from ..aging import ToolResultAging
from ..loop import replay
from ..markers import is_aged, is_offloaded
from ..model import scripted_summary
from ..scale.recorded import RecordedConversation
from ..summary import RollingSummary
from ..trace import Tracer
from ..window import ContextWindow, Settings
from .hierarchical import HierarchicalSummary
from .store import ExternalStore, OffloadGroups, OffloadToolResults
from .truncation import SlidingWindowTruncation


@dataclass(frozen=True)
class LogPath:
    key: str
    title: str
    strategies: Optional[Callable[[Settings], list]]  # None: cannot run on a log


def _aging(settings: Settings) -> ToolResultAging:
    return ToolResultAging(settings.head_chars, settings.tail_chars, settings.min_chars)


def _store(settings: Settings) -> list:
    store = ExternalStore()
    return [
        OffloadToolResults(
            store, settings.min_chars, settings.head_chars, settings.tail_chars
        ),
        OffloadGroups(store, settings.protect_tail),
    ]


LOG_PATHS = (
    LogPath(
        "truncation",
        "1 sliding-window truncation",
        lambda s: [_aging(s), SlidingWindowTruncation(s.protect_tail)],
    ),
    LogPath("aging", "2 tool-result aging", lambda s: [_aging(s)]),
    LogPath(
        "rolling_summary",
        "3 rolling summary (the article)",
        lambda s: [
            _aging(s),
            RollingSummary(
                scripted_summary, s.protect_tail, fold_user_turns=s.fold_user_turns
            ),
        ],
    ),
    LogPath(
        "hierarchical",
        "4 hierarchical summary",
        lambda s: [_aging(s), HierarchicalSummary(3, s.protect_tail)],
    ),
    LogPath("store", "5 external store", _store),
    LogPath("budgeting", "6 input-side budgeting", None),
)


NOT_RUN = "not run"  # budgeting: a log does not record the sections of its prompt


def path_rows(messages: Sequence[Mapping], settings: Settings = Settings()) -> List[Dict]:
    """One row per path: completes, rounds, tokens sent, extra calls, whole outputs."""
    rounds = sum(1 for message in messages if message["role"] == "assistant")
    outputs = sum(1 for message in messages if message["role"] == "tool")
    rows = []
    for path in LOG_PATHS:
        row = {"path": path.title}
        if path.strategies is None:
            rows.append(dict(row, completes=NOT_RUN))
            continue
        window = ContextWindow(settings.threshold, path.strategies(settings))
        tracer = Tracer()
        run = replay(
            RecordedConversation(messages), window, tracer=tracer, max_steps=None
        )
        final = run.messages
        whole = sum(
            1
            for m in final
            if m["role"] == "tool" and not is_aged(m) and not is_offloaded(m)
        )
        rows.append(
            dict(
                row,
                completes="yes"
                if run.overflow is None
                else f"overflow at round {len(run.rounds)}",
                rounds=f"{len(run.rounds)} of {rounds}",
                tokens_sent=sum(r.tokens_after for r in run.rounds),
                last_window=run.rounds[-1].tokens_after if run.rounds else 0,
                extra_calls=sum(
                    1 for c in tracer.events("model_call") if c["purpose"] != "decision"
                ),
                outputs_whole=f"{whole} of {outputs}",
                why_it_stopped=stop_reason(run.overflow),
            )
        )
    return rows


def stop_reason(overflow) -> str:
    """Why a path stopped, in a table cell: what the window needed against the
    threshold, and its largest message, which the path could not cut further; "" for
    a path that went through."""
    if overflow is None:
        return ""
    written = f", written by {overflow.written_by}" if overflow.written_by else ""
    return (
        f"needed {overflow.tokens:,} of {overflow.threshold:,}, nothing more it may "
        f"cut; largest left: {article(overflow.largest_role)} {overflow.largest_role} "
        "message of "
        f"{overflow.largest_tokens:,} tokens{written}"
    )


def baseline_row(messages: Sequence[Mapping]) -> Dict:
    """The log as recorded: every round's window uncompressed."""
    run = replay(RecordedConversation(messages), None, max_steps=None)
    outputs = sum(message["role"] == "tool" for message in messages)
    return {
        "path": "0 no compression",
        "completes": "as recorded",
        "rounds": f"{len(run.rounds)} of {len(run.rounds)}",
        "tokens_sent": sum(r.tokens_before for r in run.rounds),
        "last_window": run.rounds[-1].tokens_before if run.rounds else 0,
        "extra_calls": 0,
        "outputs_whole": f"{outputs} of {outputs}",
    }


def article(word: str) -> str:
    """The article before a role: "an assistant message", "a user message" (the "u"
    of the roles a message has is read "you")."""
    return "an" if word[:1].lower() in "aeio" else "a"
