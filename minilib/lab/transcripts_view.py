"""Notebook 07's views of a replayed transcript: its curve, what was cut, and a naive cut
for comparison.

Everything here is computed by the core (`replay_transcript`, `validate_messages`,
`recover_tool_output`); this module only arranges it into tables and a figure.
"""

from typing import Iterable, List, Mapping, Sequence

import pandas as pd

from ..markers import AGING_MARK, is_summary
from ..messages import InvalidMessagesError, validate_messages
from ..session import Baseline, SessionRun
from ..tokens import TokenCounter, estimate_tokens, tool_call_name
from ..trace import recover_tool_output
from .figures import session_figure


def transcript_baseline(
    messages: Sequence[Mapping], count_tokens: TokenCounter = estimate_tokens
) -> Baseline:
    """The uncompressed window before every assistant message: the grey line
    of the figure."""
    rounds = [
        index for index, message in enumerate(messages) if message["role"] == "assistant"
    ]
    return Baseline(
        tuple(count_tokens(messages[:index]) for index in rounds),
        tuple(rounds),
        tuple(messages),
        count_tokens(messages),
    )


def transcript_figure(run: SessionRun, messages: Sequence[Mapping]):
    """The two-panel figure of chapter 6 for a replayed transcript, as a static figure; a
    round that both aged and summarized shows its two markers side by side."""
    return session_figure(run, transcript_baseline(messages), widget=False)


def what_was_cut(run: SessionRun, messages: Sequence[Mapping]) -> pd.DataFrame:
    """One row per tool result of the transcript: what became of it in the last window,
    and whether the trace still holds it in full.

    Agents reuse call ids in later turns, so a result is matched by its id *and* its
    text: the window's copy of a result is the one whose kept lines its output holds.
    """
    names = _tool_names(messages)
    records = run.tracer.records
    in_window = _window_copies(run)
    folded = any(is_summary(message) for message in run.final_messages)
    rows = []
    for index, message in enumerate(messages):
        if message["role"] != "tool":
            continue
        call_id, content = message["tool_call_id"], message["content"]
        kept = in_window.get((call_id, content))
        if kept is None:
            fate = "folded into the summary" if folded else "not in the window"
        elif kept["content"].startswith(AGING_MARK) and not content.startswith(
            AGING_MARK
        ):
            fate = "aged"
        else:
            fate = "verbatim"
        try:
            recovered = recover_tool_output(records, call_id, like=content) == content
        except KeyError:
            recovered = False
            if run.overflow is not None:
                fate = "not reached: the replay stopped before it"
        rows.append(
            {
                "message": index,
                "tool_call_id": call_id,
                "tool": names[index],
                "error": (message.get("error") or {}).get("code", ""),
                "characters": len(content),
                "characters in last window": len(kept["content"]) if kept else 0,
                "fate": fate,
                "recoverable": recovered,
            }
        )
    return pd.DataFrame(rows).set_index("tool_call_id")


def _tool_names(messages: Sequence[Mapping]) -> dict:
    """The tool name of each result, by its position, from the call it answers."""
    names, calls = {}, {}
    for index, message in enumerate(messages):
        if message["role"] == "assistant":
            calls = {c["id"]: tool_call_name(c) for c in message.get("tool_calls") or ()}
        elif message["role"] == "tool":
            names[index] = calls.get(message["tool_call_id"], "?")
    return names


def _window_copies(run: SessionRun) -> dict:
    """The last window's tool results, by (id, the full output the trace holds)."""
    in_window = {}
    for kept in run.final_messages:
        if kept["role"] == "tool":
            try:
                full = recover_tool_output(
                    run.tracer.records, kept["tool_call_id"], like=kept["content"]
                )
            except KeyError:
                full = kept["content"]
            in_window.setdefault((kept["tool_call_id"], full), kept)
    return in_window


def keep_last(messages: Sequence[Mapping], count: int) -> List[Mapping]:
    """The naive cut many harnesses start with: the system messages plus the
    last `count` messages."""
    system = [message for message in messages if message["role"] == "system"]
    rest = [message for message in messages if message["role"] != "system"]
    return system + rest[len(rest) - count :] if count else system


def naive_cut_table(messages: Sequence[Mapping], counts: Iterable[int]) -> pd.DataFrame:
    """For each N: what "keep the last N" sends, and whether the chat-completions API
    would accept it."""
    rows = []
    for count in counts:
        window = keep_last(messages, count)
        try:
            validate_messages(window)
            problem = ""
        except InvalidMessagesError as error:
            problem = str(error)
        if not problem and window and window[-1].get("tool_calls"):
            problem = "the last message is an unanswered tool call"
        rows.append(
            {
                "keep last": count,
                "messages": len(window),
                "tokens": estimate_tokens(window),
                "valid": not problem,
                "problem": problem,
            }
        )
    return pd.DataFrame(rows).set_index("keep last")
