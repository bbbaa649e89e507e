"""The provider's own figure beside ours (`verification.providerReported`) where
its API publishes one (Polar's metrics, Paddle's MRR metric, Lemon Squeezy's store revenue),
with the difference from ours in percent, in the detail and the attestation; null elsewhere.
Synced through the local fakes, built from the providers' published shapes. NOW is
2026-11-15 12:00 UTC."""

import base64
import json

import pytest

from startups.reported import difference_percent
from tests.support.provider_rows import (
    ls_price,
    ls_routes,
    ls_subscription,
    paddle_price,
    paddle_subscription,
    sale,
    verified,
)
from tests.support.verification_fakes import (
    always,
    gumroad_routes,
    lemonsqueezy_routes,
    paddle_mrr_metrics,
    paddle_routes,
    polar_month,
    polar_routes,
)

pytestmark = pytest.mark.django_db


def shown(client, slug: str = "acme") -> tuple[dict | None, dict]:
    """The detail's providerReported and the attestation's signed claims."""
    detail = client.get(f"/api/v1/startups/{slug}").json()["data"]["verification"]
    token = client.get(f"/api/v1/startups/{slug}/attestation").json()["data"]["jws"]
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    return detail["providerReported"], claims


def test_polar_mrr_and_30_day_revenue_beside_ours(fake_providers, client):
    # Polar: MRR $60.00 (a $15.00 subscription set to cancel included), committed $45.00 is
    # ours -> (45 - 60) / 60 = -25.0%. Revenue of the last 30 days: 1,000 + 2,000 cents =
    # $30.00, a $5.00 refund makes ours $25 -> (25 - 30) / 30 = -16.7%.
    routes = polar_routes(
        min_date="2026-11-01",
        monthly=[
            polar_month("2026-11", revenue=3000, mrr=6000, committed_monthly_recurring_revenue=4500)
        ],
        daily=[
            {"timestamp": "2026-11-10T00:00:00Z", "revenue": 1000},
            {"timestamp": "2026-11-11T00:00:00Z", "revenue": 2000},
        ],
        subscriptions=[
            {"id": "s1", "status": "active", "amount": 4500, "customer_id": "c1"},
            {"id": "s2", "status": "active", "amount": 1500, "customer_id": "c2",
             "cancel_at_period_end": True},
        ],
        refunds=[{"id": "r1", "status": "succeeded", "amount": 500, "currency": "usd",
                  "created_at": "2026-11-12T00:00:00Z"}],
    )  # fmt: skip
    verification = verified(fake_providers, provider="polar", routes=routes)
    assert (verification.mrr, verification.last_30_days) == (45, 25)
    reported, claims = shown(client)
    assert {k: reported[k] for k in ("mrr", "revenue", "period")} == {
        "mrr": 60,
        "revenue": 30,
        "period": "last_30_days",
    }
    assert reported["differencePercent"] == {"mrr": -25.0, "revenue": -16.7}
    assert "monthly_recurring_revenue" in reported["definition"]
    assert claims["providerReported"] == reported


def test_paddle_latest_mrr_datapoint_in_the_balance_currency(fake_providers, client):
    # Ours: one $100/month subscription. Paddle's MRR metric: EUR, latest day 9,500 cents =
    # €95.00 x 1.08 = $102.60 -> 103. (100 - 103) / 103 = -2.9%.
    price = paddle_price("pri_1", "10000")
    routes = paddle_routes(
        subscriptions=[paddle_subscription("sub_1", "ctm_1", price)],
        mrr_metrics=paddle_mrr_metrics(currency="EUR", amounts=["9000", "9500"]),
    )
    verified(fake_providers, provider="paddle", routes=routes, key="pdl_live_apikey_1")
    assert fake_providers.calls(
        "/metrics/monthly-recurring-revenue", **{"from": "2026-11-08", "to": "2026-11-15"}
    )
    reported, claims = shown(client)
    assert (reported["mrr"], reported["revenue"], reported["period"]) == (103, None, "current")
    assert reported["differencePercent"] == {"mrr": -2.9, "revenue": None}
    assert claims["providerReported"]["mrr"] == 103


@pytest.mark.parametrize("metrics", [None, always(403), always(500)])
def test_paddle_without_the_metrics_permission_still_syncs_with_no_provider_figure(
    fake_providers, client, metrics
):
    price = paddle_price("pri_1", "10000")
    routes = paddle_routes(
        subscriptions=[paddle_subscription("sub_1", "ctm_1", price)], mrr_metrics=metrics
    )
    verification = verified(fake_providers, provider="paddle", routes=routes, key="pdl_live_a")
    assert verification.mrr == 100
    assert shown(client)[0] is None


def test_lemon_squeezy_store_revenue_beside_ours(fake_providers, client):
    # The store's thirty_day_revenue: 2,400 cents = $24; ours: one $25 order 2026-11-10 -> 25.
    # (25 - 24) / 24 = +4.2%. Lemon Squeezy publishes no MRR.
    order = {"id": 1, "store_id": 1, "customer_id": 7, "status": "paid", "total": 2500,
             "currency": "USD", "created_at": "2026-11-10T00:00:00Z"}  # fmt: skip
    routes = lemonsqueezy_routes(
        stores=[{"id": 1, "currency": "USD", "thirty_day_revenue": 2400, "total_revenue": 9900}],
        prices=[],
        subscriptions=[],
        orders=[order],
        invoices=[],
    )
    verification = verified(fake_providers, provider="lemonsqueezy", routes=routes)
    assert verification.last_30_days == 25
    reported, _ = shown(client)
    assert (reported["mrr"], reported["revenue"]) == (None, 24)
    assert reported["differencePercent"] == {"mrr": None, "revenue": 4.2}


def test_providers_that_publish_no_figure_show_null(fake_providers, client):
    verified(fake_providers, provider="gumroad", routes=gumroad_routes(sales=[sale(1, 900,
             "2026-11-02T10:00:00Z")]))  # fmt: skip
    assert shown(client)[0] is None
    # A Lemon Squeezy store answer without the revenue attribute: none either.
    routes = ls_routes(prices=[ls_price(1, 2500)], subscriptions=[ls_subscription(1, 1)])
    verified(fake_providers, provider="lemonsqueezy", routes=routes, slug="lemon")
    assert shown(client, "lemon")[0] is None


def test_difference_percent():
    assert difference_percent(110, 100) == 10.0
    assert difference_percent(90, 100) == -10.0
    assert difference_percent(1, 3) == -66.7
    assert difference_percent(None, 100) is None
    assert difference_percent(100, None) is None
    assert difference_percent(100, 0) is None
    assert difference_percent(0, 100) == -100.0
