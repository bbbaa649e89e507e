"""A local fake of the payment providers' APIs for the verification tests.

One local server (tests/fake_server.py). Each account is a bearer token
with its routes (path -> handler of the query); unknown or revoked tokens get 401, as the real
providers answer. Pagination follows each provider's real scheme.
"""

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fake_server import FakeServer, Stream, answer

# The moment the golden cases are computed at (their hand-worked months end here).
NOW = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)

Query = dict[str, list[str]]
Answer = tuple[int, dict[str, str], Any]
Route = Callable[[Query], Answer]


class FakeProviders(FakeServer):
    def __init__(self) -> None:
        self.accounts: dict[str, dict[str, Route]] = {}
        self.revoked: set[str] = set()
        self.requests: list[tuple[str, str, Query]] = []
        # The headers of each request, in the same order as `requests`.
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()

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


def stripe_routes(
    *,
    subscriptions: list[dict],
    balance_transactions: list[dict],
    items: list[dict] = (),
    charges: list[dict] = (),
    coupons: list[dict] = (),
    prices: list[dict] = (),
) -> dict[str, Route]:
    """Stripe's lists, plus one route per coupon and price id (`/v1/coupons/{id}`)."""
    routes = {
        "/v1/subscriptions": stripe_list(subscriptions, filter_status=True),
        "/v1/balance_transactions": stripe_list(balance_transactions),
        "/v1/subscription_items": stripe_list(list(items)),
        "/v1/charges": stripe_list(list(charges)),
    }
    for obj in [*coupons, *prices]:
        path = f"/v1/{'coupons' if obj['object'] == 'coupon' else 'prices'}/{obj['id']}"
        routes[path] = lambda query, obj=obj: ok(obj)
    return routes


def stripe_account(*, charged: int) -> dict[str, Route]:
    """A Stripe account with one $49/month subscription and one $49 charge at `charged`."""
    return stripe_routes(
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


def polar_routes(
    *,
    min_date: str,
    monthly: list[dict],
    daily: list[dict],
    subscriptions: list[dict] = (),
    orders: list[dict] = (),
    refunds: list[dict] = (),
) -> dict[str, Route]:
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
        "/v1/metrics/": metrics,
        "/v1/subscriptions/": polar_list(list(subscriptions)),
        "/v1/orders/": polar_list(list(orders)),
        "/v1/refunds/": polar_list(list(refunds)),
    }


# --- Gumroad: `page_key` / `next_page_key` ---


def gumroad_routes(*, sales: list[dict], page_size: int = 10) -> dict[str, Route]:
    def answer(query: Query) -> Answer:
        start = int(_first(query, "page_key", "0"))
        body: dict[str, Any] = {"success": True, "sales": sales[start : start + page_size]}
        if start + page_size < len(sales):
            body["next_page_key"] = str(start + page_size)
        return ok(body)

    return {"/v2/sales": answer}


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


def paddle_routes(
    *,
    subscriptions: list[dict] = (),
    transactions: list[dict] = (),
    adjustments: list[dict] = (),
    discounts: list[dict] = (),
    mrr_metrics: Route | None = None,
) -> dict[str, Route]:
    """Paddle's lists; `mrr_metrics` answers /metrics/monthly-recurring-revenue (absent: 404)."""
    routes = {
        "/subscriptions": paddle_list(list(subscriptions)),
        "/transactions": paddle_list(list(transactions), status="status"),
        "/adjustments": paddle_list(list(adjustments), action="action"),
    }
    for discount in discounts:
        routes[f"/discounts/{discount['id']}"] = lambda query, d=discount: ok({"data": d})
    if mrr_metrics is not None:
        routes["/metrics/monthly-recurring-revenue"] = mrr_metrics
    return routes


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
