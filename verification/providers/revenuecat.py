"""RevenueCat (REST API v2): MRR and active subscriptions from the project's metrics overview;
monthly revenue and the last 30 days from the Charts API's revenue chart.

API: https://api.revenuecat.com, `Authorization: Bearer <secret API key (v2), sk_...>` with the
read permissions `charts_metrics`, `customer_information` and `project_configuration`.
`GET /v2/projects` (paged by `next_page`) finds the project when the credential names none;
`GET /v2/projects/{id}/metrics/overview?currency=USD` answers `{metrics: [{id, value, ...}],
currency}`; `GET /v2/projects/{id}/charts/revenue?resolution=month|day&start_date&end_date
&currency=USD` answers `values` per period (`cohort`: the period's start). Money is in major units
of the answer's currency. RevenueCat's charts and overview count production purchases only
(sandbox purchases never appear); its MRR is amortised to 28 days, which we rescale to our
calendar month (see the methodology).
"""

from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import quote

from core.formats import month_start
from verification.http import Pages, ProviderError, ProviderHttp
from verification.money import Money, major_to_minor, money_add
from verification.providers.base import (
    LAST_DAYS,
    MonthFigures,
    Provider,
    ProviderFigures,
    checked_amount,
    key_or_json,
    key_text_check,
    parse_timestamp,
)

TITLE = "RevenueCat"
# RevenueCat amortises MRR to 28 days; our month is the calendar average, 365/12 days.
TO_OUR_MONTH = Decimal(365) / 12 / 28
# Keys an app embeds (public SDK keys) and Test Store keys: never a v2 secret key.
PUBLIC_PREFIXES = ("appl_", "goog_", "amzn_", "strp_", "rcb_", "test_", "pdl_")
HISTORY_START = date(2018, 1, 1)  # RevenueCat opened in 2017: nothing older exists


def credential(raw: str) -> dict[str, str]:
    """`{"api_key", "project_id"}` from the stored credential: the key alone, or one line of
    JSON with both. Raises ValueError with a founder-readable message."""
    key, project = key_or_json(
        raw,
        field="project_id",
        bad_json='Paste the secret key alone, or one line of JSON: {"api_key": "sk_...", '
        '"project_id": "..."}.',
        no_key='The JSON needs "api_key" (your secret key, sk_...).',
    )
    if project is not None and (not isinstance(project, str) or not project.strip()):
        raise ValueError('"project_id" must be the project\'s id as text.')
    if key.startswith(PUBLIC_PREFIXES):
        raise ValueError(
            "This is a public app key (it ships inside your app). Create a secret API key "
            "(v2, it starts with sk_) with read-only permissions instead."
        )
    if not key.startswith("sk_"):
        raise ValueError("A RevenueCat secret API key (v2) starts with sk_; this key does not.")
    key_text_check(key)
    return {"api_key": key, "project_id": (project or "").strip()}


def auth_headers(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential(raw)['api_key']}"}


def project_id(http: ProviderHttp) -> str:
    """The credential's project, else the key's only project (GET /v2/projects, every page)."""
    named = credential(http.secret)["project_id"]
    if named:
        return named
    projects, path, pages = [], "/v2/projects", Pages(http, "/v2/projects")
    while True:
        page = http.get(path, params={"limit": 100} if path == "/v2/projects" else None)
        items = page.get("items") if isinstance(page, dict) else None
        if not isinstance(items, list):
            raise ProviderError(f"{TITLE} answered GET /v2/projects without an `items` list")
        projects += [item.get("id") for item in items if isinstance(item, dict)]
        path = page.get("next_page")
        if not path:
            break
        pages.advance(path)
    if len(projects) != 1 or not projects[0]:
        raise ProviderError(
            f"this {TITLE} key sees {len(projects)} projects; connect with one line of JSON "
            '{"api_key": "sk_...", "project_id": "..."} naming the startup\'s project'
        )
    return projects[0]


def fetch(*, http: ProviderHttp, now: datetime) -> dict:
    project = quote(project_id(http), safe="")
    today = now.date()
    overview = http.get(f"/v2/projects/{project}/metrics/overview", params={"currency": "USD"})
    chart = f"/v2/projects/{project}/charts/revenue"
    monthly = http.get(
        chart,
        params={
            "resolution": "month",
            "start_date": HISTORY_START.isoformat(),
            "end_date": today.isoformat(),
            "currency": "USD",
        },
    )
    daily = http.get(
        chart,
        params={
            "resolution": "day",
            "start_date": (today - timedelta(days=LAST_DAYS - 1)).isoformat(),
            "end_date": today.isoformat(),
            "currency": "USD",
        },
    )
    return {"overview": overview, "monthly": monthly, "daily": daily}


