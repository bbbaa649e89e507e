"""Golden cases for Lemon Squeezy, Gumroad, Polar and Paddle Billing, synced through
the local fake APIs. Time is fixed at NOW (2026-11-15 12:00 UTC); every figure is worked out in
a comment.
"""

import pytest

from startups.models import Startup
from tests.support.provider_rows import (
    ls_payment,
    ls_price,
    ls_routes,
    ls_subscription,
    paddle_adjustment,
    paddle_price,
    paddle_subscription,
    paddle_transaction,
    sale,
    verified,
)
from tests.support.verification_fakes import (
    gumroad_routes,
    paddle_routes,
    polar_month,
    polar_routes,
    rows,
    stripe_routes,
)
from verification.connections import ConnectionRefused, provider_connection_connect
from verification.models import ProviderConnection

pytestmark = pytest.mark.django_db


# --- Gumroad: amount_refundable_in_currency is a formatted major-unit string ----------------------


def test_gumroad_partial_refunds_read_formatted_major_units(fake_providers):
    # Methodology v2: `price` is US cents whatever the product's currency; what is still
    # refundable is in the product's currency, converted at the static rate.
    # $100.00 sale, "49.50" still refundable -> $50.50 refunded (not 10000 - 49.50 cents = $99.51).
    # Yen product, price 20000 = $200.00; "1,400" yen refundable = 1400 x 0.0067 = $9.38
    #   -> $190.62 refunded.
    # Euro product, price 200000 = $2,000.00; "1,234.56" euros refundable = 1234.56 x 1.08 =
    #   $1,333.3248 -> $666.6752 refunded.
    # No refund dates: all in the sales' month (November 2026).
    # Gross: 100 + 200 + 2000 = 2300. Refunds: 50.50 + 190.62 + 666.6752 = 907.7952 -> 908.
    # Net 1392.
    sales = [
        sale(1, 10000, "2026-11-02T10:00:00Z", partially_refunded=True,
             amount_refundable_in_currency="49.50"),
        sale(2, 20000, "2026-11-03T10:00:00Z", currency="jpy", partially_refunded=True,
             amount_refundable_in_currency="1,400"),
        sale(3, 200000, "2026-11-04T10:00:00Z", currency="eur", partially_refunded=True,
             amount_refundable_in_currency="1,234.56"),
    ]  # fmt: skip
    verification = verified(fake_providers, provider="gumroad", routes=gumroad_routes(sales=sales))
    assert rows(verification.startup) == [("2026-11", 2300, 908, 1392)]
    # buyer1, buyer2, buyer0 (sale ids mod 3): three paying customers.
    assert verification.customers == 3


# --- Polar ----------


def test_polar_mrr_leaves_out_subscriptions_set_to_cancel(fake_providers):
    # Polar's MRR for November is $60.00 of which a $15.00 subscription is set to cancel at period
    # end: the committed MRR, $45.00, is the verified MRR (ARR 540). Customers: both subscribers
    # still pay until their period ends -> 2.
    routes = polar_routes(
        min_date="2026-11-01",
        monthly=[
            polar_month("2026-11", revenue=6000, mrr=6000, committed_monthly_recurring_revenue=4500)
        ],
        daily=[],
        subscriptions=[
            {"id": "s1", "status": "active", "amount": 4500, "customer_id": "c1",
             "cancel_at_period_end": False},
            {"id": "s2", "status": "active", "amount": 1500, "customer_id": "c2",
             "cancel_at_period_end": True},
        ],
    )  # fmt: skip
    verification = verified(fake_providers, provider="polar", routes=routes)
    assert (verification.mrr, verification.arr, verification.customers) == (45, 540, 2)


# --- Lemon Squeezy ----------


def test_lemonsqueezy_package_and_tiered_prices(fake_providers):
    # Package: $25 per package of 10 seats; 23 seats -> 3 packages (a started one is billed
    # whole) = $75. Graduated tiers (1-5 at $4, 6+ at $2, a $10 fixed fee on the first tier),
    # 8 units: 5 x 4 + 10 + 3 x 2 = 36. Volume, the same tiers, 8 units: all at $2 = 16.
    # MRR = 75 + 36 + 16 = 127.
    package = {**ls_price(1, 2500), "scheme": "package", "package_size": 10}
    tiers = [
        {"last_unit": 5, "unit_price": 400, "unit_price_decimal": None, "fixed_fee": 1000},
        {"last_unit": "inf", "unit_price": 200, "unit_price_decimal": None, "fixed_fee": 0},
    ]
    graduated = {**ls_price(2, 0), "scheme": "graduated", "tiers": tiers, "unit_price": None}
    volume = {**ls_price(3, 0), "scheme": "volume", "tiers": tiers, "unit_price": None}
    verification = verified(
        fake_providers,
        provider="lemonsqueezy",
        routes=ls_routes(
            prices=[package, graduated, volume],
            subscriptions=[
                ls_subscription(1, 1, quantity=23),
                ls_subscription(2, 2, quantity=8),
                ls_subscription(3, 3, quantity=8),
            ],
        ),
    )
    assert verification.mrr == 127


