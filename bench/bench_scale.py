"""What governing one round costs at scale, side by side on the same generated sessions:
the plain window, FastWindow, a lower bound and LangChain's trim_messages.

    python bench/bench_scale.py                     # 100-1,000 calls at 32k/128k/200k
    python bench/bench_scale.py --quick             # 100 and 200 calls, one repeat
    python bench/bench_scale.py --markdown docs/benchmark_scale.md   # also write it

For every session length (100, 200, 500, 1,000 tool calls of `generate_history`,
seed 0) and threshold (32k, 128k, 200k tokens), one run times, round by round, with
time.perf_counter_ns around `before_model_call` only (the replay, the conversation's
copies and the checks below are outside the timing):

(a) full walk   the plain ContextWindow of `bounded_window` (aging, then the bounded
                rolling summary): validates and counts the whole list every round;
(b) FastWindow  the same window behind `minilib.scale.FastWindow`;
(c) lower bound a loop that only adds each new message's count (the same estimate,
                counted once) to a running total and compares it with the threshold;
                no validation, no prefix check; over the threshold it calls (a);
(d) LangChain   `trim_messages(history, strategy="last", token_counter=
                count_tokens_approximately, max_tokens=threshold, include_system=True)`
                on the uncompressed history of the round, converted to LangChain
                messages once, outside the timing (only if langchain_core imports).

(a)-(c) replay the session `--repeats` times each (the text-token cache is cleared
before every replay, so each replay counts every text once, as a live session
would); a round's time is its fastest repeat. (d) is stateless and slow, so each
round is timed once. Medians and maxima are over the rounds of a session; "total" is
the sum over its rounds. The growth exponent is the slope of log(median time of the
rounds that compress nothing) against log(tool calls), fitted over the four session
lengths: 1 means a round costs in proportion to the session, 0 means it does not
grow. (a) and (b) must send the same windows (checked every run), and each window
sent, ours and LangChain's, is checked for an orphaned tool result (a tool message
whose call is not in the window, first message included) and for the task (the
first user message) missing.

Targets: FastWindow's per-round median at most 0.05 ms at 200k with 1,000
calls, at least 100x faster than LangChain in the same run, growth exponent of a
non-compressing round at most 0.3. This is a measurement, not a test: it prints the
numbers and never fails on them.
"""

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minilib import Settings, Tracer, article_window, replay, scripted_summary  # noqa: E402
from minilib.markers import is_summary  # noqa: E402
from minilib.scale import FastWindow, bounded_window, generate_history  # noqa: E402
from minilib.tokens import (  # noqa: E402
    estimate_message_tokens,
    estimate_text_tokens,
    estimate_tokens,
)

try:
    import langchain_core
    from langchain_core.messages import (
        AIMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        trim_messages,
    )
    from langchain_core.messages.utils import count_tokens_approximately
except ImportError:  # the optional "bench" extra
    langchain_core = None

CALLS = (100, 200, 500, 1000)
THRESHOLDS = (32_000, 128_000, 200_000)
TARGET_MEDIAN_MS = 0.05
TARGET_LANGCHAIN_RATIO = 100
TARGET_EXPONENT = 0.3
BEGIN = "<!-- measured by bench/bench_scale.py: begin -->"
END = "<!-- measured by bench/bench_scale.py: end -->"


class TimedWindow:
    """Times every before_model_call of `window`, and notes what each round did."""

    def __init__(self, window):
        self.window = window
        self.times_ns = []
        self.compressed = []
        self.sizes = []  # messages sent per round, to check two variants agree

    def before_model_call(self, messages, tracer=None, step=0):
        start = time.perf_counter_ns()
        compressions = self.window.before_model_call(messages, tracer, step)
        self.times_ns.append(time.perf_counter_ns() - start)
        self.compressed.append(bool(compressions))
        self.sizes.append(len(messages))
        return compressions


