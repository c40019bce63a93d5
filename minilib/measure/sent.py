"""What a harness really sent, beside what a replay of its log sends.

Some logs record every window the harness sent (Aider's LLM history: see
`minilib.logs.aider`); the reader keeps them in `LoadedLog.sent_windows`. A replay
rebuilds each round's window from the final conversation instead, so the two differ
where the harness re-sent files, dropped or summarized old turns, or added a
reminder. `compare_sent` lines them up by the reply: the call whose response is the
replay's round reply. A call whose reply is not in the conversation (a history
aider summarized or cleared) has no round.

>>> from minilib.logs.base import LoadedLog
>>> from minilib.logs.aider import SentWindow
>>> from minilib.logs.replay import replay_transcript
>>> from minilib.window import Settings
>>> window = [{"role": "user", "content": "Add a flag."}]
>>> log = LoadedLog(window + [{"role": "assistant", "content": "Done."}], "demo",
...     sent_windows=[SentWindow(1, window, "Done.", 1)])
>>> run = replay_transcript(log.messages, Settings(threshold=1000))
>>> [(row.call, row.round, row.sent_tokens == row.replayed_tokens)
...  for row in compare_sent(log, run)]
[(1, 0, True)]
"""

from dataclasses import dataclass
from typing import List, Optional

from ..tokens import TokenCounter, estimate_tokens


@dataclass(frozen=True)
class SentRow:
    """One call: the tokens really sent beside the replay's window for that reply."""

    call: int  # the call's number in the log
    line: int  # where the log records it
    sent_tokens: int  # the window the harness really sent
    round: Optional[int]  # the replay's round with the same reply, None if none
    replayed_tokens: Optional[int]  # that round's window before compression
    compressed_tokens: Optional[int]  # the same window after the replay's compression


def compare_sent(log, run, count_tokens: TokenCounter = estimate_tokens) -> List[SentRow]:
    """Per call of `log.sent_windows`: tokens really sent vs the replay `run`'s window.

    `run` is `replay_transcript(log.messages, settings)`; calls are matched to its
    rounds in order, by the reply text, so a reply that repeats is matched once."""
    replies = [
        (message.get("content") or "").strip()
        for message in log.messages
        if message["role"] == "assistant"
    ]
    rows, start = [], 0
    for sent in log.sent_windows or ():
        found = None
        if sent.reply is not None:
            for index in range(start, len(replies)):
                if replies[index] == sent.reply.strip():
                    found, start = index, index + 1
                    break
        reached = found is not None and found < len(run.rounds)
        replayed = run.rounds[found] if reached else None
        rows.append(
            SentRow(
                sent.call,
                sent.line,
                count_tokens(sent.messages),
                found,
                replayed.baseline_tokens if replayed else None,
                replayed.tokens_after if replayed else None,
            )
        )
    return rows


def count_or_dash(value: Optional[int]) -> str:
    """A count as a table shows it: with thousands separators, "-" where there is none."""
    return "-" if value is None else f"{value:,}"


def sent_table(rows: List[SentRow]) -> str:
    """The rows as aligned text: call, line, sent, replayed, compressed."""
    head = ("call", 4), ("line", 5), ("sent", 7), ("replayed", 8), ("compressed", 10)
    lines = ["  ".join(f"{name:>{width}}" for name, width in head)]
    for row in rows:
        replayed = count_or_dash(row.replayed_tokens)
        compressed = count_or_dash(row.compressed_tokens)
        lines.append(
            f"{row.call:>4}  {row.line:>5}  {row.sent_tokens:>7,}  {replayed:>8}  "
            f"{compressed:>10}"
        )
    return "\n".join(lines)
