"""Exercises that check themselves: `check(name, answer)` says whether an answer is
right, and if it is not, gives a hint that names the section to read again. It never
prints the answer. What an answer is checked against is computed by the library when
`check` is called, never stored, so it stays right when a default changes. A chapter's
exercise cell ends `check("11.2", ...)`: the student puts an answer in place of the
`...` and runs it.
"""

import textwrap
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Dict, Optional

from .style import PRINTED_COLUMNS


@dataclass(frozen=True)
class Exercise:
    asks: str  # what the answer is, in a few words
    expected: Callable[[], object]  # computed when checked
    agrees: Callable[[object, object], bool]  # (answer, expected)
    hint: str  # where the reasoning goes wrong most often
    section: str  # the section to read again
    # a right answer, where the answer is open (two texts, a function) and so is not
    # the value checked against; None: the expected value is the answer
    example: Optional[Callable[[], object]] = None

    def a_right_answer(self):
        return self.example() if self.example is not None else self.expected()


def exact(answer, expected) -> bool:
    return answer == expected


def within(tolerance: float) -> Callable[[object, object], bool]:
    """An answer in dollars or tokens within `tolerance` of the computed one."""

    def agrees(answer, expected) -> bool:
        try:
            return abs(float(answer) - float(expected)) <= tolerance
        except (TypeError, ValueError):
            return False

    return agrees


EXERCISES: Dict[str, Exercise] = {}


class Verdict:
    """Whether an answer was right: true or false as a condition (a solution asserts
    it), and nothing shown as a cell's value (its line was printed already)."""

    def __init__(self, right: bool):
        self.right = right

    def __bool__(self) -> bool:
        return self.right

    def __repr__(self) -> str:
        return f"Verdict({self.right})"

    def _ipython_display_(self) -> None:
        pass


def check(name: str, answer) -> Verdict:
    """Print whether `answer` to exercise `name` is right (a hint if not)."""
    exercise = EXERCISES.get(name)
    if exercise is None:
        print(f"no exercise {name!r}; the chapter's are {', '.join(sorted(EXERCISES))}")
        return Verdict(False)
    if answer is None or answer is Ellipsis:
        return _said(f"not yet: put your answer in place of the ...: {exercise.asks}")
    if exercise.agrees(answer, exercise.expected()):
        return _said(f"right: {exercise.asks}", True)
    return _said(f"not yet: {exercise.hint} (read {exercise.section} again)")


def _said(words: str, right: bool = False) -> Verdict:
    print(textwrap.fill(words, PRINTED_COLUMNS, subsequent_indent="  "))
    return Verdict(right)


def share_within(tolerance: float) -> Callable[[object, object], bool]:
    """(a thing named exactly, a share within `tolerance`)."""

    def agrees(answer, expected) -> bool:
        try:
            name, share = answer
            return name == expected[0] and abs(float(share) - expected[1]) <= tolerance
        except (TypeError, ValueError):
            return False

    return agrees


# Chapters 0 and 1: the article's session.


def _runs():
    from ..session import Settings, load_session, run_baseline, run_session

    session = load_session()
    return session, run_baseline(session), run_session, Settings


def _aging_and_summary_at_2000() -> tuple:
    session, _, run_session, settings = _runs()
    run = run_session(session, settings(threshold=2000))
    return (
        sum(1 for r in run.rounds if r.aged),
        sum(1 for r in run.rounds if r.summarized),
    )


def _failed_call() -> tuple:
    _, baseline, _, _ = _runs()
    failed = next(m for m in baseline.final_messages if m.get("error"))
    return failed["tool_call_id"], failed["error"]["code"]


def _final_list() -> tuple:
    session, _, run_session, settings = _runs()
    run = run_session(session, settings())
    return run.final_tokens, len(run.final_messages)


def _message_tokens() -> list:
    from ..tokens import estimate_message_tokens

    _, baseline, _, _ = _runs()
    return [estimate_message_tokens(m) for m in baseline.final_messages]


def _largest_message() -> tuple:
    tokens = _message_tokens()
    largest = max(range(len(tokens)), key=tokens.__getitem__)
    return largest, tokens[largest] / sum(tokens)


def _first_round_over_16k() -> int:
    _, baseline, _, _ = _runs()
    return next(r for r, tokens in enumerate(baseline.tokens) if tokens > 16_000)


