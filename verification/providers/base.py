"""The one small interface every connector implements: fetch raw data, then compute figures.

`fetch(http=..., now=...)` does all the HTTP (paginating to the end) and returns plain data;
`compute(raw=..., now=...)` is pure arithmetic on it, in minor units per currency.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from openstartup.formats import month_start
from verification.money import Money, money_add

LAST_DAYS = 30
# Months per billing interval, to normalise every price to one month.
PER_MONTH = {
    "day": Decimal(365) / 12,
    "week": Decimal(52) / 12,
    "month": Decimal(1),
    "year": Decimal(1) / 12,
}


@dataclass
class MonthFigures:
    gross: Money = field(default_factory=dict)
    refunds: Money = field(default_factory=dict)


@dataclass
class ProviderFigures:
    """What a connector found, before conversion; `mrr` None means no subscription data."""

    mrr: Money | None
    monthly: dict[date, MonthFigures]
    last_30_days: Money
    customers: int


@dataclass(frozen=True)
class Provider:
    name: str
    default_api_base: str
    auth_headers: Callable[[str], dict[str, str]]
    fetch: Callable[..., Any]
    compute: Callable[..., ProviderFigures]


def bearer_headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def next_month(month: date) -> date:
    return date(month.year + (month.month == 12), month.month % 12 + 1, 1)


def parse_timestamp(value: str | int | float) -> datetime:
    """Unix seconds or ISO 8601 (with Z or an offset) to an aware UTC datetime."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, tz=UTC)
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


class Ledger:
    """Money in and out by UTC month, plus the rolling last 30 days before `now`."""

    def __init__(self, *, now: datetime):
        self.now = now
        self.window_start = now - timedelta(days=LAST_DAYS)
        self.monthly: dict[date, MonthFigures] = {}
        self.last_30_days: Money = {}

    def sale(self, *, at: datetime, currency: str, minor: int | Decimal) -> None:
        if at > self.now:
            return
        money_add(self._month(at).gross, currency, minor)
        if at >= self.window_start:
            money_add(self.last_30_days, currency, minor)

    def refund(self, *, at: datetime, currency: str, minor: int | Decimal) -> None:
        """A refund counts in the month it happened, whatever month the sale was in."""
        if at > self.now:
            return
        money_add(self._month(at).refunds, currency, minor)
        if at >= self.window_start:
            money_add(self.last_30_days, currency, -Decimal(minor))

    def months(self) -> dict[date, MonthFigures]:
        """Every month from the first with money to the current one, gaps filled with zeros."""
        if not self.monthly:
            return {}
        filled: dict[date, MonthFigures] = {}
        month, last = min(self.monthly), month_start(self.now)
        while month <= last:
            filled[month] = self.monthly.get(month, MonthFigures())
            month = next_month(month)
        return filled

    def figures(self, *, mrr: Money | None, customers: int) -> ProviderFigures:
        """What the connector found: `mrr` (None without subscription data), the months and
        the last 30 days recorded here, and the customer count."""
        return ProviderFigures(
            mrr=mrr, monthly=self.months(), last_30_days=self.last_30_days, customers=customers
        )

    def _month(self, at: datetime) -> MonthFigures:
        return self.monthly.setdefault(month_start(at), MonthFigures())
