"""claude-code: microcompact (after an idle hour, or the gated cache-editing variant),
auto-compact at window - reserve - buffer, counting the system prompt and tools."""

import pytest
from message_builders import assistant, tool

from minilib.agents.claude_code.client import COMPACTABLE_TOOLS, PLACEHOLDER
from minilib.agents.claude_code.policy import (
    TRANSCRIPT_PATH,
    ClaudeCodeCacheEditingPolicy,
    ClaudeCodePolicy,
)
from minilib.logs.base import timestamp_seconds
from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "the task"}]
OPENING = "This session is being continued from a previous conversation that ran out of"


def padded(tokens):
    """HEAD and one user message: exactly `tokens` tokens in all."""
    room = tokens - estimate_tokens(HEAD) - 4  # the message's own structure
    return HEAD + [{"role": "user", "content": "x" * (4 * room)}]


def microcompacted(messages, keep=5):
    """Every compactable result but the last `keep` cleared, computed over the list."""
    names, places = {}, []
    for i, m in enumerate(messages):
        if m["role"] == "assistant":
            names = {c["id"]: c["function"]["name"] for c in m.get("tool_calls") or ()}
        elif m["role"] == "tool" and names.get(m["tool_call_id"]) in COMPACTABLE_TOOLS:
            places.append(i)
        elif m.get("observation"):
            places.append(i)
    clear = set(places[: max(len(places) - keep, 0)])
    return [
        dict(m, content=PLACEHOLDER) if i in clear else m for i, m in enumerate(messages)
    ]


def test_all_but_the_five_newest_compactable_results_are_cleared_in_place():
    history = list(HEAD)
    for i in range(8):
        history += [assistant(f"s{i}", f"c{i}", name="Read"), tool(f"c{i}", f"file {i}")]
    window = ClaudeCodeCacheEditingPolicy(200_000).send(history, 0).messages
    results = [m["content"] for m in window if m["role"] == "tool"]
    assert results == [PLACEHOLDER] * 3 + [f"file {i}" for i in range(3, 8)]
    validate_messages(window)  # a cleared result still answers its call
    assert [m.get("tool_call_id") for m in window] == [
        m.get("tool_call_id") for m in history
    ]
    assert history[3]["content"] == "file 0"  # the log's messages are not changed


def test_mcp_and_other_tools_are_never_cleared_and_do_not_count():
    history = list(HEAD)
    names = ["mcp__memory__recall", "read_file", "Task"] + ["Bash"] * 5
    for i, name in enumerate(names):
        history += [assistant(f"s{i}", f"c{i}", name=name), tool(f"c{i}", f"out {i}")]
    window = ClaudeCodeCacheEditingPolicy(200_000).send(history, 0).messages
    results = [m["content"] for m in window if m["role"] == "tool"]
    # read_file (Read) is the only compactable result older than the five Bash ones
    assert results == ["out 0", PLACEHOLDER, "out 2"] + [f"out {i}" for i in range(3, 8)]


def test_environment_output_counts_as_shell_output():
    history = list(HEAD)
    for i in range(7):
        history += [
            assistant(f"step {i}"),
            {"role": "user", "content": f"$ ls {i}", "observation": True},
        ]
    window = (
        ClaudeCodeCacheEditingPolicy(200_000, keep_recent=2).send(history, 0).messages
    )
    assert window == microcompacted(history, keep=2)
    assert [m["content"] for m in window[3::2]] == [PLACEHOLDER] * 5 + [
        "$ ls 5",
        "$ ls 6",
    ]


def test_microcompact_round_by_round_equals_it_applied_to_the_whole_history():
    messages = generate_history(60, 3).messages
    policy = ClaudeCodeCacheEditingPolicy(10**9, keep_recent=3)
    for step, index in enumerate(
        i for i, m in enumerate(messages) if m["role"] == "assistant"
    ):
        history = list(messages[:index])
        assert policy.send(history, step).messages == microcompacted(history, keep=3)
        assert policy.send(history, step).messages == microcompacted(history, keep=3)


def stamped(minutes_between_turns):
    """Eight Read results in two user turns, the second `minutes` after the first
    turn's last reply."""
    history, clock = [], 0.0
    for turn in range(2):
        history.append({"role": "user", "content": f"turn {turn}", "timestamp": clock})
        for i in range(4):
            clock += 5
            call = assistant(f"s{turn}{i}", f"c{turn}{i}", name="Read")
            history += [dict(call, timestamp=clock), tool(f"c{turn}{i}", f"file {i}")]
        clock += 60 * minutes_between_turns
    return history


