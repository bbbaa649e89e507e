"""Stripe: MRR by Stripe's definition from subscriptions; money from balance transactions.

API: https://api.stripe.com, `Authorization: Bearer <restricted key>` (read access to
subscriptions, prices, coupons, charges and balance transactions), with the pinned
`Stripe-Version: settings.STRIPE_API_VERSION` so the account's default version never changes what
we read. Lists page with `limit=100` and `starting_after=<last id>` while `has_more` is true.
Every discount shape is read: the embedded `coupon` of versions before 2025-09-30, and
`source.coupon` from then on, expanded or as an id fetched once from `/v1/coupons/{id}`.
"""

from collections.abc import Iterator
from datetime import datetime
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any
from urllib.parse import quote

from django.conf import settings

from startups.models import Credential
from verification.http import ProviderHttp
from verification.money import Money, money_add
from verification.providers.base import (
    PER_MONTH,
    Ledger,
    Provider,
    ProviderFigures,
    Tier,
    bearer_headers,
    checked_amount,
    pages_after_last_id,
    parse_timestamp,
    refuse_test_mode,
    tiered_amount,
)

PAGE = 100
COUNTED_STATUSES = ("active", "past_due")
SALE_TYPES = {"charge", "payment"}
REFUND_TYPES = {"refund", "payment_refund"}
# Expanding the discounts and, on versions from 2025-09-30, their coupons (4 levels: Stripe's max).
# Item-level discounts are expanded too; their coupons (one level deeper than Stripe allows) are
# fetched by id.
SUBSCRIPTION_EXPAND = [
    ("expand[]", "data.discounts"),
    ("expand[]", "data.discounts.source.coupon"),
    ("expand[]", "data.items.data.discounts"),
]


def auth_headers(key: str) -> dict[str, str]:
    return {**bearer_headers(key), "Stripe-Version": settings.STRIPE_API_VERSION}


def list_all(http: ProviderHttp, path: str, params: list[tuple[str, Any]]) -> Iterator[dict]:
    """Every object of a Stripe list, page after page until `has_more` is false."""
    return pages_after_last_id(
        http,
        path,
        [*params, ("limit", PAGE)],
        cursor="starting_after",
        has_more=lambda page: page.get("has_more"),
    )


def _discounts(owner: dict) -> list[dict]:
    """The expanded discounts of a subscription or of one of its items."""
    discounts = list(owner.get("discounts") or [])
    if isinstance(owner.get("discount"), dict):
        discounts.append(owner["discount"])  # the single `discount` of old versions
    return [discount for discount in discounts if isinstance(discount, dict)]


def _coupon_of(discount: dict) -> dict | str | None:
    """The embedded `coupon` (before 2025-09-30), else `source.coupon` (expanded, or its id)."""
    return discount.get("coupon") or (discount.get("source") or {}).get("coupon")


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    subscriptions = []
    params = [("status", "all"), *SUBSCRIPTION_EXPAND]
    for subscription in list_all(http, "/v1/subscriptions", params):
        items = subscription.get("items") or {}
        if items.get("has_more"):
            items["data"] = list(
                list_all(http, "/v1/subscription_items", [("subscription", subscription["id"])])
            )
        subscriptions.append(subscription)
    # Tiers are not in a list's prices (their expansion is deeper than Stripe allows): each tiered
    # price is fetched once. A coupon left as an id is fetched once too.
    prices: dict[str, dict] = {}
    coupons: dict[str, dict] = {}
    for subscription in subscriptions:
        if subscription.get("status") not in COUNTED_STATUSES:
            continue
        for item in (subscription.get("items") or {}).get("data") or []:
            price = item.get("price") or {}
            if price.get("billing_scheme") == "tiered" and not price.get("tiers"):
                if price["id"] not in prices:
                    prices[price["id"]] = http.get(
                        f"/v1/prices/{quote(price['id'], safe='')}", params=[("expand[]", "tiers")]
                    )
        items = (subscription.get("items") or {}).get("data") or []
        for discount in _discounts(subscription) + [d for i in items for d in _discounts(i)]:
            coupon = _coupon_of(discount)
            if isinstance(coupon, str) and coupon not in coupons:
                coupons[coupon] = http.get(f"/v1/coupons/{quote(coupon, safe='')}")
    return {
        "subscriptions": subscriptions,
        "prices": prices,
        "coupons": coupons,
        "charges": list(list_all(http, "/v1/charges", [])),
        "balance_transactions": list(list_all(http, "/v1/balance_transactions", [])),
    }


