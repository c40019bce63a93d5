"""What every reader shares: the error, the result, and a builder that pairs positionally.

A reader walks its file and tells a `Builder` what the model saw: system, user and
assistant messages, tool calls and their results, and what it skipped and why.
The builder puts each tool result right after the assistant message whose call it
answers (in call order, wherever the log wrote it) and never looks further back:
a call id only has to be unique among the open calls of one assistant message,
because real agents reuse ids in later turns and the API accepts that.
"""

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple


class LogFileError(ValueError):
    """A log that cannot be read; its one-line text names the file and the place."""


@dataclass(frozen=True)
class AgentCompaction:
    """A compaction the agent's own harness did: from here on, the model saw
    `replacement` where the history had been.

    `at` is the index in `LoadedLog.messages` of the first message after it (the
    messages before it are the history it replaced); `where` names the record (`line
    31`) and `recorded_by` the fields that recorded it. `kept` leading messages of the
    log (the system prompt the harness sends with every call) stay in the window;
    `replaced` counts the other messages the agent's window held just before it: since
    the start, or the previous compaction's replacement and what came after it.
    `detail` is what the record says about itself (its trigger, the tokens before).
    """

    at: int
    where: str
    recorded_by: str
    replaced: int
    replacement: Tuple[dict, ...]
    kept: int = 0
    detail: str = ""
    # True where the harness rebuilt its whole window from its own state for a call
    # (Aider sends its files and chat anew with every call): not a summary of the
    # history, only what the model saw from then on
    rebuilt: bool = False

    @property
    def name(self) -> str:
        return "window rebuilt by the harness" if self.rebuilt else "agent compaction"

    @property
    def manual(self) -> bool:
        """The user asked for it (Claude Code's `/compact` records trigger manual):
        a replay of the agent follows it, and decides only the automatic ones."""
        return "trigger manual" in self.detail

    def describe(self) -> str:
        """One line: where it happened, what recorded it, what it replaced and with
        what."""
        detail = f"; {self.detail}" if self.detail else ""
        return (
            f"{self.name} before messages[{self.at}] ({self.where}, "
            f"{self.recorded_by}): {self.replaced} messages replaced by "
            f"{len(self.replacement)}{detail}"
        )


@dataclass(frozen=True)
class RecordedUsage:
    """What the API counted for one model call, as the log records it.

    `message` is the index in `LoadedLog.messages` of the assistant message the call
    answered with; `input_tokens` is the whole prompt as the API counted it (its
    uncached part, what it read from the prompt cache and what it wrote to it);
    `cache_read` and `cache_written` are those parts where the log says (None where
    it does not); `where` names the record."""

    message: int
    input_tokens: int
    cache_read: Optional[int]
    cache_written: Optional[int]
    where: str
    model: str = ""  # the model that answered the call, where the log names it


@dataclass(frozen=True)
class BilledCall:
    """One API call as its provider billed it, as the log records it: every call the
    file records usage for, a subagent's and the client's own calls too (they are
    billed though they are not this conversation's).

    The counts are disjoint, as a bill adds them up: `input` is the uncached prompt
    (Anthropic's `input_tokens`; OpenAI's and Gemini's input less their cached part),
    `cache_read` what was read from the prompt cache, `cache_write_5m` and
    `cache_write_1h` what was written to it for each time to live (a log that does not
    split its writes has them all as 5-minute writes), `output` the reply, thinking and
    reasoning included. `key` names the response (its id where the log has one: lines
    of one streamed response share it, and the last line's counts are the response's);
    `message` is the index of its assistant message in the conversation (None for a
    call outside it); `cost_usd` the agent's own price of it, where it writes one."""

    key: str
    model: str
    provider: str  # "anthropic", "openai", "google", or "" where the log does not say
    input: int
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int
    output: int
    where: str
    message: Optional[int] = None
    timestamp: Optional[str] = None
    cost_usd: Optional[float] = None

    @property
    def prompt(self) -> int:
        """The whole prompt: uncached, read from the cache and written to it."""
        return self.input + self.cache_read + self.cache_write_5m + self.cache_write_1h


