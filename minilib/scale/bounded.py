"""A rolling summary that stays within a token budget, however long the session runs.

The article's scripted summary quotes every folded action and the first line of
every result, and carries an earlier summary line for line, so the summary grows
with the session: in a 1,000-call session it becomes the largest message and the
window overflows on it. A real summarizer condenses instead, and so does
`BoundedSummarizer`:

- it asks the base summarizer first; while that text is within the budget it is
  returned unchanged, byte for byte (the article's session keeps every figure);
- over the budget, the newest actions stay verbatim (up to half the budget) and the
  older ones become one line saying what they did and which facts they named::

      - ⋯ earlier (212 actions): read_file×64, search_text×31; paths: src/agent/loop.py,
        ...; ids/codes: E2BIG, NOT_FOUND, #412; numbers: 433 passed, 52.0s; 18 older
        facts dropped

- that line is its own input next time: the next summary folds it again, adding the
  counts and merging the facts, so nothing is condensed twice into nonsense;
- it never invents: every path, id and number it lists is copied from the text it
  condensed (an earlier condensed line included), and a fact already quoted in the
  verbatim lines is not listed twice;
- when the line would not fit, the oldest facts are dropped first and the line says
  how many were dropped.

`bounded_window` builds the article's pipeline (aging, then the rolling summary) with
it, and with a summary that also fits the room the protected content leaves (the head,
the last messages and the tool-call groups pairing keeps whole with them): an overflow
then only happens when that content itself does not fit beside the shortest summary,
and the error says so (`ProtectedContentOverflowError`).
"""

import errno
import operator
import re
import signal
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..aging import ToolResultAging
from ..markers import is_summary
from ..messages import check_int, is_observation, protected_head_length
from ..model import scripted_summary
from ..ranges import closed_range
from ..summary import RollingSummary, Summarizer, summary_header
from ..tokens import TokenCounter, count_cjk, estimate_text_tokens, estimate_tokens
from ..window import ContextOverflowError, ContextWindow, Settings

TextCounter = Callable[[str], int]

# The article's one summary is 290 tokens of text (308 as a message) at threshold
# 1,200; a default budget below that would condense the article's own session.
ARTICLE_SUMMARY_TOKENS = 290
MIN_DEFAULT_BUDGET = 320
# Small enough for any threshold worth running, large enough for the bare condensed
# line ("- ⋯ earlier (N actions); K older facts dropped") with big counts.
MIN_BUDGET = 32
VERBATIM_SHARE = 0.5  # of the budget, for the newest actions quoted as they were

CONDENSED_PREFIX = "- ⋯ earlier ("
USER_TURN_PREFIX = "- 用户: "  # how the scripted summary quotes a person's turn
SYSTEM_PREFIX = "- 系统: "  # and a system message the harness wrote between turns
CALLED = " → "  # the scripted summary's "action → tools it called"

# Facts are matched on ASCII word characters: \w would also match CJK text.
_PATH = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]*\w"
    r"|(?<![\w/.-])[\w-]+\.(?:py|md|txt|log|json|toml|ya?ml|cfg|ini|sh|js|ts|rs|go)\b",
    re.ASCII,
)
_ID = re.compile(
    r"#\d+"
    r"|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"  # NOT_FOUND, EXIT_2
    r"|\b[A-Z]+\d[A-Z0-9]*\b"  # E2BIG
    r"|\b[A-Z]{4,}\b"  # EACCES, SIGKILL (plain words are left out below)
    r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b",  # commit hashes
    re.ASCII,
)
_NUMBER = re.compile(
    r"(?<![\w.#/:-])v?\d+(?:[.:]\d+)*"
    r"(?:%|ms|s|KB|MB|GB|(?: (?:lines?|bytes|matches|failed|passed|objects|hunks|"
    r"tokens|errors?|files?)))?(?![\w/.:-])",
    re.ASCII,
)
# An all-capitals word with no digit or underscore is a keyword, an acronym or
# shouting (FIRST, REST, MEMBER, TODO) far more often than a code; errno and signal
# names are the codes such a word can be.
_CODE_WORDS = frozenset(errno.errorcode.values()) | frozenset(
    name for name in dir(signal) if name.startswith("SIG") and not name.startswith("SIG_")
)
_PLAIN_CAPITALS = re.compile(r"[A-Z]+")
# "src/app" names a folder; "owner/repo", "and/or", "file/line" are words with a slash.
_WORD_PAIR = re.compile(r"[A-Za-z-]+/[A-Za-z-]+")
_SOURCE_FOLDERS = frozenset(
    "src lib tests test docs app bin pkg cmd scripts config data build dist internal"
    " include vendor assets static templates examples tools notebooks".split()
)
_NO_LETTER = re.compile(r"[^A-Za-z]*")
FACT_KINDS = ("paths", "ids/codes", "numbers")
SHORT_HASH = 10  # a commit is named by its first 10 characters, as git log --oneline


