"""Gemini CLI's own unit tests, ported to the lab's policy (`gemini-cli`).

Source: google-gemini/gemini-cli at commit 5411f113cafae26161b4969b0237b8e1e024e2c2,
`packages/core/src/context/toolOutputMaskingService.test.ts` (with its snapshot,
`__snapshots__/toolOutputMaskingService.test.ts.snap`) and
`packages/core/src/context/chatCompressionService.test.ts`. Each test names the test it
ports. What the lab leaves out of these files is listed in docs/references.md
("Behaviours the lab leaves out").

How a Gemini history becomes the lab's messages:
- a Content holding a `functionResponse` named N is a tool message answering a call
  of N made by the assistant message before it (the lab's messages pair every
  result with its call; the call id is the tool's name, so a mocked counter can tell
  the tools apart as Gemini's mocked `estimateTokenCountSync` does by name);
- Gemini masks the history before the request is added to it and skips its last
  Content; the lab's policy sees the request too, as what follows the last assistant
  message. So a test whose last Content is a function response ends the lab's history
  with that response (the request), and a test whose last Content is a user text
  ends it with that text, an assistant reply and the next request: the last Content
  skipped carries no function response either way;
- the masking tests mock the token count; the lab's policy takes its counter as a
  parameter, and these tests pass one with the same rule (0 for a message that is not
  a function response, which Gemini's masking never counts).
"""

import json
import re

import pytest
from message_builders import assistant, tool

from minilib.agents.gemini_cli.policy import (
    MASKING_TAG,
    GeminiCliPolicy,
    find_split_point,
)

COMMIT = "5411f113cafae26161b4969b0237b8e1e024e2c2"
TASK = {"role": "user", "content": "the task"}
SHELL = "run_shell_command"  # SHELL_TOOL_NAME


def responses(*outputs):
    """One Content with a function response per (name, output), in the lab's shape."""
    messages = [TASK]
    for name, output in outputs:
        messages += [assistant("", name, name=name), tool(name, output)]
    return messages


def then_latest_text(messages):
    """A last Content that is user text 'latest' (see the module's docstring)."""
    return messages + [
        {"role": "user", "content": "latest"},
        {"role": "assistant", "content": "reply"},
        {"role": "user", "content": "next"},
    ]


def counter(rule):
    """A token counter from a per-message rule, for a mocked estimateTokenCountSync."""

    def count(messages):
        return sum(rule(m) if m.get("role") == "tool" else 0 for m in messages)

    return count


def masked(content):
    return f"<{MASKING_TAG}" in content


def sent(history, rule, **parameters):
    policy = GeminiCliPolicy(
        1_000_000, counter(rule), overhead_tokens=0, **parameters
    )  # a 1M-token model: the 50,000 and 30,000 are not scaled
    return policy, policy.send(history, 0).messages


# --- toolOutputMaskingService.test.ts -------------------------------------------------


def test_should_respect_remote_configuration_overrides():
    # 'should respect remote configuration overrides' (protection 100, prunable 50,
    # protectLatestTurn false): the only output, in the latest turn, is masked
    history = responses(("test_tool", "A" * 200))
    policy, window = sent(
        history,
        lambda m: 10 if masked(m["content"]) else 200,
        protection_tokens=100,
        min_prunable_tokens=50,
        protect_latest_turn=False,
    )
    assert masked(window[-1]["content"])
    # with the latest turn protected (the default) the same output stays whole
    policy, window = sent(
        history,
        lambda m: 10 if masked(m["content"]) else 200,
        protection_tokens=100,
        min_prunable_tokens=50,
    )
    assert not masked(window[-1]["content"])


def test_should_not_mask_if_total_tool_tokens_are_below_protection_threshold():
    # 'should not mask if total tool tokens are below protection threshold'
    history = then_latest_text(responses(("test_tool", "small output")))
    policy, window = sent(history, lambda m: 100)
    assert policy.maskings == [] and window == history


