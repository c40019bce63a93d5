"""Agent logs replayed: load one, and replay it through the window round by round.

`load_transcript(path)` reads any log shape `minilib.logs` knows (OpenAI chat
completions, the Anthropic Messages API, Claude Code, Codex CLI, SWE-agent,
mini-swe-agent, OpenHands, Gemini CLI) into chat-completions messages, and checks
them like every other entry point does. A round is one assistant message:
`replay_transcript` governs the window the model would have seen just before it,
with the same ContextWindow and the same loop (`minilib.loop.replay`) the bundled
session uses, so the CLI prints the same table and writes the same trace.

Where the agent compacted its own history (`LoadedLog.compactions`: Codex's
`compacted` line, Claude Code's `compact_boundary`), the replay goes on as the model
saw it: the history it holds gives way to the compaction's replacement (the system
prompt kept), and the lab's compression governs what comes after. Each stretch
between compactions is one `replay`, its opening the replacement; their rounds and
traces are joined with the round numbers running on. `full_history=True` replays the
whole history instead, as if the agent had never compacted.
"""

import copy
from dataclasses import dataclass, replace
from typing import List, Mapping, Optional, Sequence, Tuple

from ..loop import Replay, replay
from ..messages import InvalidMessagesError, is_observation, validate_messages
from ..model import scripted_summary
from ..session import Baseline, SessionRun, session_run
from ..summary import Summarizer
from ..tokens import TokenCounter, estimate_tokens, tool_call_name
from ..trace import Tracer, event_records
from ..window import Settings, article_window
from . import clipped, load_log, parse_log
from .base import AgentCompaction, LoadedLog, LogFileError

TranscriptFileError = LogFileError  # one error for every file the lab reads as a log


def _checked(log: LoadedLog, source: str) -> LoadedLog:
    if not log.messages:
        raise LogFileError(f"{source}: the log holds no messages the model saw")
    try:
        validate_messages(log.messages)
    except InvalidMessagesError as error:  # named by the file's own line or field too
        raise LogFileError(clipped(f"{source}: {log.placed(str(error))}")) from None
    for compaction, (window, _) in zip(
        log.compactions, _segments(log.messages, log.compactions)[1:]
    ):
        try:  # what the model saw after it: the replacement and what followed
            validate_messages(window)
        except InvalidMessagesError as error:
            raise LogFileError(
                f"{source}: {compaction.where}: the window after this compaction: {error}"
            ) from None
    return log


def load_transcript(path, max_bytes: Optional[int] = None) -> LoadedLog:
    """Read and check an agent log of any known shape (see `minilib.logs.SHAPES`)."""
    log = load_log(path) if max_bytes is None else load_log(path, max_bytes)
    return _checked(log, str(log.path))


def parse_transcript(text: str, source: str = "<transcript>") -> LoadedLog:
    """The checked LoadedLog of a log's text; `source` names it in errors."""
    return _checked(parse_log(text, source), source)


class RecordedConversation:
    """A recorded log played back: its assistant messages are the replies, the rest
    arrives between them.

    Each tool output, and each environment output recorded as a user message, is
    traced in full when it arrives, so `recover_tool_output` finds whatever aging or a
    summary cut. Environment output has no call id: it gets `output_id` "env_<n>" (its
    place in the log), which is what an aged copy's omission line names.
    """

    def __init__(self, messages: Sequence[Mapping]):
        self.messages = with_output_ids([copy.deepcopy(dict(m)) for m in messages])
        self.replies = [
            index
            for index, message in enumerate(self.messages)
            if message["role"] == "assistant"
        ]

    def opening(self) -> List[dict]:
        return self.messages[: self.replies[0]] if self.replies else list(self.messages)

    def reply(self, window, step: int) -> dict:
        return copy.deepcopy(self.messages[self.replies[step]])

    def arrivals(self, reply: Mapping, step: int, tracer) -> Tuple[List[dict], bool]:
        start = self.replies[step] + 1
        end = (
            self.replies[step + 1] if step + 1 < len(self.replies) else len(self.messages)
        )
        arrived = [copy.deepcopy(message) for message in self.messages[start:end]]
        calls = {call["id"]: call for call in reply.get("tool_calls") or ()}
        for message in arrived:
            if tracer is not None and message["role"] == "tool":
                call = calls[message["tool_call_id"]]  # positional: a call of this reply
                tracer.tool_call(
                    step,
                    call["id"],
                    tool_call_name(call),
                    call["function"].get("arguments") or "{}",
                    message["content"],
                    message.get("error"),
                )
            elif tracer is not None and is_observation(message):
                tracer.tool_call(
                    step, message["output_id"], "environment", "{}", message["content"]
                )
        return arrived, step + 1 < len(self.replies)


