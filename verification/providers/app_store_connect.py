"""App Store Connect (direct, for apps without RevenueCat): proceeds from Apple's sales reports,
MRR and subscribers from its subscription report.

API: https://api.appstoreconnect.apple.com, `Authorization: Bearer <JWT>`: an ES256 token signed
with a Team API key (.p8) that has the Sales or Finance role, header `{alg: ES256, kid: <key id>,
typ: JWT}`, payload `{iss: <issuer id>, iat, exp (at most 20 minutes later), aud:
"appstoreconnect-v1"}`. `GET /v1/salesReports` with `filter[reportType]` (SALES, SUBSCRIPTION),
`filter[reportSubType]=SUMMARY`, `filter[frequency]` (MONTHLY, DAILY), `filter[reportDate]`,
`filter[vendorNumber]` and `filter[version]` answers a gzip file of tab-separated values; a 404
means Apple has no report for that date (no sales, or not yet published). Money is each row's
`Developer Proceeds` (per unit, major units of `Currency of Proceeds`) x `Units`; negative units
are refunds.
"""

import base64
import csv
import io
import json
import re
import time
import zlib
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from core.formats import month_start
from verification.http import ProviderError, ProviderHttp
from verification.money import Money, major_to_minor, money_add
from verification.providers.base import (
    LAST_DAYS,
    MonthFigures,
    Provider,
    ProviderFigures,
    checked_amount,
)

TITLE = "App Store Connect"
AUDIENCE = "appstoreconnect-v1"
TOKEN_SECONDS = 19 * 60  # Apple refuses tokens that live longer than 20 minutes
HISTORY_MONTHS = 24
REPORTS = "/v1/salesReports"
SALES_VERSION = "1_1"
SUBSCRIPTION_VERSION = "1_3"
MAX_REPORT_BYTES = 50 * 1024 * 1024  # unzipped: a bigger "report" is refused, never read whole
KEY_ID = re.compile(r"^[A-Z0-9]{10}$")
ISSUER_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
VENDOR = re.compile(r"^[0-9]{5,12}$")
PEM_BODY = re.compile(r"-----BEGIN PRIVATE KEY-----(.*?)-----END PRIVATE KEY-----", re.S)
FORMAT = (
    'one line of JSON: {"key_id": "…", "issuer_id": "…", "private_key": "-----BEGIN PRIVATE '
    'KEY-----…", "vendor_number": "8…"}'
)
# Standard Subscription Duration -> months.
DURATIONS = {"day": Decimal(12) / 365, "week": Decimal(12) / 52, "month": 1, "year": 12}
# Subscription report columns that count paying subscriptions (free trials do not).
PAID_COLUMNS = (
    "Active Standard Price Subscriptions",
    "Active Pay Up Front Introductory Offer Subscriptions",
    "Active Pay As You Go Introductory Offer Subscriptions",
    "Pay Up Front Promotional Offer Subscriptions",
    "Pay As You Go Promotional Offer Subscriptions",
    "Pay Up Front Offer Code Subscriptions",
    "Pay As You Go Offer Code Subscriptions",
)


def _pem(text: str) -> bytes:
    """The .p8 key as PEM, whatever became of its line breaks on the way (joined, spaces, or
    literal \\n left by a hand-made JSON line)."""
    found = PEM_BODY.search(text.replace("\\n", "\n"))
    if not found:
        raise ValueError('"private_key" must be the whole .p8 file, BEGIN and END lines included.')
    body = re.sub(r"\s+", "", found.group(1))
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN PRIVATE KEY-----\n{lines}\n-----END PRIVATE KEY-----\n".encode()


def credential(raw: str) -> dict[str, Any]:
    """The parts of the credential, the private key loaded. Raises ValueError with a
    founder-readable message (never containing the key)."""
    try:
        parsed = json.loads(raw.strip(), strict=False)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise ValueError(f"An App Store Connect credential is {FORMAT}")
    parts = {}
    for name in ("key_id", "issuer_id", "private_key", "vendor_number"):
        value = parsed.get(name)
        if isinstance(value, int) and name == "vendor_number":
            value = str(value)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f'The JSON needs "{name}": {FORMAT}')
        parts[name] = value.strip()
    if not KEY_ID.match(parts["key_id"]):
        raise ValueError('"key_id" is the 10-character Key ID shown beside the key.')
    if not ISSUER_ID.match(parts["issuer_id"]):
        raise ValueError('"issuer_id" is the Issuer ID above the key list (a UUID).')
    if not VENDOR.match(parts["vendor_number"]):
        raise ValueError('"vendor_number" is the number in Payments and Financial Reports.')
    pem = _pem(parts["private_key"])
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError):
        raise ValueError('"private_key" is not a readable .p8 key.') from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ValueError('"private_key" must be an App Store Connect API key (.p8, ES256).')
    parts["private_key"] = key
    return parts


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(raw: str, *, at: float | None = None) -> str:
    """A JWT with Apple's documented claims, signed ES256 (the signature is r || s, 64 bytes)."""
    parts = credential(raw)
    issued = int(time.time() if at is None else at)
    header = {"alg": "ES256", "kid": parts["key_id"], "typ": "JWT"}
    payload = {
        "iss": parts["issuer_id"],
        "iat": issued,
        "exp": issued + TOKEN_SECONDS,
        "aud": AUDIENCE,
    }
    signing_input = ".".join(
        _b64(json.dumps(part, separators=(",", ":")).encode()) for part in (header, payload)
    )
    der = parts["private_key"].sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def auth_headers(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(raw)}"}