def _truncation_keeps() -> tuple:
    """(recent messages path 1 keeps within 1,200 tokens, tool results it drops)."""
    _, baseline, _, _ = _runs()
    tokens, messages = _message_tokens(), baseline.final_messages
    total, kept = sum(tokens[:2]), 0
    for size in reversed(tokens[2:]):
        if total + size > 1200:
            break
        total, kept = total + size, kept + 1
    gone = messages[2 : len(messages) - kept]
    return kept, sum(1 for m in gone if m["role"] == "tool")


EXERCISES.update(
    {
        "0.1": Exercise(
            "(rounds with aging, rounds with the summary) at a threshold of 2,000",
            _aging_and_summary_at_2000,
            exact,
            "count the rounds of `run_session(session, Settings(threshold=2000))` "
            "whose `aged` and whose `summarized` are true",
            "0.4",
        ),
        "0.2": Exercise(
            "(the failed call's id, its error code)",
            _failed_call,
            exact,
            "look for the final message that has an `error` dict; the id is its "
            "`tool_call_id`, the code its `error['code']`",
            "0.4",
        ),
        "0.3": Exercise(
            "(the final list's tokens, its messages) at the default settings",
            _final_list,
            exact,
            "the final list is the run's `final_messages`, counted in `final_tokens`: "
            "the last window sent plus the answer no round sends",
            "0.4",
        ),
        "1.1": Exercise(
            "(the largest message's number, its share of the list's tokens)",
            _largest_message,
            share_within(0.01),
            "count each final message with `estimate_message_tokens`; the share is "
            "the largest over the sum of all of them, as a fraction (0.5 is half)",
            "1.2",
        ),
        "1.2": Exercise(
            "the first round whose window is over 16,000 tokens",
            _first_round_over_16k,
            exact,
            "`run_baseline(session).tokens[r]` is round r's window: find the first "
            "over 16,000 (rounds count from 0)",
            "1.1",
        ),
        "1.3": Exercise(
            "(recent messages kept, tool results dropped) by path 1 at 1,200 tokens",
            _truncation_keeps,
            exact,
            "start from the system prompt and the task, add messages from the newest "
            "back, and stop at the first that does not fit: do not skip it",
            "1.4",
        ),
    }
)


# Chapter 2: the token rule.


def _system_prompt() -> tuple:
    from ..tokens import count_cjk, estimate_message_tokens

    session, _, _, _ = _runs()
    system = {"role": "system", "content": session.system}
    return estimate_message_tokens(system), count_cjk(session.system)


def _eight_characters(answer, expected) -> bool:
    """Two texts of 8 characters each, estimated at 2 and at 8 tokens."""
    from ..tokens import estimate_text_tokens

    try:
        cheap, dear = answer
        return (
            len(cheap) == len(dear) == 8
            and (estimate_text_tokens(cheap), estimate_text_tokens(dear)) == expected
        )
    except (TypeError, ValueError):
        return False


def _task_split() -> int:
    from ..tokens import estimate_tokens

    session, _, _, _ = _runs()
    task, middle = session.task, len(session.task) // 2
    whole = estimate_tokens([{"role": "user", "content": task}])
    halves = estimate_tokens(
        [
            {"role": "user", "content": task[:middle]},
            {"role": "user", "content": task[middle:]},
        ]
    )
    return halves - whole


def _with_arguments(messages) -> int:
    """The article's estimate plus each call's arguments under the same text rule."""
    from ..tokens import estimate_message_tokens, estimate_text_tokens

    total = 0
    for message in messages:
        total += estimate_message_tokens(message)
        for call in message.get("tool_calls") or ():
            total += estimate_text_tokens(call["function"].get("arguments") or "")
    return total


def _counts_like_the_reference(answer, expected) -> bool:
    """A counter that counts every window of the session as `_with_arguments` does."""
    if not callable(answer):
        return False
    try:
        return [answer(window) for window in expected] == [
            _with_arguments(window) for window in expected
        ]
    except Exception:  # the student's function raised: not yet right
        return False


def _session_windows() -> list:
    _, baseline, _, _ = _runs()
    messages = baseline.final_messages
    return [messages[: end + 1] for end in range(len(messages))]


# Chapter 3: tool-result aging.


def _final_list_and_aging():
    from ..aging import ToolResultAging

    _, baseline, _, _ = _runs()
    return list(baseline.final_messages), ToolResultAging(160, 120, 240)


def _aged_and_saved() -> tuple:
    from ..tokens import estimate_tokens

    final, aging = _final_list_and_aging()
    result = aging.compress(final)
    aged = frozenset(final[i]["tool_call_id"] for i in result.affected_indexes)
    return aged, estimate_tokens(final) - estimate_tokens(result.messages)


