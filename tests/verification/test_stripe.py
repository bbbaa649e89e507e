"""Stripe golden cases, synced through the local fake Stripe API.

Time is fixed at NOW (2026-11-15 12:00 UTC); rates come from verification/money.py
(JPY 0.0067, KWD 3.25 US dollars per unit). Every expected number is worked out in comments.
"""

from datetime import UTC, datetime

import pytest

from startups.models import Startup, Verification
from tests.support.verification_fakes import (
    NOW,
    FakeProviders,
    always,
    failing_first,
    rows,
    stripe_routes,
)
from verification.connections import provider_connection_connect
from verification.models import ProviderConnection
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db


def ts(year: int, month: int, day: int) -> int:
    return int(datetime(year, month, day, 12, tzinfo=UTC).timestamp())


def price(unit: int, interval: str = "month", *, count: int = 1, usage: str = "licensed") -> dict:
    return {
        "id": f"price_{unit}_{interval}_{usage}",
        "object": "price",
        "unit_amount": unit,
        "recurring": {"interval": interval, "interval_count": count, "usage_type": usage},
    }


def subscription(
    sid: str,
    *items: tuple[dict, int],
    status: str = "active",
    currency: str = "usd",
    customer: str | None = None,
    discounts: list[dict] = (),
) -> dict:
    return {
        "id": sid,
        "object": "subscription",
        "status": status,
        "currency": currency,
        "customer": customer or f"cus_{sid}",
        "trial_end": ts(2026, 12, 1) if status == "trialing" else None,
        "discounts": list(discounts),
        "items": {
            "object": "list",
            "has_more": False,
            "data": [
                {"id": f"si_{sid}_{n}", "price": p, "quantity": q} for n, (p, q) in enumerate(items)
            ],
        },
    }


def coupon(duration: str, *, percent_off: float | None = None, amount_off: int | None = None):
    return {
        "id": f"di_{duration}_{percent_off}_{amount_off}",
        "object": "discount",
        "coupon": {
            "id": f"co_{duration}_{percent_off}_{amount_off}",
            "duration": duration,
            "percent_off": percent_off,
            "amount_off": amount_off,
            "currency": "usd" if amount_off else None,
        },
    }


def txn(tid: str, kind: str, amount: int, created: int, currency: str = "usd") -> dict:
    return {"id": tid, "type": kind, "amount": amount, "currency": currency, "created": created}


def sync(
    fake_providers: FakeProviders, *, subscriptions=(), transactions=(), slug="acme"
) -> Startup:
    startup = Startup.objects.create(name=slug.title(), slug=slug, mrr=999, arr=11988)
    token = f"rk_live_{slug}"
    fake_providers.account(
        token,
        stripe_routes(
            subscriptions=list(subscriptions),
            balance_transactions=list(transactions),
            # v2 fetches each forever coupon with its expansions: the account serves them.
            coupons=[
                {"object": "coupon", **d["coupon"]}
                for sub in subscriptions
                for d in sub.get("discounts") or []
            ],
        ),
    )
    connection = provider_connection_connect(
        startup=startup, provider="stripe", raw_key=token, api_base=fake_providers.base_url
    )
    revenue_sync(connection=connection, now=NOW)
    connection.refresh_from_db()
    assert connection.status == ProviderConnection.Status.OK, connection.last_error
    startup.refresh_from_db()
    return startup


def test_monthly_and_annual_plans_are_normalised_to_a_month(fake_providers):
    # $29/month -> 29.00; $240/year -> 240 / 12 = 20.00. MRR = 49, ARR = 12 x 49 = 588.
    startup = sync(
        fake_providers,
        subscriptions=[
            subscription("sub_m", (price(2900), 1)),
            subscription("sub_y", (price(24000, "year"), 1)),
        ],
    )
    assert (startup.mrr, startup.arr) == (49, 588)
    assert (startup.verification.mrr, startup.verification.arr) == (49, 588)
    assert startup.verification.customers == 2


def test_quantity_and_interval_count_multiply_through(fake_providers):
    # 5 seats x $10/month = 50.00; $90 every 3 months = 30.00. MRR = 80.
    startup = sync(
        fake_providers,
        subscriptions=[
            subscription("sub_seats", (price(1000), 5)),
            subscription("sub_quarter", (price(9000, "month", count=3), 1)),
        ],
    )
    assert startup.verification.mrr == 80