def report_params(raw: str, kind: str, frequency: str, day: str) -> dict[str, str]:
    return {
        "filter[frequency]": frequency,
        "filter[reportDate]": day,
        "filter[reportSubType]": "SUMMARY",
        "filter[reportType]": kind,
        "filter[vendorNumber]": credential(raw)["vendor_number"],
        "filter[version]": SALES_VERSION if kind == "SALES" else SUBSCRIPTION_VERSION,
    }


def report(http: ProviderHttp, kind: str, frequency: str, day: str) -> str | None:
    """One report's text, or None when Apple has none for that date."""
    # A fresh token for every report: a sync longer than a token's 19 minutes never fails.
    http.client.headers.update(auth_headers(http.secret))
    body = http.get_bytes(
        REPORTS, params=report_params(http.secret, kind, frequency, day), missing_ok=True
    )
    if body is None:
        return None
    inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)  # gzip
    try:
        text = inflate.decompress(body, MAX_REPORT_BYTES)
    except zlib.error:
        raise ProviderError(f"{TITLE} sent a {kind} report for {day} that is not gzip") from None
    if inflate.unconsumed_tail:
        raise ProviderError(f"{TITLE}'s {kind} report for {day} unzips to more than 50 MB")
    return text.decode("utf-8", errors="replace")


