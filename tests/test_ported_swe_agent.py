"""SWE-agent's own unit test of `LastNObservations`, ported to the lab's policy
(`swe-agent-last-n`).

Source: SWE-agent/SWE-agent at commit 3ea751c087f32b16e039a2233dd6eefecef325d5,
`tests/test_history_processors.py`, `test_last_n_observations`. Its input is the
history of the trajectory `tests/test_data/trajectories/gpt4__swe-agent-test-repo__
default_from_url__t-0.00__p-0.95__c-3.00__install-1/6e44b9__sweagenttestrepo-1c2844.traj`
at that commit: a system prompt (20 lines), the instance template as the first
observation (50 lines), then four actions each answered by an observation (5, 14, 16
and 4 lines). The trajectory is not copied here: the history below has its shape,
roles and line counts, with stand-in text. The other test of that file
(`test_add_tag_to_edits`) is left out (docs/references.md).
"""

from message_builders import assistant, tool

from minilib.policies.production.swe_agent import SweAgentLastNPolicy

COMMIT = "3ea751c087f32b16e039a2233dd6eefecef325d5"


def lines(count, label):
    return "\n".join(f"{label} line {i}" for i in range(count))


def trajectory_history():
    history = [
        {"role": "system", "content": lines(20, "setting")},
        {"role": "user", "content": lines(50, "issue")},
    ]
    for step, (action, observation) in enumerate([(3, 5), (1, 14), (1, 16), (1, 4)]):
        history += [
            assistant(lines(action, "action"), f"c{step}"),
            tool(f"c{step}", lines(observation, "output")),
        ]
    return history


def count_elided_observations(history):
    return len([m for m in history if "Old environment output" in m["content"]])


def test_last_n_observations():
    # test_last_n_observations: n = 3; the instance template is kept too
    history = trajectory_history()
    window = SweAgentLastNPolicy(200_000, n=3).send(history, 0).messages
    total_observations = 5
    assert count_elided_observations(window) == total_observations - 3 - 1
    assert window[3]["content"] == "Old environment output: (5 lines omitted)"
