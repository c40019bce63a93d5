"""Each real agent the lab models has one home here, a folder: what it writes and how
its client behaved, in one place.

A home holds the agent's reader(s) of its logs, its behaviour by version (the numbers
that changed between releases, each with its source in docs/references.md), its
policy replayed on any log and, where the lab simulates it, its client: what it sent
at each call. The generic pieces (`minilib.logs.base`, `minilib.policies.production.
base`, `minilib.measure`) know no agent; they find the agents here. A new agent is a
new folder and one line in `HOMES`.

`windows.py` is not an agent: the context window a log's model ran at.

>>> [home.agent for home in HOMES][:3]
['claude-code', 'codex', 'gemini-cli']
>>> home_of("codex").folder, home_of("aider")
('codex', None)
>>> client_class("claude-code").__name__, client_class("codex").__name__
('ClaudeCodeClient', 'Client')
"""

from dataclasses import dataclass
from importlib import import_module
from typing import Optional, Tuple


@dataclass(frozen=True)
class Home:
    """Where one agent lives: its name as its logs give it (`LoadedLog.agent`), its
    folder, the modules of its folder that read its logs (each with `SHAPES`), the one
    that holds its policies (`POLICIES`) and the one that simulates its client
    (`CLIENT`), if it has them."""

    agent: str
    folder: str
    readers: Tuple[str, ...] = ("reader",)
    policy: Optional[str] = "policy"
    client: Optional[str] = None

    def module(self, name: str):
        return import_module(f"{__name__}.{self.folder}.{name}")


# Their readers are tried in this order, before every generic shape.
HOMES = (
    Home("claude-code", "claude_code", readers=("reader", "stream"), client="client"),
    Home("codex", "codex"),
    Home("gemini-cli", "gemini_cli"),
    Home("pi", "pi", policy=None),
    Home("opencode", "opencode"),
    Home("cline", "cline", policy=None),
)


def home_of(agent: str) -> Optional[Home]:
    """The home of the agent a log names, or None for an agent without one."""
    return next((home for home in HOMES if home.agent == agent), None)


def client_class(agent: str):
    """The simulation of the client of the agent a log names: its home's, else the
    generic client, which follows only what the log records."""
    home = home_of(agent)
    if home is not None and home.client is not None:
        return home.module(home.client).CLIENT
    from ..measure.client import Client

    return Client


def agent_shapes() -> list:
    """Every home's log shapes, in the order of `HOMES`."""
    return [
        shape
        for home in HOMES
        for reader in home.readers
        for shape in home.module(reader).SHAPES
    ]


def agent_policies() -> list:
    """Every home's policy classes, in the order of `HOMES`."""
    return [
        policy
        for home in HOMES
        if home.policy is not None
        for policy in home.module(home.policy).POLICIES
    ]


def own_row_policies() -> dict:
    """The policy key of each log shape whose own agent the lab replays (the agent's
    own row in `compare`): what each home's policy module names in `OWN_ROW`."""
    keys = {}
    for home in HOMES:
        if home.policy is not None:
            keys.update(getattr(home.module(home.policy), "OWN_ROW", {}))
    return keys
