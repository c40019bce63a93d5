"""The agent loop: ask the model, run the tools it calls, repeat until it answers.

Compression is one optional argument: with `context_window=None` the loop is the
plain M1/M2 loop and the message list simply grows.
"""

from typing import Callable, List, Mapping, Optional

from .messages import InvalidMessagesError, check_int, validate_messages
from .tokens import tool_call_name


class MaxStepsExceeded(RuntimeError):
    """The model kept calling tools for more than `max_steps` rounds."""


def run_loop(model, messages: List[Mapping], tools, *, context_window=None, tracer=None, max_steps: int = 50,
             on_round: Optional[Callable[[int, List[Mapping], list], None]] = None) -> List[Mapping]:
    """Run rounds until the model replies without tool calls; return the final message list.

    Each round: govern the window (if any), call the model, append its reply, run
    each tool call and append its result. `on_round(step, window, compressions)` sees
    the exact window sent to the model in each round.
    """
    check_int("max_steps", max_steps, minimum=1)
    validate_messages(messages)
    for step in range(max_steps):
        compressions = []
        if context_window is not None:  # M3: govern the window before the model sees it
            compressions = context_window.before_model_call(messages, tracer, step)
        if on_round is not None:
            on_round(step, messages, compressions)
        reply = model.complete(messages)
        if not isinstance(reply, Mapping) or reply.get("role") != "assistant":
            raise InvalidMessagesError(f"model reply at step {step} must be an assistant message")
        if tracer is not None:
            tracer.model_call(step, "decision", messages, reply)  # the tracer copies
        messages.append(reply)
        calls = reply.get("tool_calls") or []
        if not calls:
            return messages
        for call in calls:
            tool_message = answer_tool_call(call, tools)
            if tracer is not None:
                tracer.tool_call(step, call["id"], tool_call_name(call), call["function"].get("arguments") or "{}",
                                 tool_message["content"], tool_message.get("error"))
            messages.append(tool_message)
    raise MaxStepsExceeded(f"no final answer after {max_steps} rounds")


def answer_tool_call(call: Mapping, tools) -> dict:
    """Run one tool call and return the tool message that answers it."""
    arguments = (call.get("function") or {}).get("arguments") or "{}"
    result = tools.call(tool_call_name(call), arguments)
    message = {"role": "tool", "tool_call_id": call["id"], "content": result.content}
    if result.error is not None:
        message["error"] = dict(result.error)
    return message
