"""OpenHands event streams: a JSON list of events, or an evaluation record with `history`.

Events have no role. An action is `{id, source, action, args, tool_call_metadata?}`,
an observation `{id, source, cause, observation, content, extras,
tool_call_metadata?}`. The model's turn is `tool_call_metadata.model_response
.choices[0].message` (OpenAI shape), repeated on every action of one response: it
is taken once per `model_response.id`. Its results are the observations whose
`tool_call_metadata.tool_call_id` names a call; as OpenHands does, the assistant
message is placed once all its calls are answered, its results after it in call
order. An `error` observation, a `run` with a nonzero exit code or a rejected
action is a tool error. The `system` action holds the system prompt (and the tool
declarations); a `message` action from the user is a user turn, from the agent an
assistant turn. `finish` goes back as assistant text, as OpenHands sends it.
Skipped: `agent_state_changed`, `change_agent_state`, `null` observations, recall
events (their text is rendered from a template, not recorded). Any other
observation without a call id is environment output: a user message marked
`observation`. An evaluation record adds `instance_id`, `instruction`, `metadata`.
"""

from .base import Builder, first_line
from .detect import Doc, Shape
from .openai import content_text, read_calls

BOOKKEEPING = ("agent_state_changed", "change_agent_state", "null", None)


def _error(event: dict, text: str):
    kind, extras = event.get("observation"), event.get("extras") or {}
    code = (extras.get("metadata") or {}).get("exit_code", extras.get("exit_code"))
    if kind == "error":
        return {"code": "ERROR", "message": first_line(text)}
    if kind == "user_rejected":
        return {"code": "REJECTED", "message": first_line(text)}
    if kind == "run" and isinstance(code, int) and code != 0:
        return {"code": f"EXIT_{code}", "message": first_line(text)}
    return None


def _read_events(events: list, prefix: str, log: Builder) -> None:
    pending = {}  # response id -> (where, text, calls), waiting for all their results
    answers = {}  # call id -> (where, text, error)
    seen = set()  # response ids already taken
    for index, event in enumerate(events):
        at = f"{prefix}[{index}]"
        if not isinstance(event, dict):
            raise log.fail(f"{at} must be a JSON object")
        meta = event.get("tool_call_metadata") or {}
        action, args = event.get("action"), event.get("args") or {}
        text = event.get("content") if "observation" in event else args.get("content")
        if "observation" in event and event["observation"] in BOOKKEEPING:
            log.skip(at, f"{event['observation']} observation: bookkeeping")
        elif "observation" in event and meta.get("tool_call_id"):
            answers[meta["tool_call_id"]] = (at, text or "", _error(event, text or ""))
        elif event.get("observation") == "recall" or action == "recall":
            log.skip(at, "recall: rendered from a template, its text is not recorded")
        elif "observation" in event:
            log.user(text or "", observation=True)
        elif action in BOOKKEEPING:
            log.skip(at, f"{action} action: bookkeeping")
        elif action == "system":
            log.system(text or event.get("message") or "", f"{at}.args.content")
            if args.get("tools"):
                log.declared_tools = tuple(
                    (tool.get("function") or tool).get("name") for tool in args["tools"]
                )
        elif action == "message":
            if event.get("source") == "user":
                log.user(text or event.get("message") or "")
            else:
                log.assistant(text or "")
        elif action == "finish":
            reply = ((meta.get("model_response") or {}).get("choices") or [{}])[0]
            said = (reply.get("message") or {}).get("content")
            parts = [args.get("thought"), said, args.get("final_thought")]
            log.assistant("\n".join(dict.fromkeys(p for p in parts if p)))
            log.note(at, "finish call: sent back as assistant text, as OpenHands does")
        elif meta.get("model_response"):
            response = meta["model_response"]
            key = response.get("id") or f"{at}"
            if key not in seen:
                seen.add(key)
                try:
                    message = dict(response["choices"][0]["message"], role="assistant")
                except (KeyError, IndexError, TypeError):
                    raise log.fail(
                        f"{at}.tool_call_metadata.model_response"
                        ".choices[0].message is missing"
                    ) from None
                where = f"{at}.tool_call_metadata.model_response.choices[0].message"
                pending[key] = (
                    where,
                    content_text(message.get("content"), where, log),
                    read_calls(message, where, log),
                )
        else:
            log.skip(at, f"{action} action without tool_call_metadata: no model turn")
        for key in [
            k
            for k, (_, _, calls) in pending.items()
            if all(call["id"] in answers for call in calls)
        ]:
            _emit(pending.pop(key), answers, log)
    for item in pending.values():  # calls never answered: kept, the builder notes them
        _emit(item, answers, log)
    if answers:
        call_id, (at, _, _) = next(iter(answers.items()))
        raise log.fail(f"{at}: observation for call {call_id!r} answers no model turn")


def _emit(item, answers: dict, log: Builder) -> None:
    _, text, calls = item
    log.assistant(text, calls)
    for call in calls:
        if call["id"] in answers:
            at, output, error = answers.pop(call["id"])
            log.result(call["id"], output, at, error)


def _is_events(items) -> bool:
    return (
        isinstance(items, list)
        and bool(items)
        and all(
            isinstance(e, dict) and ("action" in e or "observation" in e) for e in items
        )
    )


def _detect_eval(doc: Doc):
    data = doc.value
    if not isinstance(data, dict) or not _is_events(data.get("history")):
        return "no 'history' list of events"
    if not {"instance_id", "instruction", "metadata"} & set(data):
        return "no 'instance_id', 'instruction' or 'metadata'"
    return None


SHAPES = [
    Shape(
        "openhands-eval",
        _detect_eval,
        lambda doc, log: _read_events(doc.value["history"], "history", log),
    ),
    Shape(
        "openhands-events",
        lambda doc: (
            None
            if _is_events(doc.value) and not doc.lines
            else "not a list of events with 'action' or 'observation'"
        ),
        lambda doc, log: _read_events(doc.value, "events", log),
    ),
]
