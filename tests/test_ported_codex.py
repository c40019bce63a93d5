"""Codex's own unit tests, ported to the lab's policy (`codex`).

Sources (openai/codex):
- `codex-rs/utils/output-truncation/src/truncate_tests.rs` at commit
  820f85cf597b492adc6149759a22e71c72b01afa (the commit of the `lib.rs` the lab's
  truncation follows);
- the remote compaction's retention tests in `codex-rs/core/src/compact_remote_v2.rs`
  at commit 009bd870cd794c4c867576d306717b6a5ca70857.
Each test names the test it ports. A tool output is one string in the lab's messages:
where Codex joins the text items of an output with newlines before it cuts them
(`formatted_truncate_text_content_items_with_policy`), the port passes that joined
text; images, audio and encrypted items are not modelled (docs/references.md,
"Behaviours the lab leaves out").
"""

import pytest

from minilib.agents.codex.policy import (
    BYTES,
    OPAQUE_ITEM,
    TOKENS,
    CodexPolicy,
    approx_token_count,
    truncate_output,
    truncate_text,
)

TRUNCATE_TESTS = "820f85cf597b492adc6149759a22e71c72b01afa"
REMOTE_V2 = "009bd870cd794c4c867576d306717b6a5ca70857"
LONG = "this is an example of a long output that should be truncated"
TWO_LINES = LONG + "\nalso some other line"


def header(tokens, lines):
    return (
        f"Warning: truncated output (original token count: {tokens})\n"
        f"Total output lines: {lines}\n\n"
    )


# --- truncate_tests.rs: formatted_truncate_text, truncate_text -----------------------


@pytest.mark.parametrize(
    "test, content, mode, limit, expected",
    [
        (
            "truncate_bytes_less_than_placeholder_returns_placeholder",
            "example output",
            BYTES,
            1,
            header(4, 1) + "…13 chars truncated…t",
        ),
        (
            "truncate_tokens_less_than_placeholder_returns_placeholder",
            "example output",
            TOKENS,
            1,
            header(4, 1) + "ex…3 tokens truncated…ut",
        ),
        (
            "truncate_tokens_under_limit_returns_original",
            "example output",
            TOKENS,
            10,
            "example output",
        ),
        (
            "truncate_bytes_under_limit_returns_original",
            "example output",
            BYTES,
            20,
            "example output",
        ),
        (
            "truncate_tokens_over_limit_returns_truncated",
            LONG,
            TOKENS,
            5,
            header(15, 1) + "this is an…10 tokens truncated… truncated",
        ),
        (
            "truncate_bytes_over_limit_returns_truncated",
            LONG,
            BYTES,
            30,
            header(15, 1) + "this is an exam…30 chars truncated…ld be truncated",
        ),
        (
            "truncate_bytes_reports_original_line_count_when_truncated",
            TWO_LINES,
            BYTES,
            30,
            header(21, 2) + "this is an exam…51 chars truncated…some other line",
        ),
        (
            "truncate_tokens_reports_original_line_count_when_truncated",
            TWO_LINES,
            TOKENS,
            10,
            header(21, 2)
            + "this is an example o…11 tokens truncated…also some other line",
        ),
    ],
)
def test_formatted_truncate_text(test, content, mode, limit, expected):
    # truncate_tests.rs, `test`: formatted_truncate_text(content, policy)
    assert truncate_output(content, mode, limit) == expected


def test_truncate_middle_bytes_handles_utf8_content():
    # truncate_tests.rs, truncate_middle_bytes_handles_utf8_content
    s = "😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n"
    assert truncate_text(s, BYTES, 20) == "😀😀…21 chars truncated…with text\n"


def test_content_items_under_the_limit_are_returned_as_they_are():
    # truncate_tests.rs,
    # formatted_truncate_text_content_items_with_policy_returns_original_under_limit:
    # "alpha", "", "beta" joined with newlines, 11 bytes against Bytes(32)
    joined = "alpha\n\nbeta"
    assert truncate_output(joined, BYTES, 32) == joined


def test_content_items_empty_leading_text():
    # truncate_tests.rs, formatted_truncate_text_content_items_with_policy_
    # preserves_empty_leading_text_behavior:
    # "" then "abc" join to "abc"; Bytes(0), an original count of 1
    assert truncate_output("abc", BYTES, 0) == header(1, 1) + "…3 chars truncated…"
    assert approx_token_count("abc") == 1


