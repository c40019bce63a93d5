"""`python -m minilib compare FILE`: replay an agent's log under every production
policy and print one row a policy."""

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

from ..logs.replay import TranscriptFileError, load_transcript
from ..measure.cache import CACHE_PRICES, DEFAULT_PRICES
from ..measure.calibration import CalibrationError
from ..measure.predicted_bill import UnpricedModel
from ..measure.recorded_usage import measured_overhead
from ..measure.tokenizers import TokenizerUnavailable
from ..policies.production.own_agent import log_counting, own_agent_parameters
from ..trace import write_text_safely
from .common import DONE, add_count_arguments, add_max_mb_argument, fail, positive
from .counting import counting_for, is_article_transcript, window_lines

DESCRIPTION = (
    "Replay an agent's log under the compression policies production agents run (the "
    "article's, Claude Code's, Codex's, the Anthropic API's, OpenHands', SWE-agent's, "
    "Gemini CLI's, opencode's, the OpenAI Agents SDK's, LangChain's) and print one row "
    "a policy: rounds completed, tokens sent, the facts the agent used that were kept, "
    "restorable or lost, the prompt cache, windows that broke pairing and summary "
    "calls added. Where a policy calls an LLM to summarise, the lab's deterministic "
    "summary stands in."
)


def add_parser(commands) -> argparse.ArgumentParser:
    compare = commands.add_parser(
        "compare",
        help="replay a log under every production policy, one row each",
        description=DESCRIPTION,
    )
    compare.add_argument("file", type=Path, help="the agent's log (any known shape)")
    compare.add_argument(
        "--policies",
        type=policy_list,
        default=None,
        help="comma-separated policy keys (default: all of them)",
    )
    compare.add_argument(
        "--window",
        type=positive,
        default=None,
        help="the model's context window in tokens; each policy derives its own "
        "trigger from it (default: the window of the model the log names)",
    )
    add_count_arguments(compare)
    compare.add_argument(
        "--agent-version",
        default=None,
        metavar="VERSION",
        help="replay the log's own agent as this version of it behaved (default: the "
        "version the log names)",
    )
    compare.add_argument(
        "--cache-prices",
        choices=sorted(CACHE_PRICES),
        default=DEFAULT_PRICES,
        help="the cache cost's price table (default %(default)s)",
    )
    compare.add_argument(
        "--jobs",
        type=positive,
        default=DEFAULT_JOBS,
        metavar="N",
        help="processes to spread the policies over, no more than the cores this "
        "process may use (default %(default)s: one finds the log's facts while the "
        "others replay; 1 runs all in this process)",
    )
    _add_output_arguments(compare)
    add_max_mb_argument(compare)
    return compare


# Two processes halve most of the wait on a laptop or a class's two-core machine;
# each process beyond them repeats its own warm-up (the caches the first policies
# fill), so more pay off only on long logs.
DEFAULT_JOBS = 2


def _add_output_arguments(compare: argparse.ArgumentParser) -> None:
    compare.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the rows as JSON (default: off)",
    )
    compare.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep each policy's trace in DIR/<policy>/trace.jsonl (default: off)",
    )
    compare.add_argument(
        "--cost",
        action="store_true",
        help="add each policy's bill in dollars, predicted in the rows' one unit: its "
        "rounds as it sent them, the prompt cache as the agent's client uses it, its "
        "compaction calls, priced by the genai-prices data (default: off)",
    )


def policy_list(text: str) -> list:
    from ..policies.production import POLICIES

    keys = [key.strip() for key in text.split(",") if key.strip()]
    unknown = [key for key in keys if key not in POLICIES]
    if not keys or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown policy {(unknown or [text])[0]!r}; expected some of "
            + ", ".join(POLICIES)
        )
    return keys


def rows_json(rows) -> str:
    """The rows as a JSON list, a row a line: the encoder in C (an indented dump runs
    in Python, a tenth of a second for a long log's rows)."""
    lines = ",\n".join(json.dumps(row, ensure_ascii=False) for row in rows)
    return f"[\n{lines}\n]\n"


@dataclass
class RowCounting:
    """How every row of one `compare` is counted, the agent's own among them."""

    window: int
    count_tokens: object
    counted_with: str
    overhead: Optional[int]
    agent_count: object = None
    agent_parameters: dict = field(default_factory=dict)
    lines: List[str] = field(default_factory=list)  # how it was counted, in words
    head: List[str] = field(default_factory=list)  # the window and why