def test_trials_are_not_revenue(fake_providers):
    # Only the active $30 counts. The $100 `trialing` subscription is excluded (and never asked
    # for); an `active` $70 one whose trial_end is still ahead is excluded too. MRR = 30.
    still_in_trial = subscription("sub_trial_active", (price(7000), 1))
    still_in_trial["trial_end"] = ts(2026, 11, 20)
    startup = sync(
        fake_providers,
        subscriptions=[
            subscription("sub_paid", (price(3000), 1)),
            subscription("sub_trial", (price(10000), 1), status="trialing"),
            still_in_trial,
        ],
    )
    assert startup.verification.mrr == 30
    assert startup.verification.customers == 1


def test_past_due_counts_and_metered_prices_do_not(fake_providers):
    # Active $20 licensed + a metered item (no fixed amount): 20. Past-due $15: 15. MRR = 35.
    startup = sync(
        fake_providers,
        subscriptions=[
            subscription("sub_mixed", (price(2000), 1), (price(5, usage="metered"), 1)),
            subscription("sub_late", (price(1500), 1), status="past_due"),
        ],
    )
    assert startup.verification.mrr == 35


def test_tax_is_never_part_of_mrr(fake_providers):
    # $121/month tax-inclusive with a 21% inclusive VAT rate: 121 / 1.21 = 100.00.
    # $50/month tax-exclusive with a 20% exclusive rate: Stripe adds the tax on top, MRR 50.00.
    # MRR = 150.
    inclusive = {**price(12100), "tax_behavior": "inclusive"}
    exclusive = {**price(5000), "tax_behavior": "exclusive"}
    vat_in = {"id": "txr_in", "percentage": 21.0, "inclusive": True}
    vat_out = {"id": "txr_out", "percentage": 20.0, "inclusive": False}
    with_vat = subscription("sub_vat", (inclusive, 1))
    with_vat["default_tax_rates"] = [vat_in]
    without = subscription("sub_plain", (exclusive, 1))
    without["default_tax_rates"] = [vat_out]
    startup = sync(fake_providers, subscriptions=[with_vat, without])
    assert startup.verification.mrr == 150


def test_only_forever_coupons_reduce_mrr(fake_providers):
    # $100 with a forever 25% coupon -> 75.00
    # $100 with a once 50% coupon    -> 100.00 (the coupon ends, Stripe's MRR ignores it)
    # $1,200/year with $120 off forever -> (1200 - 120) / 12 = 90.00
    # MRR = 75 + 100 + 90 = 265.
    startup = sync(
        fake_providers,
        subscriptions=[
            subscription(
                "sub_forever", (price(10000), 1), discounts=[coupon("forever", percent_off=25)]
            ),
            subscription("sub_once", (price(10000), 1), discounts=[coupon("once", percent_off=50)]),
            subscription(
                "sub_year_off",
                (price(120000, "year"), 1),
                discounts=[coupon("forever", amount_off=12000)],
            ),
        ],
    )
    assert startup.verification.mrr == 265


def test_a_refund_counts_in_the_month_it_happened(fake_providers):
    # Sep 20 charge $100; Oct 3 charge $50; Oct 5 refund $40 of the September sale;
    # Nov 2 charge $30; the $25 payout is not revenue.
    #   2026-09: gross 100, refunds 0,  net 100
    #   2026-10: gross 50,  refunds 40, net 10
    #   2026-11: gross 30,  refunds 0,  net 30
    # Total revenue = 100 + 10 + 30 = 140. Last 30 days (from Oct 16 12:00): the Nov charge = 30.
    startup = sync(
        fake_providers,
        transactions=[
            txn("txn_1", "charge", 10000, ts(2026, 9, 20)),
            txn("txn_2", "charge", 5000, ts(2026, 10, 3)),
            txn("txn_3", "refund", -4000, ts(2026, 10, 5)),
            txn("txn_4", "payment", 3000, ts(2026, 11, 2)),
            txn("txn_5", "payout", -2500, ts(2026, 11, 3)),
        ],
    )
    assert rows(startup) == [
        ("2026-09", 100, 0, 100),
        ("2026-10", 50, 40, 10),
        ("2026-11", 30, 0, 30),
    ]
    verification = startup.verification
    assert (verification.total_revenue, verification.last_30_days) == (140, 30)
    # No subscription of any status ever (a one-off seller): MRR is unknown, null, never 0.
    assert verification.mrr is None and verification.arr is None


def test_months_without_money_are_filled_with_zeros(fake_providers):
    # Jul 10 $10, nothing until Nov 1 $20: Jul..Nov is five months, three of them empty.
    startup = sync(
        fake_providers,
        transactions=[
            txn("txn_a", "charge", 1000, ts(2026, 7, 10)),
            txn("txn_b", "charge", 2000, ts(2026, 11, 1)),
        ],
    )
    assert rows(startup) == [
        ("2026-07", 10, 0, 10),
        ("2026-08", 0, 0, 0),
        ("2026-09", 0, 0, 0),
        ("2026-10", 0, 0, 0),
        ("2026-11", 20, 0, 20),
    ]