def test_should_protect_the_latest_turn_and_mask_older_outputs_beyond_50k():
    # 'should protect the latest turn and mask older outputs beyond 50k window if
    # total > 30k': t1 60k (oldest), t2 20k, t3 10k (latest, protected)
    history = responses(("t1", "A" * 60000), ("t2", "B" * 20000), ("t3", "C" * 10000))
    tokens = {"t1": 60000, "t2": 20000, "t3": 10000}
    policy, window = sent(
        history,
        lambda m: 100 if masked(m["content"]) else tokens[m["tool_call_id"]],
    )
    assert policy.maskings == [0]
    assert masked(window[2]["content"])
    assert window[4]["content"] == "B" * 20000
    assert window[6]["content"] == "C" * 10000


def test_should_perform_global_aggregation_for_many_small_parts():
    # 'should perform global aggregation for many small parts once boundary is hit':
    # 12 outputs of 10k, the latest skipped; the boundary at 50k protects five
    history = responses(*[(f"tool{i}", "A" * 10000) for i in range(12)])
    policy, window = sent(
        history, lambda m: 100 if masked(m["content"]) else len(m["content"])
    )
    outputs = [m for m in window if m["role"] == "tool"]
    assert sum(masked(m["content"]) for m in outputs) == 6
    assert all(masked(m["content"]) for m in outputs[:6])
    assert policy.tokens < 12 * 10000  # tokens were saved


def test_should_verify_tool_aware_previews_shell_vs_generic():
    # 'should verify tool-aware previews (shell vs generic)'
    output = "Output: line1\nline2\nline3\nline4\nline5\nError: failed\nExit Code: 1"
    history = responses((SHELL, output), ("p", "p" * 60000), ("l", "l"))
    tokens = {SHELL: 100000, "p": 60000}
    policy, window = sent(
        history,
        lambda m: 100 if masked(m["content"]) else tokens.get(m["tool_call_id"], 100),
    )
    bash = window[2]["content"]
    assert "Output: line1\nline2\nline3\nline4\nline5" in bash
    assert "Exit Code: 1" in bash and "Error: failed" in bash


def test_should_skip_already_masked_content_and_not_count_it():
    # 'should skip already masked content and not count it towards totals': tool2 is
    # the latest turn, tool1 masked before
    history = responses(
        ("tool1", f"<{MASKING_TAG}>...</{MASKING_TAG}>"), ("tool2", "A" * 60000)
    )
    policy, window = sent(history, lambda m: 60000)
    assert policy.maskings == [] and window == history


def test_should_handle_different_response_keys_in_masked_update():
    # 'should handle different response keys in masked update': both t1 (a `result`
    # key) and p are prunable, cumulative 60k and 120k. The lab's content is a string,
    # so the check that only the `output` key is left does not apply.
    history = then_latest_text(responses(("t1", "A" * 60000), ("p", "P" * 60000)))
    policy, window = sent(history, lambda m: 100 if masked(m["content"]) else 60000)
    assert [masked(window[i]["content"]) for i in (2, 4)] == [True, True]


def test_should_match_the_expected_snapshot_for_a_masked_tool_output():
    # 'should match the expected snapshot for a masked tool output', against
    # __snapshots__/toolOutputMaskingService.test.ts.snap; the path is normalised as
    # the test normalises it (the lab names the session and project, not a temp dir)
    history = then_latest_text(
        responses((SHELL, "Line\n" * 25), ("padding", "B" * 60000))
    )
    tokens = {SHELL: 1000, "padding": 60000}
    policy, window = sent(
        history,
        lambda m: 100 if masked(m["content"]) else tokens.get(m["tool_call_id"], 10),
    )
    response = window[2]["content"]
    response = re.sub(r"\S*/tool-outputs/", "/mock/temp/tool-outputs/", response)
    response = response.replace("session-<session>", "session-mock-session")
    response = re.sub(rf"{SHELL}_[^\s\"]+\.txt", f"{SHELL}_deterministic.txt", response)
    line = "Line\n"
    expected = (
        "<tool_output_masked>\n"
        + line * 10
        + "\n... [6 lines omitted] ...\n\n"
        + line * 9
        + "\n\nOutput too large. Full output available at: "
        "/mock/temp/tool-outputs/session-mock-session/run_shell_command_deterministic.txt"
        "\n</tool_output_masked>"
    )
    assert response == expected