@dataclass
class Condensed:
    """What the condensed line says: counts, tools, facts (oldest first)."""

    actions: int = 0
    user_turns: int = 0
    system_messages: int = 0  # the harness's, written between turns
    tools: Dict[str, int] = field(default_factory=dict)  # tool name -> calls
    facts: Dict[str, str] = field(default_factory=dict)  # fact -> one of FACT_KINDS
    dropped: int = 0

    def add(self, block: "Block") -> None:
        if block.kind == "user":
            self.user_turns += 1
        elif block.kind == "system":
            self.system_messages += 1
        else:
            self.actions += 1
        for name in block.tools:
            self.tools[name] = self.tools.get(name, 0) + 1
        for fact, kind in named_facts(block.text):
            self.facts.pop(fact, None)  # named again: it is a recent fact now
            self.facts[fact] = kind


@dataclass(frozen=True)
class Block:
    """One action as the base summarizer wrote it (the action, its results' lines), or
    one quoted user turn or system message."""

    text: str
    kind: str  # "action", "user" or "system"
    tools: Tuple[str, ...] = ()


def named_facts(text: str) -> List[Tuple[str, str]]:
    """The paths, ids/codes and numbers `text` names, in the order it names them; each
    is a substring of `text` (a commit hash is cut to its first characters)."""
    return list(_named_facts(text))


@lru_cache(maxsize=16_384)  # the same blocks are condensed summary after summary
def _named_facts(text: str) -> Tuple[Tuple[str, str], ...]:
    found = []  # (position, fact, kind)
    # Characters already claimed (a path's digits are not numbers too), one byte each,
    # so an overlap test is one C search, not a walk of every span claimed before.
    taken = bytearray(len(text))
    for pattern, kind in ((_PATH, "paths"), (_ID, "ids/codes"), (_NUMBER, "numbers")):
        for match in pattern.finditer(text):
            start, end = match.span()
            if 1 in taken[start:end]:
                continue
            fact = match.group()
            if kind == "paths" and not _whole_path(fact):
                continue
            if kind == "ids/codes":
                if _PLAIN_CAPITALS.fullmatch(fact) and fact not in _CODE_WORDS:
                    continue
                if fact[0].isdigit() or fact[0].islower():  # a commit hash
                    fact = fact[:SHORT_HASH]
            if kind == "numbers" and fact.isdigit():
                continue  # a bare number says nothing without its unit
            taken[start:end] = b"\x01" * (end - start)
            found.append((start, fact, kind))
    return tuple((fact, kind) for _, fact, kind in sorted(found))


def _whole_path(fact: str) -> bool:
    """A path written whole: not one a tool elided (".../cli/x.go"), not digits and
    slashes (a fraction, a date), not two words with a slash unless the first is a
    source folder."""
    if fact.startswith("...") or _NO_LETTER.fullmatch(fact):
        return False
    return not _WORD_PAIR.fullmatch(fact) or fact.split("/")[0] in _SOURCE_FOLDERS


