"""Paddle Billing: MRR from subscriptions; money from transactions and refund adjustments.

API: https://api.paddle.com, `Authorization: Bearer <API key>`; the key needs only the read
permissions `subscription.read`, `transaction.read`, `adjustment.read` and `discount.read`.
Lists answer `{data, meta: {pagination: {next, has_more}}}` and page with `after=<last id>`
(`per_page` up to each list's maximum). Amounts are strings in the currency's lowest
denomination (cents). Paddle is the merchant of record: its prices and totals carry tax it
collects and remits, so **gross here is net of tax**: a transaction's `details.totals.total`
minus `details.totals.tax` (what the customer paid for the product after discounts, before
Paddle's fee). Sandbox keys (`pdl_sdbx_`) and the sandbox host are refused.
"""

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import quote

from startups.models import Credential
from verification.http import ProviderError, ProviderHttp
from verification.money import Money, money_add
from verification.providers.base import (
    CURRENT,
    PER_MONTH,
    Ledger,
    Provider,
    ProviderFigures,
    ProviderReported,
    bearer_headers,
    checked_amount,
    pages_after_last_id,
    parse_timestamp,
)

# Paddle's per_page maximums differ per list.
PER_PAGE = {"/subscriptions": 200, "/transactions": 30, "/adjustments": 50}
COUNTED_STATUSES = ("active", "past_due")
# `paid`: payment captured, still being processed; `completed`: fully processed.
PAID_TRANSACTIONS = "completed,paid"


def list_all(http: ProviderHttp, path: str, params: dict[str, Any]) -> Iterator[dict]:
    """Every entity of a Paddle list, following `after=<last id>` while `has_more` is true."""
    return pages_after_last_id(
        http,
        path,
        [*params.items(), ("per_page", PER_PAGE[path])],
        cursor="after",
        has_more=lambda page: ((page.get("meta") or {}).get("pagination") or {}).get("has_more"),
    )


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    subscriptions = list(list_all(http, "/subscriptions", {}))
    discounts: dict[str, dict] = {}
    for subscription in subscriptions:
        discount_id = (subscription.get("discount") or {}).get("id")
        if discount_id and discount_id not in discounts:
            discounts[discount_id] = (
                http.get(f"/discounts/{quote(discount_id, safe='')}").get("data") or {}
            )
    return {
        "subscriptions": subscriptions,
        "discounts": discounts,
        "transactions": list(list_all(http, "/transactions", {"status": PAID_TRANSACTIONS})),
        "adjustments": list(list_all(http, "/adjustments", {"action": "refund"})),
        "mrr_metrics": reported_mrr(http, now),
    }


def reported_mrr(http: ProviderHttp, now: datetime) -> dict | None:
    """Paddle's own MRR timeseries for the last week (`data` of GET
    /metrics/monthly-recurring-revenue), or None: it needs the optional `metrics.read`
    permission, and without it (or without metrics) our figures stand alone."""
    today = now.date()
    params = {"from": (today - timedelta(days=7)).isoformat(), "to": today.isoformat()}
    try:
        answer = http.get("/metrics/monthly-recurring-revenue", params=params)
    except ProviderError:
        return None
    return answer.get("data") if isinstance(answer, dict) else None


def _amount(value: object, what: str) -> Decimal:
    return checked_amount(value if value is not None else 0, what)


def list_mrr(subscription: dict) -> tuple[Decimal, int]:
    """Monthly amount before discounts (active recurring items, unit price x quantity, interval
    normalised) and the total quantity."""
    monthly, seats = Decimal(0), 0
    for item in subscription.get("items") or []:
        if item.get("status", "active") != "active" or item.get("recurring") is False:
            continue
        price = item.get("price") or {}
        cycle = price.get("billing_cycle") or subscription.get("billing_cycle") or {}
        if not cycle:
            continue  # a one-time price on the subscription
        quantity = int(item.get("quantity") or 1)
        unit = _amount((price.get("unit_price") or {}).get("amount"), "unit price")
        per_month = PER_MONTH[cycle["interval"]] / int(cycle.get("frequency") or 1)
        monthly += unit * quantity * per_month
        seats += quantity
    return monthly, seats


