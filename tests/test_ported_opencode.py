"""opencode's own unit tests of its prune, ported to the lab's policy (`opencode-prune`).

Source: anomalyco/opencode (sst/opencode's current home) at commit
7af65bfa2bcd72d4d6e805baf2fe46435f4f343f, `packages/opencode/test/session/
compaction.test.ts`, describe "session.compaction.prune" (the policy follows
`compaction.ts` at fd78ec6, docs/references.md). The rest of that file tests the
summary compaction, its overflow check and its session bookkeeping, which the lab's
prune-only policy leaves out (listed in docs/references.md, "Behaviours the lab leaves
out").

A tool part is a tool message answering its call; a pruned output is the placeholder
the model reads (`time.compacted` set, in opencode). The test calls `prune` on the
whole session; the lab reads the session with `send` and then prunes it whole, as
`SessionCompaction.prune` does. 200,000 characters are 50,000 tokens for opencode (4 a
token) and a little more in the lab's count: over the 40,000 protected and the 20,000
minimum either way (a 200k window, so neither number is scaled).
"""

from message_builders import assistant, tool

from minilib.agents.opencode.policy import PLACEHOLDER, OpencodePrunePolicy

COMMIT = "7af65bfa2bcd72d4d6e805baf2fe46435f4f343f"


def session(tool_name):
    return [
        {"role": "user", "content": "first"},
        assistant("", "c1", name=tool_name),
        tool("c1", "x" * 200_000),
        {"role": "user", "content": "second"},
        {"role": "user", "content": "third"},
    ]


def pruned(history):
    policy = OpencodePrunePolicy(200_000)
    policy.send(history, 0)
    policy.prune(len(policy.kept.messages))
    return policy.kept.messages[2]["content"]


def test_compacts_old_completed_tool_output():
    # "session.compaction.prune > compacts old completed tool output" (compaction
    # { prune: true })
    assert pruned(session("bash")) == PLACEHOLDER


def test_skips_protected_skill_tool_output():
    # "session.compaction.prune > skips protected skill tool output"
    assert pruned(session("skill")) == "x" * 200_000