@dataclass
class TranscriptRun(SessionRun):
    """A replayed log: the SessionRun, and the agent's own compactions it met.

    `agent_compactions` pairs each compaction the log records with the round it came
    before (the log's assistant messages before it); `full_history` is True when the
    replay went through them with the whole history instead of following them.
    """

    agent_compactions: Tuple[Tuple[int, AgentCompaction], ...] = ()
    full_history: bool = False

    def compaction_lines(self) -> List[str]:
        """One line a compaction: where it happened, what it replaced, what the replay
        did there."""
        lines = []
        reached = len(self.tracer.events("agent_compaction"))  # those it went through
        for number, (round_number, compaction) in enumerate(self.agent_compactions):
            said = (
                f"agent compaction before round {round_number} ({compaction.where}, "
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


def _segments(
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


def environment_id(index: int) -> str:
    """The trace id of the environment output at `index` in a log's messages."""
    return f"env_{index}"


def with_output_ids(messages: Sequence[Mapping]) -> List[Mapping]:
    """`messages`, each environment output without an id given one by its place (a copy
    of that message; the others are the same objects)."""
    return [
        dict(message, output_id=environment_id(index))
        if is_observation(message) and not message.get("output_id")
        else message
        for index, message in enumerate(messages)
    ]


def replay_transcript(
    messages,
    settings: Settings = Settings(),
    count_tokens: TokenCounter = estimate_tokens,
    summarize: Summarizer = scripted_summary,
    *,
    compactions: Optional[Sequence[AgentCompaction]] = None,
    full_history: bool = False,
) -> TranscriptRun:
    """Govern the window before every assistant message of `messages`, as the loop would
    have.

    `messages` is a LoadedLog or its messages; `compactions` (by default the log's)
    are the agent's own compactions, followed unless `full_history`. The baseline of a
    round is what the agent itself sent, uncompressed by the lab: the log up to that
    assistant message, or after a compaction the kept system prompt, the compaction's
    replacement and what followed (with `full_history`, the whole log up to it). The
    compressed window is what the article's ContextWindow made of the previous window
    plus the messages that arrived since (after a compaction, of the replacement). A
    ContextOverflowError ends the replay and is kept in `run.overflow`, like
    `run_session`. `messages` is not changed.
    """
    if isinstance(messages, LoadedLog):
        compactions = messages.compactions if compactions is None else compactions
        messages = messages.messages
    compactions = tuple(compactions or ())
    validate_messages(messages)
    messages = with_output_ids(messages)  # by place in the whole log, across compactions
    window = article_window(summarize, settings, count_tokens)
    met = tuple(
        (sum(m["role"] == "assistant" for m in messages[: c.at]), c) for c in compactions
    )
    if compactions and not full_history:
        segments = _segments(messages, compactions)
        for segment, _ in segments[1:]:
            validate_messages(segment)
        governed = _joined(segments, window, count_tokens, compactions)
        baseline = _joined(segments, None, count_tokens)
        if not governed.rounds and governed.overflow is None:
            return TranscriptRun(
                settings,
                [],
                [],
                governed.messages,
                count_tokens(governed.messages),
                governed.tracer,
                agent_compactions=met,
            )
        run = session_run(
            settings, governed, Baseline.of(baseline, count_tokens), count_tokens
        )
        return TranscriptRun(**run.__dict__, agent_compactions=met)
    conversation = RecordedConversation(messages)
    if not conversation.replies:  # no model call, so no round to govern
        return TranscriptRun(
            settings,
            [],
            [],
            conversation.messages,
            count_tokens(conversation.messages),
            Tracer(),
            agent_compactions=met,
            full_history=bool(compactions),
        )
    governed = replay(
        conversation, window, tracer=Tracer(), count_tokens=count_tokens, max_steps=None
    )
    baseline = replay(
        RecordedConversation(messages), None, count_tokens=count_tokens, max_steps=None
    )
    run = session_run(
        settings, governed, Baseline.of(baseline, count_tokens), count_tokens
    )
    return TranscriptRun(
        **run.__dict__, agent_compactions=met, full_history=bool(compactions)
    )


def user_turn_advice(messages, settings: Settings, run: SessionRun) -> str:
    """When the article's range rule alone stopped a replay, say so ("" otherwise).

    The article's summary folds assistant and tool messages only, so a log with several
    user turns (Claude Code, Codex) cannot fold past its second turn; the same replay
    with `fold_user_turns` shows whether that rule is what stopped it. `messages` is
    the LoadedLog or its messages; a TranscriptRun's compactions are met the same way.
    """
    if run.overflow is None or settings.fold_user_turns:
        return ""
    same = {}
    if isinstance(run, TranscriptRun):
        same = {
            "compactions": [compaction for _, compaction in run.agent_compactions],
            "full_history": run.full_history,
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
