"""codex and codex-local: each tool output cut by the model's TruncationPolicy; at
90% of the window a remote compaction (an opaque item) or a local handoff summary."""

import pytest
from message_builders import assistant, tool

from minilib.agents.codex.policy import (
    BYTES,
    MODELS,
    OPAQUE_ITEM,
    PROMPT,
    SUMMARY_PREFIX,
    CodexLocalPolicy,
    CodexPolicy,
    model_settings,
    truncate_output,
    truncate_text,
)
from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "the task"}]


def padded(tokens):
    """HEAD and one assistant message: exactly `tokens` tokens in all."""
    room = tokens - estimate_tokens(HEAD) - 4
    return HEAD + [{"role": "assistant", "content": "x" * (4 * room)}]


def test_an_output_within_the_token_budget_is_unchanged():
    content = "x" * 40_000  # 10,000 tokens of 4 bytes: exactly the budget
    assert truncate_output(content) == content
    assert truncate_output("é" * 20_000) == "é" * 20_000  # 40,000 bytes


def test_an_output_over_10000_tokens_keeps_half_the_bytes_at_each_end_with_a_header():
    lines = [f"line {i:05d} " + "x" * 88 + "\n" for i in range(500)]  # 100 bytes each
    content = "".join(lines)  # 50,000 bytes: 12,500 tokens
    cut = truncate_output(content)
    header = "Warning: truncated output (original token count: 12500)\n"
    header += "Total output lines: 500\n\n"
    assert cut == (
        header + content[:20_000] + "…2500 tokens truncated…" + content[-20_000:]
    )


def test_the_bytes_mode_counts_the_characters_it_removed():
    assert truncate_text("abcdefghij", BYTES, 4) == "ab…6 chars truncated…ij"
    assert truncate_text("ééééé", BYTES, 4) == "é…3 chars truncated…é"  # at characters
    cut = truncate_output("a\n" * 6000, BYTES, 10_000)
    assert cut.startswith(
        "Warning: truncated output (original token count: 3000)\n"
        "Total output lines: 6000\n\n"
    )
    assert "…2000 chars truncated…" in cut


def test_the_token_marker_matches_codex_own_test():
    # compact_remote_v2.rs: retained_history_truncation_keeps_newest_messages_first
    policy = CodexPolicy(200_000, user_message_tokens=3)
    kept = policy.recent_users(["old-old", "middle1234", "new"])
    assert kept == ["midd…1 tokens truncated…1234", "new"]


def test_tool_outputs_and_environment_output_are_cut_user_messages_never():
    big = "\n".join(f"row {i}" for i in range(1000))
    history = HEAD + [
        assistant("look", "c1", name="shell"),
        tool("c1", big),
        assistant("again"),
        {"role": "user", "content": big, "observation": True},
        {"role": "user", "content": big},
    ]
    big = big * 60  # over 40,000 bytes
    history[3]["content"] = history[5]["content"] = history[6]["content"] = big
    window = CodexPolicy(200_000).send(history, 0).messages
    assert window[3] == dict(history[3], content=truncate_output(big))
    assert window[3]["content"] != big
    assert window[5]["content"] == truncate_output(big) and window[5]["observation"]
    assert window[6] == history[6]
    validate_messages(window)
    assert history[3]["content"] == big  # the log's messages are not changed


def test_the_limit_is_90_percent_of_the_window_and_a_setting_may_only_lower_it():
    assert CodexPolicy(200_000).auto_compact_token_limit == 200_000 * 9 // 10 == 180_000
    assert (
        CodexPolicy(200_000, auto_compact_token_limit=150_000).trigger_tokens == 150_000
    )
    assert (
        CodexPolicy(200_000, auto_compact_token_limit=250_000).trigger_tokens == 180_000
    )


