"""Lemon Squeezy: MRR from subscriptions and their prices; money from orders and renewals.

API: https://api.lemonsqueezy.com, `Authorization: Bearer <API key>`, JSON:API
(`Accept: application/vnd.api+json`). Lists page with `page[number]` and `page[size]=100`
until `meta.page.currentPage` reaches `meta.page.lastPage`.
"""

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from verification.http import ProviderHttp
from verification.money import Money, money_add
from verification.providers.base import (
    LAST_30_DAYS,
    PER_MONTH,
    AccountIdentity,
    Ledger,
    Provider,
    ProviderFigures,
    ProviderReported,
    Tier,
    account_identity,
    bearer_headers,
    checked_amount,
    numbered_pages,
    parse_timestamp,
    refuse_test_mode,
    tiered_amount,
)

PAGE = 100
COUNTED_STATUSES = ("active", "past_due")
PAID_STATUSES = {"paid", "refunded", "partial_refund"}


def auth_headers(key: str) -> dict[str, str]:
    return {**bearer_headers(key), "Accept": "application/vnd.api+json"}


def list_all(http: ProviderHttp, path: str) -> Iterator[dict]:
    """Every resource of a JSON:API list, page after page to the last one."""
    return numbered_pages(
        http,
        path,
        lambda number: {"page[number]": number, "page[size]": PAGE},
        items="data",
        last_page=lambda page: ((page.get("meta") or {}).get("page") or {}).get("lastPage"),
        stop_when_empty=True,
    )


def probe(*, http: ProviderHttp) -> None:
    """At connect time: Lemon Squeezy keys do not say whether they are test-mode keys, the data
    does (`test_mode`), so look at the latest order and subscription."""
    for path in ("/v1/orders", "/v1/subscriptions"):
        page = http.get(path, params={"page[number]": 1, "page[size]": 1})
        for resource in page.get("data") or []:
            if (resource.get("attributes") or {}).get("test_mode"):
                refuse_test_mode("Lemon Squeezy", f"{path} is in test mode")


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