def _months_before(month: date, count: int) -> date:
    index = month.year * 12 + month.month - 1 - count
    return date(index // 12, index % 12 + 1, 1)


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    today = now.date()
    this_month = month_start(now)
    monthly = {}
    for back in range(1, HISTORY_MONTHS + 1):
        month = _months_before(this_month, back)
        monthly[month.isoformat()] = report(http, "SALES", "MONTHLY", f"{month:%Y-%m}")
    # Daily reports for this month and the last 30 days, and for last month too while Apple has
    # not published its monthly report (it does a few days after the month ends).
    start = min(today - timedelta(days=LAST_DAYS), this_month)
    previous = _months_before(this_month, 1)
    if monthly[previous.isoformat()] is None:
        start = min(start, previous)
    daily, day = {}, start
    while day < today:  # today's report does not exist yet
        daily[day.isoformat()] = report(http, "SALES", "DAILY", day.isoformat())
        day += timedelta(days=1)
    subscriptions = None
    for back in (1, 2, 3):  # the latest daily subscription report Apple has published
        subscriptions = report(
            http, "SUBSCRIPTION", "DAILY", (today - timedelta(days=back)).isoformat()
        )
        if subscriptions is not None:
            break
    return {"monthly": monthly, "daily": daily, "subscriptions": subscriptions}


def probe(*, http: ProviderHttp) -> None:
    """At connect: the key may read this vendor's sales reports (a 404 only means no sales)."""
    day = (datetime.now(UTC).date() - timedelta(days=2)).isoformat()
    report(http, "SALES", "DAILY", day)


def rows(text: str | None, columns: tuple[str, ...], what: str) -> list[dict[str, str]]:
    if not text:
        return []
    reader = csv.DictReader(io.StringIO(text), delimiter="\t")
    missing = [name for name in columns if name not in (reader.fieldnames or [])]
    if missing:
        raise ProviderError(
            f"{TITLE} sent a {what} report without the column `{missing[0]}`; nothing was written"
        )
    return [row for row in reader if any((value or "").strip() for value in row.values())]


def _number(row: dict, column: str, what: str) -> Decimal:
    text = (row.get(column) or "").strip().replace(",", "")
    try:
        value = Decimal(text or "0")
    except InvalidOperation:
        raise ProviderError(
            f"{TITLE} sent an unreadable `{column}` {text[:40]!r} in a {what} report"
        ) from None
    if not value.is_finite():
        raise ProviderError(f"{TITLE} sent an unreadable `{column}` in a {what} report")
    return value


SALES_COLUMNS = ("Units", "Developer Proceeds", "Currency of Proceeds")


def sales(text: str | None) -> tuple[Money, Money]:
    """(proceeds, refunds) of one sales report, per currency in minor units."""
    gross: Money = {}
    refunds: Money = {}
    for row in rows(text, SALES_COLUMNS, "sales"):
        units = _number(row, "Units", "sales")
        currency = (row.get("Currency of Proceeds") or "").strip()
        proceeds = _number(row, "Developer Proceeds", "sales")
        if not proceeds or not units:
            continue  # free downloads and updates
        if not currency:
            raise ProviderError(f"{TITLE} sent a sales row without `Currency of Proceeds`")
        # Proceeds per unit are never negative; a refund is a row of negative units.
        amount = checked_amount(major_to_minor(proceeds, currency), "proceeds") * abs(units)
        money_add(gross if units > 0 else refunds, currency, amount)
    return gross, refunds


SUBSCRIPTION_COLUMNS = (
    "Standard Subscription Duration",
    "Developer Proceeds",
    "Proceeds Currency",
    "Active Standard Price Subscriptions",
)


def duration_months(text: str) -> Decimal:
    """'1 Month', '2 Months', '7 Days', '1 Week', '1 Year' as months."""
    found = re.match(r"^\s*(\d+)\s+(day|week|month|year)s?\s*$", text or "", re.I)
    if not found:
        raise ProviderError(
            f"{TITLE} sent an unknown Standard Subscription Duration {str(text)[:30]!r}"
        )
    return int(found.group(1)) * Decimal(DURATIONS[found.group(2).lower()])


def subscription_figures(text: str | None) -> tuple[Money | None, int]:
    """(MRR, paying subscriptions) from the subscription report; MRR None without one."""
    if text is None:
        return None, 0
    mrr: Money = {}
    paying = 0
    for row in rows(text, SUBSCRIPTION_COLUMNS, "subscription"):
        standard = _number(row, "Active Standard Price Subscriptions", "subscription")
        paying += int(sum(_number(row, c, "subscription") for c in PAID_COLUMNS if c in row))
        if not standard:
            continue
        currency = (row.get("Proceeds Currency") or "").strip()
        proceeds = _number(row, "Developer Proceeds", "subscription")
        months = duration_months(row["Standard Subscription Duration"])
        monthly = major_to_minor(proceeds, currency or "USD") * standard / months
        money_add(mrr, currency, checked_amount(monthly, "subscription proceeds"))
    return mrr, paying


def _add(target: MonthFigures, gross: Money, refunds: Money) -> None:
    for currency, amount in gross.items():
        money_add(target.gross, currency, amount)
    for currency, amount in refunds.items():
        money_add(target.refunds, currency, amount)


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    monthly: dict[date, MonthFigures] = {}
    for month, text in sorted(raw["monthly"].items()):
        gross, refunds = sales(text)
        if text is not None:
            _add(monthly.setdefault(date.fromisoformat(month), MonthFigures()), gross, refunds)
    window_start = (now - timedelta(days=LAST_DAYS)).date()
    last_30_days: Money = {}
    for day, text in sorted(raw["daily"].items()):
        gross, refunds = sales(text)
        at = date.fromisoformat(day)
        month = month_start(at)
        if raw["monthly"].get(month.isoformat()) is None:
            # A month without its monthly report (this one, or last one not yet published).
            _add(monthly.setdefault(month, MonthFigures()), gross, refunds)
        if at >= window_start:
            for currency, amount in gross.items():
                money_add(last_30_days, currency, amount)
            for currency, amount in refunds.items():
                money_add(last_30_days, currency, -amount)
    # History runs from the first month with money to this one, months without sales as zeros.
    first = min((m for m, row in monthly.items() if row.gross or row.refunds), default=None)
    filled: dict[date, MonthFigures] = {}
    while first and first <= month_start(now):
        filled[first] = monthly.get(first, MonthFigures())
        first = _months_before(first, -1)
    mrr, paying = subscription_figures(raw["subscriptions"])
    return ProviderFigures(mrr=mrr, monthly=filled, last_30_days=last_30_days, customers=paying)


PROVIDER = Provider(
    name="app_store_connect",
    default_api_base="https://api.appstoreconnect.apple.com",
    auth_headers=auth_headers,
    fetch=fetch,
    compute=compute,
    title=TITLE,
    key_hint=f"App Store Connect Team API key (Sales or Finance role) as {FORMAT}",
    probe=probe,
)