class CountOnlyBound:
    """(c): add each new message's count, compare; the plain window when over.

    Correct only for a loop that appends and never edits, which is what replay does:
    it is the floor of any incremental design, not a window to use.
    """

    def __init__(self, window):
        self.window = window
        self.seen = 0
        self.total = 0

    def before_model_call(self, messages, tracer=None, step=0):
        for index in range(self.seen, len(messages)):
            self.total += estimate_message_tokens(messages[index])
        if self.total <= self.window.threshold:
            self.seen = len(messages)
            return []
        compressions = self.window.before_model_call(messages, tracer, step)
        self.seen, self.total = len(messages), estimate_tokens(messages)
        return compressions


def timed_replays(history, make_window, repeats: int):
    """Per-round fastest time (ns) over `repeats` replays, what each round did, and the
    last replay's windows."""
    best, compressed, sizes, final = None, None, None, None
    for _ in range(repeats):
        estimate_text_tokens.cache_clear()  # each replay counts every text once
        gc.collect()
        timed = TimedWindow(make_window())
        # len stands in for replay's own per-round counter: only the window is timed.
        run = replay(history.conversation(), timed, count_tokens=len, max_steps=None)
        if run.overflow is not None:
            raise RuntimeError(f"the session overflowed: {run.overflow}")
        times = timed.times_ns
        best = times if best is None else [min(a, b) for a, b in zip(best, times)]
        compressed, sizes, final = timed.compressed, timed.sizes, run.messages
    return best, compressed, sizes, final


def sent_windows(history, make_window):
    """Every window (a) sends, for the orphan and task checks."""
    windows = []
    replay(
        history.conversation(),
        make_window(),
        count_tokens=len,
        max_steps=None,
        on_round=lambda step, messages, compressions: windows.append(list(messages)),
    )
    return windows


def orphaned(messages, role_of, calls_of, answers) -> bool:
    """A tool message in `messages` whose call is not in the assistant message before
    it."""
    open_calls = None
    for message in messages:
        role = role_of(message)
        if role == "assistant":
            open_calls = set(calls_of(message))
        elif role == "tool":
            if open_calls is None or answers(message) not in open_calls:
                return True
        else:
            open_calls = None
    return False


def our_orphans(window) -> bool:
    return orphaned(
        window,
        lambda m: m["role"],
        lambda m: [c["id"] for c in m.get("tool_calls") or ()],
        lambda m: m["tool_call_id"],
    )


def langchain_orphans(window) -> bool:
    def role(message):
        if isinstance(message, AIMessage):
            return "assistant"
        return "tool" if isinstance(message, ToolMessage) else "other"

    return orphaned(
        window, role, lambda m: [c["id"] for c in m.tool_calls], lambda m: m.tool_call_id
    )


def to_langchain(message):
    role, content = message["role"], message.get("content") or ""
    if role == "system":
        return SystemMessage(content)
    if role == "user":
        return HumanMessage(content)
    if role == "assistant":
        calls = [
            {
                "id": call["id"],
                "name": call["function"]["name"],
                "args": json.loads(call["function"].get("arguments") or "{}"),
                "type": "tool_call",
            }
            for call in message.get("tool_calls") or ()
        ]
        return AIMessage(content=content, tool_calls=calls)
    status = "error" if message.get("error") else "success"
    return ToolMessage(
        content=content, tool_call_id=message["tool_call_id"], status=status
    )


def langchain_rounds(history, threshold: int):
    """(d) on each round's uncompressed history: times, orphan and dropped-task rounds."""
    messages = list(history.messages)
    converted = [to_langchain(m) for m in messages]
    task = converted[1]
    # A round's history is everything before its assistant message.
    ends = [index for index, m in enumerate(messages) if m["role"] == "assistant"]
    times, orphans, dropped, trimmed = [], 0, 0, 0
    # The first call pays for LangChain's lazy set-up (~0.4 s): not a round's cost.
    trim_messages(
        converted[:2],
        strategy="last",
        token_counter=count_tokens_approximately,
        max_tokens=threshold,
        include_system=True,
    )
    gc.collect()
    for end in ends:
        window = converted[:end]
        start = time.perf_counter_ns()
        kept = trim_messages(
            window,
            strategy="last",
            token_counter=count_tokens_approximately,
            max_tokens=threshold,
            include_system=True,
        )
        times.append(time.perf_counter_ns() - start)
        trimmed += len(kept) < len(window)
        orphans += langchain_orphans(kept)
        dropped += not any(message is task for message in kept)
    return times, orphans, dropped, trimmed


