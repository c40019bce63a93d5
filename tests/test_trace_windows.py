"""The trace gives back every window that was sent, and grows with the log.

Each message is written once and a model call lists its window as message ids, so
these tests check, against what the tracer was handed at each call (copied then):
every window and reply rebuilt from the records, in memory and after a write and a
read, is the one that was sent; each message object is recorded once; the trace
stays byte-identical; and a 1,000-call session's trace is a small multiple of the
log, where writing every window whole would make it rounds × window.
"""

import copy
import json
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from message_builders import NOT_LOGS
from scale_helpers import SCALE_PROFILE, quick_replay
from test_properties import PROFILE, cases

import minilib.logs.replay as replay_module
import minilib.session as session_module
from minilib import (
    Settings,
    Tracer,
    load_session,
    model_calls,
    run_session,
    window_of,
)
from minilib.logs import load_transcript, replay_transcript
from minilib.scale import FastWindow, bounded_window, generate_history
from minilib.trace import TRACE_FORMAT, event_records, json_line, read_jsonl

LOGS = sorted(
    path
    for path in (Path(__file__).resolve().parent.parent / "data" / "logs").rglob("*")
    if path.is_file() and path.name not in NOT_LOGS
)


class SentWindows(Tracer):
    """A tracer that also keeps a deep copy of what each model call was handed."""

    def __init__(self, **options):
        super().__init__(**options)
        self.sent = []

    def model_call(self, step, purpose, input_messages, reply):
        input_messages = list(input_messages)
        self.sent.append(
            (step, purpose, copy.deepcopy(input_messages), copy.deepcopy(reply))
        )
        return super().model_call(step, purpose, input_messages, reply)


@contextmanager
def sent_windows(module):
    """Every tracer `module` makes is a SentWindows; yields the list of them."""
    made = []

    def make(**options):
        made.append(SentWindows(**options))
        return made[-1]

    with mock.patch.object(module, "Tracer", make):
        yield made


def what_was_sent(made, final):
    """The calls the model was sent, in order. A replay across an agent's compactions
    runs each stretch with its own tracer and copies their records into the final
    one: the stretches' tracers saw the calls first (their steps restart at 0)."""
    stretches = [tracer for tracer in made if tracer is not final and tracer.sent]
    if not stretches:
        return [(purpose, window, reply) for _, purpose, window, reply in final.sent]
    return [
        (purpose, window, reply)
        for tracer in stretches
        for _, purpose, window, reply in tracer.sent
    ]


def read_back(tracer):
    """The records as `read_jsonl` gives them after `write_jsonl`."""
    return [json.loads(line) for line in tracer.to_jsonl().splitlines()]


def assert_windows_rebuilt(records, sent):
    calls = model_calls(records)
    assert [(c["purpose"], c["input"], c["reply"]) for c in calls] == sent
    stored = [r for r in records if r.get("event") == "model_call"]
    assert [window_of(records, call) for call in stored] == [w for _, w, _ in sent]


def assert_each_message_written_once(records):
    ids = [r["id"] for r in records if r.get("type") == "message"]
    assert ids == [f"m{number}" for number in range(1, len(ids) + 1)]
    assert records[0] == {"type": "trace", "format": TRACE_FORMAT}


@settings(PROFILE)
@given(cases())
def test_every_window_of_a_generated_history_is_rebuilt_from_the_trace(case):
    history, knob = case
    transcript = history + [{"role": "assistant", "content": "done"}]
    with sent_windows(replay_module) as made:
        run = replay_transcript(copy.deepcopy(transcript), knob)
    sent = what_was_sent(made, run.tracer)
    assert_windows_rebuilt(run.tracer.records, sent)
    assert_windows_rebuilt(read_back(run.tracer), sent)
    assert_each_message_written_once(run.tracer.records)
    assert [c["input"] for c in run.tracer.events("model_call")] == [
        window for _, window, _ in sent
    ]


@settings(SCALE_PROFILE)
@given(st.integers(1, 80), st.integers(0, 3), st.sampled_from((1_500, 4_000, 12_000)))
def test_every_window_of_a_bounded_replay_is_rebuilt_from_the_trace(
    calls, seed, threshold
):
    history = generate_history(calls, seed)
    tracer = SentWindows()
    run = quick_replay(
        history.conversation(),
        FastWindow(bounded_window(Settings(threshold=threshold))),
        tracer,
    )
    sent = [(purpose, window, reply) for _, purpose, window, reply in tracer.sent]
    assert_windows_rebuilt(tracer.records, sent)
    assert_windows_rebuilt(read_back(tracer), sent)
    assert len(sent) >= len(run.rounds)  # decisions, and the summaries made on the way


@pytest.mark.parametrize("path", LOGS, ids=lambda path: path.name)
@pytest.mark.parametrize("threshold", (600, 100_000))  # compressing, and not at all
def test_every_window_of_a_bundled_log_is_rebuilt_after_a_write_and_read(
    path, threshold, tmp_path
):
    log = load_transcript(path)
    with sent_windows(replay_module) as made:
        run = replay_transcript(log, Settings(threshold=threshold, fold_user_turns=True))
    sent = what_was_sent(made, run.tracer)
    assert sent or run.overflow is not None, "the log has no model call to check"
    written = run.tracer.write_jsonl(tmp_path / "trace.jsonl")
    assert_windows_rebuilt(run.tracer.records, sent)
    assert_windows_rebuilt(read_jsonl(written), sent)
    assert_each_message_written_once(read_jsonl(written))


