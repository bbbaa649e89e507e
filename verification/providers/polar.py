"""Polar: revenue and MRR from its metrics endpoint (US cents); refunds and customers from lists.

API: https://api.polar.sh, `Authorization: Bearer <organization access token>` with the
`metrics:read`, `refunds:read` and `customers:read` scopes. `GET /v1/metrics/limits` gives the
earliest date and the longest window per interval; `GET /v1/metrics/` returns `periods`. Lists
(`/v1/refunds/`, `/v1/customers/`) page with `page` and `limit=100` up to `pagination.max_page`.
"""

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from openstartup.formats import month_start
from verification.http import ProviderHttp
from verification.money import money_add
from verification.providers.base import (
    LAST_DAYS,
    MonthFigures,
    Provider,
    ProviderFigures,
    bearer_headers,
    parse_timestamp,
)

PAGE = 100
CURRENCY = "USD"  # the metrics endpoint reports every amount in US cents


def _window(limits: dict, interval: str, today: date) -> date:
    """The earliest start the metrics endpoint accepts for this interval."""
    start = date.fromisoformat(limits["min_date"])
    max_days = ((limits.get("intervals") or {}).get(interval) or {}).get("max_days")
    if max_days:
        start = max(start, today - timedelta(days=int(max_days) - 1))
    return start


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    today = now.date()
    limits = http.get("/v1/metrics/limits")
    monthly = http.get(
        "/v1/metrics/",
        params={
            "start_date": _window(limits, "month", today).isoformat(),
            "end_date": today.isoformat(),
            "interval": "month",
            "timezone": "UTC",
        },
    )
    daily = http.get(
        "/v1/metrics/",
        params={
            "start_date": (today - timedelta(days=LAST_DAYS - 1)).isoformat(),
            "end_date": today.isoformat(),
            "interval": "day",
            "timezone": "UTC",
        },
    )
    return {
        "monthly": monthly["periods"],
        "daily": daily["periods"],
        "refunds": list(list_all(http, "/v1/refunds/", {"succeeded": "true"})),
        "customers": list(list_all(http, "/v1/customers/", {})),
    }


def list_all(http: ProviderHttp, path: str, params: dict[str, Any]) -> Iterator[dict]:
    """Every item of a Polar list, page after page up to `pagination.max_page`."""
    number = 1
    while True:
        page = http.get(path, params={**params, "page": number, "limit": PAGE})
        yield from page.get("items") or []
        if number >= int((page.get("pagination") or {}).get("max_page") or 1):
            return
        number += 1


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    monthly: dict[date, MonthFigures] = {}
    for period in raw["monthly"]:
        month = month_start(parse_timestamp(period["timestamp"]))
        if not monthly and not period.get("revenue"):
            continue  # history starts at the first month with revenue
        figures = monthly.setdefault(month, MonthFigures())
        money_add(figures.gross, CURRENCY, period.get("revenue") or 0)
    last_30_days: dict[str, Decimal] = {}
    for period in raw["daily"]:
        money_add(last_30_days, CURRENCY, period.get("revenue") or 0)
    # The daily window: the 30 UTC days ending today, as asked of the metrics endpoint.
    window_start = datetime.combine(now.date() - timedelta(days=LAST_DAYS - 1), time(), UTC)
    for refund in raw["refunds"]:
        if refund.get("status", "succeeded") != "succeeded":
            continue
        at = parse_timestamp(refund["created_at"])
        if at > now:
            continue
        currency = refund.get("currency") or CURRENCY
        # A refund counts in the month it happened, not the month of the order.
        money_add(
            monthly.setdefault(month_start(at), MonthFigures()).refunds, currency, refund["amount"]
        )
        if at >= window_start:
            money_add(last_30_days, currency, -Decimal(refund["amount"]))
    latest = raw["monthly"][-1] if raw["monthly"] else {}
    mrr = {CURRENCY: Decimal(latest.get("monthly_recurring_revenue") or 0)}
    return ProviderFigures(
        mrr=mrr,
        monthly=monthly,
        last_30_days=last_30_days,
        customers=len({customer["id"] for customer in raw["customers"]}),
    )


PROVIDER = Provider(
    name="polar",
    default_api_base="https://api.polar.sh",
    auth_headers=bearer_headers,
    fetch=fetch,
    compute=compute,
)