# What a harness does to a gap a real run left, before its next call (the chat APIs
# refuse a window with an unanswered call or a result that answers none). Each kind,
# and what the reader does, in the words the reports use.
REPAIRS = {
    "interrupted-call": "a call with no recorded result: a result saying it was "
    "interrupted added after it",
    "late-result": "a result written after a later message: moved back to its call",
    "orphan-result": "a result whose call the log does not hold: kept as context text",
    "moved-message": "a message between calls and their results: moved after the results",
    "bad-line": "a line that is not valid JSON: skipped",
    "missing-parent": "an entry whose parent the file lacks: joined to the entry "
    "written before it",
    "unread-part": "a content part of a type the lab does not read: a placeholder "
    "naming its type",
    "missing-kept-entry": "a compaction whose first kept entry is not on the path "
    "before it: its summary alone in place of the history, as the agent rebuilds it",
}
INTERRUPTED_TEXT = (
    "[Tool call interrupted: the log records no result for it. This result was added "
    "before the next model call, as a harness does.]"
)


@dataclass(frozen=True)
class Clearing:
    """Old tool results the agent's harness cleared in place before a call (Claude
    Code's microcompact, recorded as `microcompact_boundary`): from the message at
    index `at` on, the results answering `call_ids` read as a placeholder."""

    at: int
    where: str
    call_ids: Tuple[str, ...]
    pre_tokens: Optional[int] = None
    saved_tokens: Optional[int] = None


@dataclass(frozen=True)
class Unrecorded:
    """Text the client added to what it sent that the log does not hold: from the
    message at index `at` on, every call carried it (the output of hooks the client
    puts into the context, of which the log keeps only that each ran). The lab cannot
    count it; a report names the call where it began."""

    at: int
    where: str
    event: str  # what ran ("SessionStart:compact")
    commands: Tuple[str, ...]

    def describe(self) -> str:
        ran = len(self.commands)
        return (
            f"{ran} {self.event} hook{'s' * (ran != 1)} ran "
            f"({', '.join(self.commands)}): their output joins the context, and the "
            "log does not hold it"
        )


@dataclass(frozen=True)
class Resume:
    """A session the client was quit in and resumed (Claude Code's `/exit`, then
    `--continue`): the resumed client rebuilt its history along the lines' parent
    links, and the tool calls off that chain (the parallel ones but the last) were
    not sent again. From the message at index `at` on, the calls `call_ids` and their
    results were gone from what that client sent (before 2.1.80)."""

    at: int
    where: str
    call_ids: Tuple[str, ...]

    def describe(self) -> str:
        lost = len(self.call_ids)
        return (
            f"session resumed before messages[{self.at}] ({self.where}): the history "
            f"rebuilt along parentUuid lacks {lost} tool call{'s' * (lost != 1)} off "
            "its chain and their results (what Claude Code before 2.1.80 sent)"
        )


@dataclass(frozen=True)
class Repair:
    """One gap the reader repaired: its kind (a key of `REPAIRS`) and where the file
    holds it ("line 243", "messages[9].content[1]")."""

    kind: str
    where: str
    detail: str = ""


def repair_counts(repairs) -> List[dict]:
    """Per kind, in the order first met: {kind, count, first, what} (first: where
    the file holds the first one)."""
    counts: Dict[str, dict] = {}
    for repair in repairs:
        row = counts.setdefault(
            repair.kind,
            {
                "kind": repair.kind,
                "count": 0,
                "first": repair.where,
                "what": REPAIRS.get(repair.kind, repair.kind),
            },
        )
        row["count"] += 1
    return list(counts.values())


