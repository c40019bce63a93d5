"""OpenHands V1 (the software-agent-sdk): an evaluation record `{instance_id,
instruction?, history: [events]}`.

An evaluation's `output.jsonl` holds one such record a line (one task each): the
first is read, and the others are listed as skipped; a per-task state file holds
one as a JSON object. Events carry `kind` (the V0 streams, with `action` /
`observation`, are openhands.py's):
- `SystemPromptEvent`: `system_prompt {text}`, the system message;
- `MessageEvent`: `source` and `llm_message {role, content: [{type: text, text}]}`
  (image parts skipped), plus `extended_content` text the agent appended;
- `ActionEvent`: one tool call, `tool_call {id, name, arguments (JSON string)}`,
  `tool_call_id`, `thought` (text, or a list of text parts; only the first call of
  a response has one) and `llm_response_id`: the calls of one response (parallel
  calls) share it and form one assistant message. `reasoning_content` and
  `thinking_blocks` are not sent back: skipped;
- `ObservationEvent`: `tool_call_id`, `observation {kind, content (text or parts)
  or output, exit_code?, is_error?}`; a nonzero `exit_code` is error EXIT_<n>,
  `is_error` (or an `error` text) TOOL_ERROR. `AgentErrorEvent` (`error`) and
  `UserRejectObservation` (`rejection_reason`) answer a call too, as errors.
Each result is placed after the message of its call, in call order. The task may
be only in `instruction`: then it is the first user message (else the user's
`MessageEvent` carries it and the field is skipped). The system prompt is usually
not recorded in these files. State updates, pauses, token counts and the agent's
own condensation events are bookkeeping: skipped.
"""

import json

from .base import Builder, first_line, make_call, parts_text
from .detect import Doc, Shape

RESULTS = ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation")
BOOKKEEPING = (
    "ConversationStateUpdateEvent",
    "PauseEvent",
    "TokenEvent",
    "Condensation",
    "CondensationRequest",
    "CondensationSummaryEvent",
    "ConversationErrorEvent",
)


def _is_events(history) -> bool:
    return (
        isinstance(history, list)
        and bool(history)
        and all(isinstance(event, dict) and "kind" in event for event in history)
    )


def _records(doc: Doc):
    """(where prefix, record) of every record: JSONL lines, or the one object."""
    if doc.lines:
        return [(f"line {number}: ", record) for number, record in doc.line_objects()]
    return [("", doc.value)] if isinstance(doc.value, dict) else []


def _detect(doc: Doc):
    records = _records(doc)
    if not records:
        return "not an object with 'history'"
    record = records[0][1]
    if not _is_events(record.get("history")):
        return "no 'history' list of events with 'kind'"
    if not {"instance_id", "instruction"} & set(record):
        return "no 'instance_id' or 'instruction'"
    return None


def _call(event: dict, at: str, log: Builder) -> dict:
    call = event.get("tool_call")
    if not isinstance(call, dict):
        raise log.fail(f"{at}.tool_call is missing")
    call_id = call.get("id") or event.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        raise log.fail(f"{at}.tool_call.id is missing")
    if not isinstance(call.get("name"), str) or not call["name"]:
        raise log.fail(f"{at}.tool_call.name is missing")
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            json.loads(arguments or "{}")
        except json.JSONDecodeError as error:
            raise log.fail(
                f"{at}.tool_call.arguments is not valid JSON ({error.msg}, "
                f"column {error.colno})"
            ) from None
    return make_call(call_id, call["name"], arguments or "{}")