def row_counting(
    log,
    tokenizer: str = "estimate",
    calibration: Optional[Path] = None,
    window: Optional[int] = None,
    agent_version: Optional[str] = None,
) -> RowCounting:
    """The count of every row: as asked (a calibration file, a tokenizer), else, for
    a log that records usage, one calibrated unit for all (`log_counting`)."""
    counting = counting_for(log, tokenizer, calibration, window)
    by_default = (
        counting.calibration is None
        and tokenizer == "estimate"
        and bool(log.usage)
        and not is_article_transcript(log)
    )
    shared = log_counting(log, agent_version) if by_default else None
    if shared is not None and shared.calibrated:
        # one unit for every row: the agent's own row is calibrated, so are all
        return RowCounting(
            counting.window,
            shared.count_tokens,
            shared.counted_with,
            shared.overhead,
            shared.own_count,
            shared.own_parameters,
            counting.lines + shared.lines,
            window_lines(counting),
        )
    overhead = counting.overhead or measured_overhead(log, counting.count_tokens)
    lines = list(counting.lines)
    if overhead is not None and not counting.overhead:
        lines.append(
            f"overhead: {overhead:,} tokens a call, measured from the first call's "
            "recorded usage beyond its messages (each policy's default otherwise)"
        )
    return RowCounting(
        counting.window,
        counting.count_tokens,
        counting.counted_with,
        overhead,
        None,
        own_agent_parameters(log, agent_version, None),
        lines,
        window_lines(counting),
    )


def priced_rows(rows, log, counting) -> List[str]:
    """Each row with its bill (`bill_usd`, of it `bill_compaction_usd`), its per-round
    lists taken out again; the lines that show them beside the record's bill."""
    from ..measure.bill import record_bill
    from ..measure.predicted_bill import log_pricing, policy_bill
    from ..measure.prices import PACKAGE, PINNED, version

    pricing = log_pricing(log, counting.overhead or 0)
    lines = [
        "",
        f"the bill of each policy, predicted (priced with {PACKAGE} "
        f"{version() or PINNED}; its rounds in the rows' unit, the cache as "
        f"{pricing.behaviour.provider} bills this client, output counted from the "
        "replies):",
        f"{'policy':<27} {'bill':>10} {'of it, compaction calls':>24}",
    ]
    for row in rows:
        bill = policy_bill(row, pricing)
        for key in ("rounds_sent", "rounds_reused", "rounds_broke", "parameters"):
            row.pop(key, None)
        row["bill_usd"] = round(bill.total_usd, 4)
        row["bill_compaction_usd"] = round(bill.compaction_usd, 4)
        stopped = " (stopped early)" if row.get("overflow_round") is not None else ""
        lines.append(
            f"{row['policy']:<27} {'$' + format(bill.total_usd, ',.2f'):>10} "
            f"{'$' + format(bill.compaction_usd, ',.2f'):>24}{stopped}"
        )
    if log.billed:
        recorded = record_bill(log)
        lines.append(
            f"the record: ${recorded.total_usd:,.2f} (what the provider billed, over "
            f"{len(recorded.calls)} calls)"
        )
    return lines


def main(args) -> int:
    """One row a policy, printed and, with --json, written."""
    from ..policies.production.compare import compare_policies, format_comparison

    try:
        log = load_transcript(args.file, max_bytes=args.max_mb * 1024 * 1024)
        counting = row_counting(
            log, args.tokenizer, args.calibration, args.window, args.agent_version
        )
        if counting.overhead is not None and counting.overhead >= counting.window:
            return fail(
                f"error: --window {counting.window:,}: the log's calls counted "
                f"{counting.overhead:,} tokens beyond their messages (system prompt "
                "and tool definitions), so no window that small could hold a call; "
                "give a larger --window"
            )
        rows = compare_policies(
            log.messages,
            args.policies,
            counting.window,
            counting.count_tokens,
            counted_with=counting.counted_with,
            prices=args.cache_prices,
            trace_folder=args.out,
            overhead_tokens=counting.overhead,
            agent_log=log,  # its own compactions, beside its policy's replay
            agent_count=counting.agent_count,
            agent_parameters=counting.agent_parameters,
            processes=args.jobs,
            per_round=args.cost,
        )
        bills = priced_rows(rows, log, counting) if args.cost else []
    except UnpricedModel as error:
        return fail(f"error: --cost: {error}")
    except TokenizerUnavailable as error:
        return fail(f"error: --tokenizer {args.tokenizer}: {error}")
    except (TranscriptFileError, CalibrationError) as error:
        return fail(f"error: {error}")
    except ImportError as error:  # a policy's or the prices' optional package
        return fail(f"error: {error}")
    for line in [*counting.head, log.describe(), f"tokens {counting.counted_with}"]:
        print(line)
    for line in counting.lines:
        print(line)
    print()
    print(format_comparison(rows))
    for line in bills:
        print(line)
    if args.json is not None:
        write_text_safely(args.json, rows_json(rows))
        print(f"wrote {args.json}")
    if args.out is not None:
        print(f"wrote {len(rows)} traces under {args.out}")
    return DONE
