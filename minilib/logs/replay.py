"""Agent logs replayed: load one, and replay it through the window round by round.

`load_transcript(path)` reads any log shape `minilib.logs` knows (OpenAI chat
completions, the Anthropic Messages API, Claude Code, Codex CLI, SWE-agent,
mini-swe-agent, OpenHands, Gemini CLI) into chat-completions messages, and checks
them like every other entry point does. A round is one assistant message:
`replay_transcript` governs the window the model would have seen just before it,
with the same loop (`minilib.loop.replay`) the bundled session uses, so the CLI
prints the same table and writes the same trace.

A real agent's log runs to hundreds of rounds and many user turns, so the window
is by default the production one (`window="production"`): the article's pipeline
with the bounded summary (`minilib.scale.bounded_window`, its default budget), behind
`FastWindow`, with later user turns folded, quoted whole, and so are the system or
developer messages a harness writes between them (Codex Desktop's permission and
instruction messages): nothing the harness wrote stops the summary. The article's
range rule (it never folds a later user turn) and its unbounded summary stop such a
log at its second user turn, or once the summary is the largest message left;
`window="article"` replays the article's exact pipeline.

Where the agent compacted its own history (`LoadedLog.compactions`: Codex's
`compacted` line, Claude Code's `compact_boundary`), the replay goes on as the model
saw it: the history it holds gives way to the compaction's replacement (the system
prompt kept), and the lab's compression governs what comes after. Each stretch
between compactions is one `replay`, its opening the replacement; their rounds and
traces are joined with the round numbers running on. `full_history=True` replays the
whole history instead, as if the agent had never compacted.
"""

from dataclasses import dataclass, replace
from typing import List, Mapping, Optional, Sequence, Tuple

from ..loop import Replay, replay
from ..messages import InvalidMessagesError, validate_messages
from ..model import scripted_summary
from ..scale.bounded import bounded_window, default_summary_budget
from ..scale.fast import FastWindow
from ..scale.recorded import (  # noqa: F401  (names the lab and the CLI import from here)
    RecordedConversation,
    environment_id,
    fresh_copy,
    with_output_ids,
)
from ..session import Baseline, SessionRun, session_run
from ..summary import Summarizer
from ..tokens import (
    TokenCounter,
    estimate_text_tokens,
    estimate_tokens,
    known_per_message,
)
from ..trace import Tracer, event_records
from ..window import Settings, article_window
from . import clipped, load_log, parse_log
from .base import AgentCompaction, LoadedLog, LogFileError

TranscriptFileError = LogFileError  # one error for every file the lab reads as a log

# The windows a log can be replayed through: the default suits a real agent session.
PRODUCTION, ARTICLE = "production", "article"
WINDOWS = (PRODUCTION, ARTICLE)


def check_window(window: str) -> str:
    if window not in WINDOWS:
        raise ValueError(f"window must be one of {', '.join(WINDOWS)}, got {window!r}")
    return window


def log_settings(window: str = PRODUCTION) -> Settings:
    """The settings a log is replayed at unless told otherwise: the article's values,
    and for the production window later user turns folded (a session has many)."""
    check_window(window)
    return Settings(fold_user_turns=window == PRODUCTION)


def log_window(
    window: str,
    settings: Settings,
    count_tokens: TokenCounter = estimate_tokens,
    summarize: Summarizer = scripted_summary,
    summary_budget: Optional[int] = None,
):
    """The window `replay_transcript` governs a log with, and its summary's budget in
    tokens (None for the article's, which has none): the article's ContextWindow, or
    the bounded summary's window behind FastWindow (the same results, and a round that
    only appended costs only what it appended)."""
    if check_window(window) == ARTICLE:
        if summary_budget is not None:
            raise ValueError(
                "summary_budget is the production window's; the article's summary "
                "has no budget"
            )
        return article_window(summarize, settings, count_tokens), None
    if summary_budget is None:
        summary_budget = default_summary_budget(settings.threshold)
    # A real tokenizer's counter says how it counts one message and one text
    # (minilib.measure.tokenizers); the estimate's are known to both.
    count_text = getattr(count_tokens, "count_text", estimate_text_tokens)
    bounded = bounded_window(
        settings, count_tokens, summary_budget, count_text, base=summarize
    )
    return FastWindow(bounded, getattr(count_tokens, "per_message", None)), summary_budget


