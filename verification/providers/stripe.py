"""Stripe: MRR by Stripe's definition from subscriptions; money from balance transactions.

API: https://api.stripe.com, `Authorization: Bearer <restricted key>` (read access to
subscriptions, prices, coupons, charges and balance transactions), with the pinned
`Stripe-Version: settings.STRIPE_API_VERSION` so the account's default version never changes what
we read. Lists page with `limit=100` and `starting_after=<last id>` while `has_more` is true.
Every discount shape is read: the embedded `coupon` of versions before 2025-09-30, and
`source.coupon` from then on, expanded or as an id fetched once from `/v1/coupons/{id}`.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import Any
from urllib.parse import quote

from django.conf import settings

from startups.models import Credential
from verification.http import KeyRejected, NotFound, ProviderHttp
from verification.money import Money, money_add
from verification.providers.base import (
    PER_MONTH,
    SIGNED,
    AccountIdentity,
    Ledger,
    Provider,
    ProviderFigures,
    Tier,
    account_identity,
    bearer_headers,
    checked_amount,
    pages_after_last_id,
    parse_timestamp,
    refuse_test_mode,
    refused,
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
# A coupon's `applies_to` (the products it is restricted to) and `currency_options` (its
# amount_off in other currencies) are returned only when expanded: every forever coupon is fetched
# once with both.
COUPON_EXPAND = [("expand[]", "applies_to"), ("expand[]", "currency_options")]


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
            if isinstance(coupon, dict) and coupon.get("duration") != "forever":
                continue  # ends, so it never reduces MRR: no need for its restrictions
            coupon_id = coupon.get("id") if isinstance(coupon, dict) else coupon
            if isinstance(coupon_id, str) and coupon_id not in coupons:
                coupons[coupon_id] = _coupon_fetch(http, coupon_id, embedded=coupon)
    return {
        "subscriptions": subscriptions,
        "prices": prices,
        "coupons": coupons,
        "charges": list(list_all(http, "/v1/charges", [])),
        "balance_transactions": list(list_all(http, "/v1/balance_transactions", [])),
        "disputes": _disputes(http),
    }


def _disputes(http: ProviderHttp) -> list[dict]:
    """Every dispute; a key made before methodology v2 may lack read access to them."""
    try:
        return list(list_all(http, "/v1/disputes", []))
    except KeyRejected as exc:
        raise KeyRejected(
            f"{exc}: the restricted key needs read access to Disputes (lost disputes are money "
            "returned); add it in the Stripe Dashboard"
        ) from None


def _coupon_fetch(http: ProviderHttp, coupon_id: str, *, embedded: dict | str) -> dict:
    """The coupon with its product restrictions and per-currency amounts (returned only when
    expanded). A deleted coupon (404) still applies to the subscriptions that have it: it is
    read as the discount embeds it (no restrictions known), or not at all if only its id is."""
    try:
        return http.get(f"/v1/coupons/{quote(coupon_id, safe='')}", params=COUPON_EXPAND)
    except NotFound:
        return embedded if isinstance(embedded, dict) else {"id": coupon_id}


def _decimal(obj: dict, name: str) -> Decimal | None:
    """`<name>_decimal` (a string, may have fractions of a cent) else `<name>`, else None."""
    value = obj.get(f"{name}_decimal")
    if value is None:
        value = obj.get(name)
    field = f"{obj.get('object') or 'price'} {obj.get('id') or ''} {name}".replace("  ", " ")
    return None if value is None else checked_amount(value, field)


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


@dataclass
class Line:
    """One licensed item's monthly amount (minor units, pre-tax) and the product it sells."""

    product: str | None
    monthly: Decimal


def _product_id(price: dict) -> str | None:
    product = price.get("product")
    return product.get("id") if isinstance(product, dict) else product


def item_lines(
    subscription: dict, prices: dict[str, dict], coupons: dict | None = None
) -> tuple[list[Line], Decimal | None, bool]:
    """(each licensed item's monthly amount, the months factor, whether any item is metered):
    pre-tax, quantity and interval normalised; with `coupons` given, each item's own forever
    discounts applied to it."""
    lines, per_month, metered = [], None, False
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
        line = Line(product=_product_id(price), monthly=amount)
        if coupons is not None:
            _forever_discounts([line], _discounts(item), coupons, per_month, subscription)
        lines.append(line)
    return lines, per_month, metered


def list_mrr(subscription: dict, prices: dict[str, dict]) -> tuple[Decimal, bool]:
    """(monthly list amount before any discount, whether any item is metered)."""
    lines, _, metered = item_lines(subscription, prices)
    return sum((line.monthly for line in lines), Decimal(0)), metered


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
    """One subscription's monthly amount in minor units, forever coupons applied: each item's
    own, then the subscription's (to the items each coupon applies to)."""
    coupons = coupons or {}
    lines, per_month, _ = item_lines(subscription, prices or {}, coupons)
    _forever_discounts(lines, _discounts(subscription), coupons, per_month, subscription)
    return sum((line.monthly for line in lines), Decimal(0))


def coupon_amount_off(coupon: dict, currency: str) -> Decimal | None:
    """What an `amount_off` coupon takes off in `currency` (minor units): its `amount_off` in its
    own `currency`, else its `currency_options[currency].amount_off`; None where Stripe would
    not apply it (no amount in that currency)."""
    if (coupon.get("currency") or "").lower() == currency.lower():
        return checked_amount(coupon["amount_off"], "coupon.amount_off")
    option = (coupon.get("currency_options") or {}).get(currency.lower()) or {}
    if option.get("amount_off") is None:
        return None
    return checked_amount(option["amount_off"], f"coupon.currency_options.{currency}.amount_off")