class BoundedSummarizer:
    """`(messages) -> str`, like the base summarizer, but never over `budget_tokens`.

    `count_text` measures a text the way the window will (the default is the
    article's estimate). See the module text for how it condenses.
    """

    def __init__(
        self,
        budget_tokens: int,
        base: Summarizer = scripted_summary,
        count_text: TextCounter = estimate_text_tokens,
    ):
        self.budget_tokens = check_int("budget_tokens", budget_tokens, minimum=MIN_BUDGET)
        if not callable(base) or not callable(count_text):
            raise TypeError("base and count_text must be callables")
        self.base = base
        self.count_text = count_text

    def __repr__(self):
        base = getattr(self.base, "__name__", type(self.base).__name__)
        return f"BoundedSummarizer({self.budget_tokens}, base={base})"

    def with_budget(self, budget_tokens: int) -> "BoundedSummarizer":
        return BoundedSummarizer(budget_tokens, self.base, self.count_text)

    def __call__(self, messages: Sequence[Mapping]) -> str:
        text = self.base(messages)
        if self.count_text(text) <= self.budget_tokens:
            return text
        return self.condense(messages)

    # --- condensing -------------------------------------------------------------------

    def condense(self, messages: Sequence[Mapping]) -> str:
        """The text within budget: a condensed line, then the newest actions verbatim."""
        condensed, blocks = self.blocks(messages)
        # The newest actions stay as they were, up to a share of the budget.
        # Summed block by block (a newline is at most one token more), not re-counted
        # as one growing text: that would be quadratic in the number of blocks.
        verbatim_budget = int(self.budget_tokens * VERBATIM_SHARE)
        first_kept, verbatim_tokens = len(blocks), 0
        while first_kept > 0:
            verbatim_tokens += self.count_text(blocks[first_kept - 1].text) + 1
            if verbatim_tokens > verbatim_budget:
                break
            first_kept -= 1
        while True:
            line_state = Condensed(
                condensed.actions,
                condensed.user_turns,
                condensed.system_messages,
                dict(condensed.tools),
                dict(condensed.facts),
                condensed.dropped,
            )
            for block in blocks[:first_kept]:
                line_state.add(block)
            kept = blocks[first_kept:]
            verbatim = "\n".join(block.text for block in kept)
            # what the verbatim lines name, block by block (no fact runs across a
            # line break, so the joined text names what its blocks name)
            quoted = {fact for block in kept for fact, _ in named_facts(block.text)}
            text = self._fit(line_state, verbatim, quoted)
            if text is not None:
                return text
            # Not even the bare line fits beside the verbatim actions: condense one more.
            first_kept += 1

    def blocks(self, messages: Sequence[Mapping]) -> Tuple[Condensed, List[Block]]:
        """What an earlier condensed line said, and every action after it, oldest first.

        Each group (an assistant message with the results that answer it, or a user
        turn) is summarized on its own by the base summarizer, so a block is exactly
        what the base wrote for it; an earlier summary's lines are split at "- ".
        """
        condensed = Condensed()
        blocks: List[Block] = []
        groups: List[List[Mapping]] = []
        for message in messages:
            role = message.get("role")
            starts_group = (
                is_summary(message)
                or role in ("assistant", "system")
                or (role == "user" and not is_observation(message))
                or not groups
            )
            if starts_group:
                groups.append([message])
            else:
                groups[-1].append(message)
        for group in groups:
            if is_summary(group[0]):
                earlier, carried = split_summary(self.base(group[:1]))
                if earlier is not None:
                    merge(condensed, earlier)
                blocks.extend(carried)
                group = group[1:]
                if not group:
                    continue
            if self.base is scripted_summary:  # quoted once, however often folded
                text = _quoted(SameMessages(group))
            else:
                text = self.base(group)
            if not text:
                continue
            head = group[0]
            if head.get("role") == "user" and not is_observation(head):
                blocks.append(Block(text, "user"))
            elif head.get("role") == "system":
                blocks.append(Block(text, "system"))
            else:
                names = tuple(
                    (call.get("function") or {}).get("name") or ""
                    for call in head.get("tool_calls") or ()
                )
                blocks.append(Block(text, "action", names))
        return condensed, blocks

    def _fit(
        self, state: Condensed, verbatim: str, quoted: Optional[set] = None
    ) -> Optional[str]:
        """The condensed line (dropping the oldest facts as needed) and `verbatim`, or
        None when not even the bare line fits beside `verbatim`. `quoted`: the facts
        `verbatim` names, when the caller knows them."""
        if quoted is None:  # already in the summary
            quoted = {fact for fact, _ in named_facts(verbatim)}
        facts = [(fact, kind) for fact, kind in state.facts.items() if fact not in quoted]
        # The facts kept are the first of `newest_first_by_kind(facts)`: the newest of
        # each kind in turn. So the first `kept` of them are, of each kind, the newest
        # as many as there are of it among them, listed oldest first as the facts are.
        by_kind = {kind: [f for f, k in facts if k == kind] for kind in FACT_KINDS}
        kinds = [kind for _, kind in newest_first_by_kind(facts)]

        def line_with(kept: int, with_tools: bool = True) -> str:
            first = kinds[:kept]
            listed = {}
            for kind, named in by_kind.items():
                taken = first.count(kind)
                listed[kind] = named[len(named) - taken :] if taken else []
            dropped = state.dropped + len(facts) - kept
            return _rendered(state, listed, dropped, with_tools)

        def text_with(kept: int, with_tools: bool = True) -> str:
            line = line_with(kept, with_tools)
            return f"{line}\n{verbatim}" if verbatim else line

        if self.count_text is estimate_text_tokens and verbatim:
            # the estimate of the line, a line break and the verbatim text, from the
            # verbatim text's characters counted once (not again on every try)
            verbatim_cjk, verbatim_length = count_cjk(verbatim), len(verbatim)

            def counted(kept: int) -> int:
                line = line_with(kept)
                cjk = count_cjk(line) + verbatim_cjk
                return cjk + (len(line) + 1 + verbatim_length - cjk + 3) // 4

        else:

            def counted(kept: int) -> int:
                return self.count_text(text_with(kept))

        if counted(0) > self.budget_tokens:
            if verbatim:
                return None
            bare = text_with(0, with_tools=False)  # the tool tally goes last
            return bare if self.count_text(bare) <= self.budget_tokens else ""
        low, high = 0, len(facts)  # the most facts that fit
        while low < high:
            middle = (low + high + 1) // 2
            if counted(middle) <= self.budget_tokens:
                low = middle
            else:
                high = middle - 1
        return text_with(low)