def test_zero_and_three_decimal_currencies_convert_once_at_the_end(fake_providers):
    # ¥1,500/month: JPY has no minor unit, 1500 yen x 0.0067 = 10.05 USD.
    # KWD 5.000/month: 5000 fils = 5 dinars x 3.25 = 16.25 USD.
    # MRR = round(10.05 + 16.25 = 26.30) = 26 (rounded once, not 10 + 16 per currency).
    # Nov 1 charge ¥1,500 = 10.05 and Nov 2 charge KWD 5.000 = 16.25: November gross 26.
    startup = sync(
        fake_providers,
        subscriptions=[
            subscription("sub_jpy", (price(1500), 1), currency="jpy"),
            subscription("sub_kwd", (price(5000), 1), currency="kwd"),
        ],
        transactions=[
            txn("txn_jpy", "charge", 1500, ts(2026, 11, 1), currency="jpy"),
            txn("txn_kwd", "charge", 5000, ts(2026, 11, 2), currency="kwd"),
        ],
    )
    assert startup.verification.mrr == 26
    assert rows(startup) == [("2026-11", 26, 0, 26)]
    connection = ProviderConnection.objects.get(startup=startup)
    assert connection.fx_rates["JPY"] == {"rate": "0.0067", "date": "2026-11-01"}
    assert connection.fx_rates["KWD"] == {"rate": "3.25", "date": "2026-11-01"}


def test_250_subscriptions_are_read_over_three_pages(fake_providers):
    # 250 x $10/month = 2,500; Stripe pages hold 100, so 100 + 100 + 50.
    subscriptions = [subscription(f"sub_{n:03d}", (price(1000), 1)) for n in range(250)]
    startup = sync(fake_providers, subscriptions=subscriptions)
    assert startup.verification.mrr == 2500
    assert startup.verification.customers == 250
    assert fake_providers.calls("/v1/subscriptions", status="all") == 3


def test_a_429_is_retried_and_then_succeeds(fake_providers):
    # The first balance-transactions call gets 429 + Retry-After; the retry gets the data.
    startup = Startup.objects.create(name="Busy", slug="busy")
    routes = stripe_routes(
        subscriptions=[subscription("sub_1", (price(4900), 1))],
        balance_transactions=[txn("txn_1", "charge", 4900, ts(2026, 11, 1))],
    )
    routes["/v1/balance_transactions"] = failing_first(
        routes["/v1/balance_transactions"], status=429
    )
    fake_providers.account("rk_busy", routes)
    connection = provider_connection_connect(
        startup=startup, provider="stripe", raw_key="rk_busy", api_base=fake_providers.base_url
    )
    revenue_sync(connection=connection, now=NOW)
    assert connection.status == ProviderConnection.Status.OK
    assert fake_providers.calls("/v1/balance_transactions") == 2
    assert Verification.objects.get(startup=startup).mrr == 49


def test_a_revoked_key_keeps_the_last_good_figures(fake_providers):
    # First sync: MRR 49, November gross 49. Then the key is revoked: 401 on the next sync.
    startup = sync(
        fake_providers,
        subscriptions=[subscription("sub_1", (price(4900), 1))],
        transactions=[txn("txn_1", "charge", 4900, ts(2026, 11, 1))],
    )
    connection = ProviderConnection.objects.get(startup=startup)
    kept = ("mrr", "arr", "total_revenue", "last_30_days", "customers", "verified_at")
    before = Verification.objects.values(*kept).get(startup=startup)
    fake_providers.revoke("rk_live_acme")
    later = datetime(2026, 11, 16, 12, tzinfo=UTC)
    revenue_sync(connection=connection, now=later)
    connection.refresh_from_db()
    assert connection.status == ProviderConnection.Status.KEY_REVOKED
    assert "401" in connection.last_error
    assert "rk_live_acme" not in connection.last_error
    assert connection.last_synced_at == NOW and connection.last_attempt_at == later
    startup.refresh_from_db()
    assert (startup.mrr, startup.arr) == (49, 588)
    assert startup.verification.verified_at == NOW
    assert Verification.objects.values(*kept).get(startup=startup) == before
    assert rows(startup) == [("2026-11", 49, 0, 49)]


def test_a_provider_that_stays_down_is_an_error_that_keeps_the_figures(fake_providers):
    # Every failure is recorded as status `error`, and the last good figures stay.
    startup = sync(fake_providers, subscriptions=[subscription("sub_1", (price(4900), 1))])
    fake_providers.accounts["rk_live_acme"]["/v1/subscriptions"] = always(503)
    connection = ProviderConnection.objects.get(startup=startup)
    revenue_sync(connection=connection, now=datetime(2026, 11, 16, tzinfo=UTC))
    assert connection.status == ProviderConnection.Status.ERROR
    assert "503" in connection.last_error
    startup.refresh_from_db()
    assert startup.mrr == 49 and startup.verification.mrr == 49


