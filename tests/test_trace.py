"""minilib.trace: tool outputs are recoverable from the trace; bad records are named."""

import pytest

from minilib import Tracer, recover_tool_output
from minilib.trace import ToolOutputNotFound, read_jsonl


def test_a_missing_tool_output_is_a_readable_key_error():
    tracer = Tracer()
    tracer.tool_call(0, "c1", "read_file", "{}", "full output")
    assert recover_tool_output(tracer.records, "c1") == "full output"
    with pytest.raises(ToolOutputNotFound) as raised:
        recover_tool_output(tracer.records, "c9")
    assert isinstance(raised.value, KeyError)  # callers catching KeyError keep working
    assert str(raised.value) == "no tool_call record with tool_call_id 'c9' in the trace"


def test_an_empty_tool_call_id_is_named():
    with pytest.raises(ValueError) as raised:
        recover_tool_output([], "")
    assert str(raised.value) == "tool_call_id must be a non-empty string, got ''"


def test_malformed_trace_records_are_named():
    with pytest.raises(ValueError, match=r"^trace record 1 must be a dict, got list$"):
        recover_tool_output([{"event": "x"}, []], "c1")
    with pytest.raises(
        ValueError, match=r"^trace record 0 \(seq 7\): payload.output is missing$"
    ):
        recover_tool_output(
            [{"event": "tool_call", "seq": 7, "payload": {"tool_call_id": "c1"}}], "c1"
        )


def test_a_bad_trace_line_names_file_and_line(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text('{"seq": 1}\n\n{"seq": 2\n', encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"trace.jsonl: line 3 is not valid JSON \(Expecting"
    ):
        read_jsonl(path)
