"""Gumroad: one-off sales, no subscription data, so MRR and ARR stay null.

API: https://api.gumroad.com, `GET /v2/sales` with `Authorization: Bearer <access token>`
(scope `view_sales`). Pages follow `next_page_key` (sent back as `page_key`) until it is absent.
"""

from datetime import datetime
from decimal import Decimal

from startups.models import Credential
from verification.http import Pages, ProviderError, ProviderHttp
from verification.money import major_to_minor
from verification.providers.base import (
    Ledger,
    Provider,
    ProviderFigures,
    bearer_headers,
    checked_amount,
    parse_timestamp,
)


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    sales, page_key, pages = [], None, Pages(http, "/v2/sales")
    while True:
        page = http.get("/v2/sales", params={"page_key": page_key} if page_key else None)
        if not page.get("success", True):
            raise ProviderError("Gumroad answered success=false for /v2/sales")
        sales.extend(page.get("sales") or [])
        page_key = page.get("next_page_key")
        if not page_key:
            return {"sales": sales}
        pages.advance(page_key)


def refundable_minor(sale: dict, currency: str) -> Decimal:
    """`amount_refundable_in_currency` is a formatted string in major units of the sale's
    currency ("49.50", "1,400"), not cents: what can still be refunded."""
    value = sale.get("amount_refundable_in_currency")
    if value in (None, ""):
        return Decimal(0)
    try:
        return major_to_minor(value, currency)
    except ValueError:
        raise ProviderError(
            f"Gumroad sent an unreadable amount_refundable_in_currency {str(value)[:40]!r} "
            f"on sale {sale.get('id')}"
        ) from None


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    ledger = Ledger(now=now)
    buyers = set()
    for sale in raw["sales"]:
        if sale.get("test"):
            continue  # a creator's own test purchase: no money moved
        currency = sale.get("currency") or "usd"
        price = checked_amount(sale["price"], "sale price")
        created = parse_timestamp(sale["created_at"])
        ledger.sale(at=created, currency=currency, minor=price)
        email = sale.get("purchase_email") or sale.get("email")
        if price > 0 and email:
            buyers.add(email.lower())  # a paying customer: a sale above zero
        refunded = Decimal(0)
        if sale.get("refunded"):
            refunded = price
        elif sale.get("partially_refunded"):
            refunded = min(price, max(Decimal(0), price - refundable_minor(sale, currency)))
        if refunded > 0:
            # Without a refund date on the sale, the refund falls in the sale's own month.
            at = parse_timestamp(sale["refunded_at"]) if sale.get("refunded_at") else created
            ledger.refund(at=at, currency=currency, minor=refunded)
    return ledger.figures(mrr=None, customers=len(buyers))


PROVIDER = Provider(
    name="gumroad",
    default_api_base="https://api.gumroad.com",
    auth_headers=bearer_headers,
    fetch=fetch,
    compute=compute,
    title="Gumroad",
    key_hint="Gumroad access token (scope view_sales only)",
    credential_of=lambda raw: Credential.RESTRICTED_READ,
)
