"""Each agent has one home (minilib/agents/<agent>/), found through one registry, and
the generic pieces (logs, measures, policies) know no agent but through it."""

import ast
from pathlib import Path

import pytest

import minilib
from minilib.agents import HOMES, agent_shapes, client_class, home_of
from minilib.agents.claude_code.client import ClaudeCodeClient
from minilib.logs import SHAPES, load_log
from minilib.measure.calibration import call_points
from minilib.measure.client import Client
from minilib.policies.production import POLICIES, build_policy
from minilib.session import DATA_DIR

PACKAGE = Path(minilib.__file__).parent
AGENTS = PACKAGE / "agents"
# what a generic module may take from the agents' package: the registry and what it
# finds, and the window of a model (which is no agent)
REGISTRY = {"HOMES", "home_of", "client_class", "agent_shapes", "agent_policies"}
REGISTRY |= {"own_row_policies"}
GENERIC = ("logs", "measure", "policies", "corpus", "reports", "scale")


def test_every_folder_under_agents_is_a_home_and_every_home_a_folder():
    folders = {p.parent.name for p in AGENTS.glob("*/__init__.py")}
    assert folders == {home.folder for home in HOMES}
    for home in HOMES:
        for module in (*home.readers, home.policy, home.client):
            if module is not None:
                assert (AGENTS / home.folder / f"{module}.py").is_file(), (home, module)


def test_every_home_reader_shape_is_tried_first_in_registry_order():
    names = [shape.name for shape in agent_shapes()]
    assert list(SHAPES[: len(names)]) == names


def test_every_home_policy_is_registered():
    for home in HOMES:
        if home.policy is not None:
            for policy in home.module(home.policy).POLICIES:
                assert POLICIES[policy.key] is policy


def test_a_log_read_by_a_home_names_that_homes_agent():
    """Each home reads at least one bundled log, and what it reads names its agent
    (or none: print-mode output names no version)."""
    owner = {
        shape.name: home.agent
        for home in HOMES
        for reader in home.readers
        for shape in home.module(reader).SHAPES
    }
    read_by = {}
    for path in sorted((DATA_DIR / "logs").iterdir()):
        if path.is_file() and path.name not in ("unknown_shape.json", "damaged.jsonl"):
            log = load_log(path)
            if log.shape in owner:
                assert log.agent in ("", owner[log.shape]), path.name
                read_by.setdefault(owner[log.shape], set()).add(log.agent)
    assert {agent for agent, named in read_by.items() if agent in named} == {
        home.agent for home in HOMES
    }


def generic_imports_of_agents():
    """(module, the name it takes from minilib.agents...) in every generic module."""
    for folder in GENERIC:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module is not None:
                    parts = node.module.split(".")
                    if "agents" in parts:
                        for alias in node.names:
                            yield path.relative_to(PACKAGE), node.module, alias.name


def test_generic_modules_know_no_agent_but_through_the_registry():
    for where, module, name in generic_imports_of_agents():
        after = module.split("agents", 1)[1]
        assert after in ("", ".windows"), (where, module, name)
        assert after == ".windows" or name in REGISTRY, (where, module, name)


def test_one_client_for_the_calibrated_count_and_the_policy_replay():
    policy = build_policy("claude-code", 200_000, version="2.0.76")
    assert type(policy.client) is client_class("claude-code") is ClaudeCodeClient
    assert client_class("codex") is Client and home_of("aider") is None


@pytest.mark.parametrize("name", ["claude_code_compacted.jsonl", "codex_rollout.jsonl"])
def test_the_walk_of_a_log_uses_its_agents_client(name, monkeypatch):
    """call_points builds the client its agent's home names (seen by a spy)."""
    log = load_log(DATA_DIR / "logs" / name)
    made = []
    original = client_class(log.agent)

    class Spy(original):
        def __init__(self, counters):
            made.append(original)
            super().__init__(counters)

    monkeypatch.setattr("minilib.measure.calibration.client_class", lambda agent: Spy)
    spied = call_points(log)
    monkeypatch.undo()
    assert made and set(made) == {original}
    assert spied == call_points(log)