def _result(event: dict, at: str, log: Builder):
    """(text, error or None) of an event that answers a call."""
    kind = event["kind"]
    if kind == "AgentErrorEvent":
        text = event.get("error") or ""
        return text, {"code": "AGENT_ERROR", "message": first_line(text)}
    if kind == "UserRejectObservation":
        text = f"Action rejected: {event.get('rejection_reason') or 'no reason given'}"
        return text, {"code": "REJECTED", "message": text}
    observation = event.get("observation")
    if not isinstance(observation, dict):
        raise log.fail(f"{at}.observation is missing")
    if "content" in observation:
        text = parts_text(observation["content"], f"{at}.observation.content", log)
    else:
        text = parts_text(observation.get("output"), f"{at}.observation.output", log)
    failure = observation.get("error")
    if isinstance(failure, str) and failure and failure not in text:
        text = "\n".join(filter(None, (text, failure)))
    code = observation.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return text, {"code": f"EXIT_{code}", "message": first_line(text)}
    if observation.get("is_error") or failure:
        return text, {"code": "TOOL_ERROR", "message": first_line(failure or text)}
    return text, None


def _run_usage(record: dict, prefix: str, log: Builder) -> None:
    """The record's `metrics`: the run's accumulated usage, which no single call can be
    set beside; said, with its figure, so it is not lost."""
    metrics = record.get("metrics")
    usage = metrics.get("accumulated_token_usage") if isinstance(metrics, dict) else None
    prompt = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if isinstance(prompt, int) and not isinstance(prompt, bool):
        log.note(
            f"{prefix}metrics.accumulated_token_usage",
            f"the run's input over all its calls, {prompt:,} tokens: a total, not a "
            "call's usage, so not set beside a call",
        )


def _read(doc: Doc, log: Builder) -> None:
    records = _records(doc)
    prefix, record = records[0]
    for later, _ in records[1:]:
        log.skip(later.rstrip(": "), "another task's record: one task is read at a time")
    history = record["history"]
    instruction = record.get("instruction")
    if instruction is not None and not isinstance(instruction, str):
        raise log.fail(f"{prefix}instruction must be text")
    told = any(
        event.get("kind") == "MessageEvent" and event.get("source") == "user"
        for event in history
    )
    if instruction and told:
        log.skip(f"{prefix}instruction", "instruction: the user's message repeats it")
    pending = instruction if instruction and not told else None
    _run_usage(record, prefix, log)
    for index, event in enumerate(history):
        at = f"{prefix}history[{index}]"
        kind = event["kind"]
        if kind == "SystemPromptEvent":
            prompt = event.get("system_prompt")
            text = prompt.get("text") if isinstance(prompt, dict) else prompt
            if not isinstance(text, str):
                raise log.fail(f"{at}.system_prompt.text is missing")
            log.system(text, f"{at}.system_prompt")
            continue
        if kind in BOOKKEEPING:
            log.skip(at, f"{kind}: bookkeeping")
            continue
        if pending is not None:  # the task, before the first event the model answers
            log.user(pending)
            log.note(
                f"{prefix}instruction", "instruction: the task, as the first user turn"
            )
            pending = None
        if kind == "MessageEvent":
            message = event.get("llm_message")
            if not isinstance(message, dict):
                raise log.fail(f"{at}.llm_message is missing")
            text = parts_text(message.get("content"), f"{at}.llm_message.content", log)
            extra = parts_text(
                event.get("extended_content"), f"{at}.extended_content", log
            )
            text = "\n".join(filter(None, (text, extra)))
            role = message.get("role")
            if role == "assistant":
                log.assistant(text, key=event.get("llm_response_id"))
            elif role == "user":
                log.user(text)
            else:
                raise log.fail(
                    f"{at}.llm_message.role is {role!r}; expected user or assistant"
                )
        elif kind == "ActionEvent":
            thought = parts_text(event.get("thought"), f"{at}.thought", log)
            for field in ("reasoning_content", "thinking_blocks"):
                if event.get(field):
                    log.skip(f"{at}.{field}", "reasoning: not sent back as content")
            key = event.get("llm_response_id") or at
            log.assistant(thought, [_call(event, at, log)], key=key)
        elif kind in RESULTS:
            call_id = event.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise log.fail(f"{at}.tool_call_id is missing")
            text, error = _result(event, at, log)
            log.result(call_id, text, at, error)
        else:
            log.skip(at, f"{kind}: not sent to the model")
    if pending is not None:
        log.user(pending)


SHAPES = [Shape("openhands-v1", _detect, _read)]