def _same_set_and_number(answer, expected) -> bool:
    """(the ids, in any order, as a list or a set; the tokens saved)."""
    try:
        ids, saved = answer
        return frozenset(ids) == expected[0] and saved == expected[1]
    except (TypeError, ValueError):
        return False


def _build_log_facts_seen() -> frozenset:
    final, aging = _final_list_and_aging()
    build_log = next(m for m in final if m.get("tool_call_id") == "call_03")
    seen = aging.age_message(build_log)["content"]
    return frozenset(f for f in ("#412", "E2BIG", "1,342,177 bytes") if f in seen)


def _as_a_set(answer, expected) -> bool:
    try:
        return frozenset(answer) == expected
    except TypeError:
        return False


def _shortest_shrunk() -> int:
    _, aging = _final_list_and_aging()
    return next(
        n
        for n in range(241, 5000)
        if aging.age_message(
            {"role": "tool", "tool_call_id": "call_01", "content": "x" * n}
        )
        is not None
    )


def _keeps_the_last_lines(answer, expected) -> bool:
    """A strategy that keeps every rule of the window (`check_strategy`), and keeps
    of every tool result over 240 characters a header line and its last 5 lines."""
    from ..policies import check_strategy

    final = expected
    try:
        if check_strategy(answer, [list(final)]):
            return False
        result = answer.compress(list(final))
    except Exception:  # the student's class raised: not yet right
        return False
    for before, after in zip(final, result.messages):
        text = before.get("content") or ""
        if before["role"] != "tool" or len(text) <= 240:
            continue
        lines = (after.get("content") or "").splitlines()
        if len(lines) != 6 or lines[1:] != text.splitlines()[-5:]:
            return False
    return True


class _KeepLastLines:
    """A right answer to 3.4, for the test of the check."""

    name = "keep_last_lines"

    def compress(self, messages):
        from ..strategy import CompressionResult

        result, affected = list(messages), []
        for index, message in enumerate(messages):
            content = message.get("content") or ""
            if message["role"] == "tool" and len(content) > 240:
                lines = content.splitlines()
                header = f"[last 5 of {len(lines)} lines]"
                result[index] = dict(message, content="\n".join([header] + lines[-5:]))
                affected.append(index)
        return CompressionResult(self.name, result, affected)


EXERCISES.update(
    {
        "3.1": Exercise(
            "(the ids of the results aging cuts, the tokens it saves)",
            _aged_and_saved,
            _same_set_and_number,
            "compress the final list with ToolResultAging(160, 120, 240): its "
            "`affected_indexes` name the results it cut; a result just over "
            "min_chars may be spared, since aging it would make it longer",
            "3.6",
        ),
        "3.2": Exercise(
            "the facts of the build log the model still sees after aging",
            _build_log_facts_seen,
            _as_a_set,
            "aging keeps the head and the tail: look for each fact in "
            "`aging.age_message(build_log)['content']`",
            "3.2",
        ),
        "3.3": Exercise(
            "the shortest all-`x` result the default knobs shrink",
            _shortest_shrunk,
            exact,
            "aging declines a result its header, head and tail would not make "
            "shorter: try lengths from 241 up until `age_message` returns a message",
            "3.6",
        ),
        "3.4": Exercise(
            "a strategy that keeps a header and the last 5 lines of each long result",
            lambda: _final_list_and_aging()[0],
            _keeps_the_last_lines,
            "pass an instance of your class; it must return a CompressionResult "
            "whose long tool results are a header line and their last 5 lines, "
            "every call still answered, the input list left as it was",
            "3.7",
            lambda: _KeepLastLines(),
        ),
    }
)


# Chapter 6: the long-session lab.


def _smallest_threshold_that_finishes() -> int:
    from .dashboard import SLIDERS

    session, _, run_session, settings = _runs()
    spec = next(spec for spec in SLIDERS if spec.name == "threshold")
    grid = range(spec.minimum, spec.maximum + 1, spec.step)
    return next(
        t for t in grid if run_session(session, settings(threshold=t)).overflow is None
    )


def _round_1_without_head_or_tail() -> int:
    session, _, run_session, settings = _runs()
    return (
        run_session(session, settings(head_chars=0, tail_chars=0)).rounds[1].tokens_after
    )


def _where_min_chars_5000_stops() -> int:
    session, _, run_session, settings = _runs()
    return len(run_session(session, settings(min_chars=5000)).rounds)


