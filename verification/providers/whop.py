"""Whop: MRR from memberships and their plans; money from payments (net of the tax Whop
collects).

API: https://api.whop.com/api/v1, `Authorization: Bearer <company API key>` with read
permissions only. Lists (`/payments`, `/memberships`, `/plans`) take the company's `company_id`,
page with `first` (100) and `after=<page_info.end_cursor>` while `page_info.has_next_page`, and
answer `{data, page_info}`. Amounts are numbers in major units of the record's `currency`
(49.99 is $49.99); a plan's `billing_period` is in days.
"""

from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import quote

from verification.http import Pages, ProviderError, ProviderHttp
from verification.money import Money, major_to_minor, money_add
from verification.providers.base import (
    Ledger,
    Provider,
    ProviderFigures,
    checked_amount,
    key_or_json,
    key_text_check,
    parse_timestamp,
)

TITLE = "Whop"
PAGE = 100
PREFIX = "/api/v1"
BILLING = ("active", "past_due")  # trialing, canceled, expired, completed... do not bill
# A plan's billing period in days, as months: the usual periods exactly, others by 365/12 days.
PERIOD_MONTHS = {7: Decimal(12) / 52, 14: Decimal(24) / 52, 30: 1, 31: 1, 60: 2, 61: 2, 90: 3}
PERIOD_MONTHS |= {91: 3, 92: 3, 180: 6, 181: 6, 182: 6, 183: 6, 365: 12, 366: 12}


def credential(raw: str) -> dict[str, str]:
    """`{"api_key", "company_id"}`: the key alone (a company key reads its own company) or one
    line of JSON with both. Raises ValueError with a founder-readable message."""
    paste = (
        'Paste the company API key alone, or one line of JSON: {"api_key": "...", '
        '"company_id": "biz_..."}.'
    )
    key, company = key_or_json(raw, field="company_id", bad_json=paste, no_key=paste)
    company = company or ""
    if not isinstance(company, str) or (company and not company.startswith("biz_")):
        raise ValueError('"company_id" is your company\'s id; it starts with biz_.')
    key_text_check(key)
    return {"api_key": key, "company_id": company}


def auth_headers(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential(raw)['api_key']}"}


def company_params_of(raw: str) -> dict[str, str]:
    """The `company_id` query parameter the lists take, when the credential names it."""
    company = credential(raw)["company_id"]
    return {"company_id": company} if company else {}


def company_params(http: ProviderHttp) -> dict[str, str]:
    return company_params_of(http.secret)


def list_all(http: ProviderHttp, name: str) -> Iterator[dict]:
    """Every record of a Whop list, following `page_info.end_cursor` while there is more."""
    path, after, pages = f"{PREFIX}/{name}", None, Pages(http, f"{PREFIX}/{name}")
    while True:
        params: dict[str, Any] = {**company_params(http), "first": PAGE}
        if after:
            params["after"] = after
        page = http.get(path, params=params)
        data = page.get("data") if isinstance(page, dict) else None
        if not isinstance(data, list):
            raise ProviderError(f"{TITLE} answered GET {path} without a `data` list")
        yield from data
        info = page.get("page_info") or {}
        if not info.get("has_next_page"):
            return
        after = info.get("end_cursor")
        if not after:
            raise ProviderError(f"{TITLE} said {path} has more pages but sent no `end_cursor`")
        if not data:
            return
        pages.advance(after)


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    raw = {name: list(list_all(http, name)) for name in ("plans", "memberships", "payments")}
    # A membership may be on a plan the list no longer shows (archived, hidden): read it alone.
    listed = {plan.get("id") for plan in raw["plans"] if isinstance(plan, dict)}
    for membership in raw["memberships"]:
        plan = membership.get("plan") if isinstance(membership, dict) else None
        plan_id = plan.get("id") if isinstance(plan, dict) else None
        if isinstance(plan_id, str) and plan_id not in listed:
            raw["plans"].append(http.get(f"{PREFIX}/plans/{quote(plan_id, safe='')}"))
            listed.add(plan_id)
    return raw


def field(record: Any, name: str, what: str) -> Any:
    value = record.get(name) if isinstance(record, dict) else None
    if value is None:
        raise ProviderError(f"{TITLE} sent a {what} without `{name}`; nothing was written")
    return value


def minor(value: Any, currency: str, what: str) -> Decimal:
    try:
        amount = major_to_minor(value if value is not None else 0, currency)
    except ValueError:
        raise ProviderError(f"{TITLE} sent an unreadable {what} {str(value)[:40]!r}") from None
    return checked_amount(amount, what)


def plan_mrr(plan: dict) -> tuple[str, Decimal]:
    """A renewal plan's `renewal_price` per month (minor units) and its currency."""
    currency = field(plan, "currency", "plan")
    if plan.get("plan_type") != "renewal":
        return currency, Decimal(0)  # one-time plans do not recur
    days = int(field(plan, "billing_period", "renewal plan"))
    if days <= 0:
        raise ProviderError(f"{TITLE} sent a plan with billing_period {days}; nothing was written")
    months = Decimal(PERIOD_MONTHS.get(days, Decimal(days) * 12 / 365))
    return currency, minor(plan.get("renewal_price"), currency, "renewal price") / months


def user_id(record: dict) -> str | None:
    user = record.get("user") or record.get("member")
    return user.get("id") if isinstance(user, dict) else None


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    plans = {plan.get("id"): plan for plan in raw["plans"] if isinstance(plan, dict)}
    mrr: Money = {}
    paying = set()
    for membership in raw["memberships"]:
        if field(membership, "status", "membership") not in BILLING:
            continue
        plan_id = field(field(membership, "plan", "membership"), "id", "membership plan")
        if plan_id not in plans:
            raise ProviderError(
                f"{TITLE} sent a membership whose plan {str(plan_id)[:40]} is not in /plans; "
                "nothing was written"
            )
        currency, monthly = plan_mrr(plans[plan_id])
        if monthly > 0:
            paying.add(user_id(membership))
        if membership.get("cancel_at_period_end") or membership.get("payment_collection_paused"):
            continue  # ends with its period, or collection paused: not recurring revenue
        money_add(mrr, currency, monthly)
    ledger = Ledger(now=now)
    for payment in raw["payments"]:
        if payment.get("status") != "paid" and not payment.get("paid_at"):
            continue  # draft, open, pending, void, uncollectible: no money collected
        currency = field(payment, "currency", "payment")
        total = minor(field(payment, "total", "payment"), currency, "payment total")
        tax = min(total, minor(payment.get("tax_amount"), currency, "tax amount"))
        gross = total - tax
        at = parse_timestamp(payment.get("paid_at") or field(payment, "created_at", "payment"))
        ledger.sale(at=at, currency=currency, minor=gross)
        if gross > 0:
            paying.add(user_id(payment))
        refunded = min(total, minor(payment.get("refunded_amount"), currency, "refunded amount"))
        if refunded > 0:
            # The refund without its share of tax (the same share as in the payment).
            ledger.refund(
                at=parse_timestamp(payment.get("refunded_at") or payment.get("updated_at") or at),
                currency=currency,
                minor=refunded * gross / total if total else Decimal(0),
            )
    return ledger.subscription_figures(mrr=mrr, subscriptions=raw["memberships"], paying=paying)


PROVIDER = Provider(
    name="whop",
    default_api_base="https://api.whop.com",
    auth_headers=auth_headers,
    fetch=fetch,
    compute=compute,
    title=TITLE,
    key_hint='Whop company API key (read permissions only), or {"api_key", "company_id"} as JSON',
    sandbox_hosts=("sandbox-api.whop.com",),
)
