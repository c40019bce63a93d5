"""Agent logs replayed: load one, and replay it through the window round by round.

`load_transcript(path)` reads any log shape `minilib.logs` knows (OpenAI chat
completions, the Anthropic Messages API, Claude Code, Codex CLI, SWE-agent,
mini-swe-agent, OpenHands, Gemini CLI) into chat-completions messages, and checks
them like every other entry point does. A round is one assistant message:
`replay_transcript` governs the window the model would have seen just before it,
with the same ContextWindow and the same loop (`minilib.loop.replay`) the bundled
session uses, so the CLI prints the same table and writes the same trace.
"""

import copy
from dataclasses import replace
from typing import List, Mapping, Optional, Sequence, Tuple

from ..loop import replay
from ..messages import InvalidMessagesError, is_observation, validate_messages
from ..model import scripted_summary
from ..session import Baseline, SessionRun, session_run
from ..summary import Summarizer
from ..tokens import TokenCounter, estimate_tokens, tool_call_name
from ..trace import Tracer
from ..window import Settings, article_window
from . import load_log, parse_log
from .base import LoadedLog, LogFileError

TranscriptFileError = LogFileError  # one error for every file the lab reads as a log


def _checked(log: LoadedLog, source: str) -> LoadedLog:
    if not log.messages:
        raise LogFileError(f"{source}: the log holds no messages the model saw")
    try:
        validate_messages(log.messages)
    except InvalidMessagesError as error:
        raise LogFileError(f"{source}: {error}") from None
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
        self.messages = [copy.deepcopy(dict(message)) for message in messages]
        for index, message in enumerate(self.messages):
            if is_observation(message) and not message.get("output_id"):
                message["output_id"] = f"env_{index}"
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


def replay_transcript(
    messages: Sequence[Mapping],
    settings: Settings = Settings(),
    count_tokens: TokenCounter = estimate_tokens,
    summarize: Summarizer = scripted_summary,
) -> SessionRun:
    """Govern the window before every assistant message of `messages`, as the loop would
    have.

    The baseline of a round is the transcript up to that assistant message; the
    compressed window is what the article's ContextWindow made of the previous
    window plus the messages that arrived since. A ContextOverflowError ends the
    replay and is kept in `run.overflow`, like `run_session`. `messages` is not changed.
    """
    validate_messages(messages)
    window = article_window(summarize, settings, count_tokens)
    conversation = RecordedConversation(messages)
    if not conversation.replies:  # no model call, so no round to govern
        return SessionRun(
            settings,
            [],
            [],
            conversation.messages,
            count_tokens(conversation.messages),
            Tracer(),
        )
    governed = replay(
        conversation, window, tracer=Tracer(), count_tokens=count_tokens, max_steps=None
    )
    baseline = replay(
        RecordedConversation(messages), None, count_tokens=count_tokens, max_steps=None
    )
    return session_run(
        settings, governed, Baseline.of(baseline, count_tokens), count_tokens
    )


def user_turn_advice(
    messages: Sequence[Mapping], settings: Settings, run: SessionRun
) -> str:
    """When the article's range rule alone stopped a replay, say so ("" otherwise).

    The article's summary folds assistant and tool messages only, so a log with several
    user turns (Claude Code, Codex) cannot fold past its second turn; the same replay
    with `fold_user_turns` shows whether that rule is what stopped it.
    """
    if run.overflow is None or settings.fold_user_turns:
        return ""
    folding = replay_transcript(messages, replace(settings, fold_user_turns=True))
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
