"""Fit the weights of Claude's text rule by character class on real sessions, and
report its error on sessions it was not fitted on.

    python scripts/fit_text_classes.py FOLDER

FOLDER holds Claude Code session files (the numbers in minilib/agents/claude_code/text.py
come from the `entire/checkpoints/v1` branch of entireio/cli). Each session counts
once (`measure_real_logs.sessions`); the even-numbered sessions, in path order, are
fitted on and the odd-numbered ones held out. From each session, the calls that added
mostly one tool result (`measure_real_logs.result_steps`) give a text and what the
API counted for it. The weights are those that make the rule's count closest to the
API's, each result by its relative error (least squares), then scaled to the
article's units: on the fitted text they give the same total as characters / 4.

Printed: the weights, and on the held-out sessions the median and spread (IQR over
median) of API / count, per result, for characters / 4 and for the fitted rule.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from measure_real_logs import result_steps, sessions, spread  # noqa: E402

from minilib.agents.claude_code.text import (  # noqa: E402
    WEIGHTS,
    character_classes,
    weighted_tokens,
)
from minilib.logs import load_log  # noqa: E402
from minilib.logs.base import LogFileError  # noqa: E402
from minilib.tokens import estimate_text_tokens  # noqa: E402

NAMES = tuple(WEIGHTS)


def solve(rows: list, targets: list) -> list:
    """Least squares of `rows` x weights ~ targets, each row by its relative error
    (divided by its target): the normal equations, solved by elimination."""
    size = len(rows[0])
    normal = [[0.0] * (size + 1) for _ in range(size)]
    for row, target in zip(rows, targets):
        scaled = [value / target for value in row]
        for i in range(size):
            for j in range(size):
                normal[i][j] += scaled[i] * scaled[j]
            normal[i][size] += scaled[i]  # target / target
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(normal[r][column]))
        normal[column], normal[pivot] = normal[pivot], normal[column]
        for r in range(size):
            if r != column and normal[column][column]:
                factor = normal[r][column] / normal[column][column]
                normal[r] = [a - factor * b for a, b in zip(normal[r], normal[column])]
    return [normal[i][size] / normal[i][i] for i in range(size)]


def fit(steps: list) -> dict:
    """Weights in the article's units, fitted on `steps` (text, API count)."""
    classes = [character_classes(step["text"]) for step in steps]
    rows = [[getattr(c, name) for name in NAMES] for c in classes]
    api_weights = solve(rows, [step["api"] for step in steps])
    weights = dict(zip(NAMES, api_weights))
    quarter = sum(
        estimate_text_tokens(step["text"]) - c.cjk for step, c in zip(steps, classes)
    )
    fitted = sum(weighted_tokens(c, weights) for c in classes)
    return {name: value * quarter / fitted for name, value in weights.items()}


def steps_of(paths: list) -> list:
    steps = []
    for path in paths:
        try:
            log = load_log(path, max_bytes=10**9)
        except (LogFileError, OSError, ValueError):
            continue
        if log.agent == "claude-code" and log.usage:
            steps += [step for step in result_steps(log) if step["text"]]
    return steps


def held_out_report(weights: dict, steps: list) -> list:
    def rule(text):
        classes = character_classes(text)
        return classes.cjk + weighted_tokens(classes, weights)

    lines = []
    for name, count in (("characters / 4", estimate_text_tokens), ("by class", rule)):
        middle, width = spread([s["api"] / count(s["text"]) for s in steps])
        lines.append(f"  {name}: API / count median {middle:.2f}, spread {width:.1%}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    found = sessions(args.folder)
    fitted, held = steps_of(found[0::2]), steps_of(found[1::2])
    if len(fitted) < len(NAMES) or len(held) < 4:
        print(f"too few results to fit and judge: {len(fitted)} and {len(held)}")
        return 1
    weights = fit(fitted)
    print(f"fitted on {len(fitted)} results of the even-numbered sessions:")
    print(
        "  WEIGHTS = {" + ", ".join(f'"{k}": {v:.4f}' for k, v in weights.items()) + "}"
    )
    print(f"on {len(held)} results of the other sessions, which the fit did not see:")
    print("\n".join(held_out_report(weights, held)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
