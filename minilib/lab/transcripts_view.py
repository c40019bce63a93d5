"""Notebook 07's views of a replayed transcript: its curve, what was cut, and a naive cut
for comparison.

Everything here is computed by the core (`replay_transcript`, `validate_messages`,
`recover_tool_output`); this module only arranges it into tables and a figure.
"""

from typing import Dict, Iterable, List, Mapping, Sequence, Tuple

import pandas as pd

from ..logs.replay import environment_id
from ..markers import is_aged, is_marker_line, is_summary
from ..messages import InvalidMessagesError, is_observation, validate_messages
from ..session import Baseline, SessionRun
from ..tokens import ADDITIVE_COUNTERS, TokenCounter, estimate_tokens, tool_call_name
from ..trace import recover_tool_output
from .figures import session_figure
from .style import LOG_SCALE_RATIO


def transcript_baseline(
    messages: Sequence[Mapping], count_tokens: TokenCounter = estimate_tokens
) -> Baseline:
    """The uncompressed window before every assistant message: the grey line
    of the figure."""
    rounds = [
        index for index, message in enumerate(messages) if message["role"] == "assistant"
    ]
    return Baseline(
        window_sizes(messages, rounds, count_tokens),
        tuple(rounds),
        tuple(messages),
        count_tokens(messages),
    )


def window_sizes(
    messages: Sequence[Mapping], ends: Sequence[int], count_tokens: TokenCounter
) -> Tuple[int, ...]:
    """Tokens of `messages[:end]` for each end, in order. A counter that is a sum over
    messages (the article's estimate) adds each message once, so a log of thousands of
    rounds is counted in one pass, not once per round."""
    per_message = ADDITIVE_COUNTERS.get(count_tokens)
    if per_message is None:
        return tuple(count_tokens(messages[:end]) for end in ends)
    sizes, total, counted = [], 0, 0
    for end in ends:
        total += sum(per_message(message) for message in messages[counted:end])
        counted = end
        sizes.append(total)
    return tuple(sizes)


def transcript_figure(run: SessionRun, messages: Sequence[Mapping]):
    """The two-panel figure of chapter 6 for a replayed transcript, as a static figure; a
    round that both aged and summarized shows its two markers side by side. The token
    panel is on a log scale when the log's largest window is over LOG_SCALE_RATIO times
    the largest one sent (a 146-round log: 251,870 against 2,323), and says so."""
    baseline = transcript_baseline(messages)
    sent = max((r.tokens_after for r in run.rounds), default=0)
    log = sent > 0 and max(baseline.tokens, default=0) > LOG_SCALE_RATIO * sent
    return session_figure(
        run,
        baseline,
        widget=False,
        log_tokens=log,
        token_title="tokens (estimate, log scale)" if log else "tokens (estimate)",
    )


CUT_COLUMNS = [
    "tool_call_id",
    "tool",
    "error",
    "characters",
    "characters in last window",
    "fate",
    "recoverable",
]
# The tool column of environment output an agent logged as a user message (SWE-agent,
# mini-swe-agent): compression ages it like a tool result, but no tool call made it.
OBSERVATION = "(observation)"
NOT_REACHED = "not reached"  # the replay stopped (overflow) before this output arrived


def what_was_cut(run: SessionRun, messages: Sequence[Mapping]) -> pd.DataFrame:
    """One row per output the transcript holds, by its place in `messages`: each tool
    result, and each user message that is environment output (`observation: True`).
    What became of it in the last window, and whether the trace still holds it in full.

    The last window is the log's messages in order, with aged copies, and a summary
    where a range was folded; so each copy is matched to the message it came from by
    position, not by its call id (agents reuse call ids in later turns). A tool output
    is recovered from the trace by its id and text; environment output by the id the
    replay gave it (its place in the log).
    """
    names = _tool_names(messages)
    outputs = _outputs_by_id(run.tracer.records)
    reached = _messages_reached(run, messages)
    copies = _last_window_copies(run.final_messages, messages[:reached])
    folded = any(is_summary(message) for message in run.final_messages)
    rows = []
    for index, message in enumerate(messages):
        observation = is_observation(message)
        if message["role"] != "tool" and not observation:
            continue
        kept = copies.get(index)
        if index >= reached:
            fate = NOT_REACHED
        elif kept is None:
            fate = "folded into the summary" if folded else "not in the window"
        elif is_aged(kept) and not is_aged(message):
            fate = "aged"
        else:
            fate = "verbatim"
        content = message.get("content") or ""
        rows.append(
            {
                "message": index,
                "tool_call_id": "" if observation else message["tool_call_id"],
                "tool": OBSERVATION if observation else names[index],
                "error": (message.get("error") or {}).get("code", ""),
                "characters": len(content),
                "characters in last window": len((kept or {}).get("content") or ""),
                "fate": fate,
                "recoverable": fate != NOT_REACHED
                and _recovered(
                    outputs,
                    environment_id(index) if observation else message["tool_call_id"],
                    content,
                ),
            }
        )
    # a log without tool results still gets the columns (an empty table, not a KeyError)
    return pd.DataFrame(rows, columns=["message"] + CUT_COLUMNS).set_index("message")