def summary_sizes(calls: int, seed: int, thresholds) -> str:
    """The longest session's summary: the article's unbounded one against the bounded
    one (both behind FastWindow: same windows, less waiting)."""
    history = generate_history(calls, seed)
    lines = [
        f"### The summary in a {calls:,}-call session",
        "",
        "| threshold | summary | rounds governed | summaries written | largest summary "
        "(tokens of text) | how it ended |",
        "|---|---|---|---|---|---|",
    ]
    for threshold in thresholds:
        for name, window in (
            (
                "unbounded (article)",
                article_window(scripted_summary, threshold=threshold),
            ),
            ("bounded", bounded_window(Settings(threshold=threshold))),
        ):
            tracer = Tracer()
            run = replay(
                history.conversation(),
                FastWindow(window),
                tracer=tracer,
                count_tokens=len,
                max_steps=None,
            )
            replies = [
                call["reply"]
                for call in tracer.events("model_call")
                if call["purpose"] == "summary"
            ]
            largest = max((estimate_text_tokens(text) for text in replies), default=0)
            error = run.overflow
            if error is None:
                ended = "completed"
            else:
                biggest = error.window[error.largest_index]
                what = "the summary" if is_summary(biggest) else biggest["role"]
                ended = (
                    f"ContextOverflowError at step {len(run.rounds)}: largest message "
                    f"{what}, {error.largest_tokens:,} tokens"
                )
            lines.append(
                f"| {threshold // 1000}k | {name} | {len(run.rounds)} | {len(replies)} | "
                f"{largest:,} | {ended} |"
            )
    return "\n".join(lines)