def test_time_based_microcompact_clears_only_after_an_idle_hour():
    policy = ClaudeCodePolicy(200_000, keep_recent=2)
    assert policy.microcompact == "time-based"
    first_turn = stamped(60)[:9]  # 4 results, seconds apart: no idle gap
    assert policy.send(first_turn, 0).messages == first_turn
    # the second user turn comes an hour after the last reply: all but 2 cleared
    window = policy.send(stamped(60)[:10], 1).messages
    assert [m["content"] for m in window if m["role"] == "tool"] == [PLACEHOLDER] * 2 + [
        "file 2",
        "file 3",
    ]
    assert policy.microcompactions == [1]
    validate_messages(window)


def test_time_based_microcompact_waits_for_the_full_gap_and_needs_timestamps():
    for minutes, fired in ((59, False), (60, True)):
        policy = ClaudeCodePolicy(200_000, keep_recent=2)
        policy.send(stamped(minutes)[:9], 0)
        window = policy.send(stamped(minutes)[:10], 1).messages
        assert (PLACEHOLDER in [m["content"] for m in window]) is fired
    no_time = [{k: v for k, v in m.items() if k != "timestamp"} for m in stamped(600)]
    policy = ClaudeCodePolicy(200_000, keep_recent=2)
    policy.send(no_time[:9], 0)
    assert policy.send(no_time[:10], 1).messages == no_time[:10]
    off = ClaudeCodePolicy(200_000, keep_recent=2, microcompact="off")
    off.send(stamped(600)[:9], 0)
    assert off.send(stamped(600)[:10], 1).messages == stamped(600)[:10]


def test_timestamps_are_read_as_iso_8601_seconds_or_milliseconds():
    assert timestamp_seconds({"timestamp": "2026-05-20T14:00:00.000Z"}) == 1779285600.0
    assert timestamp_seconds({"timestamp": 1779285600}) == 1779285600.0
    assert timestamp_seconds({"timestamp": 1779285600000}) == 1779285600.0
    assert timestamp_seconds({"timestamp": "yesterday"}) is None
    assert timestamp_seconds({}) is None


def test_the_trigger_is_the_window_less_the_output_reserve_and_the_buffer():
    window = 200_000
    trigger = window - min(32_000, 20_000) - 13_000
    assert ClaudeCodePolicy(window).trigger_tokens == trigger == 167_000
    assert round(trigger / window, 3) == 0.835
    assert ClaudeCodePolicy(window, max_output_tokens=8_000).trigger_tokens == 179_000
    # the override lowers the trigger to a share of the window less the reserve...
    lowered = ClaudeCodePolicy(window, autocompact_pct_override=50)
    assert lowered.trigger_tokens == (window - 20_000) // 2
    # ...and never raises it
    assert ClaudeCodePolicy(window, autocompact_pct_override=99).trigger_tokens == trigger


def test_below_200k_the_reserve_and_the_buffer_scale_with_the_window():
    scale = 16_000 / 200_000
    expected = 16_000 - round(20_000 * scale) - round(13_000 * scale)
    assert ClaudeCodePolicy(16_000).trigger_tokens == expected == 13_360


def test_the_docs_95_percent_is_a_named_variant():
    assert ClaudeCodePolicy(200_000, auto_compact="docs").trigger_tokens == 190_000


def test_auto_compact_counts_the_system_prompt_and_tools_overhead():
    assert ClaudeCodePolicy(200_000).overhead_tokens == 20_000
    assert ClaudeCodePolicy(200_000).send(padded(146_999), 0).summary_calls == 0
    policy = ClaudeCodePolicy(200_000)
    assert policy.send(padded(147_000), 4).summary_calls == 1  # 147,000 + 20,000
    assert [(c.round, c.tokens_before) for c in policy.compactions] == [(4, 167_000)]


def test_auto_compact_fires_at_the_trigger_and_not_one_token_below():
    below = ClaudeCodePolicy(200_000, overhead_tokens=0).send(padded(166_999), 0)
    assert below.summary_calls == 0 and below.messages == padded(166_999)
    at = ClaudeCodePolicy(200_000, overhead_tokens=0).send(padded(167_000), 0)
    assert at.summary_calls == 1
    system, continuation = at.messages
    assert system == HEAD[0]  # the system prompt stays
    assert continuation["role"] == "user"
    assert continuation["content"].startswith(OPENING)
    assert f"read the full transcript at: {TRANSCRIPT_PATH}" in continuation["content"]
    assert continuation["content"].endswith(
        "Pick up the last task as if the break never happened."
    )


