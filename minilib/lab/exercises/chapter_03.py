"""Chapter 3's exercises: tool-result aging."""

from . import EXERCISES, Exercise, exact
from . import article_runs as _runs


def _final_list_and_aging():
    from ...aging import ToolResultAging

    _, baseline, _, _ = _runs()
    return list(baseline.final_messages), ToolResultAging(160, 120, 240)


def _aged_and_saved() -> tuple:
    from ...tokens import estimate_tokens

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
    from ...policies import check_strategy

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
        from ...strategy import CompressionResult

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