def exponent(points) -> float:
    """Least-squares slope of log(time) against log(calls)."""
    xs = [math.log(calls) for calls, _ in points]
    ys = [math.log(value) for _, value in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / spread


def ms(nanoseconds: float) -> str:
    value = nanoseconds / 1e6
    if value >= 100:
        return f"{value:,.0f} ms"
    return f"{value:.3f} ms" if value < 1 else f"{value:.2f} ms"


def measure(calls_list, thresholds, repeats: int, seed: int, with_langchain: bool):
    results = {}
    for calls in calls_list:
        history = generate_history(calls, seed)
        for threshold in thresholds:
            settings = Settings(threshold=threshold)

            def full():
                return bounded_window(settings)

            row = {"calls": calls, "threshold": threshold}
            for name, make in (
                ("full", full),
                ("fast", lambda: FastWindow(full())),
                ("bound", lambda: CountOnlyBound(full())),
            ):
                times, compressed, sizes, final = timed_replays(history, make, repeats)
                row[name] = {"times": times, "compressed": compressed}
                row[f"{name}_check"] = (sizes, final)
            if row["fast_check"] != row["full_check"]:
                raise RuntimeError(
                    f"{calls} calls at {threshold}: FastWindow sent other windows"
                )
            windows = sent_windows(history, full)
            row["our_orphans"] = sum(our_orphans(window) for window in windows)
            task = history.messages[1]
            row["our_dropped"] = sum(task not in window for window in windows)
            row["rounds"] = len(windows)
            if with_langchain:
                times, orphans, dropped, trimmed = langchain_rounds(history, threshold)
                row["langchain"] = {"times": times}
                row["lc_orphans"], row["lc_dropped"], row["lc_trimmed"] = (
                    orphans,
                    dropped,
                    trimmed,
                )
            results[(calls, threshold)] = row
            print(f"  measured {calls} calls at {threshold:,}", file=sys.stderr)
    return results


def quiet_median(row, name):
    """Median over the rounds that compress nothing (by the plain window's rounds)."""
    compressed = row["full"]["compressed"]
    times = [t for t, c in zip(row[name]["times"], compressed) if not c]
    return statistics.median(times) if times else float("nan")


def report(results, calls_list, thresholds, with_langchain: bool) -> str:
    variants = ["full", "fast", "bound"] + (["langchain"] if with_langchain else [])
    label = {
        "full": "(a) full walk",
        "fast": "(b) FastWindow",
        "bound": "(c) lower bound",
        "langchain": "(d) LangChain trim_messages",
    }
    lines = [
        "### Per round: median / max of `before_model_call`, session total",
        "",
        "| calls | threshold | rounds (compressing) | "
        + " | ".join(label[v] for v in variants)
        + " | full / fast | "
        + ("LangChain / fast |" if with_langchain else ""),
        "|---|---|---|"
        + "---|" * len(variants)
        + "---|"
        + ("---|" if with_langchain else ""),
    ]
    for calls in calls_list:
        for threshold in thresholds:
            row = results[(calls, threshold)]
            compressing = sum(row["full"]["compressed"])
            cells = []
            for variant in variants:
                times = row[variant]["times"]
                cells.append(
                    f"{ms(statistics.median(times))} / {ms(max(times))} / "
                    f"{ms(sum(times))}"
                )
            fast_median = statistics.median(row["fast"]["times"])
            ratios = [f"{statistics.median(row['full']['times']) / fast_median:,.0f}×"]
            if with_langchain:
                ratio = statistics.median(row["langchain"]["times"]) / fast_median
                ratios.append(f"{ratio:,.0f}×")
            lines.append(
                f"| {calls:,} | {threshold // 1000}k | {row['rounds']} ({compressing}) | "
                + " | ".join(cells)
                + " | "
                + " | ".join(ratios)
                + " |"
            )
    lines += [
        "",
        "### Growth: slope of log(median round time) against log(tool calls)",
        "",
        "Rounds that compress nothing for (a)-(c); every round for LangChain, which",
        "trims statelessly. In the cells, the medians at "
        + " / ".join(f"{calls:,}" for calls in calls_list)
        + " calls.",
        "",
        "| threshold | " + " | ".join(label[v] for v in variants) + " |",
        "|---|" + "---|" * len(variants),
    ]
    exponents = {}
    for threshold in thresholds:
        cells = []
        for variant in variants:
            points = []
            for calls in calls_list:
                row = results[(calls, threshold)]
                if variant == "langchain":
                    value = statistics.median(row["langchain"]["times"])
                else:
                    value = quiet_median(row, variant)
                points.append((calls, value))
            slope = exponent(points) if len(points) > 1 else float("nan")
            exponents[(threshold, variant)] = slope
            medians = " / ".join(ms(value) for _, value in points)
            cells.append(f"**{slope:.2f}** ({medians})")
        lines.append(f"| {threshold // 1000}k | " + " | ".join(cells) + " |")
    lines += [
        "",
        "### Windows that break the API or lose the task",
        "",
        "Rounds whose window holds an orphaned tool result / rounds whose window lost "
        "the first user message.",
        "",
        "| calls | threshold | ours (bounded window) | "
        + ("LangChain (rounds it trimmed) |" if with_langchain else ""),
        "|---|---|---|" + ("---|" if with_langchain else ""),
    ]
    for calls in calls_list:
        for threshold in thresholds:
            row = results[(calls, threshold)]
            cells = [f"{row['our_orphans']} / {row['our_dropped']} of {row['rounds']}"]
            if with_langchain:
                cells.append(
                    f"{row['lc_orphans']} / {row['lc_dropped']} of {row['rounds']} "
                    f"({row['lc_trimmed']})"
                )
            lines.append(
                f"| {calls:,} | {threshold // 1000}k | " + " | ".join(cells) + " |"
            )
    lines += ["", "### Targets", ""]
    biggest = (max(calls_list), 200_000)
    if biggest in results:
        row = results[biggest]
        median = statistics.median(row["fast"]["times"])
        lines.append(
            f"- FastWindow per-round median at 200k, {biggest[0]:,} calls: {ms(median)} "
            f"(target ≤ {TARGET_MEDIAN_MS} ms): "
            + ("met" if median / 1e6 <= TARGET_MEDIAN_MS else "**not met**")
        )
        if with_langchain:
            ratio = statistics.median(row["langchain"]["times"]) / median
            lines.append(
                f"- LangChain / FastWindow there: {ratio:,.0f}× "
                f"(target ≥ {TARGET_LANGCHAIN_RATIO}×): "
                + ("met" if ratio >= TARGET_LANGCHAIN_RATIO else "**not met**")
            )
    worst = max(exponents[(threshold, "fast")] for threshold in thresholds)
    lines.append(
        f"- FastWindow growth exponent, worst threshold: {worst:.2f} "
        f"(target ≤ {TARGET_EXPONENT}): "
        + ("met" if worst <= TARGET_EXPONENT else "**not met**")
    )
    return "\n".join(lines)


def machine_line() -> str:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    versions = f"python {platform.python_version()}"
    if langchain_core is not None:
        versions += f", langchain-core {langchain_core.__version__}"
    return (
        f"Measured on {date.today().isoformat()}: {os.cpu_count()} cores "
        f"({platform.processor() or platform.machine()}), load average {load}. "
        f"Versions: {versions}."
    )


def write_markdown(path: Path, block: str, begin: str = BEGIN, end: str = END) -> None:
    """Put `block` between the doc's `begin` and `end` markers; the prose around them
    is the doc's own and stays as it is."""
    text = path.read_text(encoding="utf-8") if path.exists() else f"{begin}\n{end}\n"
    if begin not in text or end not in text:
        raise SystemExit(f"{path}: the markers {begin} ... {end} are missing")
    before, rest = text.split(begin, 1)
    _, after = rest.split(end, 1)
    path.write_text(f"{before}{begin}\n\n{block}\n\n{end}{after}", encoding="utf-8")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", default=",".join(map(str, CALLS)))
    parser.add_argument("--thresholds", default=",".join(map(str, THRESHOLDS)))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--quick", action="store_true", help="100 and 200 calls, 1 repeat"
    )
    parser.add_argument("--no-langchain", action="store_true")
    parser.add_argument("--markdown", type=Path, help="rewrite the measured block there")
    options = parser.parse_args(argv)
    calls_list = [int(value) for value in options.calls.split(",")]
    thresholds = [int(value) for value in options.thresholds.split(",")]
    repeats = options.repeats
    if options.quick:
        calls_list, repeats = [100, 200], 1
    with_langchain = langchain_core is not None and not options.no_langchain
    if langchain_core is None and not options.no_langchain:
        print(
            "langchain_core is not installed: (d) is left out "
            "(pip install -e '.[bench]')",
            file=sys.stderr,
        )
    started = time.perf_counter()
    results = measure(calls_list, thresholds, repeats, options.seed, with_langchain)
    summaries = summary_sizes(max(calls_list), options.seed, (8_000, *thresholds))
    elapsed = time.perf_counter() - started
    stats = {calls: generate_history(calls, options.seed).stats() for calls in calls_list}
    sessions = "; ".join(
        f"{calls:,} calls: {s.rounds} rounds, {s.parallel_rounds} parallel, "
        f"{s.errors} errors, {s.tokens / 1e6:.2f}M tokens"
        for calls, s in stats.items()
    )
    block = "\n".join(
        [
            machine_line(),
            "",
            f"Sessions (`generate_history(calls, seed={options.seed})`): {sessions}. "
            f"(a)-(c): fastest of {repeats} replays per round. Whole run: "
            f"{elapsed:.0f} s.",
            "",
            report(results, calls_list, thresholds, with_langchain),
            "",
            summaries,
        ]
    )
    print(block)
    if options.markdown is not None:
        write_markdown(options.markdown, block)
        print(f"\nwrote {options.markdown}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