def _forever_discounts(
    lines: list[Line],
    discounts: list[dict],
    coupons: dict[str, dict],
    per_month: Decimal | None,
    subscription: dict,
) -> None:
    """Apply the `forever` coupons among `discounts` to `lines`, in place, never below zero. A
    coupon restricted to products (`applies_to.products`) reduces only their lines."""
    seen = set()
    for discount in discounts:
        coupon = _coupon_of(discount)
        coupon_id = coupon.get("id") if isinstance(coupon, dict) else coupon
        # The coupon as fetched with its expansions, else as embedded.
        coupon = coupons.get(coupon_id) or coupon
        if not isinstance(coupon, dict) or coupon_id in seen:
            continue
        seen.add(coupon_id)
        if coupon.get("duration") != "forever":
            continue  # `once` and `repeating` coupons end: Stripe's MRR ignores them
        products = (coupon.get("applies_to") or {}).get("products")
        eligible = [line for line in lines if not products or line.product in products]
        if coupon.get("percent_off") is not None:
            for line in eligible:
                line.monthly *= 1 - Decimal(str(coupon["percent_off"])) / 100
        elif coupon.get("amount_off") is not None and per_month is not None:
            off = coupon_amount_off(coupon, subscription["currency"])
            left = Decimal(0) if off is None else off * per_month
            for line in eligible:  # the amount off spread over the lines it applies to
                taken = min(left, line.monthly)
                line.monthly -= taken
                left -= taken


def _is_live(subscription: dict, now: datetime) -> bool:
    """Active or past due, out of trial."""
    if subscription.get("status") not in COUNTED_STATUSES:
        return False
    trial_end = subscription.get("trial_end")
    return not (trial_end and parse_timestamp(trial_end) > now)


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    prices, coupons = raw.get("prices") or {}, raw.get("coupons") or {}
    for obj in [*raw["subscriptions"], *raw.get("charges", []), *raw.get("disputes", [])]:
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
        list_amount, metered = list_mrr(subscription, prices)
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
        kind, amount = transaction["type"], transaction.get("amount")
        field = f"balance_transaction {transaction.get('id')} amount (type {kind})"
        if kind in SALE_TYPES:
            at = parse_timestamp(transaction["created"])
            ledger.sale(at=at, currency=transaction["currency"], minor=amount, field=field)
        elif kind in REFUND_TYPES:
            # Refund transactions carry negative amounts (a positive one breaks Stripe's shape).
            at = parse_timestamp(transaction["created"])
            signed = checked_amount(amount, field, rule=SIGNED)
            if signed > 0:
                raise refused(field, amount, REFUND_RULE)
            ledger.refund(at=at, currency=transaction["currency"], minor=-signed, field=field)
    for dispute in raw.get("disputes", []):
        _dispute_clawback(ledger, dispute)
    return ledger.subscription_figures(mrr=mrr, subscriptions=raw["subscriptions"], paying=paying)


REFUND_RULE = "a refund balance transaction's amount is zero or negative"


def _dispute_clawback(ledger: Ledger, dispute: dict) -> None:
    """A lost dispute is money returned for good: the disputed amount Stripe withdrew from the
    balance (the sum of the dispute's `balance_transactions` amounts; the dispute fee is their
    `fee` and stays out), a refund in the month it was withdrawn. A won dispute's withdrawal and
    reinstatement sum to zero, and an open one is not lost: neither counts."""
    if dispute.get("status") != "lost":
        return
    moved = [bt for bt in dispute.get("balance_transactions") or [] if isinstance(bt, dict)]
    if not moved:  # no withdrawal listed: the disputed amount, at the dispute's date
        moved = [{**dispute, "amount": -checked_amount(dispute["amount"], "dispute.amount")}]
    by_currency: Money = {}
    for transaction in moved:
        field = f"dispute {dispute.get('id')} balance_transactions amount"
        amount = checked_amount(transaction["amount"], field, rule=SIGNED)
        money_add(by_currency, transaction["currency"], amount)
    at = min(parse_timestamp(transaction["created"]) for transaction in moved)
    for currency, amount in by_currency.items():
        if amount < 0:
            field = f"dispute {dispute.get('id')} (lost)"
            ledger.refund(at=at, currency=currency, minor=-amount, field=field)


def identify(*, http: ProviderHttp) -> AccountIdentity:
    """The Stripe account the key reads: GET /v1/account (`id` acct_..., the business profile's
    name and URL, else the Dashboard's display name)."""
    account = http.get("/v1/account")
    profile = account.get("business_profile") or {}
    dashboard = (account.get("settings") or {}).get("dashboard") or {}
    return account_identity(
        account.get("id"),
        name=profile.get("name") or dashboard.get("display_name"),
        url=profile.get("url"),
    )


PROVIDER = Provider(
    name="stripe",
    default_api_base="https://api.stripe.com",
    auth_headers=auth_headers,
    fetch=fetch,
    compute=compute,
    identify=identify,
    title="Stripe",
    key_hint="Stripe restricted key (live mode, read access only)",
    test_key_prefixes=("sk_test_", "rk_test_", "pk_test_"),
    # The key check accepts only rk_live_ restricted keys; anything else would be a secret key.
    credential_of=lambda raw: (
        Credential.RESTRICTED_READ if raw.startswith("rk_") else Credential.FULL_ACCESS
    ),
)
