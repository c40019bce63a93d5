"""Money: a call's tokens priced as its provider bills them, by `genai-prices`.

Optional: the price data is the `genai-prices` package's (by Pydantic), kept inside
the package so it prices offline, pinned in the notebooks' extra; nothing else in
minilib needs it, and asking for a price without it raises `PricesUnavailable`,
whose one line says how to install it. Prices are never typed in here by hand: the
package knows each model's input, output, cache-read and cache-write prices (the
1-hour writes too) and the long-context tiers, which it applies per request (above
200,000 input tokens every token of the request pays the higher price, as Anthropic
bills it).

A call is priced at the date it was made, where the log records one: a price that
changed since is the price the provider billed then.
"""

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Optional

PACKAGE = "genai-prices"
PINNED = "0.2.5"
INSTALL_HINT = (
    f"pip install '{PACKAGE}=={PINNED}'  (it is in the notebooks extra: "
    "pip install -e '.[notebooks]')"
)


class PricesUnavailable(ImportError):
    """The optional price package is not installed."""


class UnknownModel(LookupError):
    """A model the price data does not know: its calls are left unpriced."""


@dataclass(frozen=True)
class Price:
    usd: float
    model_id: str  # the price data's name for the model it matched
    tiered: bool  # the request was priced at a long-context tier


def available() -> bool:
    try:
        import genai_prices  # noqa: F401
    except ImportError:
        return False
    return True


def version() -> str:
    """The price package's version, for a report that says what priced it."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(PACKAGE)
    except PackageNotFoundError:
        return ""


def _package():
    try:
        import genai_prices
    except ImportError:
        raise PricesUnavailable(
            f"pricing needs the optional package {PACKAGE}: {INSTALL_HINT}"
        ) from None
    return genai_prices


def price(
    model: str,
    provider: str,
    input: int,
    cache_read: int = 0,
    cache_write_5m: int = 0,
    cache_write_1h: int = 0,
    output: int = 0,
    when: Optional[str] = None,
) -> Price:
    """The price of one call of `model` with these disjoint counts (`input` the
    uncached prompt), at the date `when` (ISO 8601) where known."""
    genai_prices = _package()
    written = cache_write_5m + cache_write_1h
    usage = genai_prices.Usage(
        # the package's input is the whole prompt, the cache's parts included
        input_tokens=input + cache_read + written,
        cache_read_tokens=cache_read,
        cache_write_tokens=written,
        cache_write_5m_tokens=cache_write_5m,
        cache_write_1h_tokens=cache_write_1h,
        output_tokens=output,
    )
    try:
        priced = genai_prices.calc_price(
            usage,
            model,
            provider_id=provider or None,
            genai_request_timestamp=_moment(when),
        )
    except LookupError as error:
        raise UnknownModel(f"{model}: {error}") from None
    return Price(
        float(priced.total_price),
        priced.model.id,
        _tiered(priced.model_price, input + cache_read + written),
    )


@lru_cache(maxsize=4096)
def _moment(when: Optional[str]) -> Optional[datetime]:
    if not when:
        return None
    try:
        return datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        return None


def _tiered(model_price, prompt: int) -> bool:
    tiers = getattr(getattr(model_price, "input_mtok", None), "tiers", None) or ()
    return any(prompt > tier.start for tier in tiers)