@dataclass
class LoadedLog:
    """An agent log as chat-completions messages, and what the reader did to get them."""

    messages: List[dict]
    shape: str
    system_source: str = "not recorded"
    skipped: List[Tuple[str, str]] = field(default_factory=list)  # (where, why)
    declared_tools: Optional[Tuple[str, ...]] = None
    path: Optional[Path] = None
    notes: List[Tuple[str, str]] = field(default_factory=list)  # kept, but worth knowing
    # the windows a harness really sent, where its log records them (Aider's LLM history):
    # (call number, messages, ...) records for minilib.measure.sent to compare a replay to
    sent_windows: Optional[list] = None
    # the agent's own compactions, in order (`messages` holds the whole history)
    compactions: List[AgentCompaction] = field(default_factory=list)
    # where in the file each message came from ("line 12", "messages[3]"), so an
    # error found later in the list can name the file's own place
    origins: List[str] = field(default_factory=list)
    # the gaps the reader repaired as a harness would (see `REPAIRS`), in file order
    repairs: List[Repair] = field(default_factory=list)
    # whose run the file is, when it is not the main agent's (a subagent's, or the
    # compaction agent's own); "" for an ordinary session
    run_of: str = ""
    # what the API counted at each model call, where the log records it
    usage: List[RecordedUsage] = field(default_factory=list)
    # the thinking an assistant message (by index) carried: not content, but the API
    # takes it back inside a tool loop and counts it there (measure.recorded_usage)
    thinking: Dict[int, str] = field(default_factory=dict)
    # the client that wrote the log and its version ("claude-code", "2.0.76"), and the
    # model it last named, where the log says: a replay of the agent's own policy
    # follows that version's behaviour
    agent: str = ""
    agent_version: str = ""
    model: str = ""
    # tool results the harness cleared in place, where the log records it
    clearings: List[Clearing] = field(default_factory=list)
    # the model that wrote each assistant message (by index), where the log names it
    model_of: Dict[int, str] = field(default_factory=dict)
    # the context window the harness says it ran at (Codex's model_context_window)
    context_window: Optional[int] = None
    # where the session was quit and resumed, and what the rebuilt history lacked
    resumes: List[Resume] = field(default_factory=list)
    # every call the provider billed, as the log records it (BilledCall), in order
    billed: List["BilledCall"] = field(default_factory=list)
    # text the client added to its calls that the log does not hold (Unrecorded)
    unrecorded: List[Unrecorded] = field(default_factory=list)

    @property
    def models(self) -> List[str]:
        """The models that answered the calls with usage, in order of first use (the
        log's `model` when no usage names one)."""
        named = list(dict.fromkeys(u.model for u in self.usage if u.model))
        return named or ([self.model] if self.model else [])

    def placed(self, text: str) -> str:
        """`text` with each `messages[i]` named by where message i is in the file first
        ("file line 243 (the lab's messages[9])"): the reader knows the file, not the
        lab's list, and a file whose own places are `messages[j]` too is not mistaken
        for it."""

        def place(match):
            index = int(match.group(1))
            origin = self.origins[index] if index < len(self.origins) else ""
            if not origin or origin == match.group(0):
                return match.group(0)
            return f"file {origin} (the lab's {match.group(0)})"

        return re.sub(r"messages\[(\d+)\]", place, text)

    @property
    def rounds(self) -> int:
        """How many model calls the log records (its assistant messages)."""
        return sum(1 for message in self.messages if message["role"] == "assistant")

    def describe(self) -> str:
        """A few readable lines: shape, counts by role, calls, system prompt, skips."""
        roles = Counter(message["role"] for message in self.messages)
        calls = sum(len(m.get("tool_calls") or ()) for m in self.messages)
        tools = [m for m in self.messages if m["role"] == "tool"]
        marked = sum(1 for m in self.messages if m.get("observation"))
        counts = ", ".join(
            f"{role} {roles[role]}" for role in ("system", "user", "assistant", "tool")
        )
        lines = [
            f"shape: {self.shape}" + (f" ({self.path})" if self.path else ""),
            *([f"run: {self.run_of}"] if self.run_of else []),
            f"messages: {len(self.messages)} ({counts})"
            + (
                f"; {marked} user message{'s are' if marked > 1 else ' is'} "
                "environment output"
                if marked
                else ""
            ),
            f"tool calls: {calls}, results: {len(tools)}, "
            f"errors: {sum(1 for m in tools if m.get('error'))}",
            f"system prompt: {self.system_source}",
        ]
        if self.declared_tools is not None:
            lines.append(f"declared tools: {', '.join(self.declared_tools) or 'none'}")
        for title, pairs in (("skipped", self.skipped), ("notes", self.notes)):
            if pairs:
                by_reason = Counter(why for _, why in pairs)
                lines.append(
                    f"{title} {len(pairs)}: "
                    + "; ".join(f"{n} x {why}" for why, n in by_reason.most_common())
                )
        lines += [
            f"repaired {row['count']} x {row['what']} (first: {row['first']})"
            for row in repair_counts(self.repairs)
        ]
        lines += [compaction.describe() for compaction in self.compactions]
        lines += [resume.describe() for resume in self.resumes]
        return "\n".join(lines)


