"""A session's bill: every call the provider billed, priced by kind of token.

A log records, call by call, what the provider counted (`LoadedLog.billed`: the
uncached prompt, cache reads, cache writes by time to live, output). `record_bill`
prices each call as its provider bills it (`prices`, the optional `genai-prices`
data) and adds them up by model and by kind of token; a call whose model the price
data does not know is left unpriced and said to be. Where the agent writes its own
price of a call (pi's `usage.cost`), the record's own total is set beside the lab's.

The kinds, in the order a bill lists them: `input` (uncached), `cache_read`,
`cache_write_5m`, `cache_write_1h`, `output`.
"""

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence

from . import prices

KINDS = ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output")
KIND_WORDS = {
    "input": "input (uncached)",
    "cache_read": "cache read",
    "cache_write_5m": "cache write, 5 min",
    "cache_write_1h": "cache write, 1 hour",
    "output": "output",
}
KIND_HEADERS = {
    "input": "input",
    "cache_read": "cache read",
    "cache_write_5m": "write 5m",
    "cache_write_1h": "write 1h",
    "output": "output",
}


@dataclass
class CallCost:
    """One call: its counts by kind, its price in dollars (None: not priced) and the
    price of each kind alone."""

    key: str
    model: str
    counts: Dict[str, int]
    usd: Optional[float]
    usd_by_kind: Dict[str, float] = field(default_factory=dict)
    in_conversation: bool = True
    message: Optional[int] = None
    own_usd: Optional[float] = None  # the agent's own price of it, where recorded
    tiered: bool = False  # priced at a long-context tier
    why_unpriced: str = ""

    def as_dict(self) -> dict:
        return {**self.counts, "usd": self.usd}


@dataclass
class Bill:
    """A session's calls priced, and their sums."""

    calls: List[CallCost]
    priced_with: str  # the price data and its version

    @property
    def total_usd(self) -> float:
        return sum(call.usd for call in self.calls if call.usd is not None)

    @property
    def unpriced(self) -> List[CallCost]:
        return [call for call in self.calls if call.usd is None]

    def by_model(self) -> Dict[str, dict]:
        """Per model: calls, counts by kind, dollars."""
        models: Dict[str, dict] = {}
        for call in self.calls:
            entry = models.setdefault(
                call.model, {"calls": 0, **dict.fromkeys(KINDS, 0), "usd": 0.0}
            )
            entry["calls"] += 1
            for kind in KINDS:
                entry[kind] += call.counts[kind]
            entry["usd"] += call.usd or 0.0
        return models

    def usd_by_kind(self) -> Dict[str, float]:
        return {
            kind: sum(call.usd_by_kind.get(kind, 0.0) for call in self.calls)
            for kind in KINDS
        }

    @property
    def own_total_usd(self) -> Optional[float]:
        """The agent's own total, where it priced every call itself."""
        own = [call.own_usd for call in self.calls]
        if not own or any(value is None for value in own):
            return None
        return sum(own)


def counts_of(call) -> Dict[str, int]:
    return {kind: getattr(call, kind) for kind in KINDS}


def price_counts(
    model: str,
    provider: str,
    counts: Mapping[str, int],
    when: Optional[str] = None,
    by_kind: bool = True,
) -> CallCost:
    """One call's counts priced (PricesUnavailable without the price package); with
    `by_kind`, each kind's dollars too (a bill shown by kind needs them; a predicted
    bill, priced round after round, only the whole)."""
    cost = CallCost("", model, dict(counts), None)
    try:
        whole = prices.price(model, provider, **counts, when=when)
    except prices.UnknownModel:
        cost.why_unpriced = f"{model or 'a model not named'}: not in the price data"
        return cost
    cost.usd, cost.tiered = whole.usd, whole.tiered
    if not by_kind:
        return cost
    # each kind alone, at the call's own tier, so the kinds add up to the whole: at a
    # long-context tier, priced beside a prompt that keeps the request over the tier
    pad = dict.fromkeys(KINDS, 0)
    if whole.tiered:
        pad["input"] = TIER_PAD
    padded = prices.price(model, provider, **pad, when=when).usd if whole.tiered else 0
    for kind in KINDS:
        if counts[kind]:
            alone = dict(pad)
            alone[kind] += counts[kind]
            cost.usd_by_kind[kind] = (
                prices.price(model, provider, **alone, when=when).usd - padded
            )
    return cost


# A prompt just over the long-context tier's start (200,000 input tokens), to price
# one kind of a tiered request at the rate its request paid.
TIER_PAD = 200_001


def record_bill(log) -> Bill:
    """The bill of `log`'s recorded usage: every call it records, priced."""
    calls = []
    for billed in log.billed:
        cost = price_counts(
            billed.model, billed.provider, counts_of(billed), billed.timestamp
        )
        cost.key = billed.key
        cost.in_conversation = billed.message is not None
        cost.message = billed.message
        cost.own_usd = billed.cost_usd
        calls.append(cost)
    return Bill(calls, f"{prices.PACKAGE} {prices.version() or prices.PINNED}")


def bill_rows(bill: Bill) -> List[dict]:
    """A row a call for the JSON: its key, model and the recorded counts and price."""
    return [
        {
            "key": call.key,
            "model": call.model,
            "in_conversation": call.in_conversation,
            "recorded": call.as_dict(),
            **({"own_usd": call.own_usd} if call.own_usd is not None else {}),
        }
        for call in bill.calls
    ]


def format_bill(bill: Bill, title: str = "bill from the recorded usage") -> List[str]:
    """Lines for the terminal: the total, a row a model, the dollars by kind."""
    outside = sum(1 for call in bill.calls if not call.in_conversation)
    lines = [
        f"{title} (priced with {bill.priced_with}): ${bill.total_usd:,.2f} over "
        f"{len(bill.calls)} calls"
        + (
            f" ({outside} of them outside the conversation: a subagent's or a "
            "stopped reply's, billed all the same)"
            if outside
            else ""
        )
    ]
    header = f"{'model':<28} {'calls':>5} " + " ".join(
        f"{KIND_HEADERS[k]:>11}" for k in KINDS
    )
    lines += ["", header + f" {'usd':>10}"]
    for model, entry in bill.by_model().items():
        lines.append(
            f"{model or 'not named':<28} {entry['calls']:>5} "
            + " ".join(f"{entry[k]:>11,}" for k in KINDS)
            + f" {entry['usd']:>10,.2f}"
        )
    by_kind = bill.usd_by_kind()
    lines.append(
        "dollars by kind of token: "
        + ", ".join(f"{KIND_WORDS[k]} ${by_kind[k]:,.2f}" for k in KINDS if by_kind[k])
    )
    tiered = sum(1 for call in bill.calls if call.tiered)
    if tiered:
        lines.append(
            f"{tiered} calls over 200,000 input tokens were priced at the long-context "
            "rate, every token of the request"
        )
    unpriced: Dict[str, int] = {}
    for call in bill.unpriced:
        unpriced[call.why_unpriced] = unpriced.get(call.why_unpriced, 0) + 1
    for why, count in unpriced.items():
        lines.append(f"not priced: {count} calls ({why})")
    own = bill.own_total_usd
    if own is not None:
        lines.append(
            f"the agent's own price of the same calls: ${own:,.2f} (the lab's differs "
            f"by ${bill.total_usd - own:+,.4f})"
        )
    return lines


def totals(calls: Sequence[CallCost]) -> Dict[str, float]:
    """Counts and dollars summed over `calls`."""
    summed = {kind: sum(call.counts[kind] for call in calls) for kind in KINDS}
    summed["usd"] = sum(call.usd or 0.0 for call in calls)
    return summed