def test_a_self_reported_startup_becomes_verified_only_after_a_sync(fake_providers):
    startup = Startup.objects.create(name="Solo", slug="solo", mrr=5000)
    fake_providers.account("rk_solo", stripe_routes(subscriptions=[], balance_transactions=[]))
    connection = provider_connection_connect(
        startup=startup, provider="stripe", raw_key="rk_solo", api_base=fake_providers.base_url
    )
    assert not Verification.objects.filter(startup=startup).exists()
    revenue_sync(connection=connection, now=NOW)
    startup.refresh_from_db()
    # The self-reported 5,000 is replaced by what Stripe shows: an account that never had a
    # subscription has no MRR at all, null, not the self-reported figure.
    assert startup.mrr is None and startup.verification.mrr is None


def test_a_second_sync_replaces_the_figures_instead_of_adding_to_them(fake_providers):
    # First sync: $49 MRR, October $49. Then the subscription is canceled and November has $10:
    # every subscription ended, so MRR is 0 (not null: the account had subscriptions).
    startup = sync(
        fake_providers,
        subscriptions=[subscription("sub_1", (price(4900), 1))],
        transactions=[txn("txn_1", "charge", 4900, ts(2026, 10, 1))],
    )
    fake_providers.account(
        "rk_live_acme",
        stripe_routes(
            subscriptions=[subscription("sub_1", (price(4900), 1), status="canceled")],
            balance_transactions=[
                txn("txn_1", "charge", 4900, ts(2026, 10, 1)),
                txn("txn_2", "charge", 1000, ts(2026, 11, 1)),
            ],
        ),
    )
    revenue_sync(connection=ProviderConnection.objects.get(startup=startup), now=NOW)
    startup.refresh_from_db()
    assert (startup.mrr, startup.verification.mrr) == (0, 0)
    assert rows(startup) == [("2026-10", 49, 0, 49), ("2026-11", 10, 0, 10)]
    assert startup.verification.total_revenue == 59
    assert Verification.objects.filter(startup=startup).count() == 1


def test_the_rate_table_can_be_replaced_in_settings(fake_providers, settings):
    # EUR at 1.10 from settings: €30/month = 33.00 USD, recorded with the settings' date.
    settings.REVENUE_FX_RATES = {"EUR": "1.10"}
    settings.REVENUE_FX_RATES_DATE = "2026-11-10"
    startup = sync(
        fake_providers, subscriptions=[subscription("sub_eur", (price(3000), 1), currency="eur")]
    )
    assert startup.verification.mrr == 33
    connection = ProviderConnection.objects.get(startup=startup)
    assert connection.fx_rates == {"EUR": {"rate": "1.10", "date": "2026-11-10"}}


def test_a_currency_without_a_rate_is_an_error_that_keeps_the_figures(fake_providers, settings):
    startup = sync(fake_providers, subscriptions=[subscription("sub_1", (price(4900), 1))])
    fake_providers.account(
        "rk_live_acme",
        stripe_routes(
            subscriptions=[subscription("sub_1", (price(4900), 1), currency="xyz")],
            balance_transactions=[],
        ),
    )
    connection = ProviderConnection.objects.get(startup=startup)
    revenue_sync(connection=connection, now=NOW)
    assert connection.status == ProviderConnection.Status.ERROR
    assert "XYZ" in connection.last_error
    startup.refresh_from_db()
    assert startup.mrr == 49


def test_arr_and_total_revenue_are_built_from_the_published_whole_dollars():
    from datetime import date
    from decimal import Decimal

    from verification.providers.base import MonthFigures, ProviderFigures
    from verification.services import figures_in_usd

    cents = {"USD": Decimal(1050)}  # $10.50 a month: published as $11 (half up)
    usd = figures_in_usd(
        ProviderFigures(
            mrr=cents,
            monthly={
                date(2026, 10, 1): MonthFigures(gross=cents, refunds={}),
                date(2026, 11, 1): MonthFigures(gross=cents, refunds={}),
            },
            last_30_days={"USD": Decimal(-500)},  # refunds outweighing sales in the window
            customers=1,
        )
    )
    assert (usd.mrr, usd.arr) == (11, 132)  # not round(12 x 10.50) = 126
    assert usd.total_revenue == 22  # the sum of the published months, not round(21.00)
    assert usd.last_30_days == 0  # never negative