class SameMessages(tuple):
    """Messages as a key: the same message objects, not equal ones (a log's messages
    are not changed in place, so the same objects say the same)."""

    __slots__ = ()

    def __hash__(self):
        return hash(tuple(map(id, self)))

    def __eq__(self, other):
        return (
            isinstance(other, SameMessages)
            and len(self) == len(other)
            and all(map(operator.is_, self, other))
        )

    def __ne__(self, other):
        return not self == other


@lru_cache(maxsize=65_536)  # held by the cache, each message keeps its id
def _quoted(group: SameMessages) -> str:
    """`scripted_summary` of one group: every summary that folds it quotes the same
    group of the log again, summary after summary and policy after policy."""
    return scripted_summary(list(group))


def newest_first_by_kind(facts: List[Tuple[str, str]]) -> List[Tuple[str, str]]:
    """The order in which facts are kept: the newest of each kind in turn (a path, an
    id, a number, the next newest path ...), so the oldest of each kind go first and
    numbers, the most frequent kind, do not crowd out the paths."""
    by_kind = {kind: [f for f in reversed(facts) if f[1] == kind] for kind in FACT_KINDS}
    order = []
    for rank in range(max((len(named) for named in by_kind.values()), default=0)):
        order.extend(named[rank] for named in by_kind.values() if rank < len(named))
    return order


def render_line(
    state: Condensed, facts: List[Tuple[str, str]], dropped: int, with_tools: bool = True
) -> str:
    by_kind = {kind: [fact for fact, k in facts if k == kind] for kind in FACT_KINDS}
    return _rendered(state, by_kind, dropped, with_tools)


def _rendered(
    state: Condensed, by_kind: Dict[str, List[str]], dropped: int, with_tools: bool
) -> str:
    """`render_line` of the facts of each kind, listed in order."""
    counts = f"{state.actions} actions"
    if state.user_turns:
        counts += f", {state.user_turns} user turns"
    if state.system_messages:
        counts += f", {state.system_messages} system messages"
    parts = []
    if with_tools and state.tools:
        ordered = sorted(state.tools.items(), key=lambda item: (-item[1], item[0]))
        parts.append(", ".join(f"{name}×{count}" for name, count in ordered))
    for kind in FACT_KINDS:
        named = by_kind[kind]
        if named:
            parts.append(f"{kind}: " + ", ".join(named))
    if dropped:
        parts.append(f"{dropped} older facts dropped")
    line = f"{CONDENSED_PREFIX}{counts})"
    return f"{line}: " + "; ".join(parts) if parts else line