def probe(*, http: ProviderHttp) -> None:
    """At connect: the project resolves and its overview is readable with this key."""
    project = quote(project_id(http), safe="")
    http.get(f"/v2/projects/{project}/metrics/overview", params={"currency": "USD"})


def _currency(answer: dict, name: str, what: str) -> str:
    currency = answer.get(name) if isinstance(answer, dict) else None
    if not isinstance(currency, str) or not currency:
        raise ProviderError(f"{TITLE} sent the {what} without `{name}`; nothing was written")
    return currency


def _minor(value: Any, currency: str, what: str) -> Decimal:
    try:
        amount = major_to_minor(value, currency)
    except ValueError:
        raise ProviderError(f"{TITLE} sent an unreadable {what} {str(value)[:40]!r}") from None
    return checked_amount(amount, what)


def overview_metric(overview: dict, metric: str) -> Any:
    metrics = overview.get("metrics") if isinstance(overview, dict) else None
    if not isinstance(metrics, list):
        raise ProviderError(f"{TITLE} sent the metrics overview without a `metrics` list")
    for entry in metrics:
        if isinstance(entry, dict) and entry.get("id") == metric:
            if entry.get("value") is None:
                break
            return entry["value"]
    raise ProviderError(f"{TITLE}'s metrics overview has no `{metric}` value; nothing was written")


def chart_points(chart: dict) -> list[tuple[datetime, Any]]:
    """(period start, revenue) of a revenue chart: its `values` of the Revenue measure."""
    values = chart.get("values") if isinstance(chart, dict) else None
    if not isinstance(values, list):
        raise ProviderError(f"{TITLE} sent the revenue chart without a `values` list")
    measure = 0
    for index, entry in enumerate(chart.get("measures") or []):
        if isinstance(entry, dict) and str(entry.get("display_name", "")).lower() == "revenue":
            measure = index
            break
    points = []
    for value in values:
        if not isinstance(value, dict) or "cohort" not in value or "value" not in value:
            raise ProviderError(
                f"{TITLE} sent a revenue chart value without `cohort` or `value`; "
                "nothing was written"
            )
        if int(value.get("measure") or 0) != measure:
            continue
        cohort = value["cohort"]
        if isinstance(cohort, int | float) and cohort > 10**11:
            cohort = cohort / 1000  # milliseconds
        points.append((parse_timestamp(cohort), value["value"]))
    return points


def compute(*, raw: dict, now: datetime) -> ProviderFigures:
    overview = raw["overview"]
    currency = _currency(overview, "currency", "metrics overview")
    rc_mrr = _minor(overview_metric(overview, "mrr"), currency, "MRR")
    mrr: Money = {currency: rc_mrr * TO_OUR_MONTH}
    customers = int(checked_amount(overview_metric(overview, "active_subscriptions"), "count"))
    monthly: dict[date, MonthFigures] = {}
    chart_currency = _currency(raw["monthly"], "yaxis_currency", "revenue chart")
    for at, value in chart_points(raw["monthly"]):
        if at > now:
            continue
        amount = _minor(value, chart_currency, "revenue")
        if not monthly and not amount:
            continue  # history starts at the first month with revenue
        money_add(monthly.setdefault(month_start(at), MonthFigures()).gross, chart_currency, amount)
    last_30_days: Money = {}
    daily_currency = _currency(raw["daily"], "yaxis_currency", "revenue chart")
    window_start = now - timedelta(days=LAST_DAYS)
    for at, value in chart_points(raw["daily"]):
        if window_start <= at <= now:
            money_add(last_30_days, daily_currency, _minor(value, daily_currency, "revenue"))
    return ProviderFigures(mrr=mrr, monthly=monthly, last_30_days=last_30_days, customers=customers)


PROVIDER = Provider(
    name="revenuecat",
    default_api_base="https://api.revenuecat.com",
    auth_headers=auth_headers,
    fetch=fetch,
    compute=compute,
    title=TITLE,
    key_hint='RevenueCat secret API key v2 (read-only), or {"api_key", "project_id"} as JSON',
    test_key_prefixes=("test_",),
    probe=probe,
)