def arguments_json(arguments) -> str:
    """Call arguments as the JSON string the API carries (objects encoded, None is {})."""
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def make_call(call_id, name, arguments) -> dict:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments_json(arguments)},
    }


def content_items(content, at: str, log: "Builder", what: str = "blocks"):
    """(where, type, item) of each item of a message's content list, after checking it
    is a list: the loop every block-shaped reader starts with. A string content is the
    caller's to handle before."""
    if not isinstance(content, list):
        raise log.fail(f"{at}.content must be a string or a list of {what}")
    for number, item in enumerate(content):
        kind = item.get("type") if isinstance(item, dict) else None
        yield f"{at}.content[{number}]", kind, item


def parts_text(parts, where: str, log: "Builder") -> str:
    """Text, or a list of content parts, as one string; image parts are skipped (they
    cannot be measured as text), any other part is an error naming it."""
    if parts is None or isinstance(parts, str):
        return parts or ""
    if not isinstance(parts, list):
        raise log.fail(f"{where} must be text or a list of content parts")
    texts = []
    for number, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind in ("image", "image_url"):
            log.skip(f"{where}[{number}]", "image part: cannot be measured as text")
        else:
            texts.append(log.unread_part(f"{where}[{number}]", kind, "not a text part"))
    return "\n".join(texts)


