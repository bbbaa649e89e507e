"""Lemon Squeezy: MRR from subscriptions and their prices; money from orders and renewals.

API: https://api.lemonsqueezy.com, `Authorization: Bearer <API key>`, JSON:API
(`Accept: application/vnd.api+json`). Lists page with `page[number]` and `page[size]=100`
until `meta.page.currentPage` reaches `meta.page.lastPage`.
"""

from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from verification.http import ProviderHttp
from verification.money import Money, money_add
from verification.providers.base import (
    PER_MONTH,
    Ledger,
    Provider,
    ProviderFigures,
    bearer_headers,
    parse_timestamp,
)

PAGE = 100
COUNTED_STATUSES = ("active", "past_due")
PAID_STATUSES = {"paid", "refunded", "partial_refund"}


def auth_headers(key: str) -> dict[str, str]:
    return {**bearer_headers(key), "Accept": "application/vnd.api+json"}


def list_all(http: ProviderHttp, path: str) -> Iterator[dict]:
    """Every resource of a JSON:API list, page after page to the last one."""
    number = 1
    while True:
        page = http.get(path, params={"page[number]": number, "page[size]": PAGE})
        yield from page.get("data") or []
        meta = (page.get("meta") or {}).get("page") or {}
        if number >= int(meta.get("lastPage") or number) or not page.get("data"):
            return
        number += 1


def _attributes(resources: Iterator[dict]) -> list[dict[str, Any]]:
    return [{**resource["attributes"], "id": str(resource["id"])} for resource in resources]


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    return {
        "stores": _attributes(list_all(http, "/v1/stores")),
        "prices": _attributes(list_all(http, "/v1/prices")),
        "subscriptions": _attributes(list_all(http, "/v1/subscriptions")),
        "orders": _attributes(list_all(http, "/v1/orders")),
        "invoices": _attributes(list_all(http, "/v1/subscription-invoices")),
    }


def subscription_mrr(subscription: dict, price: dict) -> Decimal:
    item = subscription.get("first_subscription_item") or {}
    if item.get("is_usage_based") or price.get("usage_aggregation"):
        return Decimal(0)  # metered: no fixed monthly amount
    unit = price.get("unit_price_decimal") or price.get("unit_price")
    if unit is None:
        return Decimal(0)
    interval = price.get("renewal_interval_unit") or "month"
    per_month = PER_MONTH[interval] / int(price.get("renewal_interval_quantity") or 1)
    return Decimal(str(unit)) * int(item.get("quantity") or 1) * per_month


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    currency_of_store = {store["id"]: store["currency"] for store in raw["stores"]}
    prices = {price["id"]: price for price in raw["prices"]}
    mrr: Money = {}
    customers = set()
    for subscription in raw["subscriptions"]:
        if subscription.get("status") not in COUNTED_STATUSES:
            continue  # on_trial, paused, unpaid, cancelled and expired do not count
        item = subscription.get("first_subscription_item") or {}
        price = prices.get(str(item.get("price_id")), {})
        currency = currency_of_store[str(subscription["store_id"])]
        money_add(mrr, currency, subscription_mrr(subscription, price))
        customers.add(subscription.get("customer_id"))
    ledger = Ledger(now=now)
    # Orders are first payments; renewals are subscription invoices. The invoice with billing
    # reason `initial` repeats its order, so it is skipped.
    payments = raw["orders"] + [
        invoice for invoice in raw["invoices"] if invoice.get("billing_reason") != "initial"
    ]
    for payment in payments:
        if payment.get("status") not in PAID_STATUSES:
            continue
        ledger.sale(
            at=parse_timestamp(payment["created_at"]),
            currency=payment["currency"],
            minor=payment["total"],
        )
        refunded = payment.get("refunded_amount")
        if refunded is None and payment.get("refunded"):
            refunded = payment["total"]
        if refunded:
            ledger.refund(
                at=parse_timestamp(payment.get("refunded_at") or payment["created_at"]),
                currency=payment["currency"],
                minor=refunded,
            )
    return ledger.figures(mrr=mrr, customers=len(customers))


PROVIDER = Provider(
    name="lemonsqueezy",
    default_api_base="https://api.lemonsqueezy.com",
    auth_headers=auth_headers,
    fetch=fetch,
    compute=compute,
)
