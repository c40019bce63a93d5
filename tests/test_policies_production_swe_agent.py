"""swe-agent-last-n: SWE-agent's last_n_observations history processor, on logs."""

import pytest
from message_builders import assistant, groups, tool

from minilib.messages import validate_messages
from minilib.policies.production import build_policy, replay_policy
from minilib.policies.production.swe_agent import PAPER_N, SweAgentLastNPolicy
from minilib.scale import generate_history
from minilib.tokens import estimate_tokens

HEAD = [{"role": "system", "content": "sys"}, {"role": "user", "content": "the task"}]


def omitted(lines):
    return f"Old environment output: ({lines} lines omitted)"


def reference(history, n, polling=1):
    """SWE-agent's LastNObservations over the whole history: observations are the task
    (the first user message) and every output after it; the first is never elided."""
    observations = [
        i
        for i, m in enumerate(history)
        if m["role"] == "tool"
        or (m["role"] == "user" and (m.get("observation") or i == 1))
    ]
    last_removed = max(0, (len(observations) // polling) * polling - n)
    omit = set(observations[1:last_removed])
    return [
        dict(m, content=omitted(len(m["content"].splitlines()))) if i in omit else m
        for i, m in enumerate(history)
    ]


def rounds(messages):
    return [
        list(messages[:i]) for i, m in enumerate(messages) if m["role"] == "assistant"
    ]


def test_all_but_the_last_n_observations_become_one_line_with_their_line_count():
    history = list(HEAD)
    for i, lines in enumerate((3, 1, 7, 2)):
        history += [assistant(f"s{i}", f"c{i}"), tool(f"c{i}", "\n".join(["x"] * lines))]
    window = SweAgentLastNPolicy(10_000, n=2).send(history, 0).messages
    results = [m["content"] for m in window if m["role"] == "tool"]
    assert results == [omitted(3), omitted(1)] + [m["content"] for m in history[-3::2]]
    assert window[1] == HEAD[1]  # the task, SWE-agent's first observation, is kept
    validate_messages(window)  # an elided result still answers its call
    assert window == reference(history, 2)


def test_the_task_is_never_elided_even_far_back():
    history = HEAD + groups(*"abcdefg")
    window = SweAgentLastNPolicy(10_000, n=1).send(history, 0).messages
    assert window[1] == history[1]
    assert [m["content"].startswith("Old environment output") for m in window[3::2]] == [
        True
    ] * 6 + [False]


def test_environment_output_as_user_messages_is_elided_the_same_way():
    history = HEAD + [
        assistant("ls"),
        {"role": "user", "content": "a.py\nb.py", "observation": True},
        assistant("cat a.py"),
        {"role": "user", "content": "print(1)", "observation": True},
    ]
    window = SweAgentLastNPolicy(1_000, n=1).send(history, 0).messages
    assert window[3] == dict(history[3], content=omitted(2))
    assert window[5] == history[5]


def test_polling_moves_the_elided_count_only_every_p_observations():
    history = HEAD + groups(*"abcdefg")  # 8 observations with the task
    # (8 // 3) * 3 - 2 = 4: observations 1..3 are elided, so 4 results stay
    window = SweAgentLastNPolicy(1_000, n=2, polling=3).send(history, 0).messages
    kept = [m for m in window[3::2] if not m["content"].startswith("Old environment")]
    assert len(kept) == 4
    assert window == reference(history, 2, polling=3)


def test_it_runs_every_call_whatever_the_window_and_is_idempotent():
    history = HEAD + groups(*"abcdef")
    small = SweAgentLastNPolicy(100, n=2)
    sent = small.send(history, 0).messages
    assert sent == SweAgentLastNPolicy(10**9, n=2).send(history, 0).messages
    assert small.send(history, 0).messages == sent
    assert not any(m["content"].startswith("Old environment") for m in history)


def test_the_paper_default_is_five():
    policy = build_policy("swe-agent-last-n", 200_000)
    assert policy.n == PAPER_N == 5
    assert policy.parameters() == {"n": 5, "polling": 1, "overhead_tokens": 2_000}


def test_each_round_matches_the_processor_applied_to_the_whole_history():
    messages = generate_history(80, 2).messages
    policy = SweAgentLastNPolicy(10**9, n=4, polling=2)
    for step, history in enumerate(rounds(messages)):
        assert policy.send(history, step).messages == reference(history, 4, polling=2)


@pytest.mark.parametrize("window_tokens", [200_000, 16_000])
def test_a_generated_200_call_replay_matches_an_independent_computation(window_tokens):
    messages = generate_history(200, 0).messages
    run = replay_policy(messages, build_policy("swe-agent-last-n", window_tokens))
    expected = []
    for history in rounds(messages):
        tokens = estimate_tokens(reference(history, PAPER_N))
        if tokens > window_tokens:
            break
        expected.append(tokens)
    assert run.tokens == expected
    overflowed = len(expected) < run.rounds_total
    assert run.overflow_round == (len(expected) if overflowed else None)
    assert run.invalid_rounds == [] and run.summary_calls == 0


@pytest.mark.parametrize(
    "parameters, name", [({"n": 0}, "n"), ({"n": "5"}, "n"), ({"polling": 0}, "polling")]
)
def test_bad_parameters_raise_a_value_error_naming_them(parameters, name):
    with pytest.raises(ValueError, match=f"^{name} "):
        SweAgentLastNPolicy(200_000, **parameters)