def _checked(log: LoadedLog, source: str) -> LoadedLog:
    if not log.messages:
        raise LogFileError(f"{source}: the log holds no messages the model saw")
    try:
        validate_messages(log.messages)
    except InvalidMessagesError as error:  # named by the file's own line or field too
        raise LogFileError(clipped(f"{source}: {log.placed(str(error))}")) from None
    for compaction, (window, _) in zip(
        log.compactions, sent_stretches(log.messages, log.compactions)[1:]
    ):
        try:  # what the model saw after it: the replacement and what followed
            validate_messages(window)
        except InvalidMessagesError as error:
            raise LogFileError(
                f"{source}: {compaction.where}: the window after this compaction: {error}"
            ) from None
    return log


def load_transcript(
    path, max_bytes: Optional[int] = None, strict: bool = False
) -> LoadedLog:
    """Read and check an agent log of any known shape (see `minilib.logs.SHAPES`);
    `strict` refuses the gaps a reader would otherwise repair (`LoadedLog.repairs`)."""
    limit = {} if max_bytes is None else {"max_bytes": max_bytes}
    log = load_log(path, strict=strict, **limit)
    return _checked(log, str(log.path))


def parse_transcript(
    text: str,
    source: str = "<transcript>",
    strict: bool = False,
    beside: Optional[Mapping[str, bytes]] = None,
) -> LoadedLog:
    """The checked LoadedLog of a log's text; `source` names it in errors; `beside`:
    the files uploaded with it, by name (see `parse_log`)."""
    return _checked(parse_log(text, source, strict, beside), source)


@dataclass
class TranscriptRun(SessionRun):
    """A replayed log: the SessionRun, and the agent's own compactions it met.

    `agent_compactions` pairs each compaction the log records with the round it came
    before (the log's assistant messages before it); `full_history` is True when the
    replay went through them with the whole history instead of following them.
    """

    agent_compactions: Tuple[Tuple[int, AgentCompaction], ...] = ()
    full_history: bool = False
    window: str = PRODUCTION
    summary_budget: Optional[int] = None  # the bounded summary's, in tokens

    def window_line(self) -> str:
        """Which window governed the replay, with what budget, and whether later user
        turns were folded: one line for the report."""
        if self.window == ARTICLE:
            said = "window: the article's pipeline (aging, then the unbounded summary)"
        else:
            said = (
                "window: production (aging, then a summary bounded to "
                f"{self.summary_budget:,} tokens, behind FastWindow)"
            )
        if self.settings.fold_user_turns:
            return said + (
                "; later user turns and the system messages between them folded, "
                "quoted whole"
            )
        return said + "; later user turns not folded (the article's rule)"

    def compaction_lines(self) -> List[str]:
        """One line a compaction: where it happened, what it replaced, what the replay
        did there."""
        lines = []
        reached = len(self.tracer.events("agent_compaction"))  # those it went through
        for number, (round_number, compaction) in enumerate(self.agent_compactions):
            said = (
                f"{compaction.name} before round {round_number} ({compaction.where}, "
                f"{compaction.recorded_by}): "
            )
            if self.full_history:
                said += "replayed through with the full history"
            elif number >= reached:  # an overflow ended the replay before it
                said += "not reached"
            else:
                said += (
                    f"{compaction.replaced} messages replaced by "
                    f"{len(compaction.replacement)}, the replay went on from them"
                )
            lines.append(said)
        return lines


class _Resumed(RecordedConversation):
    """The stretch of a log after a compaction: the replacement opens it and is never
    replayed as replies (an assistant message in it was said before)."""

    def __init__(self, messages: Sequence[Mapping], opening: int):
        super().__init__(messages)
        self.replies = [index for index in self.replies if index >= opening]


def sent_stretches(
    messages: Sequence[Mapping], compactions: Sequence[AgentCompaction]
) -> List[Tuple[List[Mapping], int]]:
    """The windows between compactions, each with the length of its opening: the log
    up to the first compaction, then the kept system prompt, a compaction's
    replacement and the log's messages up to the next one."""
    messages = [  # environment output keeps the id its place in the whole log gives it
        {**m, "output_id": f"env_{index}"}
        if m.get("observation") and m["role"] == "user" and not m.get("output_id")
        else m
        for index, m in enumerate(messages)
    ]
    bounds = [0] + [compaction.at for compaction in compactions] + [len(messages)]
    segments = [(list(messages[: bounds[1]]), 0)]
    for number, compaction in enumerate(compactions, 1):
        if not bounds[number - 1] <= compaction.at <= len(messages):
            raise ValueError(
                f"compactions[{number - 1}].at {compaction.at} is out of order "
                f"or past the log's {len(messages)} messages"
            )
        opening = list(messages[: compaction.kept]) + list(compaction.replacement)
        segments.append(
            (opening + list(messages[bounds[number] : bounds[number + 1]]), len(opening))
        )
    return segments


