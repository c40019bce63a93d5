"""A policy that keeps what it reads beside its history, to pay only for what a round
changed, sends the windows its plain walk over the whole history sends.

Each such policy keeps the plain walk (`plain = True`): the definition, as written
from the real system's source. Both are replayed on generated sessions and bundled
and real logs, at windows where the policy compresses, masks, and cuts every round,
and every window must be the same."""

import pytest

from minilib.logs.replay import load_transcript, with_output_ids
from minilib.policies.production import build_policy, replay_policy
from minilib.scale import generate_history
from minilib.session import DATA_DIR

LOGS = {
    "generated-300": lambda: list(generate_history(300, user_turns=4).messages),
    "generated-120-one-turn": lambda: list(generate_history(120).messages),
    "claude-code-compacted": lambda: (
        load_transcript(DATA_DIR / "logs" / "claude_code_compacted.jsonl").messages
    ),
    "pi-large": lambda: (
        load_transcript(
            DATA_DIR / "real" / "pi" / "pi-mono-sonnet-4-5-large-session.jsonl"
        ).messages
    ),
}
_loaded = {}


def log(name):
    if name not in _loaded:
        _loaded[name] = with_output_ids(LOGS[name]())
    return _loaded[name]


def windows(messages, key, window_tokens, plain, **parameters):
    policy = build_policy(key, window_tokens, **parameters)
    policy.plain = plain
    sent = []
    run = replay_policy(
        messages, policy, lambda step, window, arrived, measured: sent.append(window)
    )
    return policy, run, sent


CASES = [
    ("gemini-cli", 200_000, {}),
    ("gemini-cli", 32_000, {}),
    ("gemini-cli", 60_000, {"compression_threshold": 0.3}),
    ("gemini-cli", 200_000, {"summary_tokens": 60_000}),  # a snapshot that fails
    ("gemini-cli", 32_000, {"protect_latest_turn": False}),
    ("langchain-trim", 200_000, {}),
    ("langchain-trim", 16_000, {}),
    ("langchain-trim-human", 32_000, {}),
    ("langchain-trim-human", 200_000, {}),
    ("langchain-trim", 200_000, {"max_tokens": 30}),  # the system message alone
]


@pytest.mark.parametrize("name", list(LOGS))
@pytest.mark.parametrize(
    "key, window_tokens, parameters", CASES, ids=lambda case: str(case)
)
def test_the_windows_are_those_of_the_plain_walk(name, key, window_tokens, parameters):
    if key.startswith("langchain"):
        pytest.importorskip("langchain_core")  # its plain walk is LangChain's own
    messages = log(name)
    fast_policy, fast, fast_sent = windows(
        messages, key, window_tokens, False, **parameters
    )
    plain_policy, plain, plain_sent = windows(
        messages, key, window_tokens, True, **parameters
    )
    assert fast_sent == plain_sent
    assert (fast.tokens, fast.overflow_round, fast.summary_calls) == (
        plain.tokens,
        plain.overflow_round,
        plain.summary_calls,
    )
    assert fast_policy.compactions == plain_policy.compactions
    assert getattr(fast_policy, "files", None) == getattr(plain_policy, "files", None)


def test_the_cases_reach_each_path_gemini_cli_keeps_beside_its_walk():
    """Masking, the cut of a failed snapshot every round, and a snapshot."""
    reached = {"masked": False, "failed": False, "compacted": False}
    for name in LOGS:
        for key, window_tokens, parameters in CASES:
            if key != "gemini-cli":
                continue
            policy, _, _ = windows(log(name), key, window_tokens, False, **parameters)
            reached["masked"] |= bool(policy.maskings)
            reached["failed"] |= policy.failed and policy.files > 0
            reached["compacted"] |= bool(policy.compactions)
    assert all(reached.values()), reached


def exempt_and_reused(rounds: int = 40) -> list:
    """A session whose outputs are now and then of a tool masking never masks, and
    whose call ids come back later for another tool (an id is unique only within its
    message): which outputs masking offers changes with the names."""
    messages = [{"role": "user", "content": "go"}]
    for number in range(rounds):
        name = "ask_user" if number % 7 == 3 else "read_file"
        call_id = f"call_{number % 9}"  # the ids come back, for another tool
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": "{}"},
                    }
                ],
            }
        )
        size = 40 if number % 5 == 0 else 4_000  # some too small to gain by masking
        body = f"output {number} " + "x" * size
        messages.append({"role": "tool", "tool_call_id": call_id, "content": body})
    messages.append({"role": "assistant", "content": "done"})
    return with_output_ids(messages)


@pytest.mark.parametrize("protect_latest_turn", [True, False])
def test_gemini_cli_offers_what_its_walk_offers_when_tools_are_exempt_or_renamed(
    protect_latest_turn,
):
    messages = exempt_and_reused()
    parameters = {
        "protection_tokens": 3_000,
        "min_prunable_tokens": 1_000,
        "protect_latest_turn": protect_latest_turn,
    }
    fast_policy, fast, fast_sent = windows(
        messages, "gemini-cli", 60_000, False, **parameters
    )
    plain_policy, plain, plain_sent = windows(
        messages, "gemini-cli", 60_000, True, **parameters
    )
    assert fast_policy.maskings and fast_policy.maskings == plain_policy.maskings
    assert fast_sent == plain_sent and fast.tokens == plain.tokens