def test_the_limit_counts_the_system_prompt_and_tools_overhead():
    policy = CodexPolicy(200_000)
    assert policy.overhead_tokens == 18_000  # openai/codex#16212
    assert CodexPolicy(200_000).send(padded(161_999), 0).summary_calls == 0
    at = CodexPolicy(200_000).send(padded(162_000), 0)  # 162,000 + 18,000
    assert at.summary_calls == 1
    assert CodexPolicy(200_000, overhead_tokens=0).send(padded(179_999), 0).messages == (
        padded(179_999)
    )
    assert CodexPolicy(16_000).overhead_tokens == 1_440  # scaled with the window


@pytest.mark.parametrize(
    "policy_class, opening",
    [(CodexPolicy, OPAQUE_ITEM), (CodexLocalPolicy, SUMMARY_PREFIX)],
)
def test_compaction_fires_at_the_limit_and_not_one_token_below(policy_class, opening):
    below = policy_class(200_000, overhead_tokens=0).send(padded(179_999), 0)
    assert below.summary_calls == 0 and below.messages == padded(179_999)
    policy = policy_class(200_000, overhead_tokens=0)
    at = policy.send(padded(180_000), 3)
    assert at.summary_calls == 1
    assert [(c.round, c.tokens_before) for c in policy.compactions] == [(3, 180_000)]
    system, task, last = at.messages
    assert system == HEAD[0] and task == HEAD[1]  # the initial context, the user's words
    assert last["role"] == "user" and last["content"].startswith(opening + "\n")


@pytest.mark.parametrize(
    "policy_class, budget", [(CodexPolicy, 64_000), (CodexLocalPolicy, 20_000)]
)
def test_the_user_messages_kept_are_the_newest_within_their_budget(policy_class, budget):
    assert policy_class(200_000).user_message_tokens == budget
    users = [{"role": "user", "content": f"request {i} " + "w" * 390} for i in range(5)]
    history = [
        HEAD[0],
        {"role": "user", "content": "<environment_context>cwd</environment_context>"},
    ]
    for i, user in enumerate(users):  # each request is 400 bytes: 100 tokens
        history += [user, assistant(f"on it {i}", f"c{i}"), tool(f"c{i}", "z" * 8000)]
    policy = policy_class(10_000, user_message_tokens=250)  # 9,000 tokens: compacts
    window = policy.send(history, 0).messages
    assert window[:2] == history[:2]  # the initial context is injected again
    kept = [m["content"] for m in window[2:-1]]
    # newest first: requests 4 and 3 fit (200), request 2 is cut to the 50 left
    text = users[2]["content"]
    assert kept == [
        text[:100] + "…50 tokens truncated…" + text[-100:],
        users[3]["content"],
        users[4]["content"],
    ]
    validate_messages(window)


@pytest.mark.parametrize(
    "policy_class, opening",
    [(CodexPolicy, OPAQUE_ITEM), (CodexLocalPolicy, SUMMARY_PREFIX)],
)
def test_a_second_compaction_keeps_the_users_words_but_not_the_first_summary(
    policy_class, opening
):
    policy = policy_class(2_000)
    history = list(HEAD)
    windows = []
    for i in range(40):
        windows.append(policy.send(history, i))
        history += [assistant(f"s{i}", f"c{i}"), tool(f"c{i}", "y" * 1200)]
    compacted = [sent.messages for sent in windows if sent.summary_calls]
    assert len(compacted) >= 2 and len(policy.compactions) == len(compacted)
    for window in compacted:
        assert window[:2] == HEAD
        assert len(window) == 3 and window[2]["content"].count(opening) == 1
    assert all(estimate_tokens(sent.messages) < 2_000 for sent in windows)


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    messages = list(generate_history(200, 0).messages)
    policy = build_policy("codex", window_tokens)
    seen = []
    run = replay_policy(
        messages, policy, on_window=lambda step, window, *_: seen.append(window)
    )

    def cut(m):
        return (
            dict(m, content=truncate_output(m["content"])) if m["role"] == "tool" else m
        )

    expected, calls, start, opening = [], 0, 2, list(messages[:2])
    for history in (
        messages[:i] for i, m in enumerate(messages) if m["role"] == "assistant"
    ):
        window = opening + [cut(m) for m in history[start:]]
        if estimate_tokens(window) + policy.overhead_tokens >= policy.trigger_tokens:
            # the system prompt, the task (the only user message), the summary
            window = seen[len(expected)]
            assert window[:2] == messages[:2] and len(window) == 3
            assert window[2]["content"].startswith(OPAQUE_ITEM)
            calls, start, opening = calls + 1, len(history), window
        assert seen[len(expected)] == window
        expected.append(estimate_tokens(window))
    assert run.tokens == expected and run.overflow_round is None
    assert run.summary_calls == calls > 0 and run.invalid_rounds == []


