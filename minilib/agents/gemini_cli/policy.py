"""Gemini CLI: old tool outputs masked every turn, and at half the model's token limit a
`<state_snapshot>` of the older 70%.

What Gemini CLI does (google-gemini/gemini-cli at commit
5411f113cafae26161b4969b0237b8e1e024e2c2; the sources moved to
`packages/core/src/context/`):
- Tool output masking, every turn (`toolOutputMaskingService.ts`, called from
  `GeminiClient` before each request). Walking back from the newest content (the
  latest turn is skipped), function responses are counted; the newest 50,000 tokens
  of them are protected; the one that crosses that line and every older one are
  prunable; only when the prunable ones add up to at least 30,000 tokens are they all
  masked (outputs of `EXEMPT_TOOLS`, `activate_skill`, `ask_user`, `enter_plan_mode`
  and `exit_plan_mode`, are never counted nor masked): the output is saved to a file
  and the model reads
  `<tool_output_masked>`, a preview (a shell output's first and last 10 lines, another
  tool's first and last 250 characters) and `Output too large. Full output available
  at: <file>`. An output masked before is not counted again.
- Chat compression (`chatCompressionService.ts`), before a turn, when the last
  prompt reached `COMPRESSION_TOKEN_THRESHOLD` (0.5) of the model's token limit. It
  first cuts function responses to a shared budget: walking from the newest back,
  each is kept whole while the ones kept fit in 50,000 tokens; an older one that does
  not fit is saved to a file and cut to the first 20% and last 80% of
  min(4 x the tokens left in the window, 40,000) characters under `Output too large.
  Showing first H and last T characters. For full output see: <file>`
  (`formatTruncatedToolOutput`, `utils/fileUtils.ts`). It then splits the history so
  the newest 30% stays: the split may only fall on a user turn that is not a function
  response (or after a final model answer); the older part goes to the model, which
  writes a `<state_snapshot>` and checks it in a second call; the history becomes the
  snapshot (a user message), the model's "Got it. Thanks for the additional context!",
  and the newer part. A compression that would make the history larger is dropped,
  and from then on Gemini CLI only cuts function responses.
- The experimental context manager (`contextManagement.enabled`, off by default) is
  not modelled.

Where the lab differs:
- the split is measured in the lab's tokens where Gemini CLI counts the characters of
  each JSON-encoded content; the trigger compares the window about to be sent (its
  overhead included), where Gemini CLI compares the last prompt's count.
- tool messages and environment output recorded as user messages (observations) are
  function responses (environment output is shell output); a system message is
  Gemini's system instruction, never split. The preview and the saved text are the
  message's content, where Gemini CLI stringifies the response object.
- a session with one user turn has no split point past its start: Gemini CLI
  compresses nothing there, and neither does the lab (masking still runs).
- 50,000, 30,000 and the overhead are numbers for a 200k window: below 200k they are
  scaled with the window (Gemini models have larger windows still).
- the snapshot is the lab's stand-in (`stand_in = True`), at most `summary_tokens` long
  (default 2.5% of the window); each compression counts two summary calls (the snapshot
  and its check).
Overhead: `DEFAULT_OVERHEAD_TOKENS` (docs/references.md).
"""

import re
from bisect import bisect_left, bisect_right, insort
from itertools import compress
from typing import List, Mapping, Optional, Sequence

from ...messages import check_int, is_observation
from ...policies.production.base import (
    KeptHistory,
    Policy,
    Sent,
    scaled,
    stand_in_summarizer,
    system_head,
)
from ...scale.bounded import MIN_BUDGET
from ...summary import summary_header
from ...tokens import TokenCounter, estimate_tokens, tool_call_name

ACKNOWLEDGEMENT = "Got it. Thanks for the additional context!"
TEMP_DIR = "~/.gemini/tmp/<project>"
OUTPUT_FILE = TEMP_DIR + "/tool-outputs/{name}_{number}.txt"
MASKED_FILE = TEMP_DIR + "/tool-outputs/session-<session>/{name}_{call}.txt"
MASKING_TAG = "tool_output_masked"
PROTECTION_TOKENS = 50_000  # DEFAULT_TOOL_PROTECTION_THRESHOLD
MIN_PRUNABLE_TOKENS = 30_000  # DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD
TRUNCATE_CHARS = 40_000  # DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD
# toolOutputMaskingService.ts EXEMPT_TOOLS (names: tools/definitions/base-declarations.ts)
EXEMPT_TOOLS = frozenset(
    ("activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode")
)
SHELL_TOOLS = frozenset(
    "run_shell_command shell bash run_shell run_command execute_bash "
    "execute_command terminal run_tests local_shell shell_command".split()
)
SECTION = re.compile(
    r"^(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): ", re.M
)