def test_should_not_mask_if_masking_increases_token_count():
    # 'should not mask if masking increases token count (due to overhead)': the mocked
    # count is by tool name, so a masked output counts what it did
    history = then_latest_text(responses(("tiny_tool", "tiny"), ("padding", "B" * 60000)))
    tokens = {"tiny_tool": 5, "padding": 60000}
    policy, window = sent(history, lambda m: tokens.get(m["tool_call_id"], 1000))
    assert policy.maskings == [] and window == history


def test_should_never_mask_exempt_tools_even_deep_in_history():
    # 'should never mask exempt tools (like activate_skill) even if they are deep in
    # history': bulky_tool and padding masked, activate_skill kept
    skill = "High value instructions for skill"
    history = then_latest_text(
        responses(
            ("activate_skill", skill),
            ("bulky_tool", "A" * 60000),
            ("padding", "B" * 60000),
        )
    )
    tokens = {"activate_skill": 1000, "bulky_tool": 60000, "padding": 60000}
    policy, window = sent(
        history,
        lambda m: 100 if masked(m["content"]) else tokens.get(m["tool_call_id"], 10),
    )
    assert window[2]["content"] == skill
    assert masked(window[4]["content"]) and masked(window[6]["content"])
    assert sum(masked(m["content"]) for m in window) == 2


# --- chatCompressionService.test.ts: findCompressSplitPoint ---------------------------


def contents_and_messages(contents):
    """Gemini Contents and the lab's messages for them; the sizes are the Contents'
    JSON lengths, as findCompressSplitPoint measures them (JSON.stringify)."""
    sizes = [len(json.dumps(c, separators=(",", ":"))) for c in contents]
    messages = []
    for content in contents:
        part = content["parts"][0]
        if content["role"] == "user":
            messages.append({"role": "user", "content": part.get("text", "")})
        elif "functionCall" in part:
            messages.append(assistant("", "c1", name=part["functionCall"]["name"]))
        else:
            messages.append({"role": "assistant", "content": part.get("text", "")})
    return sizes, messages


FIVE = [
    {"role": role, "parts": [{"text": f"This is the {n} message."}]}
    for role, n in zip(
        ["user", "model"] * 3, ["first", "second", "third", "fourth", "fifth"]
    )
]


@pytest.mark.parametrize("preserve", [1, 0])
def test_find_split_point_should_throw_for_fractions_outside_0_and_1(preserve):
    # 'should throw an error for non-positive numbers' (0) and '... for a fraction
    # greater than or equal to 1' (1): the lab's fraction is 1 - preserve_threshold,
    # which must lie strictly between 0 and 1
    with pytest.raises(ValueError, match="preserve_threshold"):
        GeminiCliPolicy(1_000_000, preserve_threshold=preserve)


@pytest.mark.parametrize(
    "contents, fraction, expected",
    [
        ([], 0.5, 0),  # 'should handle an empty history'
        (FIVE, 0.5, 4),  # 'should handle a fraction in the middle'
        (FIVE, 0.9, 4),  # 'should handle a fraction of last index'
        (FIVE[:4], 0.8, 4),  # 'should handle a fraction of after last index'
        (  # 'should return earlier splitpoint if no valid ones are after threshold'
            FIVE[:3] + [{"role": "model", "parts": [{"functionCall": {"name": "foo"}}]}],
            0.99,
            2,
        ),
        (  # 'should handle a history with only one item'
            [{"role": "user", "parts": [{"text": "Message 1"}]}],
            0.5,
            0,
        ),
        (  # 'should handle history with weird parts'
            [
                {"role": "user", "parts": [{"text": "Message 1"}]},
                {"role": "model", "parts": [{"fileData": {"fileUri": "derp"}}]},
                {"role": "user", "parts": [{"text": "Message 2"}]},
            ],
            0.5,
            2,
        ),
    ],
)
def test_find_compress_split_point(contents, fraction, expected):
    sizes, messages = contents_and_messages(contents)
    assert find_split_point(sizes, messages, fraction) == expected


# --- chatCompressionService.test.ts: ChatCompressionService ---------------------------


def test_should_return_noop_if_history_is_empty():
    # 'should return NOOP if history is empty'
    sent_ = GeminiCliPolicy(1_000_000).send([], 0)
    assert sent_.messages == [] and sent_.summary_calls == 0


