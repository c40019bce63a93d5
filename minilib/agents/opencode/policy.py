"""opencode's prune: after a turn, clear old tool outputs beyond the newest 40k tokens.

What opencode does (`SessionCompaction.prune`, `packages/opencode/src/session/
compaction.ts`). When the agent's loop for a user turn ends, opencode walks the session
back from the newest message. The last two user turns are protected: nothing in them is
counted. Older completed tool outputs are counted newest first; once they pass
`PRUNE_PROTECT` (40,000 tokens), every older one is marked for pruning, except outputs
of protected tools (`skill`) and failed calls. The walk stops at an output pruned
before (or at a summary). Only when the marked outputs add up to more than
`PRUNE_MINIMUM` (20,000 tokens) are they pruned; a pruned output stays in the session,
paired with its call, and the model reads `[Old tool result content cleared]` in its
place. Nothing is summarised. Source: anomalyco/opencode (sst/opencode's current
home) at commit fd78ec63492f89beb0bcff15321ebbb23f214cc2,
`packages/opencode/src/session/compaction.ts` (`PRUNE_PROTECT`, `PRUNE_MINIMUM`,
`PRUNE_PROTECTED_TOOLS`, the two protected turns, the stop at a summary or at an output
compacted before), and `session/prompt.ts` (the prune after the loop);
docs/references.md.

Where the lab differs:
- a turn ends when the next user message arrives: the lab prunes then, over the
  history before that message (opencode prunes as the loop ends, before it).
- tokens of an output are the lab's count of its message (opencode estimates 4
  characters a token); environment output recorded as a user message (an observation)
  is a tool output, and a tool message with an `error` is a failed call.
- 40,000 and 20,000 are numbers for a 200k window: below 200k they are scaled with the
  window.
- opencode also has a summary compaction when the context overflows; this policy is the
  prune alone, so a session with one long user turn (every generated history) is never
  pruned: both protected turns cover all of it. At that commit the prune runs unless
  the configuration sets `compaction.prune: false`; the lab runs it.
"""

from typing import List, Mapping, Optional, Sequence

from ...messages import check_int, is_observation
from ...policies.production.base import KeptHistory, Policy, Sent
from ...tokens import TokenCounter, estimate_tokens, tool_call_name

PLACEHOLDER = "[Old tool result content cleared]"
PROTECTED_TURNS = 2
WINDOW_OF_THE_NUMBERS = 200_000


def is_user_turn(message: Mapping) -> bool:
    return message.get("role") == "user" and not is_observation(message)


class OpencodePrunePolicy(Policy):
    key = "opencode-prune"
    title = "opencode: prune old tool outputs"
    summary = (
        "After each user turn, clears tool outputs older than the newest 40k tokens of "
        "them (the last two turns protected), only when that clears more than 20k."
    )
    source = (
        "sst/opencode: packages/opencode/src/session/compaction.ts; docs/references.md"
    )
    main_parameter = "prune_protect"
    stand_in = False
    OVERHEAD_SOURCE = (
        "not measured: no public measurement of opencode's system prompt and tool "
        "definitions was found; 0 unless a measured value is given"
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        prune_protect: Optional[int] = None,
        prune_minimum: Optional[int] = None,
        protected_tools: Sequence[str] = ("skill",),
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        scale = min(1.0, window_tokens / WINDOW_OF_THE_NUMBERS)
        self.prune_protect = (
            round(40_000 * scale)
            if prune_protect is None
            else check_int("prune_protect", prune_protect)
        )
        self.prune_minimum = (
            round(20_000 * scale)
            if prune_minimum is None
            else check_int("prune_minimum", prune_minimum)
        )
        if isinstance(protected_tools, str) or not all(
            isinstance(name, str) for name in protected_tools
        ):
            raise ValueError(
                f"protected_tools must be a sequence of names, got {protected_tools!r}"
            )
        self.protected_tools = frozenset(protected_tools)
        self.kept = KeptHistory()
        self.names = {}  # call id -> tool name, of the latest assistant message
        self.tool_at = {}  # place of a tool message -> its tool's name
        self.pruned = set()  # places of outputs pruned so far
        self.user_turns = 0  # user turns seen so far
        self.prunes = 0  # prunes that cleared something

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        start = len(self.kept.messages)
        turn_ends = []  # places of user turns that follow an earlier one
        for place, message in enumerate(self.kept.take_new(history), start):
            if message.get("role") == "assistant":
                calls = message.get("tool_calls") or ()
                self.names = {call.get("id"): tool_call_name(call) for call in calls}
            elif message.get("role") == "tool":
                self.tool_at[place] = self.names.get(message.get("tool_call_id"))
            elif is_user_turn(message):
                if self.user_turns:
                    turn_ends.append(place)  # the turn before it has ended
                self.user_turns += 1
        for end in turn_ends:
            self.prune(end)
        return Sent(list(self.kept.messages), 0)

    def prunable(self, place: int, message: Mapping) -> bool:
        """A completed tool output of a tool that is not protected."""
        if message.get("error"):
            return False
        if message.get("role") == "tool":
            return self.tool_at.get(place) not in self.protected_tools
        return is_observation(message)

    def prune(self, end: int) -> List[int]:
        """Prune the history before `end` as opencode does when a turn ends; return the
        places pruned."""
        messages = self.kept.messages
        total = pruned = turns = 0
        marked: List[int] = []
        for place in range(end - 1, -1, -1):
            message = messages[place]
            if is_user_turn(message):
                turns += 1
            if turns < PROTECTED_TURNS or not self.prunable(place, message):
                continue
            if place in self.pruned:
                break  # pruned before: everything older was looked at then
            tokens = self.count_tokens([message])
            total += tokens
            if total > self.prune_protect:
                pruned += tokens
                marked.append(place)
        if pruned <= self.prune_minimum:
            return []
        for place in marked:
            messages[place] = dict(messages[place], content=PLACEHOLDER)
            self.pruned.add(place)
        self.prunes += 1
        return marked

    def parameters(self) -> dict:
        return {
            "prune_protect": self.prune_protect,
            "prune_minimum": self.prune_minimum,
            "protected_tools": tuple(sorted(self.protected_tools)),
        }


POLICIES = (OpencodePrunePolicy,)