def simple_preview(content: str) -> str:
    """Gemini CLI's `formatSimplePreview`: 20 lines or fewer whole, else the first
    and last 10 around how many were omitted."""
    lines = content.split("\n")
    if len(lines) <= 20:
        return content
    head, tail = lines[:10], lines[-10:]
    return (
        "\n".join(head)
        + f"\n\n... [{len(lines) - 20} lines omitted] ...\n\n"
        + "\n".join(tail)
    )


def shell_preview(content: str) -> str:
    """`formatShellPreview`: the `Output:` section previewed, other sections whole."""
    parts = SECTION.split(content)
    if len(parts) < 3:
        return simple_preview(content)
    shown = [simple_preview(parts[0].strip())] if parts[0].strip() else []
    for name, section in zip(parts[1::2], parts[2::2]):
        section = section.strip()
        if name == "Output":
            shown.append(f"Output: {simple_preview(section)}")
        else:
            shown.append(f"{name}: {section}")
    return "\n".join(shown)


def masked_text(content: str, name: str, call_id: str, shell: bool) -> str:
    """What the model reads in place of a masked output."""
    if shell:
        preview = shell_preview(content)
    elif len(content) > 500:
        preview = f"{content[:250]}\n... [TRUNCATED] ...\n{content[-250:]}"
    else:
        preview = content
    path = MASKED_FILE.format(name=name, call=call_id)
    return (
        f"<{MASKING_TAG}>\n{preview}\n\nOutput too large. Full output available at: "
        f"{path}\n</{MASKING_TAG}>"
    )


def truncated_text(content: str, path: str, max_chars: int) -> str:
    """Gemini CLI's `formatTruncatedToolOutput`: the first 20% and last 80% of
    `max_chars` characters, and where the whole output is."""
    if len(content) <= max_chars:
        return content
    head_chars = max_chars // 5
    tail_chars = max_chars - head_chars
    tail = content[len(content) - tail_chars :] if tail_chars else ""
    omitted = len(content) - head_chars - tail_chars
    return (
        f"Output too large. Showing first {head_chars:,} and last {tail_chars:,} "
        f"characters. For full output see: {path}\n{content[:head_chars]}\n\n"
        f"... [{omitted:,} characters omitted] ...\n\n{tail}"
    )


WINDOW_OF_THE_NUMBERS = 200_000
CALLS_PER_COMPRESSION = 2  # the snapshot, then the call that checks it


def is_function_response(message: Mapping) -> bool:
    return message.get("role") == "tool" or is_observation(message)


def unmasked_output(message: Mapping) -> bool:
    """A function response that masking has not masked yet."""
    content = message.get("content") or ""
    return is_function_response(message) and f"<{MASKING_TAG}" not in content


def is_split_point(message: Mapping) -> bool:
    """A user turn that is not a function response."""
    return message.get("role") == "user" and not is_observation(message)


def find_split_point(sizes: Sequence[int], messages: Sequence[Mapping], fraction: float):
    """The index of the oldest message to keep (Gemini CLI's `findCompressSplitPoint`):
    the first user turn at or past `fraction` of the total size, else the last one
    before it (0: compress nothing), or everything after a final model answer."""
    target = sum(sizes) * fraction
    last, cumulative = 0, 0
    for index, message in enumerate(messages):
        if is_split_point(message):
            if cumulative >= target:
                return index
            last = index
        cumulative += sizes[index]
    if messages and messages[-1].get("role") == "assistant":
        if not messages[-1].get("tool_calls"):
            return len(messages)
    return last