def _joined(segments, window, count_tokens, compactions=()) -> Replay:
    """The segments replayed one after the other through `window` (None: no
    compression) as one Replay: round numbers and trace steps run on, and the trace
    (`compactions` given) records each compaction where it happened."""
    tracer = Tracer() if compactions else None
    joined = Replay([], [], [], tracer)
    for number, (messages, opening) in enumerate(segments):
        offset = len(joined.rounds)
        if number and tracer is not None:
            compaction = compactions[number - 1]
            tracer.event(
                "agent_compaction",
                {
                    "step": offset,
                    "where": compaction.where,
                    "recorded_by": compaction.recorded_by,
                    "replaced": compaction.replaced,
                    "replacement": [dict(m) for m in compaction.replacement],
                },
            )
        conversation = _Resumed(messages, opening)
        if not conversation.replies:  # nothing was asked of the model in this stretch
            joined.messages = conversation.messages
            continue
        run = replay(
            conversation,
            window,
            tracer=None if tracer is None else Tracer(),
            count_tokens=count_tokens,
            max_steps=None,
        )
        joined.rounds += [replace(r, round=r.round + offset) for r in run.rounds]
        joined.compressions += [
            replace(c, step=c.step + offset) for c in run.compressions
        ]
        joined.decisions += run.decisions
        joined.messages = run.messages
        for record in event_records(run.tracer.records) if tracer is not None else ():
            payload = dict(record["payload"])
            if "step" in payload:
                payload["step"] += offset
            if record["event"] == "model_call":  # its messages recorded in this trace
                tracer.model_call(
                    payload["step"],
                    payload["purpose"],
                    payload["input"],
                    payload["reply"],
                )
            else:
                tracer.event(record["event"], payload)
        if run.overflow is not None:
            joined.overflow = run.overflow
            break
    return joined


def baseline_rounds(
    stretches: Sequence[Tuple[Sequence[Mapping], int]],
    rounds: int,
    count_tokens: TokenCounter = estimate_tokens,
) -> Baseline:
    """The uncompressed window before each of the first `rounds` assistant messages.

    `stretches` are the lists the agent sent from, in order, each with the length of
    its opening: the whole log (0), or each stretch between its own compactions
    (opening with the replacement, whose assistant messages were said before and are
    no round). The baseline of a round is the stretch
    up to that assistant message, as a replay without compression counts it; only the
    messages added since the round before are counted (when the counter is a sum over
    messages), and no round past `rounds` is computed, so a long log's baseline costs
    what its messages cost once. `final_messages` is the window of the last round.
    """
    per_message = known_per_message(count_tokens)
    tokens: List[int] = []
    sizes: List[int] = []
    last: Sequence[Mapping] = ()  # the stretch of the last round computed
    for stretch, opening in stretches:
        stretch = with_output_ids(stretch)
        total = counted = 0
        for index, message in enumerate(stretch):
            if len(tokens) == rounds:
                break
            if index < opening or message["role"] != "assistant":
                continue
            if per_message is None:  # not known to add up: the whole window, each round
                total = count_tokens(stretch[:index])
            else:
                total += sum(map(per_message, stretch[counted:index]))
                counted = index
            tokens.append(total)
            sizes.append(index)
            last = stretch
    window = tuple(last[: sizes[-1]]) if sizes else ()
    return Baseline(tuple(tokens), tuple(sizes), window, count_tokens(window))


