"""SWE-agent's `last_n_observations` history processor: all but the last n
observations elided to one line.

What the real system does: before every model call SWE-agent runs its history
processors over the whole history. `last_n_observations` (class `LastNObservations`)
keeps the last `n` observations (environment output: a tool result, or the
observation SWE-agent writes as a user message) and replaces the content of every
older one with `Old environment output: (N lines omitted)`, N the elided text's line
count. It never elides the first observation, which is the instance template (the
task). With `polling` p, the number of elided observations moves only every p steps
(`(count // p) * p - n`), so between n and n + p observations stay, which lets a
prompt cache live longer; p defaults to 1. The SWE-agent paper's configuration uses
n = 5. It has no token trigger: `window_tokens` changes nothing (a window still too
large overflows, and the runner says so). Source: SWE-agent,
`sweagent/agent/history_processors.py` at commit 3ea751c087f32b16e039a2233dd6eefecef325d5
(docs/references.md). Overhead: `DEFAULT_OVERHEAD_TOKENS`.

In the lab, the observations in SWE-agent's sense are the first user message (the
task: SWE-agent marks it an observation) and every tool result or environment output
after it (`minilib.messages.is_observation`). An elided result keeps answering its
call (pairing kept). SWE-agent's `keep_output` / `remove_output` tags and its image
count are not modelled: the lab's messages carry neither. The elided part only grows,
so the window is updated with what is new each round.
"""

from typing import List, Mapping, Optional, Sequence

from ...messages import check_int, is_observation
from ...tokens import TokenCounter, estimate_tokens
from .base import Policy, Sent

PAPER_N = 5
ELIDED = "Old environment output: ({lines} lines omitted)"


def elided(message: Mapping) -> Mapping:
    """`message` with its content replaced by SWE-agent's one line."""
    lines = len((message.get("content") or "").splitlines())
    return dict(message, content=ELIDED.format(lines=lines))


class SweAgentLastNPolicy(Policy):
    key = "swe-agent-last-n"
    title = "SWE-agent last_n_observations"
    summary = (
        "Every call, all but the last `n` observations become 'Old environment output: "
        "(N lines omitted)'; the first observation (the task) is kept."
    )
    source = "SWE-agent sweagent/agent/history_processors.py, LastNObservations; n = 5"
    main_parameter = "n"
    DEFAULT_OVERHEAD_TOKENS = 2_000
    OVERHEAD_SOURCE = (
        "estimated: config/default.yaml's system and instance templates and its tool "
        "bundles (registry, edit_anthropic, review_on_submit_m) at SWE-agent 3ea751c, "
        "about 7,000 characters at 4 a token"
    )

    def __init__(
        self,
        window_tokens: int,
        count_tokens: TokenCounter = estimate_tokens,
        *,
        n: int = PAPER_N,
        polling: int = 1,
        overhead_tokens: Optional[int] = None,
    ):
        super().__init__(window_tokens, count_tokens, overhead_tokens)
        self.n = check_int("n", n, minimum=1)
        self.polling = check_int("polling", polling, minimum=1)
        self.view: List[Mapping] = []
        self.observations: List[int] = []  # indexes of the observations, in order
        self.elided = 1  # observations[1:elided] are elided (the first never is)
        self.seen_user = False

    def send(self, history: Sequence[Mapping], step: int) -> Sent:
        for index in range(len(self.view), len(history)):
            message = history[index]
            self.view.append(message)
            first_user = message.get("role") == "user" and not self.seen_user
            self.seen_user = self.seen_user or message.get("role") == "user"
            if first_user or message.get("role") == "tool" or is_observation(message):
                self.observations.append(index)
        count = len(self.observations)
        last_removed = max(0, (count // self.polling) * self.polling - self.n)
        for index in self.observations[self.elided : last_removed]:
            self.view[index] = elided(self.view[index])
        self.elided = max(self.elided, last_removed)
        return Sent(list(self.view))

    def parameters(self) -> dict:
        return {
            "n": self.n,
            "polling": self.polling,
            "overhead_tokens": self.overhead_tokens,
        }