_CONDENSED_LINE = re.compile(
    r"- ⋯ earlier \((\d+) actions(?:, (\d+) user turns)?(?:, (\d+) system messages)?\)"
    r"(?:: (.*))?$"
)
_TALLY = re.compile(r"([^\s,;×]+)×(\d+)")


def parse_line(line: str) -> Optional[Condensed]:
    """The state a condensed line states, or None when `line` is not one.

    Facts come back in an age order rebuilt from the line: kinds interleaved, each in
    the order listed (the line lists the oldest first).
    """
    match = _CONDENSED_LINE.match(line)
    if match is None:
        return None
    state = Condensed(
        int(match.group(1)), int(match.group(2) or 0), int(match.group(3) or 0)
    )
    by_kind: Dict[str, List[str]] = {}
    for part in (match.group(4) or "").split("; "):
        kind, _, listed = part.partition(": ")
        if kind in FACT_KINDS and listed:
            by_kind[kind] = listed.split(", ")
        elif part.endswith(" older facts dropped") and part.split(" ")[0].isdigit():
            state.dropped = int(part.split(" ")[0])
        elif part:
            state.tools.update((name, int(n)) for name, n in _TALLY.findall(part))
    longest = max((len(named) for named in by_kind.values()), default=0)
    for position in range(longest):
        for kind in FACT_KINDS:
            named = by_kind.get(kind, [])
            if position < len(named):
                state.facts[named[position]] = kind
    return state


def split_summary(text: str) -> Tuple[Optional[Condensed], List[Block]]:
    """An earlier summary's carried text: its condensed line (if any) and its blocks."""
    condensed = None
    blocks: List[List[str]] = []
    for line in text.splitlines():
        parsed = parse_line(line) if condensed is None and not blocks else None
        if parsed is not None:
            condensed = parsed
        elif line.startswith("- ") or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    result = []
    for lines in blocks:
        first = lines[0]
        if first.startswith(USER_TURN_PREFIX):
            result.append(Block("\n".join(lines), "user"))
            continue
        if first.startswith(SYSTEM_PREFIX):
            result.append(Block("\n".join(lines), "system"))
            continue
        _, called, names = first.rpartition(CALLED)
        tools = tuple(names.split(", ")) if called else ()
        result.append(Block("\n".join(lines), "action", tools))
    return condensed, result


def merge(into: Condensed, earlier: Condensed) -> None:
    into.actions += earlier.actions
    into.user_turns += earlier.user_turns
    into.system_messages += earlier.system_messages
    into.dropped += earlier.dropped
    for name, count in earlier.tools.items():
        into.tools[name] = into.tools.get(name, 0) + count
    for fact, kind in earlier.facts.items():
        into.facts.pop(fact, None)
        into.facts[fact] = kind


