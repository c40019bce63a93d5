"""The Anthropic API's context editing, `clear_tool_uses_20250919`: old tool results
cleared on the server before the prompt reaches the model.

What the real system does: the client sends its whole, unedited history on every
call; when the prompt's input tokens exceed `trigger` (documented default 100,000; the
trigger may instead count tool uses, `{"type": "tool_uses", "value": N}`), the server
clears the oldest tool results in order, keeping the last `keep` tool uses
(default 3), and replaces each cleared result with placeholder text so the model knows
a result was removed. `exclude_tools` names tools whose uses are never cleared;
`clear_tool_inputs` (default false) clears the call's arguments too, for every
cleared use (`True`) or for the uses of the tools it lists (a list of names);
`clear_at_least` (default: none) is a floor: if the edit cannot clear at least that
many tokens it is not applied at all, because every clearing breaks the cached prompt
prefix and a small clearing is not worth the cache write. A cleared result still
answers its call, so pairing holds. The response reports what was cleared
(`applied_edits`). Defaults and behaviour: Anthropic's "Context editing"
documentation, read in December 2026 (docs/references.md).

How the lab replays it: the window is computed from the full history each call, as
the server does. Keep counts every tool use (an excluded one too), and a tool use is a
tool result with its call. The edit only ever grows as the history grows (the history's
tokens, the uses older than the last `keep`, the tokens they would free: none of them
shrinks), so the window is updated with what is new each round and equals a
recomputation from scratch.

Where the lab differs:
- the trigger scales with the window: the documented 100,000 is half of a 200k window,
  so a smaller window triggers at the same half (`window_tokens * 100,000 // 200,000`);
  at 200k and above it is the documented 100,000 (`trigger=` sets it outright);
- the placeholder's exact wording is not documented; the lab writes `PLACEHOLDER`;
- input tokens are the lab's count of the messages (`count_tokens`, message by
  message) plus `overhead_tokens`, the system prompt and tool definitions the caller
  sends (0 by default: an API has no agent's prompt; pass the caller's);
- `clear_tool_inputs` empties a cleared call's arguments to `{}`: the lab's estimate
  does not count arguments, so it frees no tokens there.
"""

from typing import List, Mapping, Optional, Sequence

from ...messages import check_int
from ...tokens import TokenCounter, estimate_tokens
from .base import Policy, Sent

DOCUMENTED_WINDOW = 200_000  # the window the documented trigger is designed for
DEFAULT_TRIGGER = 100_000  # input tokens
DEFAULT_KEEP = 3  # tool uses
INPUT_TOKENS, TOOL_USES = "input_tokens", "tool_uses"
PLACEHOLDER = "[tool result cleared by context editing]"
CLEARED_ARGUMENTS = "{}"


