"""Lemon Squeezy, Polar and Gumroad golden cases, synced through the local fake APIs.

Time is fixed at NOW (2026-11-15 12:00 UTC). Every expected number is worked out in comments.
"""

import pytest

from startups.models import MonthlyRevenue, Startup
from tests.support.provider_rows import ls_payment, ls_price, ls_subscription, sale
from tests.support.verification_fakes import (
    NOW,
    FakeProviders,
    failing_first,
    gumroad_routes,
    lemonsqueezy_routes,
    polar_month,
    polar_routes,
    rows,
)
from verification.connections import provider_connection_connect
from verification.models import ProviderConnection
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db


def connect_and_sync(
    fake_providers: FakeProviders, *, provider: str, routes: dict, slug: str
) -> Startup:
    startup = Startup.objects.create(name=slug.title(), slug=slug)
    fake_providers.account(f"key_{slug}", routes)
    connection = provider_connection_connect(
        startup=startup, provider=provider, raw_key=f"key_{slug}", api_base=fake_providers.base_url
    )
    revenue_sync(connection=connection, now=NOW)
    assert connection.status == ProviderConnection.Status.OK, connection.last_error
    startup.refresh_from_db()
    return startup


# --- Lemon Squeezy -----------------------------------------------------------------------------


def test_lemonsqueezy_mrr_and_months(fake_providers):
    # MRR: $15/month x 2 seats = 30.00; $120/year = 10.00; past_due $5 = 5.00;
    # on_trial $50, usage-based $7, cancelled $9 do not count. MRR = 45, ARR = 540.
    # Money: order Oct 3 $15, refunded $15 on Nov 2 (counts in November);
    #        invoice `initial` Oct 3 $15 repeats the order: skipped;
    #        renewal invoice Nov 3 $30; a pending order of $99 is not money.
    #   2026-10: gross 15, refunds 0,  net 15
    #   2026-11: gross 30, refunds 15, net 15   -> total revenue 30
    # Last 30 days (from Oct 16 12:00): 30 - 15 = 15.
    # Customers: subscribers that are active or past due, metered ones included (1, 2, 3, 5) = 4.
    routes = lemonsqueezy_routes(
        stores=[{"id": 1, "currency": "USD"}],
        prices=[
            ls_price(1, 1500),
            ls_price(2, 12000, "year"),
            ls_price(3, 500),
            ls_price(4, 5000),
            ls_price(5, 700, usage="sum"),
            ls_price(6, 900),
        ],
        subscriptions=[
            ls_subscription(1, 1, quantity=2),
            ls_subscription(2, 2),
            ls_subscription(3, 3, status="past_due"),
            ls_subscription(4, 4, status="on_trial"),
            ls_subscription(5, 5),
            ls_subscription(6, 6, status="cancelled"),
        ],
        orders=[
            ls_payment(
                1,
                1500,
                "2026-10-03T10:00:00.000000Z",
                status="refunded",
                refunded=True,
                refunded_at="2026-11-02T10:00:00.000000Z",
                refunded_amount=1500,
            ),
            ls_payment(2, 9900, "2026-11-04T10:00:00.000000Z", status="pending"),
        ],
        invoices=[
            ls_payment(1, 1500, "2026-10-03T10:00:00.000000Z", billing_reason="initial"),
            ls_payment(2, 3000, "2026-11-03T10:00:00.000000Z", billing_reason="renewal"),
        ],
    )
    startup = connect_and_sync(fake_providers, provider="lemonsqueezy", routes=routes, slug="lemon")
    verification = startup.verification
    assert (verification.provider, verification.mrr, verification.arr) == ("lemonsqueezy", 45, 540)
    assert rows(startup) == [("2026-10", 15, 0, 15), ("2026-11", 30, 15, 15)]
    assert (verification.total_revenue, verification.last_30_days) == (30, 15)
    assert verification.customers == 4


def test_lemonsqueezy_reads_every_page(fake_providers):
    # 250 subscriptions at $4/month: pages of 100 -> 3 pages; MRR = 1,000.
    routes = lemonsqueezy_routes(
        stores=[{"id": 1, "currency": "USD"}],
        prices=[ls_price(1, 400)],
        subscriptions=[ls_subscription(n, 1) for n in range(1, 251)],
        orders=[],
        invoices=[],
    )
    startup = connect_and_sync(fake_providers, provider="lemonsqueezy", routes=routes, slug="pages")
    assert startup.verification.mrr == 1000
    assert fake_providers.calls("/v1/subscriptions", **{"page[size]": "100"}) == 3


# --- Polar -------------------------------------------------------------------------------------


