"""Chapter 2's exercises: the token rule."""

from . import EXERCISES, Exercise, exact
from . import article_runs as _runs


def _system_prompt() -> tuple:
    from ...tokens import count_cjk, estimate_message_tokens

    session, _, _, _ = _runs()
    system = {"role": "system", "content": session.system}
    return estimate_message_tokens(system), count_cjk(session.system)


def _eight_characters(answer, expected) -> bool:
    """Two texts of 8 characters each, estimated at 2 and at 8 tokens."""
    from ...tokens import estimate_text_tokens

    try:
        cheap, dear = answer
        return (
            len(cheap) == len(dear) == 8
            and (estimate_text_tokens(cheap), estimate_text_tokens(dear)) == expected
        )
    except (TypeError, ValueError):
        return False


def _task_split() -> int:
    from ...tokens import estimate_tokens

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
    from ...tokens import estimate_message_tokens, estimate_text_tokens

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
    }
)