def default_trigger(window_tokens: int) -> int:
    """The documented 100,000 at a 200k window and above; the same half below it."""
    if window_tokens >= DOCUMENTED_WINDOW:
        return DEFAULT_TRIGGER
    return max(1, window_tokens * DEFAULT_TRIGGER // DOCUMENTED_WINDOW)


class AnthropicClearToolUsesPolicy(Policy):
    key = "anthropic-clear-tool-uses"
    title = "Anthropic API context editing (clear_tool_uses_20250919)"
    summary = (
        "Over the trigger, the server clears every tool result but the last `keep` "
        "tool uses, each replaced by a placeholder; pairing kept."
    )
    source = (
        "Anthropic docs, 'Context editing' (clear_tool_uses_20250919, read Dec 2026): "
        "trigger 100,000 input tokens or N tool uses, keep 3 tool uses, "
        "clear_at_least, exclude_tools, clear_tool_inputs (bool or tool names)"
    )
    main_parameter = "keep"
    threshold_parameter = "trigger"

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        trigger=None,
        keep: int = DEFAULT_KEEP,
        clear_at_least: int = 0,
        exclude_tools: Sequence[str] = (),
        clear_tool_inputs=False,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.trigger_type = INPUT_TOKENS
        if isinstance(trigger, Mapping):
            if trigger.get("type") not in (INPUT_TOKENS, TOOL_USES):
                raise ValueError(
                    f"trigger type must be {INPUT_TOKENS!r} or {TOOL_USES!r}, "
                    f"got {trigger.get('type')!r}"
                )
            self.trigger_type = trigger["type"]
            trigger = trigger.get("value")
            if trigger is None:
                raise ValueError("trigger must give a value")
        self.trigger = (
            default_trigger(self.window_tokens)
            if trigger is None
            else check_int("trigger", trigger, minimum=1)
        )
        self.keep = check_int("keep", keep)
        self.clear_at_least = check_int("clear_at_least", clear_at_least)
        if isinstance(exclude_tools, str) or not all(
            isinstance(name, str) for name in exclude_tools
        ):
            raise ValueError(
                f"exclude_tools must be a list of tool names, got {exclude_tools!r}"
            )
        self.exclude_tools = frozenset(exclude_tools)
        if not isinstance(clear_tool_inputs, bool) and (
            isinstance(clear_tool_inputs, str)
            or not isinstance(clear_tool_inputs, (list, tuple))
            or not all(isinstance(name, str) for name in clear_tool_inputs)
        ):
            raise ValueError(
                f"clear_tool_inputs must be True, False or a list of tool names, "
                f"got {clear_tool_inputs!r}"
            )
        self.clear_tool_inputs = (
            clear_tool_inputs
            if isinstance(clear_tool_inputs, bool)
            else tuple(clear_tool_inputs)
        )
        self.view: List[Mapping] = []  # the window: the history with what is cleared
        self.sizes: List[int] = []  # tokens of each message of the view, as it is now
        self.history_tokens = 0  # the unedited history's input tokens
        self.uses: List[tuple] = []  # (result index, call's message index, name)
        self.calls = {}  # id -> (message index, tool name) of the latest tool calls
        self.aged = 0  # uses[:aged] are older than the last `keep`
        self.pending: List[tuple] = []  # old uses not cleared yet (excluded ones never)
        self.frees = 0  # tokens clearing every old use frees, cleared or pending
        self.applied = False  # the edit has run (it then runs on every later call)

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        for index in range(len(self.view), len(history)):
            self._arrive(index, history[index])
        while self.aged < len(self.uses) - self.keep:
            use = self.uses[self.aged]
            self.aged += 1
            if use[2] not in self.exclude_tools:
                self.pending.append(use)
                self.frees += self._frees(use)
        if self.trigger_type == TOOL_USES:
            over = len(self.uses) > self.trigger
        else:
            over = self.history_tokens + self.overhead_tokens > self.trigger
        if over and (self.applied or self.frees >= self.clear_at_least):
            self.applied = True
            for use in self.pending:
                self._clear(use)
            self.pending.clear()
        return Sent(list(self.view))

    def parameters(self) -> dict:
        return {
            "trigger": self.trigger,
            "trigger_type": self.trigger_type,
            "keep": self.keep,
            "clear_at_least": self.clear_at_least,
            "exclude_tools": sorted(self.exclude_tools),
            "clear_tool_inputs": self.clear_tool_inputs,
            "overhead_tokens": self.overhead_tokens,
        }

    def clears_inputs(self, name: str) -> bool:
        """Whether clearing a use of tool `name` clears its call's arguments too."""
        if isinstance(self.clear_tool_inputs, bool):
            return self.clear_tool_inputs
        return name in self.clear_tool_inputs

    # --- one message arrives, one use is cleared ---------------------------------------

    def _count(self, message: Mapping) -> int:
        return self.count_tokens([message])

    def _arrive(self, index: int, message: Mapping) -> None:
        size = self._count(message)
        self.view.append(message)
        self.sizes.append(size)
        self.history_tokens += size
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            self.calls = {
                call.get("id"): (index, (call.get("function") or {}).get("name", ""))
                for call in message["tool_calls"]
            }
        elif role == "tool":
            caller, name = self.calls.get(message.get("tool_call_id"), (None, ""))
            self.uses.append((index, caller, name))

    def _cleared_result(self, index: int) -> Mapping:
        return dict(self.view[index], content=PLACEHOLDER)

    def _cleared_call(self, caller: int, call_id: str) -> Mapping:
        message = self.view[caller]
        calls = [
            dict(
                call,
                function=dict(call.get("function") or {}, arguments=CLEARED_ARGUMENTS),
            )
            if call.get("id") == call_id
            else call
            for call in message.get("tool_calls") or ()
        ]
        return dict(message, tool_calls=calls)

    def _frees(self, use: tuple) -> int:
        """Tokens clearing `use` frees (its result; its arguments when asked)."""
        index, caller, name = use
        freed = self.sizes[index] - self._count(self._cleared_result(index))
        if self.clears_inputs(name) and caller is not None:
            call_id = self.view[index].get("tool_call_id")
            freed += self.sizes[caller] - self._count(self._cleared_call(caller, call_id))
        return freed

    def _clear(self, use: tuple) -> None:
        index, caller, name = use
        if self.clears_inputs(name) and caller is not None:
            call_id = self.view[index].get("tool_call_id")
            self.view[caller] = self._cleared_call(caller, call_id)
            self.sizes[caller] = self._count(self.view[caller])
        self.view[index] = self._cleared_result(index)
        self.sizes[index] = self._count(self.view[index])
