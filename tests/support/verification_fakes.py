"""A local fake of the payment providers' APIs for the verification tests.

One local server (tests/support/fake_server.py). Each account is a bearer token
with its routes (path -> handler of the query); unknown or revoked tokens get 401, as the real
providers answer. Pagination follows each provider's real scheme.
"""

import itertools
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from startups.models import Startup
from tests.support.factories import make_startup
from tests.support.fake_server import FakeServer, Stream, answer
from verification.connections import provider_connection_connect
from verification.models import ProviderConnection

# The moment the golden cases are computed at (their hand-worked months end here).
NOW = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)

Query = dict[str, list[str]]
Answer = tuple[int, dict[str, str], Any]
Route = Callable[[Query], Answer]

# Each account the helpers below make is another provider account (its own id), unless a test
# passes the same identity twice.
_accounts = itertools.count(1)


def _next_account() -> int:
    return next(_accounts)


class FakeProviders(FakeServer):
    def __init__(self) -> None:
        self.accounts: dict[str, dict[str, Route]] = {}
        self.revoked: set[str] = set()
        self.requests: list[tuple[str, str, Query]] = []
        # The headers of each request, in the same order as `requests`.
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        # Turns the bearer token into the account it belongs to (App Store Connect's signed
        # tokens change every time); None keeps the token as the account's name.
        self.authenticate: Callable[[str], str | None] | None = None

    def account(self, token: str, routes: dict[str, Route]) -> None:
        self.accounts[token] = routes

    def revoke(self, token: str) -> None:
        self.revoked.add(token)

    def calls(self, path: str, **where: str) -> int:
        """How many requests reached `path`, optionally with these query values."""
        return sum(
            1
            for _, seen, query in self.requests
            if seen == path and all(query.get(k) == [v] for k, v in where.items())
        )

    def get(self, request: BaseHTTPRequestHandler) -> None:
        url = urlsplit(request.path)
        query = parse_qs(url.query)
        token = (request.headers.get("Authorization") or "").removeprefix("Bearer ")
        if self.authenticate is not None:
            token = self.authenticate(token) or ""
        with self.lock:
            self.requests.append((token, url.path, query))
            self.headers.append(dict(request.headers.items()))
        routes = self.accounts.get(token)
        if routes is None or token in self.revoked:
            answer(request, 401, {}, {"error": {"message": "Invalid API key provided"}})
            return
        route = routes.get(url.path)
        if route is None:
            answer(request, 404, {}, {"error": {"message": f"no route {url.path}"}})
            return
        answer(request, *route(query))


def dripping(*, every: float, total: int = 10_000) -> Route:
    """Announces `total` bytes, then sends one byte every `every` seconds."""

    def write(wfile: Any) -> None:
        for _ in range(total):
            wfile.write(b" ")
            wfile.flush()
            time.sleep(every)

    return lambda query: (200, {"Content-Length": str(total)}, Stream(write))