def _decimal(obj: dict, name: str) -> Decimal | None:
    """`<name>_decimal` (a string, may have fractions of a cent) else `<name>`, else None."""
    value = obj.get(f"{name}_decimal")
    if value is None:
        value = obj.get(name)
    return None if value is None else checked_amount(value, name.replace("_", " "))


def stripe_tiers(price: dict) -> list[Tier]:
    return [
        Tier(
            up_to=None if tier.get("up_to") is None else int(tier["up_to"]),
            unit=_decimal(tier, "unit_amount") or Decimal(0),
            flat=_decimal(tier, "flat_amount") or Decimal(0),
        )
        for tier in price.get("tiers") or []
    ]


def item_amount(price: dict, quantity: int) -> Decimal | None:
    """One item's amount per billing interval, in minor units, as Stripe bills it."""
    if price.get("billing_scheme") == "tiered":
        return tiered_amount(price.get("tiers_mode") or "graduated", stripe_tiers(price), quantity)
    unit = _decimal(price, "unit_amount")
    if unit is None:
        return None
    transform = price.get("transform_quantity")
    if transform and transform.get("divide_by"):
        # Package pricing: billed per started (round up) or completed (round down) package.
        rounding = ROUND_CEILING if transform.get("round") == "up" else ROUND_FLOOR
        packages = (Decimal(quantity) / int(transform["divide_by"])).to_integral_value(rounding)
        return unit * packages
    return unit * quantity


def list_mrr(
    subscription: dict, prices: dict[str, dict], coupons: dict | None = None
) -> tuple[Decimal, Decimal | None, bool]:
    """(monthly amount before subscription-level discounts, the months factor, whether any item
    is metered): licensed prices only, pre-tax, quantity and interval normalised; with `coupons`
    given, each item's own forever discounts applied to it."""
    monthly, per_month, metered = Decimal(0), None, False
    for item in (subscription.get("items") or {}).get("data") or []:
        price = item.get("price") or item.get("plan") or {}
        price = prices.get(price.get("id"), price)
        recurring = price.get("recurring") or {}
        if not recurring:
            continue
        if recurring.get("usage_type") == "metered":
            metered = True
            continue
        amount = item_amount(price, int(item.get("quantity", 1) or 0))
        if amount is None:
            continue
        per_month = PER_MONTH[recurring["interval"]] / int(recurring.get("interval_count") or 1)
        amount *= per_month
        if price.get("tax_behavior") == "inclusive":
            amount /= 1 + _inclusive_tax_percent(item, subscription) / 100
        if coupons is not None:
            amount = _forever_discounts(
                amount, _discounts(item), coupons, per_month, subscription["currency"]
            )
        monthly += amount
    return monthly, per_month, metered


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


def subscription_mrr(
    subscription: dict, *, prices: dict[str, dict] | None = None, coupons: dict | None = None
) -> Decimal:
    """One subscription's monthly amount in minor units, forever coupons applied."""
    coupons = coupons or {}
    monthly, per_month, _ = list_mrr(subscription, prices or {}, coupons)
    return _forever_discounts(
        monthly, _discounts(subscription), coupons, per_month, subscription["currency"]
    )