def test_content_items_merge_their_text_for_a_byte_budget():
    # truncate_tests.rs,
    # formatted_truncate_text_content_items_with_policy_merges_text_and_appends_media:
    # the text items "abcd", "efgh", "ijkl" (the media between them not modelled)
    assert (
        truncate_output("abcd\nefgh\nijkl", BYTES, 8)
        == header(4, 3) + "abcd…6 chars truncated…ijkl"
    )


def test_content_items_text_before_encrypted_content():
    # truncate_tests.rs,
    # formatted_truncate_text_content_items_with_policy_preserves_encrypted_content:
    # the text item "abcdefgh" at Bytes(2) (the encrypted item not modelled)
    assert truncate_output("abcdefgh", BYTES, 2) == header(2, 1) + "a…6 chars truncated…h"


def test_content_items_merge_all_text_for_a_token_budget():
    # truncate_tests.rs,
    # formatted_truncate_text_content_items_with_policy_merges_all_text_for_token_budget
    assert (
        truncate_output("abcdefgh\nijklmnop", TOKENS, 2)
        == header(5, 2) + "abcd…3 tokens truncated…mnop"
    )


def test_byte_count_conversion():
    # truncate_tests.rs, byte_count_conversion_clamps_non_positive_values: 0 bytes are
    # 0 tokens, 5 bytes 2 (a negative count cannot occur for a string)
    assert approx_token_count("") == 0
    assert approx_token_count("abcde") == 2


# --- compact_remote_v2.rs: the retained messages -------------------------------------


def compact(messages, window_tokens=200_000, **parameters):
    """The remote compaction of `messages`; the messages it keeps before the item."""
    policy = CodexPolicy(window_tokens, **parameters)
    policy.kept.messages = list(messages)
    assert policy.compact()
    kept = policy.kept.messages
    assert kept[-1]["content"].startswith(OPAQUE_ITEM)  # the one compaction item
    return kept[:-1]


def test_build_v2_compacted_history_filters_to_installed_retention_shape():
    # compact_remote_v2.rs,
    # build_v2_compacted_history_filters_to_installed_retention_shape:
    # of developer, system, user, assistant commentary and final answer, a function
    # call and an older compaction, only the user message is kept, then the new item.
    # The lab's system message opens the history and is the initial context Codex
    # injects again after the item is installed (process_compacted_history); the
    # developer message is a system message in the lab's roles.
    history = [
        {"role": "system", "content": "dev"},
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "user"},
        {"role": "assistant", "content": "commentary"},
        {"role": "assistant", "content": "final", "tool_calls": []},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "shell_command", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": ""},
        {"role": "user", "content": OPAQUE_ITEM + "\nold"},
    ]
    policy = CodexPolicy(200_000)
    policy.kept.messages = list(history)
    policy.summary_message = history[-1]  # the older compaction item
    assert policy.compact()
    kept = policy.kept.messages
    assert kept[:2] == history[:2]  # the initial context
    assert kept[2] == {"role": "user", "content": "user"}
    assert len(kept) == 4 and kept[3]["content"].startswith(OPAQUE_ITEM)


def test_build_v2_compacted_history_discards_messages_before_truncating():
    # compact_remote_v2.rs,
    # build_v2_compacted_history_discards_messages_before_truncating:
    # a developer message and an <environment_context> message, each over the 64,000
    # tokens, are dropped before the budget is applied: old and new are kept whole
    huge_developer = "d" * ((64_000 + 1) * 4)
    huge_context = (
        "<environment_context>\n" + "c" * ((64_000 + 1) * 4) + "\n</environment_context>"
    )
    old = {"role": "user", "content": "old"}
    new = {"role": "user", "content": "new"}
    kept = compact(
        [
            old,
            {"role": "system", "content": huge_developer},
            {"role": "user", "content": huge_context},
            new,
        ]
    )
    assert kept == [old, new]


def test_retained_history_truncation_keeps_newest_messages_first():
    # compact_remote_v2.rs, retained_history_truncation_keeps_newest_messages_first
    policy = CodexPolicy(200_000, user_message_tokens=3)
    kept = policy.recent_users(["old-old", "middle1234", "new"])
    assert kept == ["midd…1 tokens truncated…1234", "new"]
    kept = compact(
        [{"role": "user", "content": text} for text in ("old-old", "middle1234", "new")],
        user_message_tokens=3,
    )
    assert [m["content"] for m in kept] == ["midd…1 tokens truncated…1234", "new"]