def test_should_return_noop_if_under_token_threshold_and_not_forced():
    # 'should return NOOP if under token threshold and not forced': 600 of a
    # 1,000-token limit at a 0.7 threshold
    history = [{"role": "user", "content": "hi"}]
    policy = GeminiCliPolicy(
        1000, lambda ms: 600 * len(ms), compression_threshold=0.7, overhead_tokens=0
    )
    sent_ = policy.send(history, 0)
    assert sent_.summary_calls == 0 and sent_.messages == history


def test_should_compress_if_over_token_threshold_with_verification_turn():
    # 'should compress if over token threshold with verification turn': 600k of a
    # 1M limit; the summary comes first and two model calls are made (the summary
    # and its verification). The lab's count is 150k a message, 600k in all.
    history = [
        {"role": role, "content": f"msg{i}"}
        for i, role in enumerate(["user", "assistant"] * 2, start=1)
    ]
    policy = GeminiCliPolicy(
        1_000_000,
        lambda ms: sum(150_000 if m["content"].startswith("msg") else 100 for m in ms),
        overhead_tokens=0,
    )
    sent_ = policy.send(history, 0)
    assert sent_.summary_calls == 2
    assert sent_.messages[0]["content"].startswith("<state_snapshot>")
    assert [m["content"] for m in sent_.messages[1:]] == [
        "Got it. Thanks for the additional context!"
    ]


def test_should_return_failed_if_new_token_count_is_inflated():
    # 'should return FAILED if new token count is inflated': the compressed history
    # counts 10,000 against 100 before; the history is kept as it was. The test forces
    # the compression; here a 200-token limit at 0.5 triggers it at 100.
    history = [
        {"role": "user", "content": "msg1"},
        {"role": "assistant", "content": "msg2"},
    ]
    policy = GeminiCliPolicy(
        200,
        lambda ms: sum(50 if m["content"].startswith("msg") else 10_000 for m in ms),
        overhead_tokens=0,
    )
    sent_ = policy.send(history, 0)
    assert sent_.messages == history and policy.failed


def budget_history(name, response, old_turns):
    """An old exchange or three, then 'msg 1' and two large function responses."""
    history = []
    for i in range(1, old_turns + 1):
        suffix = f" {i}" if old_turns > 1 else ""
        history += [
            {"role": "user", "content": f"old msg{suffix}"},
            {"role": "assistant", "content": f"old resp{suffix}"},
        ]
    history.append({"role": "user", "content": "msg 1"})
    for call in ("c1", "c2"):
        history += [assistant("", call, name=name), tool(call, response)]
    return history


def forced(history):
    """The policy at a 1M-token model, compressing this history (the tests force
    compression; a 5% threshold, 50,000 tokens, is below it)."""
    policy = GeminiCliPolicy(1_000_000, compression_threshold=0.05, overhead_tokens=0)
    return policy.send(history, 0)


def test_should_truncate_older_function_responses_when_budget_is_exceeded():
    # 'Reverse Token Budget Truncation > should truncate older function responses when
    # budget is exceeded': two responses of 170,000 characters (42,500 tokens each)
    # against the 50,000-token budget; the older one is cut
    sent_ = forced(budget_history("grep", "a" * 170000, old_turns=1))
    kept = sent_.messages[2:]  # after the summary and 'Got it'
    assert sent_.summary_calls == 2 and kept[0]["content"] == "msg 1"
    assert "Output too large." in kept[2]["content"]
    assert "/tool-outputs/grep_" in kept[2]["content"]
    assert kept[4]["content"] == "a" * 170000


@pytest.mark.parametrize(
    "name, test",
    [
        ("shell", "should correctly handle massive single-line strings inside JSON"),
        ("raw_tool", "should use character-based truncation for massive single-line"),
    ],
)
def test_massive_single_line_outputs_keep_8000_and_32000_characters(name, test):
    # 'Reverse Token Budget Truncation > <test>': the older of two 170,000-character
    # single-line outputs keeps its first 8,000 and last 32,000 characters (20% and
    # 80% of DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD, 40,000)
    sent_ = forced(
        budget_history(name, "c" * 170000, old_turns=3 if name == "shell" else 2)
    )
    kept = [m["content"] for m in sent_.messages[2:] if m["role"] == "tool"]
    short = [text for text in kept if len(text) < 100000]
    assert len(short) == 1
    assert "Showing first 8,000 and last 32,000 characters" in short[0]