def _outputs_by_id(records: Sequence[Mapping]) -> Dict[str, List[Mapping]]:
    """The trace's tool_call records, by the id of the output they hold: looking each
    output up in the whole trace took a pass over it per output (minutes for a log of
    thousands)."""
    found: Dict[str, List[Mapping]] = {}
    for record in records:
        payload = record.get("payload")
        if record.get("event") == "tool_call" and isinstance(payload, dict):
            found.setdefault(payload.get("tool_call_id"), []).append(record)
    return found


def _recovered(
    outputs: Mapping[str, List[Mapping]], output_id: str, content: str
) -> bool:
    """Whether the trace gives back this output whole, by its id (`recover_tool_output`
    on the records that hold that id)."""
    try:
        found = recover_tool_output(outputs.get(output_id, ()), output_id, like=content)
    except KeyError:
        return False
    return found == content


def _messages_reached(run: SessionRun, messages: Sequence[Mapping]) -> int:
    """How many of `messages` the replay took in: all of them, or, when it stopped, those
    before the assistant message of the round it could not send."""
    if run.overflow is None:
        return len(messages)
    replies = [i for i, message in enumerate(messages) if message["role"] == "assistant"]
    return replies[len(run.rounds)]


def _is_copy_of(kept: Mapping, message: Mapping) -> bool:
    """Whether a message of the last window is `message`, whole or aged."""
    if kept.get("role") != message.get("role") or kept.get("tool_call_id") != message.get(
        "tool_call_id"
    ):
        return False
    text, original = kept.get("content") or "", message.get("content") or ""
    if text == original:
        return True
    if not is_aged(kept) or is_aged(message):
        return False
    return all(
        line in original
        for line in text.splitlines()
        if line and not is_marker_line(line)
    )


def _last_window_copies(window: Sequence[Mapping], reached: Sequence[Mapping]) -> dict:
    """{index in `reached`: its copy in the last window}.

    A summary replaces one closed range, so the window is runs of the log's messages in
    order, split by summaries: the first run starts at the log's first message, the last
    ends at its last message reached, and a run between two summaries is found after
    the run before it.
    """
    runs, current = [], []
    for message in window:
        if is_summary(message):
            runs.append(current)
            current = []
        else:
            current.append(message)
    runs.append(current)
    copies = {}
    if len(runs) == 1:
        starts = [0]
    else:
        starts = [0] + [None] * (len(runs) - 2) + [len(reached) - len(runs[-1])]
    position = 0
    for run, start in zip(runs, starts):
        candidates = [start] if start is not None else range(position, len(reached))
        for begin in candidates:
            pairs = list(zip(range(begin, begin + len(run)), run))
            if begin + len(run) <= len(reached) and all(
                _is_copy_of(kept, reached[i]) for i, kept in pairs
            ):
                copies.update(pairs)
                position = begin + len(run)
                break
    return copies


def _tool_names(messages: Sequence[Mapping]) -> dict:
    """The tool name of each result, by its position, from the call it answers."""
    names, calls = {}, {}
    for index, message in enumerate(messages):
        if message["role"] == "assistant":
            calls = {c["id"]: tool_call_name(c) for c in message.get("tool_calls") or ()}
        elif message["role"] == "tool":
            names[index] = calls.get(message["tool_call_id"], "?")
    return names


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
