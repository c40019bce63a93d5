"""Harbor's Agent Trajectory Interchange Format (ATIF v1.x): one `trajectory.json`.

`{schema_version: "ATIF-v1.n", session_id, agent {name, version, model_name},
steps, final_metrics}`. A step is `{step_id, source, message, ...}` with source
`system` (the system prompt), `user` or `agent`. An agent step is one model turn:
`message` (text, or in later versions a list of content parts), `reasoning_content`
(not sent back: skipped), `tool_calls: [{tool_call_id, function_name, arguments
(object)}]` (parallel calls in one step), and `observation {results:
[{source_call_id, content}]}`: the results of its own calls sit inside the calling
step, and are placed after its message in call order. A result with no
`source_call_id` is environment output of an action without a tool call (a user
message marked as such); `is_error` on a result (ATIF names no error field; some
writers add it, at the result or in its `extra`) makes it a tool error. Steps of a
subagent that a converter wrote inline (`extra.is_sidechain: true`) are not in the
main agent's window: skipped. `metrics` and `final_metrics` are counts, not text.
"""

from .base import Builder, first_line, make_call, parts_text
from .detect import Doc, Shape

SOURCES = ("system", "user", "agent")


def _detect(doc: Doc):
    data = doc.value
    if doc.lines or not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        return "not an object with 'steps'"
    version = data.get("schema_version")
    if isinstance(version, str) and version.upper().startswith("ATIF"):
        return None
    return "no 'schema_version: ATIF-v1.*'"


def _calls(step: dict, at: str, log: Builder) -> list:
    calls = step.get("tool_calls") or []
    if not isinstance(calls, list):
        raise log.fail(f"{at}.tool_calls must be a list")
    result = []
    for number, call in enumerate(calls):
        where = f"{at}.tool_calls[{number}]"
        if not isinstance(call, dict):
            raise log.fail(f"{where} must be a JSON object")
        if not isinstance(call.get("tool_call_id"), str) or not call["tool_call_id"]:
            raise log.fail(f"{where}.tool_call_id is missing")
        if not isinstance(call.get("function_name"), str) or not call["function_name"]:
            raise log.fail(f"{where}.function_name is missing")
        arguments = call.get("arguments")
        if arguments is not None and not isinstance(arguments, (dict, str)):
            raise log.fail(f"{where}.arguments must be a JSON object")
        result.append(make_call(call["tool_call_id"], call["function_name"], arguments))
    return result


def _results(step: dict, at: str, log: Builder) -> None:
    observation = step.get("observation")
    if observation is None:
        return
    results = observation.get("results") if isinstance(observation, dict) else None
    if not isinstance(results, list):
        raise log.fail(f"{at}.observation.results must be a list")
    loose = []  # output of actions without a tool call
    for number, item in enumerate(results):
        where = f"{at}.observation.results[{number}]"
        if not isinstance(item, dict):
            raise log.fail(f"{where} must be a JSON object")
        content = parts_text(item.get("content"), f"{where}.content", log)
        if item.get("subagent_trajectory_ref") and not content:
            log.note(where, "subagent trajectory in another file: its result is empty")
        call_id = item.get("source_call_id")
        if call_id is None:
            loose.append(content)
            continue
        failed = item.get("is_error") or (item.get("extra") or {}).get("is_error")
        error = {"code": "TOOL_ERROR", "message": first_line(content)} if failed else None
        log.result(call_id, content, where, error)
    if loose:
        log.user("\n".join(loose), observation=True)


def _read(doc: Doc, log: Builder) -> None:
    for index, step in enumerate(doc.value["steps"]):
        at = f"steps[{index}]"
        if not isinstance(step, dict):
            raise log.fail(f"{at} must be a JSON object")
        if (step.get("extra") or {}).get("is_sidechain"):
            log.skip(at, "sidechain step (extra.is_sidechain): a subagent's window")
            continue
        source = step.get("source")
        if source not in SOURCES:
            raise log.fail(f"{at}.source is {source!r}; expected system, user or agent")
        text = parts_text(step.get("message"), f"{at}.message", log)
        if source == "system":
            log.system(text, f"{at}.message")
        elif source == "user":
            log.user(text)
        else:
            if step.get("reasoning_content"):
                log.skip(f"{at}.reasoning_content", "reasoning: not sent back as content")
            log.assistant(text, _calls(step, at, log))
        if source != "agent" and step.get("tool_calls"):
            raise log.fail(f"{at}.tool_calls: only an agent step makes calls")
        _results(step, at, log)


SHAPES = [Shape("harbor-atif", _detect, _read)]
