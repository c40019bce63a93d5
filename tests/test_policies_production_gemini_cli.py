"""gemini-cli: tool outputs masked every turn; at 50% of the token limit, a state
snapshot of the older 70%."""

import pytest
from message_builders import assistant, tool

from minilib.agents.gemini_cli.policy import (
    ACKNOWLEDGEMENT,
    CALLS_PER_COMPRESSION,
    MASKING_TAG,
    GeminiCliPolicy,
    masked_text,
    simple_preview,
    truncated_text,
)
from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

SYSTEM = {"role": "system", "content": "sys"}
PLAIN = {"masking": False, "overhead_tokens": 0}  # chat compression alone


def turns(count, output_chars=3_996, lines=1):
    """`count` user turns, each a request, one call and its output (equal sizes)."""
    messages = []
    for i in range(count):
        text = "\n".join([f"{i}-{n}" + "o" * output_chars for n in range(lines)])
        messages += [
            {"role": "user", "content": f"request {i:02}"},
            assistant(f"looking {i:02}", f"c{i}", name="read_file"),
            tool(f"c{i}", text),
        ]
    return messages


def with_total(messages, tokens):
    """`messages` with the last output padded so the whole list is `tokens` tokens."""
    short = tokens - estimate_tokens(messages)
    last = dict(messages[-1], content=messages[-1]["content"] + "p" * (4 * short))
    padded = messages[:-1] + [last]
    assert estimate_tokens(padded) == tokens
    return padded


def test_compression_fires_at_half_the_token_limit_and_not_one_token_below():
    history = [SYSTEM] + turns(10, output_chars=20_000)  # ~5k tokens a turn
    below = with_total(history, 99_999)
    sent = GeminiCliPolicy(200_000, **PLAIN).send(below, 0)
    assert sent.summary_calls == 0 and sent.messages == below
    at = GeminiCliPolicy(200_000, **PLAIN).send(with_total(history, 100_000), 0)
    assert at.summary_calls == CALLS_PER_COMPRESSION == 2  # the snapshot, its check


def test_the_newest_30_percent_is_kept_from_a_user_turn_the_rest_becomes_a_snapshot():
    history = [SYSTEM] + turns(10)  # ten turns of the same size
    window = (
        GeminiCliPolicy(6_000, function_response_budget=10**6, **PLAIN)
        .send(history, 0)
        .messages
    )
    # 70% of ten equal turns is reached at the start of the eighth: three turns stay
    assert window[0] == SYSTEM
    snapshot, ack = window[1], window[2]
    assert snapshot["role"] == "user"
    assert snapshot["content"].startswith("<state_snapshot>\n")
    assert snapshot["content"].endswith("\n</state_snapshot>")
    assert ack == {"role": "assistant", "content": ACKNOWLEDGEMENT}
    assert window[3:] == history[1 + 7 * 3 :]
    assert window[3]["content"] == "request 07"
    validate_messages(window)


def test_a_split_never_falls_on_a_function_response():
    # one long turn then a short one: 70% falls inside the long turn's outputs
    long_turn = [{"role": "user", "content": "do it all"}]
    for i in range(8):
        long_turn += [assistant(f"s{i}", f"c{i}"), tool(f"c{i}", "r" * 4_000)]
    history = [SYSTEM] + long_turn + [{"role": "user", "content": "and now this"}]
    history += [assistant("ok", "d1"), tool("d1", "small")]
    window = GeminiCliPolicy(8_000, **PLAIN).send(history, 0).messages
    assert window[3:] == history[-3:]  # kept from the last user turn on
    validate_messages(window)


def test_a_session_with_one_user_turn_is_never_compressed():
    history = [SYSTEM, {"role": "user", "content": "the task"}]
    for i in range(30):
        history += [assistant(f"s{i}", f"c{i}"), tool(f"c{i}", "q" * 2_000)]
    policy = GeminiCliPolicy(10_000, **PLAIN)
    sent = policy.send(history, 0)
    assert estimate_tokens(history) > 10_000 / 2
    assert sent.summary_calls == 0 and sent.messages == history


