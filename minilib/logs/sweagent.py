"""SWE-agent `.traj` files and mini-swe-agent trajectories.

- swe-agent: an object with `history` (the chat messages as sent) beside
  `trajectory`, `info`, `environment`... History entries are chat messages with
  extra keys (`agent`, `message_type`, `thought`, `action`, `is_demo`). The
  `system_prompt` entry is the system message. In function-calling runs the
  assistant's `tool_calls` are in OpenAI shape (older files store them as a JSON
  string) and the answering tool message carries `tool_call_ids`, a one-id list,
  instead of `tool_call_id`. Ids repeat across turns: pairing is positional. In
  text-action runs the environment output is a user message with `message_type:
  observation`: kept as user, marked `observation`. The task (the first user
  message that is not a demonstration) is written by the same template code and
  carries `message_type: observation` too: it is not marked. Demonstrations
  (`is_demo`) were sent as written: kept, and noted. `trajectory` repeats the
  history step by step: skipped. Files whose user messages carry no
  `message_type` are told by their structure: the first user message(s) are the
  task (and demonstration); a user message right after an assistant action is
  the environment's output, marked `observation` when a `trajectory` step's
  `observation` is in it (the next-step template wraps it), or when the file has
  no `trajectory` to confirm it; one that no step matches stays a person's turn,
  noted.
- mini-swe-agent: a list of `{role, content}` where the first user message is the
  task and every later user message is environment output (marked `observation`).
  Detected as an object with `messages` and `trajectory_format: mini-swe-agent-*`
  (or `info.mini_version`), or as a plain list that starts with a system message,
  has no tool calls, and whose user messages after the first carry `<returncode>`
  or `<output>`: a plain OpenAI chat list has no such markers, so it is not taken.
  Tool-calling runs have assistant `tool_calls` and tool messages as usual. The
  end-of-run record (role `exit`, or an empty user message with
  `extra.exit_status`) was never sent: skipped. `extra` keys are dropped.
"""

from .base import Builder
from .detect import Doc, Shape
from .openai import read_message

MARKERS = ("<returncode>", "<output>")


def _detect_swe(doc: Doc):
    data = doc.value
    history = data.get("history") if isinstance(data, dict) else None
    if not isinstance(history, list) or not history:
        return "no 'history' list"
    if not all(isinstance(m, dict) and "role" in m for m in history):
        return "'history' items have no 'role'"
    return None


def _step_outputs(trajectory) -> list:
    """The non-empty `observation` texts of a trajectory's steps."""
    steps = trajectory if isinstance(trajectory, list) else ()
    return [
        step["observation"].strip()
        for step in steps
        if isinstance(step, dict)
        and isinstance(step.get("observation"), str)
        and step["observation"].strip()
    ]


def _untyped_observation(entry: dict, previous, outputs: list, at: str, log) -> bool:
    """Whether a user message of a file without `message_type` is environment output:
    it follows an assistant action, and a trajectory step's output is in it."""
    if not (isinstance(previous, dict) and previous.get("role") == "assistant"):
        return False
    content = entry.get("content")
    text = content if isinstance(content, str) else str(content)
    if not outputs or any(output in text for output in outputs):
        return True
    log.note(at, "user message after an action that no trajectory step output matches")
    return False


def _read_swe(doc: Doc, log: Builder) -> None:
    history = doc.value["history"]
    if doc.value.get("trajectory"):
        log.skip("field 'trajectory'", "trajectory: step records repeating the history")
    typed = any("message_type" in m for m in history if m.get("role") == "user")
    outputs = [] if typed else _step_outputs(doc.value.get("trajectory"))
    if not typed:
        log.note(
            "field 'history'",
            "no message_type: outputs told by position after an action"
            + (", confirmed by the trajectory" if outputs else ""),
        )
    seen_task = False
    for index, entry in enumerate(history):
        at = f"history[{index}]"
        entry = dict(entry)
        if entry.get("is_demo"):
            log.note(at, "demonstration (is_demo): kept, it was sent to the model")
        if entry.get("message_type") == "system_prompt":
            entry["role"] = "system"
        if entry.get("role") == "tool" and "tool_call_id" not in entry:
            ids = entry.get("tool_call_ids")
            if not isinstance(ids, list) or not ids:
                raise log.fail(f"{at}.tool_call_ids is missing")
            if len(ids) > 1:
                log.note(at, "several tool_call_ids: the first is used")
            entry["tool_call_id"] = ids[0]
        user = entry.get("role") == "user"
        if typed:
            observed = user and seen_task and entry.get("message_type") == "observation"
        else:
            previous = history[index - 1] if index else None
            observed = (
                user
                and seen_task
                and not entry.get("is_demo")
                and _untyped_observation(entry, previous, outputs, at, log)
            )
        read_message(entry, at, log, observed)
        seen_task = seen_task or (user and not entry.get("is_demo"))


def _items(data):
    if isinstance(data, dict):
        marker = str(data.get("trajectory_format", ""))
        info = data.get("info")
        if marker.startswith("mini-swe-agent") or (
            isinstance(info, dict) and "mini_version" in info
        ):
            return data.get("messages")
        return None
    if not (isinstance(data, list) and data and all(isinstance(m, dict) for m in data)):
        return None
    users = [m for m in data if m.get("role") == "user"][1:]
    if (
        data[0].get("role") == "system"
        and not any(m.get("tool_calls") for m in data)
        and any(mark in str(m.get("content")) for m in users for mark in MARKERS)
    ):
        return data
    return None


def _detect_mini(doc: Doc):
    if isinstance(_items(doc.value), list):
        return None
    return (
        "no 'trajectory_format: mini-swe-agent-*', and not a list whose later user "
        "messages carry <returncode>"
    )


def _read_mini(doc: Doc, log: Builder) -> None:
    seen_task = False
    for index, message in enumerate(_items(doc.value)):
        at = f"messages[{index}]"
        role = message.get("role") if isinstance(message, dict) else None
        extra = message.get("extra") if isinstance(message, dict) else None
        if role == "exit" or (
            role == "user"
            and not message.get("content")
            and isinstance(extra, dict)
            and "exit_status" in extra
        ):
            log.skip(at, "exit record: the end of the run, never sent to the model")
            continue
        read_message(message, at, log, observation=role == "user" and seen_task)
        seen_task = seen_task or role == "user"


SHAPES = [
    Shape("swe-agent", _detect_swe, _read_swe),
    Shape("mini-swe-agent", _detect_mini, _read_mini),
]