def huge(*, size: int, declare_length: bool) -> Route:
    """A JSON-looking body of `size` bytes, with or without a Content-Length."""

    def write(wfile: Any) -> None:
        chunk = b" " * 65536
        for _ in range(size // len(chunk)):
            wfile.write(chunk)

    headers = {"Content-Length": str(size)} if declare_length else {}
    return lambda query: (200, headers, Stream(write))


def ok(body: Any) -> Answer:
    return 200, {}, body


def failing_first(route: Route, *, status: int, times: int = 1, retry_after: str = "1") -> Route:
    """A route that answers `status` (with Retry-After) `times` times, then works."""
    left = [times]

    def answer(query: Query) -> Answer:
        if left[0] > 0:
            left[0] -= 1
            return status, {"Retry-After": retry_after}, {"error": {"message": "slow down"}}
        return route(query)

    return answer


def always(status: int) -> Route:
    return lambda query: (status, {}, {"error": {"message": "down"}})


def _first(query: Query, name: str, default: str | None = None) -> str | None:
    return query.get(name, [default])[0]


def _after_id(records: list[dict], after: str | None, size: int) -> tuple[list[dict], bool]:
    """The `size` records after the one with id `after` (from the first without), and whether
    more follow: cursor paging (Stripe, Paddle)."""
    start = 0
    if after:
        start = next(i for i, record in enumerate(records) if record["id"] == after) + 1
    return records[start : start + size], start + size < len(records)


def _numbered(records: list[dict], number: int, size: int) -> tuple[list[dict], int]:
    """Page `number` (from 1) of `size` records, and the last page's number (at least 1): page
    number paging (Lemon Squeezy, Polar)."""
    return records[(number - 1) * size : number * size], max(1, -(-len(records) // size))


# --- Stripe: `limit` + `starting_after`, `has_more` ---


def stripe_list(objects: list[dict], *, filter_status: bool = False) -> Route:
    def answer(query: Query) -> Answer:
        chosen = objects
        if filter_status and _first(query, "status") not in (None, "all"):
            chosen = [obj for obj in objects if obj["status"] == _first(query, "status")]
        if _first(query, "subscription"):
            chosen = [obj for obj in chosen if obj["subscription"] == _first(query, "subscription")]
        limit = min(int(_first(query, "limit", "10")), 100)
        page, has_more = _after_id(chosen, _first(query, "starting_after"), limit)
        return ok({"object": "list", "data": page, "has_more": has_more})

    return answer


# A coupon's fields that Stripe returns only when the request expands them.
COUPON_EXPANDABLE = ("applies_to", "currency_options")


def stripe_coupon_route(coupon: dict) -> Route:
    """`GET /v1/coupons/{id}`: `applies_to` and `currency_options` only with `expand[]`."""

    def answer(query: Query) -> Answer:
        expanded = query.get("expand[]", [])
        return ok({k: v for k, v in coupon.items() if k not in COUPON_EXPANDABLE or k in expanded})

    return answer


def stripe_routes(
    *,
    subscriptions: list[dict],
    balance_transactions: list[dict],
    items: list[dict] = (),
    charges: list[dict] = (),
    coupons: list[dict] = (),
    prices: list[dict] = (),
    disputes: list[dict] = (),
    account: dict | None = None,
) -> dict[str, Route]:
    """Stripe's lists, plus one route per coupon and price id (`/v1/coupons/{id}`), and the
    account the key reads (GET /v1/account; another account each call unless given)."""
    account = account or stripe_account_object()
    routes = {
        "/v1/account": lambda query: ok(account),
        "/v1/subscriptions": stripe_list(subscriptions, filter_status=True),
        "/v1/balance_transactions": stripe_list(balance_transactions),
        "/v1/subscription_items": stripe_list(list(items)),
        "/v1/charges": stripe_list(list(charges)),
        "/v1/disputes": stripe_list(list(disputes)),
    }
    for coupon in coupons:
        routes[f"/v1/coupons/{coupon['id']}"] = stripe_coupon_route(coupon)
    for price in prices:
        routes[f"/v1/prices/{price['id']}"] = lambda query, obj=price: ok(obj)
    return routes


def stripe_account_object(
    account_id: str | None = None, *, name: str | None = "Fake Co", url: str | None = None
) -> dict:
    """GET /v1/account as Stripe documents it (the fields we read, and a few around them)."""
    account_id = account_id or f"acct_1Fake{_next_account():010d}"
    return {
        "id": account_id,
        "object": "account",
        "business_profile": {"mcc": "5734", "name": name, "support_email": None, "url": url},
        "business_type": "company",
        "charges_enabled": True,
        "country": "US",
        "default_currency": "usd",
        "details_submitted": True,
        "email": "owner@example.com",
        "payouts_enabled": True,
        "settings": {"dashboard": {"display_name": name, "timezone": "Etc/UTC"}},
        "type": "standard",
    }


def stripe_account(*, charged: int, account: dict | None = None) -> dict[str, Route]:
    """A Stripe account with one $49/month subscription and one $49 charge at `charged`."""
    return stripe_routes(
        account=account,
        subscriptions=[
            {
                "id": "sub_1",
                "status": "active",
                "currency": "usd",
                "customer": "cus_1",
                "items": {
                    "has_more": False,
                    "data": [
                        {
                            "id": "si_1",
                            "quantity": 1,
                            "price": {
                                "unit_amount": 4900,
                                "recurring": {"interval": "month", "usage_type": "licensed"},
                            },
                        }
                    ],
                },
            }
        ],
        balance_transactions=[
            {"id": "txn_1", "type": "charge", "amount": 4900, "currency": "usd", "created": charged}
        ],
    )


# --- Lemon Squeezy: JSON:API, `page[number]` + `page[size]`, meta.page.lastPage -------------------


def jsonapi_list(kind: str, records: list[dict]) -> Route:
    def answer(query: Query) -> Answer:
        size = int(_first(query, "page[size]", "10"))
        number = int(_first(query, "page[number]", "1"))
        page, last = _numbered(records, number, size)
        data = [{"type": kind, "id": str(record["id"]), "attributes": record} for record in page]
        meta = {"page": {"currentPage": number, "lastPage": last, "perPage": size}}
        return ok({"meta": meta, "data": data})

    return answer


def lemonsqueezy_routes(
    *, stores: list, prices: list, subscriptions: list, orders: list, invoices: list
) -> dict[str, Route]:
    return {
        "/v1/stores": jsonapi_list("stores", stores),
        "/v1/prices": jsonapi_list("prices", prices),
        "/v1/subscriptions": jsonapi_list("subscriptions", subscriptions),
        "/v1/orders": jsonapi_list("orders", orders),
        "/v1/subscription-invoices": jsonapi_list("subscription-invoices", invoices),
    }


# --- Polar: metrics periods by interval; customers with `page` + `limit`, pagination.max_page -----


def polar_month(month: str, *, revenue: int, mrr: int, **more: int) -> dict:
    """One monthly period of Polar's metrics (US cents) for `month` (YYYY-MM)."""
    return {
        "timestamp": f"{month}-01T00:00:00Z",
        "revenue": revenue,
        "monthly_recurring_revenue": mrr,
        **more,
    }


def polar_organization(
    organization_id: str | None = None, *, name: str = "Fake Org", website: str | None = None
) -> dict:
    """One Organization of GET /v1/organizations/ as Polar documents it."""
    number = _next_account()
    return {
        "id": organization_id or f"00000000-0000-4000-8000-{number:012d}",
        "created_at": "2024-01-01T00:00:00Z",
        "modified_at": None,
        "name": name,
        "slug": f"fake-org-{number}",
        "avatar_url": None,
        "email": None,
        "website": website,
        "socials": [],
    }


def polar_routes(
    *,
    min_date: str,
    monthly: list[dict],
    daily: list[dict],
    subscriptions: list[dict] = (),
    orders: list[dict] = (),
    refunds: list[dict] = (),
    organization: dict | None = None,
) -> dict[str, Route]:
    organization = organization or polar_organization()

    def metrics(query: Query) -> Answer:
        periods = monthly if _first(query, "interval") == "month" else daily
        return ok({"periods": periods, "totals": {}, "metrics": {}})

    def polar_list(records: list[dict]) -> Route:
        def answer(query: Query) -> Answer:
            limit = int(_first(query, "limit", "10"))
            items, max_page = _numbered(records, int(_first(query, "page", "1")), limit)
            pagination = {"total_count": len(records), "max_page": max_page}
            return ok({"items": items, "pagination": pagination})

        return answer

    limits = {
        "min_date": min_date,
        "intervals": {"month": {"max_days": 3650}, "day": {"max_days": 366}},
    }
    return {
        "/v1/metrics/limits": lambda query: ok(limits),
        "/v1/organizations/": lambda query: ok(
            {"items": [organization], "pagination": {"total_count": 1, "max_page": 1}}
        ),
        "/v1/metrics/": metrics,
        "/v1/subscriptions/": polar_list(list(subscriptions)),
        "/v1/orders/": polar_list(list(orders)),
        "/v1/refunds/": polar_list(list(refunds)),
    }


# --- Gumroad: `page_key` / `next_page_key` ---


def gumroad_user(user_id: str | None = None, *, name: str = "Fake Creator") -> dict:
    """GET /v2/user as Gumroad documents it."""
    number = _next_account()
    return {
        "success": True,
        "user": {
            "bio": None,
            "name": name,
            "twitter_handle": None,
            "user_id": user_id or f"G_fake{number}==",
            "email": f"creator{number}@example.com",
            "url": f"https://gumroad.com/creator{number}",
        },
    }


def gumroad_routes(
    *, sales: list[dict], page_size: int = 10, user: dict | None = None
) -> dict[str, Route]:
    user = user or gumroad_user()

    def answer(query: Query) -> Answer:
        start = int(_first(query, "page_key", "0"))
        body: dict[str, Any] = {"success": True, "sales": sales[start : start + page_size]}
        if start + page_size < len(sales):
            body["next_page_key"] = str(start + page_size)
        return ok(body)

    return {"/v2/sales": answer, "/v2/user": lambda query: ok(user)}


def rows(startup) -> list[tuple[str, int, int, int]]:
    """The startup's stored months as (YYYY-MM, gross, refunds, net)."""
    from startups.models import MonthlyRevenue

    return [
        (f"{row.month:%Y-%m}", row.gross, row.refunds, row.net)
        for row in MonthlyRevenue.objects.filter(verification__startup=startup)
    ]


# --- Paddle Billing: `after=<last id>` + `per_page`, meta.pagination.has_more ------------------


def paddle_list(entities: list[dict], **filters: str) -> Route:
    def answer(query: Query) -> Answer:
        chosen = entities
        for name, field in filters.items():
            if wanted := _first(query, name):
                chosen = [e for e in chosen if e.get(field) in wanted.split(",")]
        per_page = int(_first(query, "per_page", "50"))
        page, has_more = _after_id(chosen, _first(query, "after"), per_page)
        next_url = f"https://api.paddle.com/x?after={page[-1]['id']}" if page else None
        pagination = {"per_page": per_page, "next": next_url, "has_more": has_more}
        return ok({"data": page, "meta": {"request_id": "req", "pagination": pagination}})

    return answer


def paddle_seller(
    seller_id: str | None = None, *, name: str = "Fake Seller", website: str | None = None
) -> dict:
    """GET /account's `data` as Paddle documents it (the business identity of the seller)."""
    number = _next_account()
    return {
        "id": seller_id or f"slr_01fake{number:020d}",
        "legacy_id": str(100000 + number),
        "legal_name": f"{name} Ltd",
        "display_name": name,
        "website": website,
        "email": f"seller{number}@example.com",
    }


def paddle_routes(
    *,
    subscriptions: list[dict] = (),
    transactions: list[dict] = (),
    adjustments: list[dict] = (),
    discounts: list[dict] = (),
    addresses: list[dict] = (),
    seller: dict | None = None,
    mrr_metrics: Route | None = None,
) -> dict[str, Route]:
    """Paddle's lists; `mrr_metrics` answers /metrics/monthly-recurring-revenue (absent: 404)."""
    seller = seller or paddle_seller()
    routes = {
        "/account": lambda query: ok({"data": seller, "meta": {"request_id": "req"}}),
        "/subscriptions": paddle_list(list(subscriptions)),
        "/transactions": paddle_list(list(transactions), status="status"),
        "/adjustments": paddle_list(list(adjustments), action="action"),
    }
    for discount in discounts:
        routes[f"/discounts/{discount['id']}"] = lambda query, d=discount: ok({"data": d})
    for address in addresses:  # GET /customers/{customer_id}/addresses/{address_id}
        path = f"/customers/{address['customer_id']}/addresses/{address['id']}"
        routes[path] = lambda query, a=address: ok({"data": a})
    if mrr_metrics is not None:
        routes["/metrics/monthly-recurring-revenue"] = mrr_metrics
    return routes


# --- Dodo Payments: `page_number` (from 0) + `page_size`, `{"items": [...]}` -------------------


def dodo_list(records: list[dict]) -> Route:
    def answer(query: Query) -> Answer:
        size = int(_first(query, "page_size", "10"))
        number = int(_first(query, "page_number", "0"))
        return ok({"items": records[number * size : (number + 1) * size]})

    return answer


def dodo_routes(
    *,
    payments: list[dict] = (),
    subscriptions: list[dict] = (),
    refunds: list[dict] = (),
    disputes: list[dict] = (),
) -> dict[str, Route]:
    return {
        "/payments": dodo_list(list(payments)),
        "/subscriptions": dodo_list(list(subscriptions)),
        "/refunds": dodo_list(list(refunds)),
        "/disputes": dodo_list(list(disputes)),
    }


# --- RevenueCat API v2: projects (`next_page`), metrics overview, charts ---------------------


def revenuecat_chart(points: list[tuple[datetime, float, int]], *, resolution: str) -> dict:
    """A `chart_data` answer of the revenue chart: (period start, revenue in dollars,
    transactions) per period, as two measures (Revenue in $, Transactions as a count)."""
    values = []
    for at, revenue, transactions in points:
        cohort = int(at.timestamp())
        values.append({"cohort": cohort, "incomplete": False, "measure": 0, "value": revenue})
        values.append({"cohort": cohort, "incomplete": False, "measure": 1, "value": transactions})
    return {
        "object": "chart_data",
        "category": "revenue",
        "display_type": "line",
        "display_name": "Revenue",
        "description": "Gross revenue, not including store fees or taxes",
        "documentation_link": "https://www.revenuecat.com/docs/dashboard-and-metrics/charts",
        "last_computed_at": 1763200000000,
        "resolution": resolution,
        "yaxis_currency": "USD",
        "filtering_allowed": True,
        "segmenting_allowed": True,
        "values": values,
        "summary": {"total": {"Revenue": sum(p[1] for p in points)}},
        "measures": [
            {"display_name": "Revenue", "description": "Revenue", "unit": "$",
             "chartable": True, "decimal_precision": 2, "tabulable": True},
            {"display_name": "Transactions", "description": "Transactions", "unit": "#",
             "chartable": True, "decimal_precision": 0, "tabulable": True},
        ],
    }  # fmt: skip


def revenuecat_metric(metric: str, value: float, unit: str = "#", period: str = "P0D") -> dict:
    return {
        "object": "overview_metric",
        "id": metric,
        "name": metric.replace("_", " ").title(),
        "description": "In total" if period == "P0D" else "Last 28 days",
        "unit": unit,
        "period": period,
        "value": value,
        "last_updated_at": 1763200000000,
        "last_updated_at_iso8601": "2026-11-15 10:00:00.000000+00:00",
    }


def revenuecat_routes(
    *,
    projects: list[list[str]],
    overview: dict,
    monthly: dict,
    daily: dict,
) -> dict[str, Route]:
    """`projects`: the project ids of each page of GET /v2/projects."""

    def project_pages(query: Query) -> Answer:
        number = int(_first(query, "starting_after", "0") or 0)
        items = [
            {"object": "project", "id": pid, "name": pid, "created_at": 1700000000000}
            for pid in projects[number]
        ]
        more = number + 1 < len(projects)
        next_page = f"/v2/projects?starting_after={number + 1}&limit=100" if more else None
        return ok({"object": "list", "items": items, "next_page": next_page, "url": "/v2/projects"})

    routes: dict[str, Route] = {"/v2/projects": project_pages}
    for page in projects:
        for pid in page:
            routes[f"/v2/projects/{pid}/metrics/overview"] = lambda query: ok(overview)
            routes[f"/v2/projects/{pid}/charts/revenue"] = lambda query: ok(
                monthly if _first(query, "resolution") == "month" else daily
            )
    return routes


# --- Whop API v1: `first` + `after=<end_cursor>`, `{data, page_info}` -------------------------


def whop_list(records: list[dict], *, company: str | None = None) -> Route:
    """Cursor pages; with `company`, a request for another company_id is refused (403)."""

    def answer(query: Query) -> Answer:
        if company and _first(query, "company_id") not in (None, company):
            return 403, {}, {"error": {"type": "forbidden", "message": "not your company"}}
        first = int(_first(query, "first", "10"))
        after = _first(query, "after")
        start = int(after.removeprefix("cur_")) if after else 0
        page = records[start : start + first]
        more = start + first < len(records)
        info = {
            "end_cursor": f"cur_{start + len(page)}" if page else None,
            "start_cursor": f"cur_{start}",
            "has_next_page": more,
            "has_previous_page": start > 0,
        }
        return ok({"data": page, "page_info": info})

    return answer


def whop_routes(
    *,
    plans: list[dict] = (),
    memberships: list[dict] = (),
    payments: list[dict] = (),
    company=None,
    archived: list[dict] = (),
) -> dict[str, Route]:
    """The lists, and GET /api/v1/plans/{id} for every plan (`archived` ones only that way)."""
    routes = {
        "/api/v1/plans": whop_list(list(plans), company=company),
        "/api/v1/memberships": whop_list(list(memberships), company=company),
        "/api/v1/payments": whop_list(list(payments), company=company),
    }
    for plan in [*plans, *archived]:
        routes[f"/api/v1/plans/{plan['id']}"] = lambda query, plan=plan: ok(plan)
    return routes


# --- App Store Connect: ES256 tokens checked as Apple does; gzip TSV sales reports -------------

APPLE_SALES_COLUMNS = (
    "Provider", "Provider Country", "SKU", "Developer", "Title", "Version",
    "Product Type Identifier", "Units", "Developer Proceeds", "Begin Date", "End Date",
    "Customer Currency", "Country Code", "Currency of Proceeds", "Apple Identifier",
    "Customer Price", "Promo Code", "Parent Identifier", "Subscription", "Period", "Category",
    "CMB", "Device", "Supported Platforms", "Proceeds Reason", "Preserved Pricing", "Client",
    "Order Type",
)  # fmt: skip
APPLE_SUBSCRIPTION_COLUMNS = (
    "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID",
    "Subscription Group ID", "Standard Subscription Duration", "Subscription Offer Name",
    "Promotional Offer ID", "Customer Price", "Customer Currency", "Developer Proceeds",
    "Proceeds Currency", "Preserved Pricing", "Proceeds Reason", "Client", "Device", "State",
    "Country", "Active Standard Price Subscriptions",
    "Active Free Trial Introductory Offer Subscriptions",
    "Active Pay Up Front Introductory Offer Subscriptions",
    "Active Pay As You Go Introductory Offer Subscriptions",
    "Free Trial Promotional Offer Subscriptions", "Pay Up Front Promotional Offer Subscriptions",
    "Pay As You Go Promotional Offer Subscriptions", "Marketing Opt-Ins", "Billing Retry",
    "Grace Period", "Subscription Offer Type", "Subscription Offer Duration",
    "Free Trial Offer Code Subscriptions", "Pay Up Front Offer Code Subscriptions",
    "Pay As You Go Offer Code Subscriptions", "Subscribers",
)  # fmt: skip


def apple_tokens(keys: dict[str, tuple[Any, str]]) -> Callable[[str], str | None]:
    """Checks a bearer token as Apple documents it and names its account (the key id): header
    alg ES256, typ JWT and a known kid; an ES256 signature by that key; iss the key's issuer, aud
    appstoreconnect-v1, a lifetime of at most 20 minutes, not expired. `keys`: key id ->
    (public key, issuer id). Anything else gets no account (401)."""
    import base64
    import json

    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    def part(text: str) -> bytes:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    def check(token: str) -> str | None:
        try:
            head, body, signature = token.split(".")
            header, claims = json.loads(part(head)), json.loads(part(body))
            public, issuer = keys[header["kid"]]
            raw = part(signature)
            if header != {"alg": "ES256", "kid": header["kid"], "typ": "JWT"} or len(raw) != 64:
                return None
            der = encode_dss_signature(int.from_bytes(raw[:32]), int.from_bytes(raw[32:]))
            public.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
        except (ValueError, KeyError, InvalidSignature):
            return None
        now = time.time()
        lifetime = claims.get("exp", 0) - claims.get("iat", 0)
        if (
            claims.get("iss") != issuer
            or claims.get("aud") != "appstoreconnect-v1"
            or not 0 < lifetime <= 20 * 60
            or claims["exp"] <= now
            or claims["iat"] > now + 60
        ):
            return None
        return header["kid"]

    return check


def apple_tsv(columns: tuple[str, ...], records: list[dict]) -> bytes:
    """A gzip file of tab-separated values, as Apple sends its reports."""
    import gzip

    lines = ["\t".join(columns)]
    lines += ["\t".join(str(record.get(c, "")) for c in columns) for record in records]
    return gzip.compress(("\n".join(lines) + "\n").encode())


def apple_reports(
    *, vendor: str, sales: dict[str, list[dict]], subscriptions: dict[str, list[dict]]
) -> dict[str, Route]:
    """`sales`: report date (YYYY-MM for MONTHLY, YYYY-MM-DD for DAILY) -> rows;
    `subscriptions`: day -> rows of the subscription report. Other dates: 404, as Apple answers
    for a date without sales."""

    def reports(query: Query) -> Answer:
        if _first(query, "filter[vendorNumber]") != vendor:
            return 403, {}, {"errors": [{"status": "403", "code": "FORBIDDEN_ERROR"}]}
        kind, day = _first(query, "filter[reportType]"), _first(query, "filter[reportDate]")
        frequency = _first(query, "filter[frequency]")
        if _first(query, "filter[reportSubType]") != "SUMMARY" or frequency not in (
            "DAILY",
            "MONTHLY",
        ):
            return 400, {}, {"errors": [{"status": "400", "code": "PARAMETER_ERROR.INVALID"}]}
        if kind == "SALES" and _first(query, "filter[version]") == "1_1":
            found, columns = sales.get(day), APPLE_SALES_COLUMNS
        elif kind == "SUBSCRIPTION" and _first(query, "filter[version]") == "1_3":
            found, columns = subscriptions.get(day), APPLE_SUBSCRIPTION_COLUMNS
        else:
            return 400, {}, {"errors": [{"status": "400", "code": "PARAMETER_ERROR.INVALID"}]}
        if found is None:
            detail = "There were no sales for the date specified."
            return 404, {}, {"errors": [{"status": "404", "code": "NOT_FOUND", "detail": detail}]}
        data = apple_tsv(columns, found)
        headers = {"Content-Length": str(len(data)), "Content-Disposition": "attachment"}
        return 200, headers, Stream(lambda wfile: wfile.write(data))

    apps = {"data": [{"type": "apps", "id": "1234567890", "attributes": {"name": "App"}}],
            "links": {"self": "https://api.appstoreconnect.apple.com/v1/apps"}}  # fmt: skip
    return {"/v1/salesReports": reports, "/v1/apps": lambda query: ok(apps)}


def paddle_mrr_metrics(*, currency: str, amounts: list[str]) -> Route:
    """Paddle's MRR metric (GET /metrics/monthly-recurring-revenue): one datapoint per day from
    `from` (inclusive) to `to` (exclusive), amounts as strings in the smallest currency unit."""

    def answer(query: Query) -> Answer:
        start, end = _first(query, "from"), _first(query, "to")
        series = [
            {"timestamp": f"2026-11-{8 + n:02d}T00:00:00Z", "amount": amount}
            for n, amount in enumerate(amounts)
        ]
        return ok(
            {
                "data": {
                    "currency_code": currency,
                    "timeseries": series,
                    "starts_at": f"{start}T00:00:00Z",
                    "ends_at": f"{end}T00:00:00Z",
                    "interval": "day",
                    "updated_at": "2026-11-15T11:00:00Z",
                },
                "meta": {"request_id": "req"},
            }
        )

    return answer


def stripe_connected(fake, slug: str = "acme", key: str = "rk_live_feed1") -> ProviderConnection:
    """Startup `slug` (made if missing) connected to the fake Stripe with one charged account."""
    startup = Startup.objects.filter(slug=slug).first() or make_startup("Acme", slug=slug)
    fake.account(key, stripe_account(charged=int(datetime(2026, 11, 1, tzinfo=UTC).timestamp())))
    return provider_connection_connect(
        startup=startup, provider="stripe", raw_key=key, api_base=fake.base_url
    )