def test_polar_figures_come_from_the_metrics_endpoint(fake_providers):
    # Monthly periods (US cents): Sep 0 (before the first sale: not history), Oct 5,000, Nov 7,050.
    # Refunds: $20 on Nov 5 of an October order (counts in November); a failed one is ignored.
    #   2026-10: gross 50,               refunds 0,  net 50
    #   2026-11: gross 70.50 -> 71 (half up), refunds 20, net 51   -> total revenue 101
    # MRR: the latest period's monthly_recurring_revenue 6,000 cents = 60; ARR = 720.
    # Last 30 days (Oct 17..Nov 15): daily revenue 1,500 + 3,000 - the 2,000 refund = 25.
    # Customers (paying): 150 paid orders over two pages of 100, one buyer each (cus_0..cus_149);
    # cus_0 also subscribes at $60 (counted once); cus_free's $0 plan is not a paying customer.
    routes = polar_routes(
        min_date="2026-01-01",
        monthly=[
            polar_month("2026-09", revenue=0, mrr=0),
            polar_month("2026-10", revenue=5000, mrr=4000),
            polar_month("2026-11", revenue=7050, mrr=6000),
        ],
        daily=[
            {"timestamp": "2026-10-20T00:00:00Z", "revenue": 1500},
            {"timestamp": "2026-11-10T00:00:00Z", "revenue": 3000},
        ],
        refunds=[
            {
                "id": "r1",
                "amount": 2000,
                "currency": "usd",
                "status": "succeeded",
                "created_at": "2026-11-05T09:00:00Z",
            },
            {
                "id": "r2",
                "amount": 9999,
                "currency": "usd",
                "status": "failed",
                "created_at": "2026-11-06T09:00:00Z",
            },
        ],
        orders=[
            {"id": f"o{n}", "status": "paid", "total_amount": 1000, "customer_id": f"cus_{n}"}
            for n in range(150)
        ],
        subscriptions=[
            {"id": "s0", "status": "active", "amount": 6000, "customer_id": "cus_0"},
            {"id": "s1", "status": "active", "amount": 0, "customer_id": "cus_free"},
        ],
    )
    startup = connect_and_sync(fake_providers, provider="polar", routes=routes, slug="bear")
    verification = startup.verification
    assert (verification.mrr, verification.arr) == (60, 720)
    assert rows(startup) == [("2026-10", 50, 0, 50), ("2026-11", 71, 20, 51)]
    assert (verification.total_revenue, verification.last_30_days) == (101, 25)
    assert verification.customers == 150
    assert fake_providers.calls("/v1/orders/") == 2


def test_polar_429_then_success(fake_providers):
    # The metrics limits call is throttled once; the retry succeeds. MRR 1,000 cents = 10.
    routes = polar_routes(
        min_date="2026-11-01",
        monthly=[polar_month("2026-11", revenue=1000, mrr=1000)],
        daily=[],
        subscriptions=[{"id": "s1", "status": "active", "amount": 1000, "customer_id": "cus_1"}],
    )
    routes["/v1/metrics/limits"] = failing_first(routes["/v1/metrics/limits"], status=429)
    startup = connect_and_sync(fake_providers, provider="polar", routes=routes, slug="slow")
    assert startup.verification.mrr == 10
    assert fake_providers.calls("/v1/metrics/limits") == 2


# --- Gumroad (no subscription data) ------------------------------------------------------------


def test_gumroad_has_total_revenue_but_no_mrr(fake_providers):
    # 12 sales over two pages (10 + 2):
    #   Sep 5: 10 x $20 = $200; one of them ($20) refunded on Oct 2 (refund date given).
    #   Oct 20: $35, partially refunded: $10 still refundable -> $25 refunded, no refund date,
    #           so it counts in the sale's month (October).
    #   Nov 1: a yen product; methodology v2: `price` is US cents whatever the product's
    #          currency, so price 3000 = $30.00 (v1 read it as ¥3,000).
    #   2026-09: gross 200, refunds 0,  net 200
    #   2026-10: gross 35,  refunds 45, net -10
    #   2026-11: gross 30,  refunds 0,  net 30      -> total revenue 220
    # Last 30 days (from Oct 16 12:00): 35 - 25 + 30 = 40.
    # Customers: three distinct buyer e-mails. MRR and ARR: null (no membership sales).
    sales = [sale(n, 2000, "2026-09-05T10:00:00Z") for n in range(9)]
    sales.append(
        sale(9, 2000, "2026-09-05T10:00:00Z", refunded=True, refunded_at="2026-10-02T10:00:00Z")
    )
    sales.append(
        sale(
            10,
            3500,
            "2026-10-20T10:00:00Z",
            partially_refunded=True,
            amount_refundable_in_currency="10.00",  # major units, as Gumroad sends it
        )
    )
    sales.append(sale(11, 3000, "2026-11-01T10:00:00Z", currency="jpy"))
    startup = connect_and_sync(
        fake_providers, provider="gumroad", routes=gumroad_routes(sales=sales), slug="road"
    )
    verification = startup.verification
    assert (verification.mrr, verification.arr) == (None, None)
    assert (startup.mrr, startup.arr) == (None, None)
    assert rows(startup) == [
        ("2026-09", 200, 0, 200),
        ("2026-10", 35, 45, -10),
        ("2026-11", 30, 0, 30),
    ]
    assert (verification.total_revenue, verification.last_30_days) == (220, 40)
    assert verification.customers == 3
    assert fake_providers.calls("/v2/sales") == 2


def test_gumroad_revoked_key_is_reported(fake_providers):
    startup = Startup.objects.create(name="Gone", slug="gone")
    fake_providers.account("revoked-later", gumroad_routes(sales=[]))
    connection = provider_connection_connect(
        startup=startup,
        provider="gumroad",
        raw_key="revoked-later",
        api_base=fake_providers.base_url,
    )
    fake_providers.revoke("revoked-later")
    revenue_sync(connection=connection, now=NOW)
    assert connection.status == ProviderConnection.Status.KEY_REVOKED
    assert not MonthlyRevenue.objects.filter(verification__startup=startup).exists()