def default_summary_budget(threshold: int) -> int:
    """A quarter of the threshold, never below what the article's session needs."""
    check_int("threshold", threshold, minimum=1)
    return max(threshold // 4, MIN_DEFAULT_BUDGET)


# --- the window ------------------------------------------------------------------------


@dataclass
class FittedRollingSummary(RollingSummary):
    """The rolling summary, with a summary no longer than the room left for it.

    The room is the threshold minus what stays beside the summary (the protected
    head, the tail, anything not folded) and the summary's own header; the text's
    budget is the smaller of that room and the summarizer's budget less the header
    (never below MIN_BUDGET), so the summary message, header included, stays within
    the budget the window was given. A fold brings the window under the threshold
    whenever the protected content leaves room for a summary at all.
    """

    threshold: int = 0

    def __post_init__(self):
        super().__post_init__()
        check_int("threshold", self.threshold, minimum=1)
        if not isinstance(self.summarize, BoundedSummarizer):
            raise TypeError("FittedRollingSummary needs a BoundedSummarizer")

    def compress(self, messages: Sequence[Mapping]):
        span = closed_range(
            messages, self.protect_tail, fold_user_turns=self.fold_user_turns
        )
        budget = self.summarize.budget_tokens
        if len(span):
            beside = list(messages[: span.start]) + list(messages[span.stop :])
            # The summary message is this header and the text; a counter that is
            # additive per message and rounds up per text never counts it as more.
            header = summary_header(len(span))
            header_tokens = self.count_tokens([{"role": "user", "content": header}])
            room = self.threshold - self.count_tokens(beside) - header_tokens
            # The budget is what the summary costs in the window, its header included.
            budget = max(MIN_BUDGET, min(budget - header_tokens, room))
        plain = RollingSummary(
            self.summarize.with_budget(budget),
            self.protect_tail,
            self.count_tokens,
            self.fold_user_turns,
            self.name,
        )
        return plain.compress(messages)


class ProtectedContentOverflowError(ContextOverflowError):
    """An overflow of a bounded window, with what the protected content alone needs.

    `head_tokens` are the system messages and the task; `kept_tokens` the messages
    after the summary, which no closed range may fold: the last `protect_tail`, and
    the tool-call group or user turn they reach into (pairing keeps a group whole);
    `summary_tokens` the summary between them (0 when there is none).
    """

    def __init__(self, error: ContextOverflowError, protect_tail: int, count_tokens):
        super().__init__(
            error.tokens,
            error.threshold,
            error.window,
            error.largest_index,
            error.largest_tokens,
            error.written_by,
        )
        window = error.window
        head = protected_head_length(window)
        has_summary = head < len(window) and is_summary(window[head])
        after = head + 1 if has_summary else head
        self.head_tokens = count_tokens(window[:head])
        self.summary_tokens = count_tokens(window[head:after])
        self.kept_tokens = count_tokens(window[after:])
        protected = self.head_tokens + self.kept_tokens
        if protected > error.threshold:
            verdict = "over the threshold on their own"
        else:
            verdict = (
                f"leaving {error.threshold - protected:,} tokens, less than the "
                f"{self.summary_tokens:,} of the shortest summary"
            )
        opening = (
            "system + task"
            if any(m.get("role") == "system" for m in window[:head])
            else "the task"
        )
        after_count = len(window) - after
        self.args = (
            f"{self.args[0]} Protected content: head ({opening}, {_messages(head)}) "
            f"{self.head_tokens:,} tokens + {_messages(after_count)} after "
            f"{'the summary' if has_summary else 'it'} that no closed range may fold "
            f"(the last {protect_tail} and the tool-call groups they keep whole) "
            f"{self.kept_tokens:,} tokens = {protected:,} tokens, {verdict}.",
        )


def _messages(count: int) -> str:
    return f"{count:,} message" + ("" if count == 1 else "s")


@dataclass
class BoundedContextWindow(ContextWindow):
    """A ContextWindow whose overflow error accounts for the protected content."""

    protect_tail: int = 4

    def walk(self, messages, step: int = 0, *, counted: Optional[int] = None):
        states = super().walk(messages, step, counted=counted)
        final = states[-1]
        if final.state == "overflow":
            error = ProtectedContentOverflowError(
                final.error, self.protect_tail, self.count_tokens
            )
            states[-1] = replace(final, detail=str(error), error=error)
        return states


def bounded_window(
    settings: Settings = Settings(),
    count_tokens: TokenCounter = estimate_tokens,
    summary_budget: Optional[int] = None,
    count_text: TextCounter = estimate_text_tokens,
    base: Summarizer = scripted_summary,
) -> BoundedContextWindow:
    """The article's pipeline (aging, then the rolling summary) with a bounded summary.

    `summary_budget` defaults to `default_summary_budget(settings.threshold)`; no
    model is needed (the base is the scripted, quoting summary).
    """
    if not isinstance(settings, Settings):
        raise TypeError(
            f"settings must be a minilib Settings, got {type(settings).__name__}"
        )
    if summary_budget is None:
        summary_budget = default_summary_budget(settings.threshold)
    summarizer = BoundedSummarizer(summary_budget, base, count_text)
    return BoundedContextWindow(
        settings.threshold,
        [
            ToolResultAging(
                settings.head_chars, settings.tail_chars, settings.min_chars, count_tokens
            ),
            FittedRollingSummary(
                summarizer,
                settings.protect_tail,
                count_tokens,
                settings.fold_user_turns,
                threshold=settings.threshold,
            ),
        ],
        count_tokens,
        protect_tail=settings.protect_tail,
    )


__all__ = [
    "ARTICLE_SUMMARY_TOKENS",
    "BoundedContextWindow",
    "BoundedSummarizer",
    "FittedRollingSummary",
    "ProtectedContentOverflowError",
    "bounded_window",
    "default_summary_budget",
    "named_facts",
    "parse_line",
]