def replay_transcript(
    messages,
    settings: Optional[Settings] = None,
    count_tokens: TokenCounter = estimate_tokens,
    summarize: Summarizer = scripted_summary,
    *,
    compactions: Optional[Sequence[AgentCompaction]] = None,
    full_history: bool = False,
    window: str = PRODUCTION,
    summary_budget: Optional[int] = None,
) -> TranscriptRun:
    """Govern the window before every assistant message of `messages`, as the loop would
    have.

    `messages` is a LoadedLog or its messages; `compactions` (by default the log's)
    are the agent's own compactions, followed unless `full_history`. The baseline of a
    round is what the agent itself sent, uncompressed by the lab: the log up to that
    assistant message, or after a compaction the kept system prompt, the compaction's
    replacement and what followed (with `full_history`, the whole log up to it). The
    compressed window is what `window` made of the previous window plus the messages
    that arrived since (after a compaction, of the replacement): "production" (the
    default) the bounded summary's window behind FastWindow, its budget
    `summary_budget` (by default `default_summary_budget(threshold)`); "article" the
    article's ContextWindow. `settings` default to `log_settings(window)`: the
    article's values, later user turns folded in the production window only. A
    ContextOverflowError ends the replay and is kept in `run.overflow`, like
    `run_session`; the baseline stops at the same round. `messages` is not changed.
    """
    # 1. what is replayed: checked settings, the messages, the compactions to follow
    settings = _checked_settings(settings, window)
    messages, compactions = _history(messages, compactions)
    # 2. the window that governs it, and the round each compaction came before
    governing, summary_budget = log_window(
        window, settings, count_tokens, summarize, summary_budget
    )
    made = {
        "agent_compactions": tuple(
            (sum(m["role"] == "assistant" for m in messages[: c.at]), c)
            for c in compactions
        ),
        "window": window,
        "summary_budget": summary_budget,
    }
    # 3. as the model saw it, each stretch between compactions; or the whole history
    if compactions and not full_history:
        stretches = sent_stretches(messages, compactions)
        for segment, _ in stretches[1:]:
            validate_messages(segment)
        governed = _joined(stretches, governing, count_tokens, compactions)
    else:
        stretches = [(messages, 0)]
        made["full_history"] = bool(compactions)
        # behind FastWindow a message is never changed in place once sent
        governed = _replayed_whole(
            messages, governing, count_tokens, window == PRODUCTION
        )
    # 4. set beside what the agent sent, uncompressed
    return _beside_baseline(settings, governed, stretches, count_tokens, made)


def _checked_settings(settings: Optional[Settings], window: str) -> Settings:
    check_window(window)
    if settings is None:
        return log_settings(window)
    if not isinstance(settings, Settings):
        raise TypeError(
            f"settings must be a minilib Settings, got {type(settings).__name__}"
        )
    return settings


def _history(messages, compactions) -> Tuple[List[Mapping], Tuple[AgentCompaction, ...]]:
    """The checked messages, environment outputs given ids by their place in the
    whole log (so across compactions), and the compactions (by default the log's)."""
    if isinstance(messages, LoadedLog):
        compactions = messages.compactions if compactions is None else compactions
        messages = messages.messages
    validate_messages(messages)
    return with_output_ids(messages), tuple(compactions or ())


def _replayed_whole(messages, governing, count_tokens, by_identity: bool) -> Replay:
    """The whole history replayed as one conversation (no round when no reply)."""
    conversation = RecordedConversation(messages)
    if not conversation.replies:  # no model call, so no round to govern
        return Replay([], [], conversation.messages, Tracer())
    return replay(
        conversation,
        governing,
        tracer=Tracer(messages_are_values=by_identity),
        count_tokens=count_tokens,
        max_steps=None,
    )


def _beside_baseline(settings, governed: Replay, stretches, count_tokens, made: dict):
    """The TranscriptRun: the governed rounds beside the uncompressed window of each
    (a replay with no round has no baseline)."""
    if not governed.rounds and governed.overflow is None:
        final = governed.messages
        return TranscriptRun(
            settings, [], [], final, count_tokens(final), governed.tracer, **made
        )
    baseline = baseline_rounds(stretches, len(governed.rounds), count_tokens)
    run = session_run(settings, governed, baseline, count_tokens)
    return TranscriptRun(**run.__dict__, **made)


def user_turn_advice(messages, settings: Settings, run: SessionRun) -> str:
    """When the article's range rule alone stopped a replay, say so ("" otherwise).

    The article's summary folds assistant and tool messages only, so a log with several
    user turns (Claude Code, Codex) cannot fold past its second turn; the same replay
    with `fold_user_turns` shows whether that rule is what stopped it. `messages` is
    the LoadedLog or its messages; a TranscriptRun's compactions are met the same way.
    """
    if run.overflow is None or settings.fold_user_turns:
        return ""
    same = {"window": ARTICLE}  # a SessionRun is the article's
    if isinstance(run, TranscriptRun):
        same = {
            "compactions": [compaction for _, compaction in run.agent_compactions],
            "full_history": run.full_history,
            "window": run.window,
            "summary_budget": run.summary_budget,
        }
    folding = replay_transcript(messages, replace(settings, fold_user_turns=True), **same)
    if folding.overflow is not None and len(folding.rounds) <= len(run.rounds):
        return ""
    how_far = (
        "completes"
        if folding.overflow is None
        else f"gets to round {len(folding.rounds)}"
    )
    return (
        "the article's rule stopped it: the summary may not fold a later user turn. "
        "With --fold-user-turns (user turns quoted whole in the summary) "
        f"the replay {how_far}."
    )