def price_amount(price: dict, quantity: int) -> Decimal | None:
    """What Lemon Squeezy bills per renewal for `quantity` units of a price, in cents.

    standard: unit price x quantity. package: `unit_price` per package of `package_size` units,
    a started package billed whole. graduated / volume: by `tiers` (`last_unit`, `unit_price`,
    `fixed_fee`), as Stripe's tiers.
    """
    scheme = price.get("scheme") or "standard"
    if scheme in ("graduated", "volume"):
        tiers = [
            Tier(
                up_to=None if str(tier.get("last_unit")) == "inf" else int(tier["last_unit"]),
                unit=checked_amount(
                    tier.get("unit_price_decimal") or tier.get("unit_price") or 0, "unit price"
                ),
                flat=checked_amount(tier.get("fixed_fee") or 0, "fixed fee"),
            )
            for tier in price.get("tiers") or []
        ]
        return tiered_amount(scheme, tiers, quantity)
    unit = price.get("unit_price_decimal") or price.get("unit_price")
    if unit is None:
        return None
    unit = checked_amount(unit, "unit price")
    if scheme == "package":
        size = int(price.get("package_size") or 1)
        return unit * -(-quantity // size)
    return unit * quantity


def subscription_mrr(subscription: dict, price: dict) -> Decimal:
    item = subscription.get("first_subscription_item") or {}
    if item.get("is_usage_based") or price.get("usage_aggregation"):
        return Decimal(0)  # metered: no fixed monthly amount
    amount = price_amount(price, int(item.get("quantity") or 1))
    if amount is None:
        return Decimal(0)
    interval = price.get("renewal_interval_unit") or "month"
    per_month = PER_MONTH[interval] / int(price.get("renewal_interval_quantity") or 1)
    return amount * per_month


def _is_paid_plan(subscription: dict, price: dict) -> bool:
    item = subscription.get("first_subscription_item") or {}
    if item.get("is_usage_based") or price.get("usage_aggregation"):
        return True  # metered plans count as paid
    return subscription_mrr(subscription, price) > 0


def refund_date(payment: dict) -> str:
    """`refunded_at` when Lemon Squeezy gives it; otherwise `updated_at` (the refund is the
    last change to a refunded order, so this is the refund's moment or later, never earlier),
    never the order's own `created_at`."""
    return payment.get("refunded_at") or payment.get("updated_at") or payment["created_at"]


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    for record in [*raw["subscriptions"], *raw["orders"], *raw["invoices"]]:
        if record.get("test_mode"):
            refuse_test_mode("Lemon Squeezy", f"record {record.get('id')} has test_mode")
    currency_of_store = {store["id"]: store["currency"] for store in raw["stores"]}
    prices = {price["id"]: price for price in raw["prices"]}
    mrr: Money = {}
    paying = set()
    for subscription in raw["subscriptions"]:
        item = subscription.get("first_subscription_item") or {}
        price = prices.get(str(item.get("price_id")), {})
        status = subscription.get("status")
        ends_at = subscription.get("ends_at")
        # `cancelled` runs to the end of the period: still a paying customer until `ends_at`,
        # but no longer recurring revenue.
        still_paid = status == "cancelled" and ends_at and parse_timestamp(ends_at) > now
        if (status in COUNTED_STATUSES or still_paid) and _is_paid_plan(subscription, price):
            paying.add(subscription.get("customer_id"))
        if status not in COUNTED_STATUSES:
            continue  # on_trial, paused, unpaid, cancelled and expired do not count
        currency = currency_of_store[str(subscription["store_id"])]
        money_add(mrr, currency, subscription_mrr(subscription, price))
    ledger = Ledger(now=now)
    # Orders are first payments; renewals are subscription invoices. The invoice with billing
    # reason `initial` repeats its order, so it is skipped.
    for order in raw["orders"]:
        if order.get("status") in PAID_STATUSES and order.get("total", 0) > 0:
            paying.add(order.get("customer_id"))
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
                at=parse_timestamp(refund_date(payment)),
                currency=payment["currency"],
                minor=refunded,
            )
    figures = ledger.subscription_figures(
        mrr=mrr, subscriptions=raw["subscriptions"], paying=paying
    )
    return replace(figures, provider_reported=reported(raw["stores"]))


REPORTED = (
    "Lemon Squeezy's store `thirty_day_revenue` (US cents, summed over the account's stores): "
    "the revenue of the last 30 days as Lemon Squeezy counts it on its dashboard. It publishes "
    "no MRR."
)


def reported(stores: list[dict]) -> ProviderReported | None:
    """The stores' own 30-day revenue (Lemon Squeezy gives it in US cents whatever the store's
    currency), or None when no store carries it."""
    amounts = [s["thirty_day_revenue"] for s in stores if s.get("thirty_day_revenue") is not None]
    if not amounts:
        return None
    revenue = sum(checked_amount(amount, "store revenue") for amount in amounts)
    return ProviderReported(definition=REPORTED, period=LAST_30_DAYS, revenue={"USD": revenue})


def identify(*, http: ProviderHttp) -> AccountIdentity | None:
    """The Lemon Squeezy store(s) the key reads: GET /v1/stores (every store's id, joined, so
    a key that reads a second store is another account; the first store's name and domain)."""
    stores = [store for store in list_all(http, "/v1/stores") if isinstance(store, dict)]
    if not stores:
        return None  # a key that reads no store has no revenue to verify: nothing to bind
    stores.sort(key=lambda store: str(store.get("id")))
    first = stores[0].get("attributes") or {}
    return account_identity(
        ",".join(str(store.get("id")) for store in stores),
        name=first.get("name"),
        url=first.get("domain") or first.get("url"),
    )


PROVIDER = Provider(
    name="lemonsqueezy",
    default_api_base="https://api.lemonsqueezy.com",
    auth_headers=auth_headers,
    fetch=fetch,
    compute=compute,
    identify=identify,
    title="Lemon Squeezy",
    # Lemon Squeezy cannot issue a read-only key: every API key has full access to the store.
    key_hint="Lemon Squeezy API key (live mode; Lemon Squeezy keys always have full access)",
    read_only_key=False,
    probe=probe,
)