def test_after_a_compaction_the_conversation_grows_from_the_summary_again():
    policy = ClaudeCodePolicy(2_000)  # trigger 2000 - 200 - 130, less 200 overhead
    history = list(HEAD)
    windows = []
    for i in range(30):  # results of an MCP tool: microcompact leaves them all
        windows.append(policy.send(history, i))
        history += [
            assistant(f"s{i}", f"c{i}", name="mcp__db__q"),
            tool(f"c{i}", "y" * 600),
        ]
    compactions = [i for i, sent in enumerate(windows) if sent.summary_calls]
    assert len(compactions) >= 2
    for sent in windows:
        validate_messages(sent.messages)
        assert estimate_tokens(sent.messages) < 2_000
    first = windows[compactions[0]].messages
    after = windows[compactions[0] + 1].messages
    assert after[: len(first)] == first  # the continuation stays; new rounds follow it
    # a second compaction folds the first summary in, not the messages before it
    second = windows[compactions[1]].messages
    assert len(second) == 2 and second[1]["content"].count(OPENING) == 1


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    messages = list(generate_history(200, 0).messages)
    policy = build_policy("claude-code-cache-editing", window_tokens)
    seen = []
    run = replay_policy(
        messages, policy, on_window=lambda step, window, *_: seen.append(window)
    )
    expected, calls, start, continuation = [], 0, 1, []
    for history in (
        messages[:i] for i, m in enumerate(messages) if m["role"] == "assistant"
    ):
        window = messages[:1] + continuation + microcompacted(list(history[start:]))
        if estimate_tokens(window) + policy.overhead_tokens >= policy.trigger_tokens:
            # everything after the system prompt becomes one continuation message
            window = seen[len(expected)]
            assert window[0] == messages[0] and len(window) == 2
            assert window[1]["content"].startswith(OPENING)
            calls, start, continuation = calls + 1, len(history), [window[1]]
        assert seen[len(expected)] == window
        expected.append(estimate_tokens(window))
    assert run.tokens == expected and run.overflow_round is None
    assert run.summary_calls == calls and run.invalid_rounds == []
    assert (calls > 0) == (window_tokens == 16_000)  # 200k: microcompact alone holds it


@pytest.mark.parametrize(
    "parameters, name",
    [
        ({"keep_recent": 0}, "keep_recent"),
        ({"keep_recent": 2.5}, "keep_recent"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"autocompact_pct_override": 0}, "autocompact_pct_override"),
        ({"autocompact_pct_override": 120}, "autocompact_pct_override"),
        ({"summary_tokens": 8}, "summary_tokens"),
        ({"microcompact": "always"}, "microcompact"),
        ({"idle_minutes": 0}, "idle_minutes"),
        ({"auto_compact": "95%"}, "auto_compact"),
    ],
)
def test_bad_parameters_raise_a_value_error_naming_them(parameters, name):
    with pytest.raises(ValueError, match=f"^{name} "):
        ClaudeCodePolicy(200_000, **parameters)


def test_the_documented_defaults_and_what_it_says_of_itself():
    policy = build_policy("claude-code", 200_000)
    assert policy.parameters() == {
        "keep_recent": 5,
        "microcompact": "time-based",
        "idle_minutes": 60,
        "auto_compact": "inferred",
        "max_output_tokens": 32_000,
        "autocompact_pct_override": None,
        "summary_tokens": 5_000,
        "overhead_tokens": 20_000,
        "version": None,  # no log's version: the newest rule, nothing re-attached
        "reattach": False,
        "missing_history_tokens": 0,
        "recorded_resumes": 0,
        "recorded_manual_compactions": 0,
        "auto_compact_tokens": None,
    }
    gated = build_policy("claude-code-cache-editing", 200_000).parameters()
    assert gated["microcompact"] == "cache-editing" and gated["keep_recent"] == 5
    assert policy.stand_in and policy.main_parameter in policy.parameters()
    assert "nine sections" in policy.PROMPT


def test_a_claude_code_log_keeps_its_timestamps_so_an_idle_hour_replays():
    # the reader keeps each record's timestamp on its messages: a session resumed
    # after a lunch break clears its old results, one run straight through does not
    import json

    from minilib.logs import parse_log
    from minilib.session import DATA_DIR

    lines = (DATA_DIR / "logs" / "claude_code_session.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert all(m.get("timestamp") for m in parse_log("\n".join(lines), "s").messages)
    later = next(n for n, r in enumerate(records) if r.get("type") == "user" and n > 10)
    for record in records[later:]:  # everything from that user turn on, 2 hours on
        if record.get("timestamp"):
            record["timestamp"] = record["timestamp"].replace("T10:", "T12:")
    resumed = parse_log("\n".join(json.dumps(r) for r in records), "s")
    for log, fired in ((parse_log("\n".join(lines), "s"), False), (resumed, True)):
        policy = ClaudeCodePolicy(200_000, keep_recent=1)
        replay_policy(log.messages, policy)
        assert bool(policy.microcompactions) is fired