def subscription_mrr(subscription: dict, discounts: dict[str, dict], now: datetime) -> Decimal:
    """A subscription's monthly amount in minor units, with a discount that recurs for good."""
    monthly, seats = list_mrr(subscription)
    applied = subscription.get("discount") or {}
    discount = discounts.get(applied.get("id") or "", {})
    forever = (
        discount
        and applied.get("ends_at") is None
        and discount.get("recur")
        and discount.get("maximum_recurring_intervals") is None
    )
    if forever:
        cycle = subscription.get("billing_cycle") or {"interval": "month", "frequency": 1}
        per_month = PER_MONTH[cycle["interval"]] / int(cycle.get("frequency") or 1)
        kind = discount.get("type")
        amount = Decimal(str(discount.get("amount") or 0))
        if kind == "percentage":
            monthly *= 1 - amount / 100
        elif kind == "flat":
            monthly -= amount * per_month
        elif kind == "flat_per_seat":
            monthly -= amount * seats * per_month
    return max(monthly, Decimal(0))


def net_of_tax(totals: dict, what: str) -> Decimal:
    """Paddle's `total` minus its `tax`: the amount after discounts, without the tax Paddle
    collects as merchant of record, before Paddle's fee."""
    return max(Decimal(0), _amount(totals.get("total"), what) - _amount(totals.get("tax"), what))


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    mrr: Money = {}
    paying = set()
    for subscription in raw["subscriptions"]:
        if subscription.get("status") not in COUNTED_STATUSES:
            continue  # trialing, paused and canceled do not count
        listed, _ = list_mrr(subscription)
        if listed > 0:
            paying.add(subscription.get("customer_id"))
        # A scheduled cancellation or pause: no longer recurring (the customer still counts).
        if (subscription.get("scheduled_change") or {}).get("action") in ("cancel", "pause"):
            continue
        money_add(
            mrr,
            subscription["currency_code"],
            subscription_mrr(subscription, raw.get("discounts") or {}, now),
        )
    ledger = Ledger(now=now)
    for transaction in raw["transactions"]:
        totals = (transaction.get("details") or {}).get("totals") or {}
        gross = net_of_tax(totals, "transaction total")
        at = parse_timestamp(transaction.get("billed_at") or transaction["created_at"])
        ledger.sale(at=at, currency=transaction["currency_code"], minor=gross)
        if gross > 0 and transaction.get("customer_id"):
            paying.add(transaction["customer_id"])
    for adjustment in raw["adjustments"]:
        if adjustment.get("action") != "refund" or adjustment.get("status") != "approved":
            continue  # pending, rejected and reversed refunds moved no money
        refunded = net_of_tax(adjustment.get("totals") or {}, "refund total")
        ledger.refund(
            at=parse_timestamp(adjustment["created_at"]),
            currency=adjustment["currency_code"],
            minor=refunded,
        )
    figures = ledger.subscription_figures(
        mrr=mrr, subscriptions=raw["subscriptions"], paying=paying
    )
    return replace(figures, provider_reported=reported(raw.get("mrr_metrics")))


REPORTED = (
    "Paddle's metrics API (`/metrics/monthly-recurring-revenue`): its MRR on the latest day "
    "it reports, in the primary balance currency converted at each transaction's rate; new "
    "subscriptions, upgrades, downgrades and churn, no one-time payments, before Paddle's fees."
)


def reported(metrics: dict | None) -> ProviderReported | None:
    """The latest datapoint of Paddle's MRR timeseries (a string in the currency's smallest
    unit), or None without one."""
    series = (metrics or {}).get("timeseries") or []
    currency = (metrics or {}).get("currency_code")
    if not series or not currency or series[-1].get("amount") is None:
        return None
    amount = checked_amount(series[-1]["amount"], "Paddle MRR")
    return ProviderReported(definition=REPORTED, period=CURRENT, mrr={currency: amount})


PROVIDER = Provider(
    name="paddle",
    default_api_base="https://api.paddle.com",
    auth_headers=bearer_headers,
    fetch=fetch,
    compute=compute,
    title="Paddle",
    key_hint="Paddle API key (live, read permissions only)",
    test_key_prefixes=("pdl_sdbx_",),
    sandbox_hosts=("sandbox-api.paddle.com",),
    credential_of=lambda raw: Credential.RESTRICTED_READ,
)