def test_lemonsqueezy_refund_without_refunded_at_is_dated_by_updated_at(fake_providers):
    # Order of $80 on Sep 10, refunded in full; Lemon Squeezy's example has no refunded_at, the
    # order's updated_at is Oct 4 (the refund, the last change): the refund counts in October,
    # never back-dated to September.
    #   2026-09: gross 80, refunds 0; 2026-10: gross 0, refunds 80; 2026-11: zeros.
    order = ls_payment(
        1, 8000, "2026-09-10T10:00:00Z", status="refunded", refunded=True,
        refunded_amount=8000, refunded_at=None, updated_at="2026-10-04T09:00:00Z",
        customer_id=7,
    )  # fmt: skip
    verification = verified(
        fake_providers, provider="lemonsqueezy", routes=ls_routes(orders=[order])
    )
    assert rows(verification.startup) == [
        ("2026-09", 80, 0, 80),
        ("2026-10", 0, 80, -80),
        ("2026-11", 0, 0, 0),
    ]
    # A paying customer although refunded later; no subscriptions ever: MRR null.
    assert verification.customers == 1
    assert verification.mrr is None


def test_lemonsqueezy_cancelled_subscriptions_count_as_customers_not_mrr(fake_providers):
    # Active $30 (MRR 30, customer 101); cancelled, ends Dec 1 (no MRR, customer 102 still
    # counts); expired (nothing); active on a $0 plan (not paying). MRR 30, customers 2.
    free = ls_price(2, 0)
    subscriptions = [
        ls_subscription(1, 1),
        {**ls_subscription(2, 1, status="cancelled"), "ends_at": "2026-12-01T00:00:00Z"},
        {**ls_subscription(3, 1, status="expired"), "ends_at": "2026-10-01T00:00:00Z"},
        ls_subscription(4, 2),
    ]
    verification = verified(
        fake_providers,
        provider="lemonsqueezy",
        routes=ls_routes(prices=[ls_price(1, 3000), free], subscriptions=subscriptions),
    )
    assert (verification.mrr, verification.customers) == (30, 2)


def test_lemonsqueezy_test_mode_data_is_refused_at_connect(fake_providers):
    startup = Startup.objects.create(name="T", slug="t")
    order = ls_payment(1, 1000, "2026-11-01T10:00:00Z", test_mode=True)
    fake_providers.account("key_t", ls_routes(orders=[order]))
    with pytest.raises(ConnectionRefused, match="test-mode"):
        provider_connection_connect(
            startup=startup, provider="lemonsqueezy", raw_key="key_t",
            api_base=fake_providers.base_url,
        )  # fmt: skip
    assert not ProviderConnection.objects.exists()


# --- Paddle Billing ----------


