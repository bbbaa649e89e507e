"""Dodo Payments (merchant of record): MRR from subscriptions; money from payments, refunds and
lost disputes.

API: https://live.dodopayments.com, `Authorization: Bearer <API key>`. Lists (`/payments`,
`/subscriptions`, `/refunds`, `/disputes`) answer `{"items": [...]}` and page with
`page_number` (from 0) and `page_size` (up to 100); a page shorter than `page_size` is the last.
Amounts are integers in the currency's smallest unit (cents, yen, fils) with their `currency`;
a dispute's `amount` is the same, as a string. Test mode lives on another host
(test.dodopayments.com): it is refused, test data never verifies.
"""

from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from verification.http import Pages, ProviderError, ProviderHttp
from verification.money import Money, money_add
from verification.providers.base import (
    PER_MONTH,
    Ledger,
    Provider,
    ProviderFigures,
    bearer_headers,
    checked_amount,
    parse_timestamp,
)

TITLE = "Dodo Payments"
PAGE_SIZE = 100
LISTS = ("/payments", "/subscriptions", "/refunds", "/disputes")
# Subscriptions that bill: `on_hold` is a failed renewal being retried (as Stripe's past_due).
BILLING = ("active", "on_hold")
# Disputes the merchant lost or accepted: the money went back to the customer.
LOST_DISPUTES = ("dispute_lost", "dispute_accepted")


def list_all(http: ProviderHttp, path: str) -> Iterator[dict]:
    """Every item of a Dodo list: pages 0, 1, 2, ... until one holds fewer than PAGE_SIZE."""
    number, pages = 0, Pages(http, path)
    while True:
        page = http.get(path, params={"page_number": number, "page_size": PAGE_SIZE})
        items = page.get("items") if isinstance(page, dict) else None
        if not isinstance(items, list):
            raise ProviderError(f"{TITLE} answered GET {path} without an `items` list")
        yield from items
        if len(items) < PAGE_SIZE:
            return
        number += 1
        pages.advance(number)


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    return {path.strip("/"): list(list_all(http, path)) for path in LISTS}


def field(record: Any, name: str, what: str) -> Any:
    """`record[name]`, or a ProviderError naming the missing field."""
    value = record.get(name) if isinstance(record, dict) else None
    if value is None:
        raise ProviderError(f"{TITLE} sent a {what} without `{name}`; nothing was written")
    return value


def customer_id(record: dict) -> str | None:
    customer = record.get("customer")
    return customer.get("customer_id") if isinstance(customer, dict) else None


def subscription_mrr(subscription: dict) -> Decimal:
    """`recurring_pre_tax_amount` (each renewal, all units) normalised to one month by
    `payment_frequency_interval` and `payment_frequency_count`."""
    amount = checked_amount(
        field(subscription, "recurring_pre_tax_amount", "subscription"), "subscription amount"
    )
    interval = str(field(subscription, "payment_frequency_interval", "subscription")).lower()
    if interval not in PER_MONTH:
        raise ProviderError(
            f"{TITLE} sent a subscription with an unknown payment_frequency_interval "
            f"{interval[:20]!r}; nothing was written"
        )
    count = int(subscription.get("payment_frequency_count") or 1)
    return amount * PER_MONTH[interval] / max(count, 1)


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    mrr: Money = {}
    paying = set()
    for subscription in raw["subscriptions"]:
        if field(subscription, "status", "subscription") not in BILLING:
            continue  # pending, cancelled, failed and expired do not bill
        monthly = subscription_mrr(subscription)
        if monthly > 0:
            paying.add(customer_id(subscription))
        if subscription.get("cancel_at_next_billing_date") or subscription.get("on_demand"):
            continue  # ends at its next billing date, or bills only on demand: not recurring
        money_add(mrr, field(subscription, "currency", "subscription"), monthly)
    ledger = Ledger(now=now)
    paid: dict[str, tuple[str, Decimal]] = {}
    for payment in raw["payments"]:
        if payment.get("status") != "succeeded":
            continue  # failed, cancelled or still processing: no money moved
        total = checked_amount(field(payment, "total_amount", "payment"), "payment amount")
        currency = field(payment, "currency", "payment")
        ledger.sale(
            at=parse_timestamp(field(payment, "created_at", "payment")),
            currency=currency,
            minor=total,
        )
        paid[str(payment.get("payment_id"))] = (currency, total)
        if total > 0:
            paying.add(customer_id(payment))
    for refund in raw["refunds"]:
        if refund.get("status") != "succeeded":
            continue  # pending, in review or failed: nothing returned yet
        currency, amount = _refunded(refund, paid)
        ledger.refund(
            at=parse_timestamp(field(refund, "created_at", "refund")),
            currency=currency,
            minor=amount,
        )
    for dispute in raw["disputes"]:
        if dispute.get("dispute_status") not in LOST_DISPUTES:
            continue  # open, won, cancelled or expired: the money stayed
        amount = checked_amount(field(dispute, "amount", "dispute"), "dispute amount")
        ledger.refund(
            at=parse_timestamp(field(dispute, "created_at", "dispute")),
            currency=field(dispute, "currency", "dispute"),
            minor=amount,
        )
    return ledger.subscription_figures(mrr=mrr, subscriptions=raw["subscriptions"], paying=paying)


def _refunded(refund: dict, paid: dict[str, tuple[str, Decimal]]) -> tuple[str, Decimal]:
    """The refund's amount and currency; without an amount it is a full refund of its payment."""
    if refund.get("amount") is not None:
        currency = refund.get("currency") or paid.get(str(refund.get("payment_id")), ("",))[0]
        if not currency:
            raise ProviderError(f"{TITLE} sent a refund without `currency`; nothing was written")
        return currency, checked_amount(refund["amount"], "refund amount")
    payment = paid.get(str(refund.get("payment_id")))
    if payment is None:
        raise ProviderError(
            f"{TITLE} sent a refund without `amount` for a payment it did not list; "
            "nothing was written"
        )
    return payment


PROVIDER = Provider(
    name="dodo_payments",
    default_api_base="https://live.dodopayments.com",
    auth_headers=bearer_headers,
    fetch=fetch,
    compute=compute,
    title=TITLE,
    key_hint="Dodo Payments live-mode API key (write access unchecked)",
    sandbox_hosts=("test.dodopayments.com",),
)