def _forever_discounts(
    monthly: Decimal,
    discounts: list[dict],
    coupons: dict[str, dict],
    per_month: Decimal | None,
    currency: str,
) -> Decimal:
    """`monthly` with the `forever` coupons among `discounts` applied, never below zero."""
    seen = set()
    for discount in discounts:
        coupon = _coupon_of(discount)
        if isinstance(coupon, str):
            coupon = coupons.get(coupon)
        if not isinstance(coupon, dict) or coupon.get("id") in seen:
            continue
        seen.add(coupon.get("id"))
        if coupon.get("duration") != "forever":
            continue  # `once` and `repeating` coupons end: Stripe's MRR ignores them
        if coupon.get("percent_off") is not None:
            monthly *= 1 - Decimal(str(coupon["percent_off"])) / 100
        elif coupon.get("amount_off") is not None and per_month is not None:
            if (coupon.get("currency") or "").lower() == currency.lower():
                monthly -= Decimal(coupon["amount_off"]) * per_month
    return max(monthly, Decimal(0))


def _is_live(subscription: dict, now: datetime) -> bool:
    """Active or past due, out of trial."""
    if subscription.get("status") not in COUNTED_STATUSES:
        return False
    trial_end = subscription.get("trial_end")
    return not (trial_end and parse_timestamp(trial_end) > now)


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    prices, coupons = raw.get("prices") or {}, raw.get("coupons") or {}
    for obj in [*raw["subscriptions"], *raw.get("charges", [])]:
        if obj.get("livemode") is False:
            refuse_test_mode("Stripe", f"{obj.get('object', 'object')} {obj.get('id')}")
    mrr: Money = {}
    paying = set()
    for subscription in raw["subscriptions"]:
        if not _is_live(subscription, now):
            continue
        # Paused collection bills nothing, so it is neither MRR nor a paying customer.
        if subscription.get("pause_collection"):
            continue
        list_amount, _, metered = list_mrr(subscription, prices)
        if list_amount > 0 or metered:
            paying.add(subscription.get("customer"))  # a $0 free plan is not paying
        # Scheduled to end (cancel_at_period_end, or a cancel_at date): no longer recurring,
        # although the customer still counts until the period ends.
        if subscription.get("cancel_at_period_end") or subscription.get("cancel_at"):
            continue
        amount = subscription_mrr(subscription, prices=prices, coupons=coupons)
        money_add(mrr, subscription["currency"], amount)
    for charge in raw.get("charges", []):
        # A succeeded charge above zero makes its customer a paying one (a later refund does not
        # undo it); guest charges without a customer id do not count.
        if charge.get("status") == "succeeded" and charge.get("amount", 0) > 0:
            if charge.get("customer"):
                paying.add(charge["customer"])
    ledger = Ledger(now=now)
    for transaction in raw["balance_transactions"]:
        if transaction["type"] in SALE_TYPES:
            at = parse_timestamp(transaction["created"])
            ledger.sale(at=at, currency=transaction["currency"], minor=transaction["amount"])
        elif transaction["type"] in REFUND_TYPES:
            at = parse_timestamp(transaction["created"])
            # Refund transactions carry negative amounts.
            ledger.refund(at=at, currency=transaction["currency"], minor=-transaction["amount"])
    return ledger.subscription_figures(mrr=mrr, subscriptions=raw["subscriptions"], paying=paying)


PROVIDER = Provider(
    name="stripe",
    default_api_base="https://api.stripe.com",
    auth_headers=auth_headers,
    fetch=fetch,
    compute=compute,
    title="Stripe",
    key_hint="Stripe restricted key (live mode, read access only)",
    test_key_prefixes=("sk_test_", "rk_test_", "pk_test_"),
    # The key check accepts only rk_live_ restricted keys; anything else would be a secret key.
    credential_of=lambda raw: (
        Credential.RESTRICTED_READ if raw.startswith("rk_") else Credential.FULL_ACCESS
    ),
)
