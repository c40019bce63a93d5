"""How `compress` and `compare` count a log, and at which window they replay it.

A real agent's log is counted as its API counted it as nearly as the lab can: what
each call sent (text, call arguments, the thinking the model keeps), by the article's
text rule, or calibrated to the log's recorded usage (`--calibration FILE`,
`--tokenizer calibrated`). It replays at the window of the model it names
(minilib.agents.windows). The article's own transcripts keep the article's rule and
its 1,200 tokens.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

from ..agents.windows import ARTICLE_WINDOW, agent_window
from ..measure.calibration import (
    SENT_LABEL,
    THINKING_RULES,
    Calibration,
    calibrate,
    format_calibration,
    load_calibration,
    sent_counter,
)
from ..session import DATA_DIR
from .common import counter

ARTICLE_TRANSCRIPTS = DATA_DIR / "transcripts"


@dataclass
class Counting:
    """The counter a replay governs with, its label, the window and the lines that
    say why, and the calibration behind it (if any)."""

    count_tokens: object
    counted_with: str
    window: int
    window_why: str
    overhead: int = 0  # calibrated: what every call counted beyond its messages
    calibration: Optional[Calibration] = None
    lines: List[str] = field(default_factory=list)

    @property
    def threshold(self) -> int:
        """What the messages may hold: the window less the calibrated overhead."""
        return self.window - self.overhead


def is_article_transcript(log) -> bool:
    path = getattr(log, "path", None)
    if path is None:
        return False
    try:
        return Path(path).resolve().parent == ARTICLE_TRANSCRIPTS.resolve()
    except OSError:
        return False


def counting_for(
    log, tokenizer: str, calibration_file: Optional[Path], window: Optional[int]
) -> Counting:
    """The count and window for `log` (CalibrationError, TokenizerUnavailable on a bad
    file or a missing package)."""
    article = is_article_transcript(log) and not log.agent and not log.model
    if window is not None:
        tokens, why = window, "given on the command line"
    elif article:
        tokens, why = ARTICLE_WINDOW, "the article's threshold, for the article's session"
    else:
        tokens, why, _ = agent_window(log)
    if calibration_file is not None or tokenizer == "calibrated":
        return _calibrated(log, calibration_file, tokens, why)
    if tokenizer != "estimate" or article:
        count_tokens, counted_with = counter(tokenizer)
        return Counting(count_tokens, counted_with, tokens, why)
    count_tokens = sent_counter(log)
    label = SENT_LABEL.format(rule=THINKING_RULES[count_tokens.rule])
    return Counting(count_tokens, label, tokens, why)


def _calibrated(log, calibration_file, tokens, why) -> Counting:
    if calibration_file is not None:
        calibration = load_calibration(calibration_file)
        source = f"calibrated with {calibration_file}"
        lines = [
            f"calibration: {calibration_file} (fitted on {calibration.log or 'a log'})"
        ]
    else:
        calibration = calibrate(log)
        if calibration is None:
            count_tokens = sent_counter(log)
            return Counting(
                count_tokens,
                SENT_LABEL.format(rule=THINKING_RULES[count_tokens.rule])
                + "; not calibrated: the log records no usage",
                tokens,
                why,
            )
        source = "calibrated on this log's recorded usage"
        lines = format_calibration(calibration).splitlines()
    if note := calibration.model_note(log):
        lines.append(note)
    count_tokens = calibration.counter(log)
    overhead = calibration.overhead(log)
    label = (
        f"{source}: {count_tokens.ratio:.2f} x the lab's count of what a call sent, "
        f"{overhead:,} overhead a call"
    )
    return Counting(count_tokens, label, tokens, why, overhead, calibration, lines)


def window_lines(counting: Counting) -> List[str]:
    """The first lines of the output: the window, why, what the messages may hold."""
    why = counting.window_why
    if why.startswith("a stated default"):  # how to set it, in this command's words
        why = why[:-1] + "; give --threshold (compress) or --window (compare) to set it)"
    lines = [f"window: {counting.window:,} tokens ({why})"]
    if counting.overhead:
        lines.append(
            f"threshold: {counting.threshold:,} tokens for the messages (the window "
            f"less the {counting.overhead:,}-token overhead every call counted)"
        )
    return lines
