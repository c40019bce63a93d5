"""codex: each tool output cut to 10 KiB / 256 lines, a handoff summary at 90%."""

import pytest
from message_builders import assistant, tool

from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.policies.production.codex import (
    PROMPT,
    SUMMARY_PREFIX,
    CodexPolicy,
    truncate_output,
)
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "the task"}]


def padded(tokens):
    """HEAD and one assistant message: exactly `tokens` tokens in all."""
    room = tokens - estimate_tokens(HEAD) - 4
    return HEAD + [{"role": "assistant", "content": "x" * (4 * room)}]


def test_an_output_within_10_kib_and_256_lines_is_unchanged():
    content = "ok\n" * 256
    assert truncate_output(content) == content
    assert truncate_output("é" * 5120) == "é" * 5120  # 10,240 bytes


def test_too_many_lines_keep_the_first_and_last_lines_with_what_was_cut():
    lines = [f"Line {i}\n" for i in range(300)]
    # 256 lines less the 3 of the omission line: 126 at the head, 127 at the tail
    expected = (
        "Total output lines: 300\n\n"
        + "".join(lines[:126])
        + "\n[... omitted 47 of 300 lines ...]\n\n"
        + "".join(lines[-127:])
    )
    assert truncate_output("".join(lines)) == expected


def test_few_long_lines_keep_5_kib_of_head_and_the_rest_of_10_kib_from_the_tail():
    content = "".join(f"{c}{c * 4999}\n" for c in "vwxyz") + "error: build failed\n"
    marker = "\n[... output truncated to fit 10240 bytes ...]\n\n"
    cut = truncate_output(content)
    header = "Total output lines: 6\n\n"
    assert cut.startswith(header + content[:5120] + marker)
    body = cut[len(header) :]
    assert len(body.encode()) == 10_240
    assert body.endswith(content[-(10_240 - 5120 - len(marker)) :])
    assert cut.endswith("error: build failed\n")


def test_many_lines_over_10_kib_respect_both_limits():
    cut = truncate_output("a\n" * 6000)
    body = cut.split("\n\n", 1)[1]
    assert cut.startswith("Total output lines: 6000\n\n")
    assert "[... omitted 5747 of 6000 lines ...]" in body
    assert len(body.encode()) <= 10_240 and len(body.splitlines()) <= 256


def test_tool_outputs_and_environment_output_are_cut_user_messages_never():
    big = "\n".join(f"row {i}" for i in range(1000))
    history = HEAD + [
        assistant("look", "c1", name="shell"),
        tool("c1", big),
        assistant("again"),
        {"role": "user", "content": big, "observation": True},
        {"role": "user", "content": big},
    ]
    window = CodexPolicy(200_000).send(history, 0).messages
    assert window[3] == dict(history[3], content=truncate_output(big))
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


def test_compaction_fires_at_the_limit_and_not_one_token_below():
    below = CodexPolicy(200_000).send(padded(179_999), 0)
    assert below.summary_calls == 0 and below.messages == padded(179_999)
    at = CodexPolicy(200_000).send(padded(180_000), 0)
    assert at.summary_calls == 1
    system, task, summary = at.messages
    assert system == HEAD[0] and task == HEAD[1]  # the initial context, the user's words
    assert summary["role"] == "user"
    assert summary["content"].startswith(SUMMARY_PREFIX + "\n")


def test_the_user_messages_kept_are_the_newest_within_their_budget():
    users = [{"role": "user", "content": f"request {i} " + "w" * 396} for i in range(5)]
    history = [HEAD[0]]  # each request is 100 tokens of text
    for i, user in enumerate(users):
        history += [user, assistant(f"on it {i}", f"c{i}"), tool(f"c{i}", "z" * 8000)]
    policy = CodexPolicy(10_000, user_message_tokens=250)  # 9,000 tokens: compacts
    window = policy.send(history, 0).messages
    kept = [m["content"] for m in window[1:-1]]
    # newest first: requests 4 and 3 fit (200), request 2 is cut to the 50 left
    assert kept[1:] == [users[3]["content"], users[4]["content"]]
    assert kept[0].startswith("request 2 ") and "tokens truncated" in kept[0]
    assert estimate_tokens([{"role": "user", "content": kept[0]}]) < 80
    assert window[-1]["content"].startswith(SUMMARY_PREFIX)
    validate_messages(window)


def test_a_second_compaction_keeps_the_users_words_but_not_the_first_summary():
    policy = CodexPolicy(2_000)
    history = list(HEAD)
    windows = []
    for i in range(40):
        windows.append(policy.send(history, i))
        history += [assistant(f"s{i}", f"c{i}"), tool(f"c{i}", "y" * 1200)]
    compacted = [sent.messages for sent in windows if sent.summary_calls]
    assert len(compacted) >= 2
    for window in compacted:
        assert window[:2] == HEAD
        assert len(window) == 3 and window[2]["content"].count(SUMMARY_PREFIX) == 1
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
        if estimate_tokens(window) >= policy.trigger_tokens:
            # the system prompt, the task (the only user message), the summary
            window = seen[len(expected)]
            assert window[:2] == messages[:2] and len(window) == 3
            assert window[2]["content"].startswith(SUMMARY_PREFIX)
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
        ({"max_output_bytes": 10}, "max_output_bytes"),
        ({"max_output_lines": 2}, "max_output_lines"),
        ({"user_message_tokens": -1}, "user_message_tokens"),
        ({"summary_tokens": 0}, "summary_tokens"),
    ],
)
def test_bad_parameters_raise_a_value_error_naming_them(parameters, name):
    with pytest.raises(ValueError, match=f"^{name} "):
        CodexPolicy(200_000, **parameters)


def test_the_documented_defaults_and_the_prompt():
    policy = build_policy("codex", 200_000)
    assert policy.parameters() == {
        "auto_compact_token_limit": 180_000,
        "max_output_bytes": 10_240,
        "max_output_lines": 256,
        "user_message_tokens": 20_000,
        "summary_tokens": 5_000,
    }
    assert build_policy("codex", 16_000).user_message_tokens == 1_600  # scaled
    assert policy.stand_in and policy.PROMPT == PROMPT
    assert PROMPT.startswith("You are performing a CONTEXT CHECKPOINT COMPACTION.")