def test_older_outputs_over_the_shared_budget_keep_20_and_80_percent_of_the_characters():
    contents = turns(10, output_chars=96, lines=100)  # 100 lines, ~2.5k tokens each
    policy = GeminiCliPolicy(30_000, function_response_budget=6_000, **PLAIN)
    policy.tokens = 29_000  # the last prompt's count: 1,000 tokens left in the window
    cut = policy.cut_to_budget(contents)
    outputs = [m["content"] for m in cut if m["role"] == "tool"]
    whole = [m["content"] for m in contents if m["role"] == "tool"]
    # newest first: two outputs fit in 6,000 tokens, the third and older do not;
    # 1,000 tokens left: 4 characters a token, under the 40,000 cap
    max_chars = min(4 * (30_000 - 29_000), 40_000)
    assert outputs[-2:] == whole[-2:]
    for number, (before, after) in enumerate(zip(whole[:-2], outputs[:-2])):
        assert after.startswith(
            f"Output too large. Showing first {max_chars // 5:,} and last "
            f"{max_chars - max_chars // 5:,} characters. For full output see: "
        )
        assert after.endswith(before[-(max_chars - max_chars // 5) :])
    assert [m["role"] for m in cut] == [m["role"] for m in contents]
    # over the budget but already short enough (cut in an earlier round): the same
    # message, whose tokens are known, not a copy to count again
    short = turns(4, output_chars=96, lines=3)  # ~300 characters an output
    tight = GeminiCliPolicy(30_000, function_response_budget=10, **PLAIN)
    tight.tokens = 29_000
    kept = tight.cut_to_budget(short)
    assert all(new is old for new, old in zip(kept, short))
    assert tight.files == sum(m["role"] == "tool" for m in short)  # each still counted


def test_the_cut_text_is_gemini_clis():
    text = "".join(str(i % 10) for i in range(100))
    assert truncated_text(text, "f.txt", 100) == text
    assert truncated_text(text, "f.txt", 10) == (
        "Output too large. Showing first 2 and last 8 characters. For full output "
        "see: f.txt\n01\n\n... [90 characters omitted] ...\n\n23456789"
    )


def masking_history(groups, tokens_each=10_000):
    """`groups` calls whose outputs are `tokens_each` tokens as messages, then the
    latest reply and its result (the request being sent, never scanned)."""
    history = [SYSTEM, {"role": "user", "content": "the task"}]
    for i in range(groups):
        history += [assistant(f"s{i}", f"c{i}"), tool(f"c{i}", "")]
        size = tokens_each - estimate_tokens([history[-1]])
        history[-1]["content"] = "\n".join(["x" * 79] * (size // 20))
        history[-1]["content"] += "y" * (
            4 * (tokens_each - estimate_tokens([history[-1]]))
        )
        assert estimate_tokens([history[-1]]) == tokens_each
    return history + [assistant("last", "z"), tool("z", "z" * 400_000)]


@pytest.mark.parametrize("groups, masked", [(7, 0), (8, 3), (9, 4)])
def test_masking_protects_the_newest_50k_and_needs_30k_prunable(groups, masked):
    history = masking_history(groups)
    policy = GeminiCliPolicy(200_000, compression_threshold=1.0, overhead_tokens=0)
    window = policy.send(history, 0).messages
    outputs = [m["content"] for m in window if m["role"] == "tool"]
    # walking back: 5 outputs make 50,000; the sixth crosses it and is prunable,
    # with every older one; they are masked when they add up to 30,000 or more
    assert [o.startswith(f"<{MASKING_TAG}>") for o in outputs] == (
        [True] * masked + [False] * (groups + 1 - masked)
    )
    assert outputs[-1] == "z" * 400_000  # the request being sent is never masked
    assert policy.maskings == ([0] if masked else [])
    validate_messages(window)


def test_a_masked_output_shows_a_preview_and_where_the_whole_output_is():
    history = masking_history(9)
    window = GeminiCliPolicy(200_000, compression_threshold=1.0).send(history, 0)
    first = window.messages[3]
    assert first["content"] == masked_text(
        history[3]["content"], "read_file", "c0", False
    )
    content = history[3]["content"]
    assert first["content"] == (
        f"<{MASKING_TAG}>\n{content[:250]}\n... [TRUNCATED] ...\n{content[-250:]}\n\n"
        "Output too large. Full output available at: ~/.gemini/tmp/<project>/"
        f"tool-outputs/session-<session>/read_file_c0.txt\n</{MASKING_TAG}>"
    )
    shell = masked_text("\n".join(map(str, range(30))), "run_shell_command", "c", True)
    assert "0\n1\n2" in shell and "\n\n... [10 lines omitted] ...\n\n20\n" in shell
    assert simple_preview("a\nb") == "a\nb"
    again = GeminiCliPolicy(200_000, compression_threshold=1.0)
    again.send(window.messages, 0)  # masked outputs are not counted or masked again
    assert again.maskings == []


def test_a_compression_that_would_grow_the_history_is_dropped_then_only_outputs_are_cut():
    output = "\n".join(["line"] * 200)  # 254 tokens as a message
    history = [SYSTEM, {"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    history += [assistant("s", "c1"), tool("c1", output)]
    policy = GeminiCliPolicy(400, function_response_budget=300, **PLAIN)
    first = policy.send(history, 0)
    # the snapshot of "a" and its acknowledgement are larger than "a": dropped
    assert first.summary_calls == 2 and policy.failed and first.messages == history
    history += [assistant("t", "c2"), tool("c2", output)]
    second = policy.send(history, 1)
    assert second.summary_calls == 0  # no second try at a summary: the cut alone
    assert second.messages[4]["content"].startswith("Output too large.")
    assert second.messages[:4] + second.messages[5:] == history[:4] + history[5:]


def multi_turn(messages, every=25):
    """The generated session with a user turn before every `every`-th reply."""
    out, replies = [], 0
    for message in messages:
        if message["role"] == "assistant":
            replies += 1
            if replies % every == 0:
                out.append({"role": "user", "content": f"Round {replies}: go on."})
        out.append(message)
    return out


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    # one user turn: no split point, so the run is the raw history until it overflows
    messages = generate_history(200, 0).messages
    run = replay_policy(messages, build_policy("gemini-cli", window_tokens, **PLAIN))
    expected = []
    for index in (i for i, m in enumerate(messages) if m["role"] == "assistant"):
        tokens = estimate_tokens(messages[:index])
        if tokens > window_tokens:
            break
        expected.append(tokens)
    assert run.tokens == expected and run.summary_calls == 0
    assert run.overflow_round == len(expected) < run.rounds_total


def test_masking_on_the_generated_session_only_shrinks_windows_and_keeps_pairing():
    messages = generate_history(200, 0).messages
    masked = replay_policy(messages, build_policy("gemini-cli", 200_000))
    plain = replay_policy(messages, build_policy("gemini-cli", 200_000, **PLAIN))
    assert masked.invalid_rounds == [] and masked.rounds >= plain.rounds
    shared = min(masked.rounds, plain.rounds)
    assert all(a <= b for a, b in zip(masked.tokens[:shared], plain.tokens[:shared]))
    assert masked.tokens_sent < sum(plain.tokens[: masked.rounds])


def test_with_user_turns_the_generated_session_is_compressed_and_keeps_pairing():
    messages = multi_turn(generate_history(200, 0).messages)
    validate_messages(messages)
    run = replay_policy(messages, build_policy("gemini-cli", 200_000))
    assert run.overflow_round is None and run.invalid_rounds == []
    assert run.summary_calls > 0 and run.summary_calls % 2 == 0
    assert run.peak_tokens < 200_000


@pytest.mark.parametrize(
    "parameters, name",
    [
        ({"compression_threshold": 0}, "compression_threshold"),
        ({"compression_threshold": 1.5}, "compression_threshold"),
        ({"preserve_threshold": 1}, "preserve_threshold"),
        ({"function_response_budget": -1}, "function_response_budget"),
        ({"truncate_chars": 0}, "truncate_chars"),
        ({"masking": "yes"}, "masking"),
        ({"protection_tokens": -1}, "protection_tokens"),
        ({"summary_tokens": 1}, "summary_tokens"),
    ],
)
def test_bad_parameters_raise_a_value_error_naming_them(parameters, name):
    with pytest.raises(ValueError, match=f"^{name} "):
        GeminiCliPolicy(200_000, **parameters)


def test_the_documented_defaults():
    policy = build_policy("gemini-cli", 200_000)
    assert policy.parameters() == {
        "compression_threshold": 0.5,
        "preserve_threshold": 0.3,
        "function_response_budget": 50_000,
        "truncate_chars": 40_000,
        "masking": True,
        "protection_tokens": 50_000,
        "protect_latest_turn": True,
        "min_prunable_tokens": 30_000,
        "summary_tokens": 5_000,
        "overhead_tokens": 6_500,
    }
    assert policy.trigger_tokens == 100_000
    assert build_policy("gemini-cli", 16_000).function_response_budget == 4_000
    assert policy.stand_in and "<state_snapshot>" in policy.PROMPT
