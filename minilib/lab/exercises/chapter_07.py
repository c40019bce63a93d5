"""Chapter 7's exercises: agent logs, and what the library guarantees."""

from . import EXERCISES, Exercise, alike

GRID = range(100, 1501, 50)


def _transcript(name: str) -> list:
    from ...logs import load_transcript
    from ...session import DATA_DIR

    return load_transcript(DATA_DIR / "transcripts" / name).messages


def _replayed(messages, **settings):
    from ...logs import replay_transcript
    from ...logs.replay import ARTICLE
    from ...session import Settings

    return replay_transcript(messages, Settings(**settings), window=ARTICLE)


def _smallest_threshold_for_cjk() -> int:
    cjk = _transcript("cjk_refactor.jsonl")
    return next(t for t in GRID if _replayed(cjk, threshold=t).overflow is None)


def _valid_last_n() -> tuple:
    from ..transcripts_view import naive_cut_table

    coding = _transcript("coding_agent_fix.json")
    last_call = max(i for i, m in enumerate(coding) if m["role"] == "assistant")
    table = naive_cut_table(coding[:last_call], range(1, 13))
    return tuple(int(n) for n in table.index if table.loc[n, "valid"])


def _aged_cjk_against_ascii() -> tuple:
    from ...aging import aged_content
    from ...tokens import estimate_tokens
    from ...trace import recover_tool_output

    stopped = _replayed(_transcript("cjk_refactor.jsonl"), threshold=650)
    aged = stopped.overflow.window[stopped.overflow.largest_index]
    call_id = aged["tool_call_id"]
    original = recover_tool_output(stopped.tracer.records, call_id)
    ascii_cut = aged_content("x" * len(original), 160, 120, call_id)
    return (
        estimate_tokens([aged]),
        estimate_tokens([{"role": "tool", "content": ascii_cut}]),
    )


def _codex_rollout_at_500() -> tuple:
    from ...logs import load_transcript
    from ...session import DATA_DIR

    codex = load_transcript(DATA_DIR / "logs" / "codex_rollout.jsonl").messages
    article_rule = _replayed(codex, threshold=500)
    folding = _replayed(codex, threshold=500, fold_user_turns=True)
    return len(article_rule.rounds), folding.overflow is None


EXERCISES.update(
    {
        "7.1": Exercise(
            "the smallest threshold on the 50-token grid at which cjk_refactor.jsonl "
            "replays to its final answer",
            _smallest_threshold_for_cjk,
            alike,
            "replay at every threshold of the grid from 100 with the article's "
            "pipeline (`window=ARTICLE`) and take the first whose `overflow` is None",
            "7.6",
        ),
        "7.2": Exercise(
            "the N from 1 to 12 for which keeping the last N messages is valid",
            _valid_last_n,
            alike,
            "cut the window before the final answer (not the whole log); "
            "`naive_cut_table` marks each N valid or not",
            "7.5",
        ),
        "7.3": Exercise(
            "(the tokens of the aged CJK result, of the same cut of an ASCII output of "
            "its length)",
            _aged_cjk_against_ascii,
            alike,
            "the stopped replay's `overflow` names the aged result; recover its "
            "original from the trace and age an ASCII text of the same length with "
            "`aged_content(text, 160, 120, call_id)`",
            "7.3",
        ),
        "7.4": Exercise(
            "(the round the article's rule stops before, whether folding user turns "
            "reaches the end) at 500",
            _codex_rollout_at_500,
            alike,
            "a replay that stops has as many rounds as it sent; replay once more with "
            "`fold_user_turns=True`",
            "7.9",
        ),
    }
)
