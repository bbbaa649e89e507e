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
from verification.http import KeyRejected, ProviderError, ProviderHttp
from verification.money import Money, money_add
from verification.providers.base import (
    CURRENT,
    NOT_NEGATIVE,
    PER_MONTH,
    SIGNED,
    AccountIdentity,
    Ledger,
    Provider,
    ProviderFigures,
    ProviderReported,
    account_identity,
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
    addresses: dict[str, dict] = {}
    for subscription in subscriptions:
        discount_id = (subscription.get("discount") or {}).get("id")
        if discount_id and discount_id not in discounts:
            discounts[discount_id] = (
                http.get(f"/discounts/{quote(discount_id, safe='')}").get("data") or {}
            )
        # Prices by country: the customer's country is on the subscription's address, read only
        # when one of its prices has unit_price_overrides (needs `address.read`).
        address_id = subscription.get("address_id")
        if address_id and address_id not in addresses and _has_overrides(subscription):
            addresses[address_id] = _address(http, subscription["customer_id"], address_id)
    return {
        "subscriptions": subscriptions,
        "discounts": discounts,
        "addresses": addresses,
        "transactions": list(list_all(http, "/transactions", {"status": PAID_TRANSACTIONS})),
        # Every action: refunds, and chargebacks with their reversals (credits move no money).
        "adjustments": list(list_all(http, "/adjustments", {})),
        "mrr_metrics": reported_mrr(http, now),
    }


def _address(http: ProviderHttp, customer_id: str, address_id: str) -> dict:
    path = f"/customers/{quote(str(customer_id), safe='')}/addresses/{quote(address_id, safe='')}"
    try:
        return http.get(path).get("data") or {}
    except KeyRejected as exc:
        raise KeyRejected(
            f"{exc}: the API key needs the address.read permission (prices by country are "
            "billed by the customer's address); add it in Paddle"
        ) from None


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


def _has_overrides(subscription: dict) -> bool:
    return subscription.get("status") in COUNTED_STATUSES and any(
        (item.get("price") or {}).get("unit_price_overrides")
        for item in subscription.get("items") or []
    )


def _amount(value: object, field: str, *, rule: str = NOT_NEGATIVE) -> Decimal:
    return checked_amount(value if value is not None else 0, field, rule=rule)


def billed_unit_price(price: dict, country: str | None) -> dict:
    """The unit price the customer is billed: the `unit_price_overrides` entry whose
    `country_codes` holds the customer's country, else the price's own `unit_price`."""
    for override in price.get("unit_price_overrides") or []:
        if country and country in (override.get("country_codes") or []):
            return override.get("unit_price") or {}
    return price.get("unit_price") or {}


def list_mrr(subscription: dict, country: str | None = None) -> tuple[Money, int]:
    """Monthly amount before discounts per billed currency (active recurring items, the unit
    price the customer's country is billed x quantity, interval normalised), and the total
    quantity."""
    monthly: Money = {}
    seats = 0
    for item in subscription.get("items") or []:
        if item.get("status", "active") != "active" or item.get("recurring") is False:
            continue
        price = item.get("price") or {}
        cycle = price.get("billing_cycle") or subscription.get("billing_cycle") or {}
        if not cycle:
            continue  # a one-time price on the subscription
        quantity = int(item.get("quantity") or 1)
        unit_price = billed_unit_price(price, country)
        unit = _amount(unit_price.get("amount"), f"price {price.get('id')} unit_price.amount")
        currency = unit_price.get("currency_code") or subscription["currency_code"]
        per_month = PER_MONTH[cycle["interval"]] / int(cycle.get("frequency") or 1)
        money_add(monthly, currency, unit * quantity * per_month)
        seats += quantity
    return monthly, seats


def subscription_mrr(
    subscription: dict, discounts: dict[str, dict], now: datetime, country: str | None = None
) -> Money:
    """A subscription's monthly amount per billed currency, with a discount that recurs for
    good (a flat one in its own currency)."""
    monthly, seats = list_mrr(subscription, country)
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
        flat_currency = discount.get("currency_code") or subscription["currency_code"]
        for currency in monthly:
            if kind == "percentage":
                monthly[currency] *= 1 - amount / 100
            elif kind in ("flat", "flat_per_seat") and currency == flat_currency:
                off = amount * (seats if kind == "flat_per_seat" else 1) * per_month
                monthly[currency] -= off
    return {currency: max(amount, Decimal(0)) for currency, amount in monthly.items()}


def net_of_tax(totals: dict, field: str) -> Decimal:
    """Paddle's `total` minus its `tax`: the amount after discounts, without the tax Paddle
    collects as merchant of record, before Paddle's fee (an adjustment's totals)."""
    total = _amount(totals.get("total"), f"{field}.total")
    return max(Decimal(0), total - _amount(totals.get("tax"), f"{field}.tax"))


def transaction_paid(transaction: dict) -> Decimal:
    """What the customer paid on a transaction, net of tax (minor units; negative only if money
    went back to the customer). `grand_total` is what was due after credits (`total - credit +
    credit_to_balance`; computed so when absent); its tax share is the transaction's, so
    paid = grand_total x (total - tax) / total. A negative total (a prorated downgrade) goes to
    the customer's credit balance (`credit_to_balance`): grand_total 0, nothing paid; a renewal
    paid from that credit has `credit` > 0 and pays only its grand_total."""
    field = f"transaction {transaction.get('id')} details.totals"
    totals = (transaction.get("details") or {}).get("totals") or {}
    total = _amount(totals.get("total"), f"{field}.total", rule=SIGNED)
    tax = _amount(totals.get("tax"), f"{field}.tax", rule=SIGNED)
    credit = _amount(totals.get("credit"), f"{field}.credit")
    to_balance = _amount(totals.get("credit_to_balance"), f"{field}.credit_to_balance")
    grand_total = totals.get("grand_total")
    if grand_total is None:
        due = total - credit + to_balance
    else:
        due = _amount(grand_total, f"{field}.grand_total", rule=SIGNED)
    if total == 0:
        return due
    return due * (total - tax) / total


def _chargebacks(adjustments: list[dict]) -> dict[str, tuple[Decimal, dict]]:
    """Per transaction: the amount charged back for good (chargebacks minus their reversals, net
    of tax) and the last chargeback (its date and currency)."""
    lost: dict[str, tuple[Decimal, dict]] = {}
    for adjustment in adjustments:
        action = adjustment.get("action")
        if action not in ("chargeback", "chargeback_reverse"):
            continue  # chargeback_warning: an early warning, no money moved
        field = f"adjustment {adjustment.get('id')} totals"
        amount = net_of_tax(adjustment.get("totals") or {}, field)
        key = str(adjustment.get("transaction_id"))
        so_far, last = lost.get(key, (Decimal(0), adjustment))
        if action == "chargeback":
            lost[key] = (so_far + amount, adjustment)
        else:
            lost[key] = (so_far - amount, last)
    return lost


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    mrr: Money = {}
    paying = set()
    addresses = raw.get("addresses") or {}
    for subscription in raw["subscriptions"]:
        if subscription.get("status") not in COUNTED_STATUSES:
            continue  # trialing, paused and canceled do not count
        country = (addresses.get(subscription.get("address_id") or "") or {}).get("country_code")
        listed, _ = list_mrr(subscription, country)
        if any(amount > 0 for amount in listed.values()):
            paying.add(subscription.get("customer_id"))
        # A scheduled cancellation or pause: no longer recurring (the customer still counts).
        if (subscription.get("scheduled_change") or {}).get("action") in ("cancel", "pause"):
            continue
        amounts = subscription_mrr(subscription, raw.get("discounts") or {}, now, country)
        for currency, amount in amounts.items():
            money_add(mrr, currency, amount)
    ledger = Ledger(now=now)
    for transaction in raw["transactions"]:
        paid = transaction_paid(transaction)
        at = parse_timestamp(transaction.get("billed_at") or transaction["created_at"])
        currency = transaction["currency_code"]
        if paid >= 0:
            ledger.sale(at=at, currency=currency, minor=paid)
        else:  # money paid back to the customer on the transaction itself
            ledger.refund(at=at, currency=currency, minor=-paid)
        if paid > 0 and transaction.get("customer_id"):
            paying.add(transaction["customer_id"])
    for adjustment in raw["adjustments"]:
        if adjustment.get("action") != "refund" or adjustment.get("status") != "approved":
            continue  # pending, rejected and reversed refunds moved no money
        field = f"adjustment {adjustment.get('id')} totals"
        ledger.refund(
            at=parse_timestamp(adjustment["created_at"]),
            currency=adjustment["currency_code"],
            minor=net_of_tax(adjustment.get("totals") or {}, field),
        )
    for amount, chargeback in _chargebacks(raw["adjustments"]).values():
        if amount > 0:  # a reversed (won) chargeback nets to zero
            ledger.refund(
                at=parse_timestamp(chargeback["created_at"]),
                currency=chargeback["currency_code"],
                minor=amount,
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


def identify(*, http: ProviderHttp) -> AccountIdentity:
    """The Paddle seller the key reads: GET /account (`data.id` slr_..., `display_name`, else
    `legal_name`, and `website`; permission account.read)."""
    seller = http.get("/account").get("data") or {}
    return account_identity(
        seller.get("id"),
        name=seller.get("display_name") or seller.get("legal_name"),
        url=seller.get("website"),
    )


PROVIDER = Provider(
    name="paddle",
    default_api_base="https://api.paddle.com",
    auth_headers=bearer_headers,
    fetch=fetch,
    compute=compute,
    identify=identify,
    title="Paddle",
    key_hint="Paddle API key (live, read permissions only)",
    test_key_prefixes=("pdl_sdbx_",),
    sandbox_hosts=("sandbox-api.paddle.com",),
    credential_of=lambda raw: Credential.RESTRICTED_READ,
)
