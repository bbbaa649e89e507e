"""Gumroad: one-off sales, no subscription data, so MRR and ARR stay null.

API: https://api.gumroad.com, `GET /v2/sales` with `Authorization: Bearer <access token>`
(scope `view_sales`). Pages follow `next_page_key` (sent back as `page_key`) until it is absent.
"""

from datetime import datetime
from decimal import Decimal

from verification.http import ProviderError, ProviderHttp
from verification.providers.base import (
    Ledger,
    Provider,
    ProviderFigures,
    bearer_headers,
    parse_timestamp,
)


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    sales, page_key = [], None
    while True:
        page = http.get("/v2/sales", params={"page_key": page_key} if page_key else None)
        if not page.get("success", True):
            raise ProviderError("Gumroad answered success=false for /v2/sales")
        sales.extend(page.get("sales") or [])
        page_key = page.get("next_page_key")
        if not page_key:
            return {"sales": sales}


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    ledger = Ledger(now=now)
    buyers = set()
    for sale in raw["sales"]:
        currency = sale.get("currency") or "usd"
        price = int(sale["price"])
        created = parse_timestamp(sale["created_at"])
        ledger.sale(at=created, currency=currency, minor=price)
        buyers.add((sale.get("purchase_email") or sale.get("email") or sale["id"]).lower())
        refunded = Decimal(0)
        if sale.get("refunded"):
            refunded = Decimal(price)
        elif sale.get("partially_refunded"):
            refundable = sale.get("amount_refundable_in_currency")
            refunded = Decimal(price) - Decimal(str(refundable or 0))
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
)