@pytest.mark.parametrize(
    "parameters, name",
    [
        ({"auto_compact_token_limit": 0}, "auto_compact_token_limit"),
        ({"auto_compact_token_limit": "90%"}, "auto_compact_token_limit"),
        ({"truncation": "lines"}, "truncation"),
        ({"truncation_limit": 0}, "truncation_limit"),
        ({"overhead_tokens": 200_000}, "overhead_tokens"),
        ({"user_message_tokens": -1}, "user_message_tokens"),
        ({"summary_tokens": 0}, "summary_tokens"),
    ],
)
def test_bad_parameters_raise_a_value_error_naming_them(parameters, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        CodexPolicy(200_000, **parameters)


def test_the_documented_defaults_and_the_prompt():
    policy = build_policy("codex", 200_000)
    assert policy.parameters() == {
        "compaction": "remote",
        "auto_compact_token_limit": 180_000,
        "truncation": "tokens",
        "truncation_limit": 10_000,
        "user_message_tokens": 64_000,
        "summary_tokens": 5_000,
        "overhead_tokens": 18_000,
    }
    assert build_policy("codex", 16_000).user_message_tokens == 5_120  # scaled
    local = build_policy("codex-local", 200_000).parameters()
    assert local["compaction"] == "local" and local["user_message_tokens"] == 20_000
    assert policy.stand_in and policy.PROMPT == PROMPT
    assert PROMPT.startswith("You are performing a CONTEXT CHECKPOINT COMPACTION.")


def test_shell_output_gets_the_header_other_output_is_kept_to_12000_tokens_without():
    # core/src/tools/mod.rs format_exec_output_str: the header, at the policy;
    # context_manager/history.rs process_item: every output at policy * 1.2, no header
    shell_out = "s" * 44_000  # 11,000 tokens: over 10,000, under 12,000
    read_out = "r" * 44_000
    big_read = "b" * 50_000  # 12,500 tokens: over 12,000
    history = HEAD + [
        assistant("run", "c1", name="shell_command"),
        tool("c1", shell_out),
        assistant("read", "c2", name="read_file"),
        tool("c2", read_out),
        assistant("read more", "c3", name="read_file"),
        tool("c3", big_read),
    ]
    window = CodexPolicy(272_000).send(history, 0).messages
    assert window[3]["content"] == truncate_output(shell_out)
    assert window[3]["content"].startswith("Warning: truncated output")
    assert window[5]["content"] == read_out  # within 12,000 tokens: whole
    assert window[7]["content"] == (
        big_read[:24_000] + "…500 tokens truncated…" + big_read[-24_000:]
    )


def test_the_models_list_gives_a_272000_window_and_an_auto_compact_limit_of_244800():
    policy = CodexPolicy(**model_settings("gpt-5.4"))
    assert policy.window_tokens == 272_000
    assert policy.auto_compact_token_limit == 244_800
    assert (policy.truncation, policy.truncation_limit) == ("tokens", 10_000)
    assert model_settings("gpt-5.2")["truncation"] == BYTES
    assert {window for window, _, _ in MODELS.values()} == {272_000}
    with pytest.raises(ValueError, match="unknown Codex model"):
        model_settings("gpt-4")