def test_the_bundled_session_s_windows_are_rebuilt_after_a_write_and_read(tmp_path):
    with sent_windows(session_module) as made:
        run = run_session(load_session())
    sent = what_was_sent(made, run.tracer)
    assert [purpose for purpose, _, _ in sent].count("decision") == 14
    written = run.tracer.write_jsonl(tmp_path / "trace.jsonl")
    assert_windows_rebuilt(read_jsonl(written), sent)
    # the events keep their numbering: compressions and overflows at the same seq
    assert [r["seq"] for r in event_records(read_jsonl(written))] == list(
        range(1, len(list(event_records(run.tracer.records))) + 1)
    )


class SeenMessages(Tracer):
    """A tracer that also notes every distinct message object it was handed."""

    def __init__(self):
        super().__init__()
        self.seen = {}  # id() -> the message, kept so an id is never reused

    def model_call(self, step, purpose, input_messages, reply):
        input_messages = list(input_messages)
        for message in input_messages + ([reply] if isinstance(reply, dict) else []):
            self.seen[id(message)] = message
        return super().model_call(step, purpose, input_messages, reply)


@pytest.fixture(scope="module")
def thousand_calls():
    """The 1,000-call generated session replayed at 32k twice: (its log's bytes, the
    two traces, the round count, the bytes the windows sent add up to)."""
    history = generate_history(1000)
    log_bytes = sum(len(json_line(message).encode()) for message in history.messages)
    traces = []
    for _ in range(2):
        tracer = SeenMessages()
        run = quick_replay(
            history.conversation(),
            FastWindow(bounded_window(Settings(threshold=32_000))),
            tracer,
        )
        assert run.overflow is None
        traces.append(tracer)
    sizes = {}  # id() of a rebuilt message (the same object in every window) -> bytes
    sent_bytes = 0
    for call in model_calls(traces[0].records):
        for message in call["input"]:
            if id(message) not in sizes:
                sizes[id(message)] = len(json_line(message).encode())
            sent_bytes += sizes[id(message)]
    return log_bytes, traces, len(run.rounds), sent_bytes


def test_a_1000_call_trace_grows_with_the_log_not_with_rounds_times_window(
    thousand_calls,
):
    log_bytes, (tracer, _), rounds, sent_bytes = thousand_calls
    trace_bytes = len(tracer.to_jsonl().encode())
    # Each message once (aged copies and summaries are new, smaller messages; a tool
    # result's text only in its tool_call event), and per call its step, purpose and
    # the ids of what is new in its window.
    assert trace_bytes < 1.5 * log_bytes + 500 * rounds
    # Writing every window whole would cost the sum of all windows sent.
    assert sent_bytes > 10 * trace_bytes


def test_a_1000_call_trace_holds_each_message_once(thousand_calls):
    _, (tracer, _), _, _ = thousand_calls
    recorded = [r["message"] for r in tracer.records if r.get("type") == "message"]
    assert len(recorded) == len(tracer.seen)
    assert len({id(message) for message in recorded}) == len(recorded)


def test_a_1000_call_trace_is_byte_identical_from_run_to_run(thousand_calls):
    _, (first, second), _, _ = thousand_calls
    assert first.to_jsonl() == second.to_jsonl()


def test_a_trace_of_format_1_is_still_read():
    """Format 1 had no message records: each model call holds its whole window."""
    task = {"role": "user", "content": "hi"}
    reply = {"role": "assistant", "content": "done"}
    payload = {"step": 0, "purpose": "decision", "input": [task], "reply": reply}
    old = [{"type": "event", "event": "model_call", "payload": payload, "seq": 1}]
    assert model_calls(old) == [old[0]["payload"]]
    assert window_of(old, old[0]) == [task]


def test_a_message_changed_in_place_is_recorded_again():
    tracer = Tracer()
    message = {"role": "user", "content": "before"}
    reply = {"role": "assistant", "content": "ok"}
    tracer.model_call(0, "decision", [message], reply)
    message["content"] = "after"  # minilib never does this; a caller's code might
    tracer.model_call(1, "decision", [message, reply], reply)
    windows = [call["input"] for call in model_calls(tracer.records)]
    assert windows == [
        [{"role": "user", "content": "before"}],
        [{"role": "user", "content": "after"}, reply],
    ]


def test_a_window_naming_a_message_the_trace_lacks_is_named():
    call = {"event": "model_call", "payload": {"input": ["m9"], "reply": "m9"}}
    with pytest.raises(ValueError, match=r"^the trace has no message record 'm9'$"):
        window_of([{"type": "trace", "format": TRACE_FORMAT}, call], call)


def test_count_counts_events_without_reading_windows_back():
    tracer = Tracer()
    task = {"role": "user", "content": "go"}
    tracer.model_call(0, "decision", [task], {"role": "assistant", "content": "a"})
    tracer.model_call(0, "summary", [task], "a summary")
    tracer.tool_call(0, "c1", "read_file", "{}", "text")
    assert tracer.count("model_call") == 2
    assert tracer.count("model_call", "summary") == 1
    assert tracer.count("tool_call") == 1
    assert tracer.count("context_compression") == 0


def test_a_window_that_begins_as_the_last_one_is_named_by_the_same_ids():
    tracer = Tracer()
    task = {"role": "user", "content": "go"}
    first = {"role": "assistant", "content": "a"}
    tracer.model_call(0, "decision", [task], first)
    # An equal copy of the task (a harness that rebuilds its list each round) is the
    # message recorded, not a new one.
    tracer.model_call(
        1, "decision", [dict(task), first], {"role": "assistant", "content": "b"}
    )
    messages = [record for record in tracer.records if record["type"] == "message"]
    assert [record["id"] for record in messages] == ["m1", "m2", "m3"]
    assert [call["input"] for call in model_calls(tracer.records)][1] == [task, first]
