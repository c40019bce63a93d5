"""Every policy's row on more than one core: the log's facts found in one process
while the others replay.

A row needs the policy's replay and the log's facts (`used_facts`), and the facts
take as long as several replays. So the processes start together, forked once the log
is read: the first finds the facts, sends them to the others (`used_as_data`) and then
takes policies like the rest; the others replay policies meanwhile, measuring all
but the facts as each window comes and keeping the windows until the facts come, then
judging the facts in them in the order they were sent (`PolicyMeasurement`). Each
process takes the next policy no process has taken (the finder from the end of the
list, the others from its front), so a slow one does not hold the rest back. The rows
are those one process makes, in the order asked for; tests/test_compare_golden.py and
tests/test_compare_processes.py hold them equal.

The windows waiting for the facts are kept up to `MAX_WAITING_MESSAGES` messages a
process; past that, a replay waits for the facts and measures as it goes.

A process that dies leaves its policies to this one, which finds the facts itself if
they never came. Where the system cannot fork (Windows), one process does it all.
"""

import gc
import multiprocessing
import os
import sys
from typing import Dict, List, Optional, Tuple

from ...measure.used_facts import used_as_data, used_from_data
from .compare import MAX_WAITING_MESSAGES


def usable_processes(asked: int) -> int:
    """How many of `asked` processes to run: no more than the cores this process
    may use, and one where the system cannot fork."""
    if asked <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        cores = os.cpu_count() or 1
    return max(1, min(asked, cores))


def rows_in_processes(job, processes: int) -> List[dict]:
    """`job`'s rows (a `compare.PolicyRows`), made by `processes` processes: this
    one and `processes - 1` forked from it."""
    context = multiprocessing.get_context("fork")
    # the tasks no process has taken: from the first to before the second
    taken = context.Array("i", [0, len(job.tasks)])
    pipes = [context.Pipe(duplex=False) for _ in range(processes - 1)]
    facts_from = [receiving for receiving, _ in pipes]  # this process's first
    facts_to = [sending for _, sending in pipes]  # the finder's
    children, results = [], []
    sys.stdout.flush()  # a forked child must not print what this one has buffered
    sys.stderr.flush()
    # The log's objects are shared with the children until written to; the collector
    # would write to every one of them in each process: left out of its walks.
    gc.freeze()
    try:
        for number in range(processes - 1):
            receiving, sending = context.Pipe(duplex=False)
            mine = facts_to if number == 0 else facts_from[number]
            child = context.Process(
                target=_child, args=(job, taken, sending, mine, facts_to), daemon=True
            )
            child.start()
            sending.close()
            children.append(child)
            results.append(receiving)
        for sending in facts_to:
            sending.close()
        rows, errors, used = _work(job, taken, None, facts_from[0])
        for receiving, child in zip(results, children):
            try:
                their_rows, their_errors = receiving.recv()
            except (EOFError, OSError):  # it died: its tasks are done again below
                their_rows, their_errors = {}, {}
            rows.update(their_rows)
            errors.update(their_errors)
            child.join()
    finally:
        gc.unfreeze()
    missing = [i for i in range(len(job.tasks)) if i not in rows and i not in errors]
    if missing:
        used = job.find_facts() if used is None else used
        for index in missing:
            try:
                rows[index] = _measured(job, index, used)
            except Exception as error:
                errors[index] = error
    if errors:
        raise errors[min(errors)]  # the one a single process would have met first
    return [rows[index] for index in range(len(job.tasks))]


def _child(job, taken, results, facts, facts_to) -> None:
    """A forked process. The first (`facts` is the list `facts_to`) finds the log's
    facts and sends them to every other process, then takes policies like the rest;
    any other (`facts` its end of a pipe from the first) takes policies, measured
    once the facts come."""
    try:
        if facts is facts_to:
            used = job.find_facts()
            sent = used_as_data(used, job.prepared)
            for sending in facts_to:
                sending.send(sent)
                sending.close()
            worked = _work(job, taken, used, None, from_end=True)
        else:
            for sending in facts_to:  # so the first's end alone keeps the pipe open
                sending.close()
            worked = _work(job, taken, None, facts)
        rows, errors, _ = worked
        try:
            results.send((rows, errors))
        except Exception:  # an error that cannot be pickled: its words, then
            errors = {i: RuntimeError(str(e)) for i, e in errors.items()}
            results.send((rows, errors))
    except (KeyboardInterrupt, Exception):
        # Ctrl-C reaches every process, and the parent says it; what failed here
        # the parent does again and reports itself
        pass


def _take(taken, from_end: bool = False) -> Optional[int]:
    """The next task no process has taken, from the front of the list or its end;
    None when none is left."""
    with taken.get_lock():
        front, back = taken[0], taken[1]
        if front >= back:
            return None
        if from_end:
            taken[1] = back - 1
            return back - 1
        taken[0] = front + 1
        return front


def _work(
    job, taken, used, facts_from, from_end: bool = False
) -> Tuple[Dict[int, dict], dict, Optional[object]]:
    """Replay the tasks this process takes until none is left: ({index: row},
    {index: the error it raised}, the facts). Without the facts, each replay's
    windows wait for them; they are read from `facts_from` between replays."""
    rows: Dict[int, dict] = {}
    errors: Dict[int, BaseException] = {}
    waiting = []  # (index, a replay waiting for the facts)
    while True:
        index = _take(taken, from_end)
        if index is None:
            break
        try:
            measurement = job.measurement(index)
            if used is not None:
                measurement.facts_found(used)
            else:  # too many messages kept waiting: wait for the facts instead
                kept = sum(m.waiting_messages for _, m in waiting)
                measurement.waiting_room = MAX_WAITING_MESSAGES - kept
                measurement.wait_for_facts = lambda: _facts(job, facts_from)
            measurement.replay()
            if measurement.used is not None:
                used = measurement.used
                _measure_waiting(job, waiting, used, rows, errors)
                rows[index] = job.row(measurement)
                continue
        except Exception as error:
            errors[index] = error
            continue
        waiting.append((index, measurement))
        if facts_from.poll():  # sent meanwhile (or the finder is gone)
            used = _facts(job, facts_from)
            _measure_waiting(job, waiting, used, rows, errors)
    if waiting:
        used = _facts(job, facts_from)
        _measure_waiting(job, waiting, used, rows, errors)
    return rows, errors, used


def _facts(job, facts_from):
    """The facts the finder sent, waited for; found here if it died first."""
    try:
        return used_from_data(facts_from.recv(), job.prepared)
    except (EOFError, OSError):
        return job.find_facts()


def _measure_waiting(job, waiting, used, rows, errors) -> None:
    for index, measurement in waiting:
        try:
            measurement.facts_found(used)
            rows[index] = job.row(measurement)
        except Exception as error:
            errors[index] = error
    waiting.clear()


def _measured(job, index: int, used) -> dict:
    measurement = job.measurement(index)
    measurement.facts_found(used)
    measurement.replay()
    return job.row(measurement)