def test_paddle_figures_are_net_of_tax(fake_providers):
    # Subscriptions: ctm_1 $29/month x 2 seats = 58; ctm_2 $240/year = 20 with a forever 50%
    # discount = 10; ctm_3 $99/month scheduled to cancel (0 MRR, still a customer); ctm_4 paused
    # (nothing); ctm_5 trialing (nothing). MRR = 58 + 10 = 68, ARR 816.
    # Transactions (gross = total - tax = subtotal - discount):
    #   Oct 3 ctm_1: subtotal 58.00, tax 11.60 (20% VAT) -> gross 58.00
    #   Nov 2 ctm_2: subtotal 240.00, discount 120.00, tax 24.00 -> gross 120.00
    #   Nov 5 ctm_6 (one-off buyer): subtotal 10.00, tax 0 -> 10.00
    #   Nov 6 a `canceled` transaction is not asked for (status=completed,paid).
    # Refunds (adjustments, action refund, approved, ex tax): Nov 10, total 12.00 incl. 2.00 tax
    # of the October transaction -> 10.00 in November; a `pending_approval` one moves nothing.
    #   2026-10: gross 58, refunds 0, net 58; 2026-11: gross 130, refunds 10, net 120.
    # Total 178. Last 30 days (from Oct 16 12:00): 120 + 10 - 10 = 120.
    # Paying customers: ctm_1, ctm_2, ctm_3 (subscriptions), ctm_6 (transaction) = 4.
    half = {
        "id": "dsc_half", "status": "active", "type": "percentage", "amount": "50",
        "recur": True, "maximum_recurring_intervals": None, "currency_code": None,
    }  # fmt: skip
    subscriptions = [
        paddle_subscription("sub_1", "ctm_1", paddle_price("pri_29", "2900"), quantity=2),
        paddle_subscription(
            "sub_2", "ctm_2", paddle_price("pri_240", "24000", "year"),
            discount={"id": "dsc_half", "starts_at": "2026-01-01T00:00:00Z", "ends_at": None},
        ),
        paddle_subscription(
            "sub_3", "ctm_3", paddle_price("pri_99", "9900"),
            scheduled_change={"action": "cancel", "effective_at": "2026-12-01T00:00:00Z",
                              "resume_at": None},
        ),
        {**paddle_subscription("sub_4", "ctm_4", paddle_price("pri_99", "9900")),
         "status": "paused"},
        {**paddle_subscription("sub_5", "ctm_5", paddle_price("pri_99", "9900")),
         "status": "trialing"},
    ]  # fmt: skip
    transactions = [
        paddle_transaction("txn_1", "ctm_1", 5800, 1160, "2026-10-03T10:00:00Z"),
        paddle_transaction("txn_2", "ctm_2", 24000, 2400, "2026-11-02T10:00:00Z", discount=12000),
        paddle_transaction("txn_3", "ctm_6", 1000, 0, "2026-11-05T10:00:00Z"),
        paddle_transaction("txn_4", "ctm_7", 5000, 0, "2026-11-06T10:00:00Z", status="canceled"),
    ]
    adjustments = [
        paddle_adjustment(
            "adj_1", "refund", "txn_1", 1200, 200, "2026-11-10T10:00:00Z", type="partial"
        ),
        paddle_adjustment(
            "adj_2",
            "refund",
            "txn_1",
            5000,
            0,
            "2026-11-11T10:00:00Z",
            status="pending_approval",
            type="partial",
        ),
    ]
    verification = verified(
        fake_providers,
        provider="paddle",
        key="pdl_live_apikey_01abc",
        routes=paddle_routes(
            subscriptions=subscriptions,
            transactions=transactions,
            adjustments=adjustments,
            discounts=[half],
        ),
    )
    assert (verification.mrr, verification.arr) == (68, 816)
    assert rows(verification.startup) == [("2026-10", 58, 0, 58), ("2026-11", 130, 10, 120)]
    assert (verification.total_revenue, verification.last_30_days) == (178, 120)
    assert verification.customers == 4
    assert fake_providers.calls("/discounts/dsc_half") == 1


def test_paddle_reads_every_page(fake_providers):
    # 65 transactions of $1.00 on Nov 1: Paddle's transaction pages hold 30 -> 30 + 30 + 5.
    transactions = [
        paddle_transaction(f"txn_{n:02d}", f"ctm_{n}", 100, 0, "2026-11-01T10:00:00Z")
        for n in range(65)
    ]
    verification = verified(
        fake_providers, provider="paddle", routes=paddle_routes(transactions=transactions)
    )
    assert verification.total_revenue == 65 and verification.customers == 65
    assert verification.mrr is None  # no subscription ever
    assert fake_providers.calls("/transactions") == 3


@pytest.mark.parametrize(
    ("provider", "key", "api_base", "why"),
    [
        ("stripe", "sk_test_51Hx", None, "test-mode key"),
        ("stripe", "rk_test_51Hx", None, "test-mode key"),
        ("paddle", "pdl_sdbx_apikey_01abc", None, "test-mode key"),
        ("paddle", "pdl_live_apikey_01abc", "https://sandbox-api.paddle.com", "sandbox"),
        ("polar", "polar_oat_x", "https://sandbox-api.polar.sh", "sandbox"),
        ("stripe", "rk_live_x", "http://api.example.com", "https"),
        ("stripe", "rk_live_x", "ftp://api.example.com", "https URL"),
    ],
)
def test_test_mode_keys_sandboxes_and_plain_http_are_refused_at_connect(
    provider, key, api_base, why
):
    startup = Startup.objects.create(name="X", slug="x")
    with pytest.raises(ConnectionRefused, match=why):
        provider_connection_connect(
            startup=startup, provider=provider, raw_key=key, api_base=api_base
        )
    assert not ProviderConnection.objects.exists()


def test_plain_http_to_loopback_is_refused_in_production(settings, fake_providers):
    # Connecting asks the provider which account the key reads: a fake Stripe answers it.
    fake_providers.account("rk_live_x", stripe_routes(subscriptions=[], balance_transactions=[]))
    startup = Startup.objects.create(name="X", slug="x")
    settings.PRODUCTION = True
    with pytest.raises(ConnectionRefused, match="https"):
        provider_connection_connect(
            startup=startup,
            provider="stripe",
            raw_key="rk_live_x",
            api_base=fake_providers.base_url,
        )
    settings.PRODUCTION = False
    provider_connection_connect(
        startup=startup, provider="stripe", raw_key="rk_live_x", api_base=fake_providers.base_url
    )
    assert ProviderConnection.objects.count() == 1