class GeminiCliPolicy(Policy):
    key = "gemini-cli"
    title = "Gemini CLI: tool outputs masked, state snapshot at 50%"
    summary = (
        "Every turn masks old tool outputs past the newest 50k tokens of them (when "
        "30k+ are prunable); at half the token limit replaces the older 70% of the "
        "history (split at a user turn) with a <state_snapshot>."
    )
    source = (
        "google-gemini/gemini-cli @5411f11: packages/core/src/context/"
        "toolOutputMaskingService.ts, chatCompressionService.ts; docs/references.md"
    )
    main_parameter = "compression_threshold"
    stand_in = True
    PROMPT = (
        "Not quoted. Gemini CLI's compression prompt asks the model to reason in a "
        "scratchpad, then write a <state_snapshot> XML block (overall goal, key "
        "knowledge, file system state, recent actions, current plan)."
    )
    DEFAULT_OVERHEAD_TOKENS = 6_500
    OVERHEAD_SOURCE = (
        "a user's report: 13,055 input tokens for two one-line requests in an empty "
        "directory, about 6,500 a request (google-gemini/gemini-cli#3784, v0.1.10; "
        "later versions carry more tools)"
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        compression_threshold: float = 0.5,
        preserve_threshold: float = 0.3,
        function_response_budget: Optional[int] = None,
        truncate_chars: int = TRUNCATE_CHARS,
        masking: bool = True,
        protection_tokens: Optional[int] = None,
        min_prunable_tokens: Optional[int] = None,
        protect_latest_turn: bool = True,
        summary_tokens: Optional[int] = None,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.compression_threshold = _fraction(
            "compression_threshold", compression_threshold, upper_inclusive=True
        )
        self.preserve_threshold = _fraction("preserve_threshold", preserve_threshold)
        self.function_response_budget = (
            scaled(50_000, window_tokens)
            if function_response_budget is None
            else check_int("function_response_budget", function_response_budget)
        )
        self.truncate_chars = check_int("truncate_chars", truncate_chars, minimum=1)
        if not isinstance(masking, bool):
            raise ValueError(f"masking must be True or False, got {masking!r}")
        self.masking = masking
        self.protection_tokens = (
            scaled(PROTECTION_TOKENS, window_tokens)
            if protection_tokens is None
            else check_int("protection_tokens", protection_tokens)
        )
        # Gemini CLI's protectLatestTurn: on by default, a remote configuration may
        # turn it off, and then the latest turn's outputs can be masked too
        if not isinstance(protect_latest_turn, bool):
            raise ValueError(
                f"protect_latest_turn must be True or False, got {protect_latest_turn!r}"
            )
        self.protect_latest_turn = protect_latest_turn
        self.min_prunable_tokens = (
            scaled(MIN_PRUNABLE_TOKENS, window_tokens)
            if min_prunable_tokens is None
            else check_int("min_prunable_tokens", min_prunable_tokens)
        )
        self.summary_tokens = (
            max(MIN_BUDGET, window_tokens // 40)
            if summary_tokens is None
            else check_int("summary_tokens", summary_tokens, minimum=MIN_BUDGET)
        )
        self.trigger_tokens = self.compression_threshold * window_tokens
        self.summarize = stand_in_summarizer(self.summary_tokens)
        self.kept = KeptHistory()
        self.tokens = 0
        self.files = 0  # outputs saved to a file by compression so far
        self.failed = False  # a compression made the history larger: cut outputs only
        self.snapshot: Optional[Mapping] = None
        self.earlier = ""
        self.names: dict = {}  # call id -> tool name, every call seen
        # id(message) -> (message, its tokens): the history is the same message objects
        # round after round, and masking and the cut count them all again each round
        # (the message is held, so its id is never another's)
        self.counted: dict = {}
        # (id(message), call id, tool) -> (message, its masked copy, that copy's
        # tokens): an output too small to gain from masking is offered every round
        self.masked: dict = {}
        self.call_names: dict = {}  # id(assistant message) -> (it, call id -> tool)
        self.maskable: dict = {}  # id(message) -> (it, an output not masked yet)
        self.maskings: List[int] = []  # rounds where masking masked something
        # Beside each message of the kept history: its tokens, its length when it is
        # a function response (-1 otherwise), and whether it is one masking has not
        # masked yet. Masking and the cut read these every round; only what arrived
        # or changed is looked at again.
        self.sizes: List[int] = []
        self.lengths: List[int] = []
        self.unmasked: List[bool] = []
        # The outputs masking offers (not masked yet, not of an exempt tool), by index
        # in order, their tokens' sum, and those of them masking may still shrink (one
        # whose masked copy is no smaller never is, while it and its tool's name stay).
        self.offered: List[int] = []
        self.offered_tokens = 0
        self.gainful: List[int] = []
        self.responses: List[int] = []  # the function responses' indices, in order
        self.answered: set = set()  # the call ids the kept outputs answer
        self.renamed = False  # a call id an output answers named another tool: read all
        self.plain = False  # True: the walks over the whole history (for the tests)

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        for message in self.kept.take_new(history):
            self.tokens += self.tokens_of(message)
            self._note(message)
            for call in message.get("tool_calls") or ():
                call_id, name = call.get("id"), tool_call_name(call)
                if call_id in self.answered and self.names.get(call_id) != name:
                    self.renamed = True  # an output kept is of another tool now
                self.names[call_id] = name
        calls = 0
        counted = self.tokens + self.overhead_tokens
        if counted >= self.trigger_tokens:
            calls = self.compress()
            if calls:
                self.compacted(step, counted)
        if self.masking and (self.mask() if self.plain else self.mask_changed()):
            self.maskings.append(step)
        return Sent(list(self.kept.messages), calls)

    def _note(self, message: Mapping, index: Optional[int] = None) -> None:
        """Keep what the walks read of the kept history's message at `index` (one
        appended when None)."""
        shape = (
            self.tokens_of(message),
            len(message.get("content") or "") if is_function_response(message) else -1,
            unmasked_output(message),
        )
        if message.get("tool_call_id"):
            self.answered.add(message.get("tool_call_id"))
        if index is None:
            index = len(self.sizes)
            if shape[1] >= 0:
                self.responses.append(index)
            self.sizes.append(shape[0])
            self.lengths.append(shape[1])
            self.unmasked.append(shape[2])
        else:
            self._unoffer(index)
            if (shape[1] >= 0) != (self.lengths[index] >= 0):  # no longer, or now, one
                if shape[1] >= 0:
                    insort(self.responses, index)
                else:
                    del self.responses[bisect_left(self.responses, index)]
            self.sizes[index], self.lengths[index], self.unmasked[index] = shape
        if self._offers(index):
            insort(self.offered, index)  # at the end, when appended
            insort(self.gainful, index)
            self.offered_tokens += shape[0]

    def _offers(self, index: int) -> bool:
        """Whether masking offers the kept message at `index`."""
        call_id = self.kept.messages[index].get("tool_call_id")
        return self.unmasked[index] and self.names.get(call_id) not in EXEMPT_TOOLS

    def _unoffer(self, index: int) -> None:
        """The message at `index` is no longer offered as it was (masked, or
        replaced)."""
        for offered in (self.offered, self.gainful):
            place = bisect_left(offered, index)
            if place < len(offered) and offered[place] == index:
                del offered[place]
                if offered is self.offered:
                    self.offered_tokens -= self.sizes[index]

    def _replace(self, index: int, message: Mapping) -> None:
        self.kept.messages[index] = message
        self._note(message, index)

    def _renote(self) -> None:
        """The kept history was rebuilt: read it all again."""
        self.sizes, self.lengths, self.unmasked = [], [], []
        self.offered, self.offered_tokens, self.gainful = [], 0, []
        self.responses = []
        self.answered, self.renamed = set(), False
        for message in self.kept.messages:
            self._note(message)

    def tokens_of(self, message: Mapping) -> int:
        """`count_tokens` of one message, counted once for the life of this policy."""
        held = self.counted.get(id(message))
        if held is None or held[0] is not message:
            held = self.counted[id(message)] = (message, self.count_tokens([message]))
        return held[1]

    def mask(self) -> int:
        """Gemini CLI's tool output masking over the history; how many it masked."""
        messages = self.kept.messages
        last = len(messages) - 1
        while last >= 0 and messages[last].get("role") != "assistant":
            last -= 1  # what came after the latest reply is the request being sent
        if not self.protect_latest_turn:
            last = len(messages)  # the latest turn's outputs are candidates too
        protected, prunable, total = 0, [], 0
        maskable = self.maskable
        for index in range(last - 1, -1, -1):  # the latest turn itself is skipped
            message = messages[index]
            held = maskable.get(id(message))
            if held is None or held[0] is not message:
                held = maskable[id(message)] = (message, unmasked_output(message))
            if not held[1]:
                continue
            if self.names.get(message.get("tool_call_id")) in EXEMPT_TOOLS:
                continue  # always high-signal: never masked
            tokens = self.tokens_of(message)
            if protected <= self.protection_tokens:
                protected += tokens
                if protected <= self.protection_tokens:
                    continue
            prunable.append((index, tokens))
            total += tokens
        if not prunable or total < self.min_prunable_tokens:
            return 0
        return self._mask_each(prunable)

    def _mask_each(self, prunable: Sequence[tuple]) -> int:
        """Mask each (index, tokens) whose masked text is smaller; how many."""
        messages = self.kept.messages
        masked = 0
        for index, tokens in prunable:
            message = messages[index]
            call_id = message.get("tool_call_id") or f"env_{index}"
            name = self.names.get(call_id) or "run_shell_command"
            key = (id(message), call_id, name)
            held = self.masked.get(key)
            if held is None or held[0] is not message:
                shell = is_observation(message) or name in SHELL_TOOLS
                text = masked_text(message.get("content") or "", name, call_id, shell)
                new = dict(message, content=text)
                held = self.masked[key] = (message, new, self.tokens_of(new))
            _, new, after = held
            if after < tokens:
                self._replace(index, new)
                self.tokens += after - tokens
                masked += 1
            else:  # never smaller, while it and its tool's name stay what they are
                place = bisect_left(self.gainful, index)
                if place < len(self.gainful) and self.gainful[place] == index:
                    del self.gainful[place]
        return masked

    def mask_changed(self) -> int:
        """`mask`, reading what is kept beside each message: the outputs not masked
        yet, newest first, the newest `protection_tokens` of them protected (the one
        that crosses that line is prunable, and every older one)."""
        messages = self.kept.messages
        last = len(messages) - 1
        while last >= 0 and messages[last].get("role") != "assistant":
            last -= 1
        if not self.protect_latest_turn:
            last = len(messages)
        if self.renamed:  # what is offered is read again
            self._renote()
        sizes, offered = self.sizes, self.offered
        # the candidates are the outputs offered before the latest turn, newest first:
        # those within `protection_tokens` are protected, the one that crosses it and
        # every older one prunable
        place, protected = bisect_left(offered, last) - 1, 0
        while place >= 0:
            protected += sizes[offered[place]]
            if protected > self.protection_tokens:
                break
            place -= 1
        if place < 0:
            return 0
        after = sum(sizes[index] for index in offered[place + 1 :])
        if self.offered_tokens - after < self.min_prunable_tokens:
            return 0
        # a prunable output whose masked copy is no smaller is left as it is: only
        # those that may shrink are looked at
        gainful = self.gainful[: bisect_right(self.gainful, offered[place])]
        return self._mask_each([(index, sizes[index]) for index in reversed(gainful)])

    def compress(self) -> int:
        """One compression attempt; the summary calls it made."""
        messages = self.kept.messages
        head = system_head(messages)
        contents = messages[head:]
        if self.failed and not self.plain:  # only the cut, if it helps
            changes, change = self.budget_cuts(head)
            if change < 0:
                for index, message in changes:
                    self._replace(index, message)
                self.tokens += change
            return 0
        cut = self.cut_to_budget(contents)
        if self.failed:  # summarising failed before: only the cut, if it helps
            tokens = sum(self.tokens_of(m) for m in messages[:head] + cut)
            if tokens < self.tokens:
                messages[head:], self.tokens = cut, tokens
                self._renote()
            return 0
        sizes = [self.tokens_of(m) for m in cut]
        split = find_split_point(sizes, cut, 1 - self.preserve_threshold)
        if split == 0:
            return 0  # nothing before the first turn to compress
        earlier = {"role": "user", "content": summary_header(0) + self.earlier}
        older = [earlier if m is self.snapshot else m for m in contents[:split]]
        text = self.summarize(older)
        snapshot = {
            "role": "user",
            "content": f"<state_snapshot>\n{text}\n</state_snapshot>",
        }
        rebuilt = messages[:head] + [
            snapshot,
            {"role": "assistant", "content": ACKNOWLEDGEMENT},
        ]
        rebuilt += cut[split:]
        tokens = sum(self.tokens_of(m) for m in rebuilt)
        if tokens > self.tokens:
            self.failed = True  # the compression inflated the history: dropped
        else:
            messages[:], self.tokens = rebuilt, tokens
            self.snapshot, self.earlier = snapshot, text
            self._renote()
        return CALLS_PER_COMPRESSION

    def budget_cuts(self, head: int):
        """What `cut_to_budget` does to the kept history after its first `head`
        messages, from what is kept beside each message: [(index, cut message)] and
        the change in tokens. Once the responses kept whole pass the budget, every
        older one is over it: each is saved to a file (numbered in turn), and only
        those longer than the cut's length are cut."""
        messages, sizes, lengths = self.kept.messages, self.sizes, self.lengths
        budget = self.function_response_budget
        changes, change, used = [], 0, 0
        responses = self.responses  # oldest first: read from the end
        first_after_head = bisect_left(responses, head)
        place = len(responses) - 1
        while place >= first_after_head:
            if used > budget:  # and stays over it: every older one is cut
                break
            index = responses[place]
            place -= 1
            tokens = sizes[index]
            if used + tokens > budget:
                message = messages[index]
                cut = self.truncated(message, self._name_at(index, head))
                if cut is not message:
                    after = self.tokens_of(cut)
                    changes.append((index, cut))
                    change += after - tokens
                    tokens = after
            used += tokens
        # every older one, newest first
        older = responses[first_after_head : place + 1][::-1]
        if older:
            first = self.files
            self.files += len(older)
            left = self.window_tokens - self.tokens - self.overhead_tokens
            max_chars = max(0, min(4 * left, self.truncate_chars))
            longer = map(max_chars.__lt__, map(lengths.__getitem__, older))
            for place, index in compress(enumerate(older), longer):
                message = messages[index]
                name = self._name_at(index, head) or "unknown_tool"
                path = OUTPUT_FILE.format(name=name, number=first + place + 1)
                content = message.get("content") or ""
                cut = dict(message, content=truncated_text(content, path, max_chars))
                changes.append((index, cut))
                change += self.tokens_of(cut) - sizes[index]
        return changes, change

    def _name_at(self, index: int, head: int) -> Optional[str]:
        """The tool a function response answers, as `cut_to_budget` names it: by the
        calls of the nearest assistant message before it (none for an observation)."""
        messages = self.kept.messages
        if messages[index].get("role") != "tool":
            return None
        for before in range(index - 1, head - 1, -1):
            message = messages[before]
            if message.get("role") == "assistant":
                return self._calls_of(message).get(messages[index].get("tool_call_id"))
        return None

    def _calls_of(self, message: Mapping) -> dict:
        """call id -> tool name of an assistant message's calls, found once for it."""
        held = self.call_names.get(id(message))
        if held is None or held[0] is not message:
            calls = message.get("tool_calls") or ()
            held = self.call_names[id(message)] = (
                message,
                {call.get("id"): tool_call_name(call) for call in calls},
            )
        return held[1]

    def cut_to_budget(self, contents: Sequence[Mapping]) -> List[Mapping]:
        """Function responses kept whole, newest first, while they fit the budget;
        each older one that does not fit cut to its last lines."""
        names, name_at = {}, {}  # the tool each function response answers
        for index, message in enumerate(contents):
            if message.get("role") == "assistant":
                names = self._calls_of(message)
            elif message.get("role") == "tool":
                name_at[index] = names.get(message.get("tool_call_id"))
        used, cut = 0, list(contents)
        for index in range(len(cut) - 1, -1, -1):
            message = cut[index]
            if not is_function_response(message):
                continue
            tokens = self.tokens_of(message)
            if used + tokens > self.function_response_budget:
                message = cut[index] = self.truncated(message, name_at.get(index))
                tokens = self.tokens_of(message)
            used += tokens
        return cut

    def truncated(self, message: Mapping, name: Optional[str]) -> Mapping:
        """The output's head and tail, and the file the whole output was saved to."""
        self.files += 1
        left = self.window_tokens - self.tokens - self.overhead_tokens
        max_chars = max(0, min(4 * left, self.truncate_chars))
        content = message.get("content") or ""
        if len(content) <= max_chars:  # short enough: no file named, nothing cut
            return message
        path = OUTPUT_FILE.format(name=name or "unknown_tool", number=self.files)
        text = truncated_text(content, path, max_chars)
        # short enough already (cut in an earlier round): the same message, whose
        # tokens are known, not a copy to count again
        return message if text is content else dict(message, content=text)

    def parameters(self) -> dict:
        return {
            "compression_threshold": self.compression_threshold,
            "preserve_threshold": self.preserve_threshold,
            "function_response_budget": self.function_response_budget,
            "truncate_chars": self.truncate_chars,
            "masking": self.masking,
            "protection_tokens": self.protection_tokens,
            "protect_latest_turn": self.protect_latest_turn,
            "min_prunable_tokens": self.min_prunable_tokens,
            "summary_tokens": self.summary_tokens,
            "overhead_tokens": self.overhead_tokens,
        }


def _fraction(name: str, value, upper_inclusive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not 0 < value < 1 and not (upper_inclusive and value == 1):
        bounds = "(0, 1]" if upper_inclusive else "(0, 1)"
        raise ValueError(f"{name} must be in {bounds}, got {value!r}")
    return float(value)


POLICIES = (GeminiCliPolicy,)
