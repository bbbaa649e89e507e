"""Stripe: MRR by Stripe's definition from subscriptions; money from balance transactions.

API: https://api.stripe.com, `Authorization: Bearer <restricted key>` (read access to
subscriptions, balance transactions). Lists page with `limit=100` and `starting_after=<last id>`
while `has_more` is true.
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
SALE_TYPES = {"charge", "payment"}
REFUND_TYPES = {"refund", "payment_refund"}


def list_all(http: ProviderHttp, path: str, params: dict[str, Any]) -> Iterator[dict]:
    """Every object of a Stripe list, page after page until `has_more` is false."""
    cursor = None
    while True:
        query = {**params, "limit": PAGE}
        if cursor:
            query["starting_after"] = cursor
        page = http.get(path, params=query)
        data = page.get("data") or []
        yield from data
        if not page.get("has_more") or not data:
            return
        cursor = data[-1]["id"]


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    subscriptions = []
    for status in COUNTED_STATUSES:
        params = {"status": status, "expand[]": "data.discounts"}
        for subscription in list_all(http, "/v1/subscriptions", params):
            items = subscription.get("items") or {}
            if items.get("has_more"):
                items["data"] = list(
                    list_all(http, "/v1/subscription_items", {"subscription": subscription["id"]})
                )
            subscriptions.append(subscription)
    transactions = list(list_all(http, "/v1/balance_transactions", {}))
    return {"subscriptions": subscriptions, "balance_transactions": transactions}


def _coupons(subscription: dict) -> list[dict]:
    """Expanded coupons on the subscription (old `discount` and newer `discounts` shapes)."""
    discounts = list(subscription.get("discounts") or [])
    if subscription.get("discount"):
        discounts.append(subscription["discount"])
    coupons, seen = [], set()
    for discount in discounts:
        if not isinstance(discount, dict):
            continue  # an unexpanded id: nothing we can read
        coupon = discount.get("coupon") or (discount.get("source") or {}).get("coupon")
        if isinstance(coupon, dict) and coupon.get("id") not in seen:
            seen.add(coupon.get("id"))
            coupons.append(coupon)
    return coupons


def _inclusive_tax_percent(item: dict, subscription: dict) -> Decimal:
    """The inclusive tax rate inside a tax-inclusive price (item rates, else the default ones).
    Exclusive rates are added on top of the price by Stripe, so they never enter MRR."""
    rates = item.get("tax_rates") or subscription.get("default_tax_rates") or []
    return sum(
        (
            Decimal(str(rate.get("percentage") or 0))
            for rate in rates
            if isinstance(rate, dict) and rate.get("inclusive")
        ),
        Decimal(0),
    )


def subscription_mrr(subscription: dict) -> Decimal:
    """One subscription's monthly amount in minor units: licensed prices only, pre-tax,
    quantity and interval normalised, forever coupons applied."""
    monthly = Decimal(0)
    per_month = None
    for item in (subscription.get("items") or {}).get("data") or []:
        price = item.get("price") or item.get("plan") or {}
        recurring = price.get("recurring") or {}
        if not recurring or recurring.get("usage_type") == "metered":
            continue
        unit = price.get("unit_amount_decimal")
        if unit is None:
            unit = price.get("unit_amount")
        if unit is None:
            continue  # tiered prices have no unit amount; see docs/methodology.md
        per_month = PER_MONTH[recurring["interval"]] / int(recurring.get("interval_count") or 1)
        amount = Decimal(str(unit)) * int(item.get("quantity", 1) or 0) * per_month
        if price.get("tax_behavior") == "inclusive":
            amount /= 1 + _inclusive_tax_percent(item, subscription) / 100
        monthly += amount
    for coupon in _coupons(subscription):
        if coupon.get("duration") != "forever":
            continue  # `once` and `repeating` coupons end: Stripe's MRR ignores them
        if coupon.get("percent_off") is not None:
            monthly *= 1 - Decimal(str(coupon["percent_off"])) / 100
        elif coupon.get("amount_off") is not None and per_month is not None:
            if (coupon.get("currency") or "").lower() == subscription["currency"].lower():
                monthly -= Decimal(coupon["amount_off"]) * per_month
    return max(monthly, Decimal(0))


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    mrr: Money = {}
    customers = set()
    for subscription in raw["subscriptions"]:
        if subscription.get("status") not in COUNTED_STATUSES:
            continue
        trial_end = subscription.get("trial_end")
        if trial_end and parse_timestamp(trial_end) > now:
            continue
        money_add(mrr, subscription["currency"], subscription_mrr(subscription))
        customers.add(subscription.get("customer"))
    ledger = Ledger(now=now)
    for transaction in raw["balance_transactions"]:
        at = parse_timestamp(transaction["created"])
        if transaction["type"] in SALE_TYPES:
            ledger.sale(at=at, currency=transaction["currency"], minor=transaction["amount"])
        elif transaction["type"] in REFUND_TYPES:
            # Refund transactions carry negative amounts.
            ledger.refund(at=at, currency=transaction["currency"], minor=-transaction["amount"])
    return ledger.figures(mrr=mrr, customers=len(customers))


PROVIDER = Provider(
    name="stripe",
    default_api_base="https://api.stripe.com",
    auth_headers=bearer_headers,
    fetch=fetch,
    compute=compute,
)
