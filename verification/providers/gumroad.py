"""Gumroad: sales (money) and membership sales (MRR).

API: https://api.gumroad.com, `GET /v2/sales` with `Authorization: Bearer <access token>`
(scope `view_sales`). Pages follow `next_page_key` (sent back as `page_key`) until it is absent.
A sale's `price` is in US cents whatever the product's currency; `amount_refundable_in_currency`
is formatted in the product's currency (named by `currency_symbol`). Sales of memberships carry
`subscription_id` and their recurrence (`subscription_duration`).
"""

import calendar
from datetime import datetime
from decimal import Decimal

from startups.models import Credential
from verification.http import Pages, ProviderError, ProviderHttp
from verification.money import (
    Money,
    exchange_rate,
    major_to_minor,
    minor_unit_exponent,
    money_add,
)
from verification.providers.base import (
    AccountIdentity,
    Ledger,
    Provider,
    ProviderFigures,
    account_identity,
    bearer_headers,
    checked_amount,
    parse_timestamp,
    refused,
)

# `price` is always US cents.
PRICE_CURRENCY = "USD"
# Gumroad's currency symbols (each names one currency) -> ISO code.
SYMBOLS = {
    "$": "USD", "£": "GBP", "€": "EUR", "¥": "JPY", "₹": "INR", "A$": "AUD", "C$": "CAD",
    "HK$": "HKD", "S$": "SGD", "NT$": "TWD", "NZ$": "NZD", "R$": "BRL", "CHF": "CHF",
    "₪": "ILS", "₱": "PHP", "₩": "KRW", "zł": "PLN", "Kč": "CZK", "kr": "SEK",
}  # fmt: skip
# Months per membership billing period, by Gumroad's recurrence names.
RECURRENCE_MONTHS = {
    "monthly": 1,
    "quarterly": 3,
    "biannually": 6,
    "yearly": 12,
    "every_two_years": 24,
}


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


def product_currency(sale: dict) -> str:
    """The product's currency: its `currency_symbol` (else a `currency` code); US dollars when
    the sale names none."""
    symbol = (sale.get("currency_symbol") or "").strip()
    if symbol:
        if symbol not in SYMBOLS:
            rule = "one of Gumroad's currency symbols (" + " ".join(SYMBOLS) + ")"
            raise refused(f"sale {sale.get('id')} currency_symbol", symbol, rule)
        return SYMBOLS[symbol]
    return (sale.get("currency") or PRICE_CURRENCY).upper()


def refundable_usd_cents(sale: dict) -> Decimal:
    """`amount_refundable_in_currency` (a formatted string in major units of the product's
    currency: "49.50", "1,400") in US cents, at the static rate of that currency."""
    value = sale.get("amount_refundable_in_currency")
    if value in (None, ""):
        return Decimal(0)
    currency = product_currency(sale)
    try:
        minor = major_to_minor(value, currency)
    except ValueError:
        raise refused(
            f"sale {sale.get('id')} amount_refundable_in_currency",
            value,
            "a formatted amount in major units of the product's currency",
        ) from None
    dollars = minor.scaleb(-minor_unit_exponent(currency)) * exchange_rate(currency).usd_per_unit
    return dollars.scaleb(2)  # US cents, fractions kept until the final rounding


def returned_in_full(sale: dict) -> bool:
    """Refunded, or charged back with the dispute not won (`dispute_won` nets it to zero)."""
    return bool(sale.get("refunded") or (sale.get("chargedback") and not sale.get("dispute_won")))


def refunded_cents(sale: dict, price: Decimal) -> Decimal:
    """US cents refunded or charged back for good on a sale: the whole price when `refunded`,
    or when `chargedback` and the dispute was not won (`dispute_won`); when
    `partially_refunded`, the price minus what is still refundable."""
    if returned_in_full(sale):
        return price
    if sale.get("partially_refunded"):
        return min(price, max(Decimal(0), price - refundable_usd_cents(sale)))
    return Decimal(0)


def add_months(moment: datetime, months: int) -> datetime:
    month0 = moment.month - 1 + months
    year, month = moment.year + month0 // 12, month0 % 12 + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


def membership_mrr(sales: list[dict], now: datetime) -> Money | None:
    """MRR of memberships: for each `subscription_id`, its latest charge's `price` divided by
    the months of its recurrence, while the membership runs: that charge covers `now` (charged
    less than one period ago), it was not refunded in full or charged back, and the membership
    is not `cancelled` (scheduled to end) or `ended`. None without any membership sale."""
    latest: dict[str, tuple[datetime, dict]] = {}
    for sale in sales:
        if sale.get("test") or not sale.get("subscription_id"):
            continue
        created = parse_timestamp(sale["created_at"])
        key = str(sale["subscription_id"])
        if key not in latest or created > latest[key][0]:
            latest[key] = (created, sale)
    if not latest:
        return None
    mrr: Money = {}
    for created, sale in latest.values():
        recurrence = sale.get("subscription_duration") or sale.get("recurrence")
        if recurrence is None:
            continue  # no recurrence given: nothing to normalise to a month
        if recurrence not in RECURRENCE_MONTHS:
            rule = "one of " + ", ".join(RECURRENCE_MONTHS)
            raise refused(f"sale {sale.get('id')} subscription_duration", recurrence, rule)
        months = RECURRENCE_MONTHS[recurrence]
        price = checked_amount(sale["price"], f"sale {sale.get('id')} price")
        if sale.get("cancelled") or sale.get("ended") or returned_in_full(sale):
            continue
        if created > now or add_months(created, months) <= now:
            continue  # not charged for the current period: lapsed or failing
        money_add(mrr, PRICE_CURRENCY, price / months)
    return mrr


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    ledger = Ledger(now=now)
    buyers = set()
    for sale in raw["sales"]:
        if sale.get("test"):
            continue  # a creator's own test purchase: no money moved
        price = checked_amount(sale["price"], f"sale {sale.get('id')} price")
        created = parse_timestamp(sale["created_at"])
        ledger.sale(at=created, currency=PRICE_CURRENCY, minor=price)
        email = sale.get("purchase_email") or sale.get("email")
        if price > 0 and email:
            buyers.add(email.lower())  # a paying customer: a sale above zero
        refunded = refunded_cents(sale, price)
        if refunded > 0:
            # Without a refund date on the sale (chargebacks never have one), the money
            # returned falls in the sale's own month.
            at = parse_timestamp(sale["refunded_at"]) if sale.get("refunded_at") else created
            ledger.refund(at=at, currency=PRICE_CURRENCY, minor=refunded)
    return ledger.figures(mrr=membership_mrr(raw["sales"], now), customers=len(buyers))


def identify(*, http: ProviderHttp) -> AccountIdentity:
    """The Gumroad user the token reads: GET /v2/user (`user.user_id`, `name`, profile `url`)."""
    user = http.get("/v2/user").get("user") or {}
    return account_identity(user.get("user_id"), name=user.get("name"), url=user.get("url"))


PROVIDER = Provider(
    name="gumroad",
    default_api_base="https://api.gumroad.com",
    auth_headers=bearer_headers,
    fetch=fetch,
    compute=compute,
    identify=identify,
    title="Gumroad",
    key_hint="Gumroad access token (scope view_sales only)",
    credential_of=lambda raw: Credential.RESTRICTED_READ,
)