def _summaries_by_protected_tail() -> tuple:
    session, _, run_session, settings = _runs()
    return tuple(
        sum(r.summarized for r in run_session(session, settings(protect_tail=t)).rounds)
        for t in (0, 4, 8)
    )


EXERCISES.update(
    {
        "2.1": Exercise(
            "(the system prompt's tokens as a message, its CJK characters)",
            _system_prompt,
            exact,
            "a message costs 4 of structure, 1 a CJK character and 1 for every 4 "
            "others, rounded up: `estimate_message_tokens` and `count_cjk` do it",
            "2.1",
        ),
        "2.2": Exercise(
            "(an 8-character text of 2 tokens, one of 8)",
            lambda: (2, 8),
            _eight_characters,
            "each text must be 8 characters long; the cheap one all ASCII, the dear "
            "one all CJK",
            "2.2",
            lambda: ("abcdefgh", "上下文窗口预算满"),
        ),
        "2.3": Exercise(
            "how many more tokens the task costs split into two messages",
            _task_split,
            exact,
            "a second message brings the structure every message costs, and "
            "rounding each half up on its own can add a little more",
            "2.3",
        ),
        "2.4": Exercise(
            "a counter that adds every call's arguments to the article's estimate",
            _session_windows,
            _counts_like_the_reference,
            "pass the function itself; it must count each message as "
            "`estimate_message_tokens` does and add `estimate_text_tokens` of every "
            "call's `function['arguments']`",
            "2.3",
            lambda: _with_arguments,
        ),
        "6.1": Exercise(
            "the smallest threshold on the slider's grid that runs to the end",
            _smallest_threshold_that_finishes,
            exact,
            "step the threshold up the slider's grid from its minimum and stop at "
            "the first run whose `overflow` is None",
            "6.5",
        ),
        "6.2": Exercise(
            "the tokens round 1 sends with head_chars and tail_chars at 0",
            _round_1_without_head_or_tail,
            exact,
            "read `rounds[1].tokens_after` of that run: what was sent, not the "
            "window before compression",
            "6.3",
        ),
        "6.3": Exercise(
            "the round before which the run with min_chars 5,000 stops",
            _where_min_chars_5000_stops,
            exact,
            "a run that stops has as many rounds as it sent: `len(run.rounds)`",
            "6.5",
        ),
        "6.4": Exercise(
            "(rounds with a summary at protect_tail 0, 4, 8)",
            _summaries_by_protected_tail,
            exact,
            "count the rounds whose `summarized` is true in each of the three runs",
            "6.3",
        ),
    }
)


# Chapter 11: the session and sweep the chapter works on.
BILL_LOG = "entire-98-78b713483d-0.jsonl"
BILL_THRESHOLDS = tuple(range(100_000, 190_001, 10_000))


@lru_cache(maxsize=1)
def chapter_11_sweep():
    from ..session import DATA_DIR
    from .bill_view import session_sweep

    path = DATA_DIR / "real" / "claude-code" / BILL_LOG
    return session_sweep(path, "claude-code", BILL_THRESHOLDS)


def _cache_read_dollars() -> float:
    from ..logs import load_log
    from ..measure.bill import record_bill
    from ..session import DATA_DIR

    log = load_log(DATA_DIR / "real" / "claude-code" / BILL_LOG)
    return record_bill(log).usd_by_kind()["cache_read"]


EXERCISES.update(
    {
        "11.1": Exercise(
            "the dollars the session's cache reads cost, to the cent",
            _cache_read_dollars,
            within(0.005),
            "sum the cache-read dollars of every call the record prices "
            "(`record_bill(...).usd_by_kind()`), not its cache-read tokens",
            "11.2",
        ),
        "11.2": Exercise(
            "the swept threshold at which the session is cheapest",
            lambda: chapter_11_sweep().cheapest.threshold,
            exact,
            "a lower threshold compacts more often, but each compaction shrinks "
            "every call after it: compare the bills of the whole sweep, "
            "`min(sweep.points, key=...)`",
            "11.4",
        ),
        "11.3": Exercise(
            "how many more facts the cheapest threshold loses than 160,000 does",
            lambda: (
                chapter_11_sweep().cheapest.facts_lost
                - chapter_11_sweep().at(160_000).facts_lost
            ),
            exact,
            "the facts lost are those the agent used after they left every window: "
            "read them off the two points (`sweep.at(threshold).facts_lost`) and "
            "subtract",
            "11.4",
        ),
    }
)
