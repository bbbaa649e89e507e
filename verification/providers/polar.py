"""Polar: revenue and MRR from its metrics endpoint (US cents); refunds and customers from lists.

API: https://api.polar.sh, `Authorization: Bearer <organization access token>` with the
`metrics:read`, `refunds:read`, `subscriptions:read` and `orders:read` scopes.
`GET /v1/metrics/limits` gives the earliest date and the longest window per interval;
`GET /v1/metrics/` returns `periods`. Lists (`/v1/refunds/`, `/v1/subscriptions/`, `/v1/orders/`)
page with `page` and `limit=100` up to `pagination.max_page`. The sandbox
(sandbox-api.polar.sh) is refused: its data is not real revenue.
"""

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from core.formats import month_start
from startups.models import Credential
from verification.http import ProviderHttp
from verification.money import money_add
from verification.providers.base import (
    LAST_30_DAYS,
    LAST_DAYS,
    AccountIdentity,
    MonthFigures,
    Provider,
    ProviderFigures,
    ProviderReported,
    account_identity,
    bearer_headers,
    checked_amount,
    customer_count,
    known_mrr,
    numbered_pages,
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
        "subscriptions": list(list_all(http, "/v1/subscriptions/", {})),
        "orders": list(list_all(http, "/v1/orders/", {})),
    }


def list_all(http: ProviderHttp, path: str, params: dict[str, Any]) -> Iterator[dict]:
    """Every item of a Polar list, page after page up to `pagination.max_page`."""
    return numbered_pages(
        http,
        path,
        lambda number: {**params, "page": number, "limit": PAGE},
        items="items",
        last_page=lambda page: (page.get("pagination") or {}).get("max_page"),
        stop_when_empty=False,
    )


def paying_customers(raw: dict, now: datetime) -> int:
    """Customers with a live subscription on a paid plan (metered counts) or a paid order above
    zero (a later refund does not undo it)."""
    paying = set()
    for subscription in raw["subscriptions"]:
        if subscription.get("status") not in ("active", "past_due"):
            continue
        metered = any(
            price.get("amount_type") == "metered_unit" for price in subscription.get("prices") or []
        )
        if metered or (subscription.get("amount") or 0) > 0:
            paying.add(subscription.get("customer_id"))
    for order in raw["orders"]:
        paid = order.get("paid", order.get("status") in ("paid", "refunded", "partially_refunded"))
        if paid and (order.get("total_amount") or order.get("amount") or 0) > 0:
            paying.add(order.get("customer_id"))
    return customer_count(paying)


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    monthly: dict[date, MonthFigures] = {}
    for period in raw["monthly"]:
        month = month_start(parse_timestamp(period["timestamp"]))
        if not monthly and not period.get("revenue"):
            continue  # history starts at the first month with revenue
        figures = monthly.setdefault(month, MonthFigures())
        money_add(figures.gross, CURRENCY, checked_amount(period.get("revenue") or 0, "revenue"))
    last_30_days: dict[str, Decimal] = {}
    for period in raw["daily"]:
        money_add(last_30_days, CURRENCY, checked_amount(period.get("revenue") or 0, "revenue"))
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
        amount = checked_amount(refund["amount"], "refund amount")
        money_add(monthly.setdefault(month_start(at), MonthFigures()).refunds, currency, amount)
        if at >= window_start:
            money_add(last_30_days, currency, -amount)
    latest = raw["monthly"][-1] if raw["monthly"] else {}
    # Committed MRR leaves out subscriptions set to cancel at the end of their period (scheduled
    # to end: no longer recurring); older answers without it fall back to plain MRR.
    committed = latest.get("committed_monthly_recurring_revenue")
    if committed is None:
        committed = latest.get("monthly_recurring_revenue")
    mrr = {CURRENCY: checked_amount(committed or 0, "MRR")}
    for period in raw["monthly"]:
        parse_timestamp(period["timestamp"])  # every date checked, not only the used ones
    return ProviderFigures(
        mrr=known_mrr(mrr, raw["subscriptions"]),
        monthly=monthly,
        last_30_days=last_30_days,
        customers=paying_customers(raw, now),
        provider_reported=reported(raw, latest),
    )


REPORTED = (
    "Polar's metrics API: `monthly_recurring_revenue` of the current month (subscriptions set "
    "to cancel at period end included; our MRR leaves them out) and the sum of the daily "
    "`revenue` of the last 30 days (before refunds; ours is net of refunds)."
)


def reported(raw: dict, latest: dict) -> ProviderReported | None:
    """Polar's own MRR and 30-day revenue, from the metrics already fetched."""
    mrr = latest.get("monthly_recurring_revenue")
    revenue = [period["revenue"] for period in raw["daily"] if period.get("revenue") is not None]
    if mrr is None and not revenue:
        return None
    return ProviderReported(
        definition=REPORTED,
        period=LAST_30_DAYS,
        mrr=None if mrr is None else {CURRENCY: checked_amount(mrr, "MRR")},
        revenue={CURRENCY: sum(checked_amount(r, "revenue") for r in revenue)} if revenue else None,
    )


def identify(*, http: ProviderHttp) -> AccountIdentity:
    """The Polar organization the organization token reads: GET /v1/organizations/ (its one
    item's `id`, `name` and `website`)."""
    items = http.get("/v1/organizations/").get("items") or [{}]
    organization = items[0] if isinstance(items[0], dict) else {}
    return account_identity(
        organization.get("id"), name=organization.get("name"), url=organization.get("website")
    )


PROVIDER = Provider(
    name="polar",
    default_api_base="https://api.polar.sh",
    auth_headers=bearer_headers,
    fetch=fetch,
    compute=compute,
    identify=identify,
    title="Polar",
    key_hint="Polar organization access token (read scopes only)",
    sandbox_hosts=("sandbox-api.polar.sh",),
    credential_of=lambda raw: Credential.RESTRICTED_READ,
)
