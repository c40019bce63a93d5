"""Small builders for chat-completions messages used across the tests."""


def tool_call(call_id, name="read_file", arguments="{}"):
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def assistant(content, *call_ids, name="read_file"):
    message = {"role": "assistant", "content": content}
    if call_ids:
        message["tool_calls"] = [tool_call(call_id, name) for call_id in call_ids]
    return message


def tool(call_id, content, error_code=None):
    message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if error_code:
        message["error"] = {"code": error_code, "message": "failed"}
    return message