def first_line(text: str) -> str:
    """The first non-empty line of a tool output: the error message readers keep."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


class Builder:
    """Collects the messages of one log; see the module text for the pairing rule."""

    def __init__(self, source: str, shape: str, strict: bool = False):
        self.source, self.shape = source, shape
        # strict: refuse every gap (see `REPAIRS`) instead of repairing it
        self.strict = strict
        self.repairs: List[Repair] = []
        self.run_of = ""
        self.usage: List[RecordedUsage] = []
        self.thinking: Dict[int, str] = {}
        # when the record being read was written, where the log says (ISO 8601): each
        # message told while it is set keeps it, so a policy can replay an idle gap
        self.timestamp: Optional[str] = None
        # the model answering and the client writing, as the record being read says
        self.model = ""
        self.agent = ""
        self.agent_version = ""
        self.clearings: List[Clearing] = []
        self.model_of: Dict[int, str] = {}
        self.context_window: Optional[int] = None
        self.resumes: List[Resume] = []
        self._deferred: List[dict] = []  # messages that came while calls were open
        self._moved: set = set()  # ids of those a recorded result came after
        # call id -> the interrupted result added for it, until a late result fills it
        self._placeholders: Dict[str, Tuple[dict, Repair]] = {}
        self.messages: List[dict] = []
        self.skipped: List[Tuple[str, str]] = []
        self.notes: List[Tuple[str, str]] = []
        self.system_source: Optional[str] = None
        self.declared_tools: Optional[Tuple[str, ...]] = None
        self.sent_windows: Optional[list] = None
        self.compactions: List[AgentCompaction] = []
        self._origins: Dict[int, str] = {}  # id(message) -> where the reader was
        self._calls: List[list] = []  # [id, answered] for the latest assistant message
        self._results: List[Tuple[int, dict]] = []  # (call position, tool message)
        self._key = None  # response key of the latest assistant message, for merging
        self._caller = 0  # index of the latest assistant message
        self._billed: Dict[str, BilledCall] = {}  # by response key, in order
        self.unrecorded: List[Unrecorded] = []

    def fail(self, text: str) -> LogFileError:
        return LogFileError(f"{self.source}: {text}")

    def repaired(self, kind: str, where: str, detail: str = "") -> Repair:
        repair = Repair(kind, where, detail)
        self.repairs.append(repair)
        return repair

    def recorded_usage(
        self, input_tokens, where: str, cache_read=None, cache_written=None
    ) -> None:
        """What the API counted for the latest assistant message's call (the first
        record of it wins: a response written over several lines repeats it)."""
        if not any(m["role"] == "assistant" for m in self.messages[self._caller :]):
            return  # no model reply yet: nothing to set it beside
        if self.usage and self.usage[-1].message == self._caller:
            return
        numbers = (input_tokens, cache_read, cache_written)
        if any(
            n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0)
            for n in numbers
        ):
            raise self.fail(f"{where}: token counts must be whole numbers >= 0")
        self.usage.append(
            RecordedUsage(
                self._caller, input_tokens, cache_read, cache_written, where, self.model
            )
        )

    def billed_call(
        self,
        key: str,
        where: str,
        counts: Mapping[str, object],
        provider: str = "",
        model: Optional[str] = None,
        in_conversation: bool = True,
        cost_usd=None,
    ) -> None:
        """One call as its provider billed it (`BilledCall`'s counts by name); a later
        record of the same `key` (a streamed response's last line) replaces it."""
        names = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output")
        values = [counts.get(name) or 0 for name in names]
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in values):
            raise self.fail(f"{where}: token counts must be whole numbers >= 0")
        earlier = self._billed.get(key)
        message = None
        if in_conversation:
            message = earlier.message if earlier is not None else self._caller
        if isinstance(cost_usd, bool) or not isinstance(cost_usd, (int, float)):
            cost_usd = None
        self._billed[key] = BilledCall(
            key,
            self.model if model is None else model,
            provider,
            *values,
            where,
            message,
            self.timestamp if isinstance(self.timestamp, str) else None,
            cost_usd,
        )

    def unread_part(self, where: str, kind, refusal: str) -> str:
        """The placeholder text for a content part of a type the lab does not read
        (strict: the refusal, as an error at `where`)."""
        if self.strict:
            raise self.fail(f"{where} {refusal}")
        named = kind if isinstance(kind, str) and kind else "untyped"
        self.repaired("unread-part", where, named)
        return f"[{named} part: not read by the lab]"

    def skip(self, where: str, why: str) -> None:
        self.skipped.append((where, why))

    def note(self, where: str, what: str) -> None:
        self.notes.append((where, what))

    def system(self, text: str, came_from: str) -> None:
        self._add({"role": "system", "content": text})
        if self.system_source is None:
            self.system_source = came_from

    def user(self, text: str, observation: bool = False) -> None:
        message = {"role": "user", "content": text}
        if observation:  # environment output the agent recorded as a user turn
            message["observation"] = True
        self._add(message)

    def assistant(self, text: str, calls=(), key=None, thinking: str = "") -> None:
        """An assistant message; given the `key` of the latest one, merged into it.
        `thinking` is kept beside the message (`LoadedLog.thinking`), not in it."""
        last = self.messages[-1] if self.messages else None
        if key is not None and key == self._key and last and last["role"] == "assistant":
            if text:  # one response spread over several records: its text blocks joined
                last["content"] = "\n".join(filter(None, (last["content"], text)))
        else:
            self._add({"role": "assistant", "content": text or ""})
            last, self._key = self.messages[-1], key
            self._caller = len(self.messages) - 1
        for call in calls:
            last.setdefault("tool_calls", []).append(call)
            self._calls.append([call["id"], False])
        if self.model:
            self.model_of[self._caller] = self.model
        if thinking:
            before = self.thinking.get(self._caller)
            self.thinking[self._caller] = "\n".join(filter(None, (before, thinking)))

    def result(
        self,
        call_id,
        content: str,
        where: str,
        error: Optional[dict] = None,
        extra: Optional[dict] = None,
    ) -> None:
        """The answer to the first open call with this id of the latest assistant."""
        for position, entry in enumerate(self._calls):
            if entry[0] == call_id and not entry[1]:
                entry[1] = True
                message = {
                    "role": "tool",
                    "tool_call_id": call_id,
                    "content": content,
                    **(extra or {}),
                }
                if error is not None:
                    message["error"] = error
                self._origins[id(message)] = where
                self._stamp(message)
                self._results.append((position, message))
                self._moved_before(message)
                return
        if self.strict:
            raise self.fail(
                f"{where}: tool result for call {call_id!r} answers no open call "
                "of the assistant message before it"
            )
        self._unplaced_result(call_id, content, where, error, extra)

    def _unplaced_result(self, call_id, content, where, error, extra) -> None:
        """A result with no open call of the latest assistant message: it fills the
        interrupted result added for an earlier call with its id, or else (its call
        is not in the log) it is kept as context text, never dropped."""
        if call_id in self._placeholders:
            message, repair = self._placeholders.pop(call_id)
            message.pop("synthetic", None)
            message.pop("error", None)
            message.update(content=content, repaired="late-result", **(extra or {}))
            if error is not None:
                message["error"] = error
            self.repairs.remove(repair)
            self.repaired("late-result", where, f"call {call_id!r}")
            return
        self.repaired("orphan-result", where, f"call {call_id!r}")
        name = (extra or {}).get("name")
        said = f"{name} call {call_id!r}" if name else f"call {call_id!r}"
        self._add(
            {
                "role": "user",
                "content": f"[Result of {said}, whose call the log does not hold:]\n"
                + content,
                "observation": True,  # environment output: aged like any other
                "repaired": "orphan-result",
            },
            where,
        )

    def replacement(self) -> "Builder":
        """A builder for the messages a compaction put in place of the history; hand it
        to `compaction` once they are told."""
        builder = Builder(self.source, self.shape, self.strict)
        builder.timestamp = self.timestamp
        return builder

    def compaction(
        self,
        where: str,
        recorded_by: str,
        replacement: "Builder",
        kept: Optional[int] = None,
        detail: str = "",
        rebuilt: bool = False,
    ) -> None:
        """The agent's own compaction here (see `AgentCompaction`). The calls still open
        are closed first: a result after it answers nothing the model still saw.
        `kept` defaults to the log's leading system messages."""
        self._flush()
        replacement._flush(final=True)
        self._placeholders = {}  # a result after it answers nothing the model still saw
        self.skipped += replacement.skipped
        self.notes += replacement.notes
        self.repairs += replacement.repairs
        messages = replacement.messages
        for message in messages:
            if message["role"] == "assistant" and not message["content"]:
                message["content"] = None if message.get("tool_calls") else ""
        if kept is None:
            kept = next(
                (n for n, m in enumerate(self.messages) if m["role"] != "system"),
                len(self.messages),
            )
        previous = self.compactions[-1] if self.compactions else None
        held = (
            len(self.messages) - kept
            if previous is None
            else len(previous.replacement) + len(self.messages) - previous.at
        )
        self.compactions.append(
            AgentCompaction(
                len(self.messages),
                where,
                recorded_by,
                held,
                tuple(messages),
                kept,
                detail,
                rebuilt,
            )
        )

    def _flush(self, final: bool = False) -> None:
        """Close the latest assistant message's calls: its results in call order (an
        unanswered call gets an interrupted result before the next message, unless
        strict; at the end of the log none is added when no message follows the call,
        as then no call follows either), then what came while they were open."""
        for position, (call_id, answered) in enumerate(self._calls):
            if answered:
                continue
            where = f"messages[{self._caller}] call {call_id!r}"
            if self.strict or (final and not self._deferred):
                self.note(where, "tool call without a recorded result")
                continue
            origin = self._origins.get(id(self.messages[self._caller]), "")
            repair = self.repaired(
                "interrupted-call", origin or where, f"call {call_id!r}"
            )
            message = {
                "role": "tool",
                "tool_call_id": call_id,
                "content": INTERRUPTED_TEXT,
                "error": {"code": "interrupted", "message": "no result recorded"},
                "synthetic": True,
                "repaired": "interrupted-call",
            }
            self._origins[id(message)] = origin
            self._results.append((position, message))
            self._placeholders[call_id] = (message, repair)
        self._results.sort(key=lambda result: result[0])
        self.messages.extend(message for _, message in self._results)
        self._results = []
        self._calls, self._key = [], None
        deferred, self._deferred = self._deferred, []
        self.messages.extend(deferred)

    def _add(self, message: dict, where: Optional[str] = None) -> None:
        self._origins[id(message)] = _reader_place() if where is None else where
        self._stamp(message)
        if (
            message["role"] != "assistant"
            and not self.strict
            and any(not answered for _, answered in self._calls)
        ):
            # the API takes results right after their calls: this waits for them
            self._deferred.append(message)
            return
        self._flush()
        self.messages.append(message)

    def _stamp(self, message: dict) -> None:
        if isinstance(self.timestamp, str) and self.timestamp:
            message["timestamp"] = self.timestamp

    def _moved_before(self, result: dict) -> None:
        """A recorded result came after the waiting messages: each of them is moved
        after it (a message that waited only for interrupted results is in its place)."""
        for message in self._deferred:
            if id(message) not in self._moved:
                self._moved.add(id(message))
                self.repaired("moved-message", self._origins.get(id(message)) or "")
                message.setdefault("repaired", "moved-message")

    def finish(self) -> LoadedLog:
        """The LoadedLog: an assistant with calls and no text gets content None."""
        self._flush(final=True)
        if not self.messages:
            raise self.fail(f"{self.shape}: the log holds no messages")
        for message in self.messages:
            if message["role"] == "assistant" and not message["content"]:
                message["content"] = None if message.get("tool_calls") else ""
        for index, message in enumerate(self.messages):
            for number, call in enumerate(message.get("tool_calls") or ()):
                name = call["function"]["name"]
                if self.declared_tools is not None and name not in self.declared_tools:
                    raise self.fail(
                        f"messages[{index}].tool_calls[{number}].function.name calls "
                        f"unknown tool {name!r}; the file declares "
                        f"{', '.join(self.declared_tools) or 'no tools'}"
                    )
        return LoadedLog(
            self.messages,
            self.shape,
            self.system_source or "not recorded",
            self.skipped,
            self.declared_tools,
            None,
            self.notes,
            self.sent_windows,
            self.compactions,
            [self._origins.get(id(message), "") for message in self.messages],
            self.repairs,
            self.run_of,
            self.usage,
            self.thinking,
            self.agent,
            self.agent_version,
            self.model,
            self.clearings,
            self.model_of,
            self.context_window,
            self.resumes,
            list(self._billed.values()),
            self.unrecorded,
        )


def timestamp_seconds(message: Mapping) -> Optional[float]:
    """A message's `timestamp` in seconds (ISO 8601, or a number of seconds or
    milliseconds), or None when it has none the lab can read."""
    value = message.get("timestamp")
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value / 1000 if value > 1e11 else float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def is_reader_frame(frame) -> bool:
    """True for a frame of this package or of an agent's reader (minilib.agents)."""
    return (
        frame.f_globals.get("__package__") == __package__
        or frame.f_globals.get("__name__") in reader_modules()
    )


@lru_cache(maxsize=None)
def reader_modules() -> frozenset:
    """The names of the agents' reader modules (each agent's home)."""
    from .. import agents

    return frozenset(
        f"{agents.__name__}.{home.folder}.{reader}"
        for home in agents.HOMES
        for reader in home.readers
    )


def frame_place(frame) -> str:
    """The place a reader's frame names for its own messages (its `at`, else its
    `where`), or "" for a frame outside the readers or one that names none."""
    if not is_reader_frame(frame):
        return ""
    for name in ("at", "where"):
        value = frame.f_locals.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _reader_place() -> str:
    """Where the reader calling the builder is in its file (the nearest reader frame
    that names a place), its line alone for a line-based file."""
    frame = sys._getframe(2)
    while frame is not None and is_reader_frame(frame):
        place = frame_place(frame)
        if place:
            return place.split(":", 1)[0] if place.startswith("line ") else place
        frame = frame.f_back
    return ""
