"""Stripe golden cases built from the object shapes of Stripe's API reference.

The objects below follow the API reference's examples field for field (subscription,
subscription item, price, discount, coupon, charge) on both sides of the 2025-09-30.clover
change: before it a discount embeds its `coupon`; from it a discount carries
`source: {type: "coupon", coupon: ...}`, the coupon expanded only on request, else an id.
Time is fixed at NOW (2026-11-15 12:00 UTC). Every expected figure is worked out in a comment.
"""

import pytest
from django.conf import settings

from startups.models import Verification
from tests.support.stripe_shapes import (
    charge,
    discount_before_clover,
    discount_from_clover,
    stripe_coupon,
    stripe_price,
    stripe_subscription,
    synced,
    ts,
    verified,
)
from verification.models import ProviderConnection

pytestmark = pytest.mark.django_db


def test_the_stripe_version_is_pinned_on_every_call(fake_providers):
    verified(fake_providers, subscriptions=[])
    assert settings.STRIPE_API_VERSION == "2025-09-30.clover"
    assert fake_providers.headers
    assert {headers.get("Stripe-Version") for headers in fake_providers.headers} == {
        "2025-09-30.clover"
    }
    # The subscription list asks Stripe to expand the coupon of the new discount shape.
    expands = [
        q.get("expand[]") for _, path, q in fake_providers.requests if path == "/v1/subscriptions"
    ]
    assert all("data.discounts.source.coupon" in expand for expand in expands)


@pytest.mark.parametrize("shape", ["single_legacy", "embedded", "source_expanded", "source_id"])
def test_a_forever_coupon_reduces_mrr_in_every_discount_shape(fake_providers, shape):
    # $100/month with a forever 25%-off coupon: 100 x 0.75 = 75.00 -> MRR 75, ARR 900.
    # A second subscription, $50/month with a `repeating` $20-off coupon: ends, so 50.
    # MRR = 75 + 50 = 125. The coupon read from any shape must give the same figures.
    forever = stripe_coupon("co_forever25", percent_off=25.0)
    repeating = stripe_coupon("co_rep20", duration="repeating", amount_off=2000)
    make = {
        "single_legacy": discount_before_clover,
        "embedded": discount_before_clover,
        "source_expanded": discount_from_clover,
        "source_id": lambda coupon, sid: discount_from_clover(coupon["id"], sid),
    }[shape]
    discount_a = make(forever, "sub_a")
    # Old accounts also carry the single `discount` field beside (or instead of) `discounts`.
    where = {"discount": discount_a} if shape == "single_legacy" else {"discounts": [discount_a]}
    subscriptions = [
        stripe_subscription(
            "sub_a",
            "cus_a",
            (stripe_price("price_100", 10000), 1),
            **where,
        ),
        stripe_subscription(
            "sub_b",
            "cus_b",
            (stripe_price("price_50", 5000), 1),
            discounts=[make(repeating, "sub_b")],
        ),
    ]
    verification = verified(
        fake_providers, subscriptions=subscriptions, coupons=[forever, repeating]
    )
    assert (verification.mrr, verification.arr) == (125, 1500)
    # Methodology v2: a forever coupon is fetched once from /v1/coupons/{id} in every shape, with
    # `expand[]=applies_to` (its product restrictions come only then); the repeating one, which
    # ends, never is.
    assert fake_providers.calls("/v1/coupons/co_forever25") == 1
    assert fake_providers.calls("/v1/coupons/co_rep20") == (1 if shape == "source_id" else 0)


def test_an_amount_off_forever_coupon_by_id_is_fetched_once_for_many_subscriptions(
    fake_providers,
):
    # Three $30/month subscriptions sharing a forever $5-off coupon given as an id:
    # 3 x (30 - 5) = 75. The coupon is fetched once, not three times.
    coupon = stripe_coupon("co_5off", amount_off=500)
    subscriptions = [
        stripe_subscription(
            f"sub_{n}",
            f"cus_{n}",
            (stripe_price("price_30", 3000), 1),
            discounts=[discount_from_clover("co_5off", f"sub_{n}")],
        )
        for n in range(3)
    ]
    verification = verified(fake_providers, subscriptions=subscriptions, coupons=[coupon])
    assert verification.mrr == 75
    assert fake_providers.calls("/v1/coupons/co_5off") == 1


def test_item_level_forever_coupons_reduce_only_their_item(fake_providers):
    # One subscription: a $50/month seat item with its own forever 10%-off coupon (as an id,
    # the clover shape) and a $30/month add-on without one: 45 + 30 = 75. A subscription-level
    # forever $5-off coupon then applies to the whole: 75 - 5 = 70.
    ten = stripe_coupon("co_item10", percent_off=10.0)
    five = stripe_coupon("co_sub5", amount_off=500)
    subscription = stripe_subscription(
        "sub_i",
        "cus_i",
        (stripe_price("p50", 5000), 1),
        (stripe_price("p30", 3000), 1),
        discounts=[discount_from_clover("co_sub5", "sub_i")],
    )
    subscription["items"]["data"][0]["discounts"] = [discount_from_clover("co_item10", "sub_i")]
    verification = verified(fake_providers, subscriptions=[subscription], coupons=[ten, five])
    assert verification.mrr == 70
    assert fake_providers.calls("/v1/coupons/co_item10") == 1


def test_scheduled_cancellations_and_paused_collection_count_no_mrr(fake_providers):
    # Active $40 (counts 40); $60 with cancel_at_period_end (0, customer still counts);
    # $80 with a cancel_at date ahead (0, customer counts); $25 with pause_collection (0, and
    # not paying while paused). MRR = 40. Customers: cus_1, cus_2, cus_3 = 3.
    subscriptions = [
        stripe_subscription("sub_1", "cus_1", (stripe_price("p40", 4000), 1)),
        stripe_subscription(
            "sub_2", "cus_2", (stripe_price("p60", 6000), 1), cancel_at_period_end=True
        ),
        stripe_subscription(
            "sub_3", "cus_3", (stripe_price("p80", 8000), 1), cancel_at=ts(2026, 12, 1)
        ),
        stripe_subscription(
            "sub_4",
            "cus_4",
            (stripe_price("p25", 2500), 1),
            pause_collection={"behavior": "void", "resumes_at": None},
        ),
    ]
    verification = verified(fake_providers, subscriptions=subscriptions)
    assert (verification.mrr, verification.arr) == (40, 480)
    assert verification.customers == 3


def test_transform_quantity_bills_whole_packages(fake_providers):
    # $10 per package of 5 seats. 12 seats rounded up = 3 packages = $30;
    # 12 seats rounded down = 2 packages = $20. MRR = 50 (not 12 x $10 = 120 twice).
    up = stripe_price("p_up", 1000, transform_quantity={"divide_by": 5, "round": "up"})
    down = stripe_price("p_down", 1000, transform_quantity={"divide_by": 5, "round": "down"})
    subscriptions = [
        stripe_subscription("sub_up", "cus_1", (up, 12)),
        stripe_subscription("sub_down", "cus_2", (down, 12)),
    ]
    assert verified(fake_providers, subscriptions=subscriptions).mrr == 50


def tiered(pid: str, mode: str, *, with_tiers: bool = True) -> dict:
    # Tiers: 1-5 at $10/unit + $20 flat; 6-10 at $8/unit + $5 flat; 11+ at $5/unit.
    tiers = [
        {"flat_amount": 2000, "flat_amount_decimal": "2000", "unit_amount": 1000,
         "unit_amount_decimal": "1000", "up_to": 5},
        {"flat_amount": 500, "flat_amount_decimal": "500", "unit_amount": 800,
         "unit_amount_decimal": "800", "up_to": 10},
        {"flat_amount": None, "flat_amount_decimal": None, "unit_amount": 500,
         "unit_amount_decimal": "500", "up_to": None},
    ]  # fmt: skip
    price = stripe_price(pid, None, billing_scheme="tiered", tiers_mode=mode)
    if with_tiers:
        price["tiers"] = tiers
    return price


def test_tiered_prices_volume_and_graduated(fake_providers):
    # 12 units.
    # volume: all 12 at the tier they fall in (11+): 12 x $5 = $60 (no flat) -> 60.
    # graduated: 5 x $10 + $20 flat = 70; 5 x $8 + $5 flat = 45; 2 x $5 = 10 -> 125.
    # 7 units, volume: tier 6-10: $5 flat + 7 x $8 = 61.
    # The list does not carry tiers (their expansion is too deep), so each tiered price is
    # fetched once from /v1/prices/{id}?expand[]=tiers. MRR = 60 + 125 + 61 = 246.
    subscriptions = [
        stripe_subscription("sub_v", "cus_1", (tiered("p_vol", "volume", with_tiers=False), 12)),
        stripe_subscription("sub_g", "cus_2", (tiered("p_gra", "graduated", with_tiers=False), 12)),
        stripe_subscription("sub_v7", "cus_3", (tiered("p_vol", "volume", with_tiers=False), 7)),
    ]
    verification = verified(
        fake_providers,
        subscriptions=subscriptions,
        prices=[tiered("p_vol", "volume"), tiered("p_gra", "graduated")],
    )
    assert verification.mrr == 246
    assert fake_providers.calls("/v1/prices/p_vol", **{"expand[]": "tiers"}) == 1


def test_customers_are_paying_customers(fake_providers):
    # Four subscriptions, three of them on a $0 plan: cus_paid on $20 is the 1 paying customer;
    # cus_meter on a metered plan pays by usage, so counts too (MRR 0 from it).
    # Charges: cus_buyer $15 succeeded (counts, even though later refunded), cus_failed's
    # charge failed (no), a $0 charge (no), a guest charge without a customer (no), cus_paid's
    # own charge (already counted). Customers = cus_paid, cus_meter, cus_buyer = 3.
    free = stripe_price("p_free", 0)
    metered = stripe_price("p_meter", 5)
    metered["recurring"]["usage_type"] = "metered"
    subscriptions = [
        stripe_subscription("sub_p", "cus_paid", (stripe_price("p20", 2000), 1)),
        *[stripe_subscription(f"sub_f{n}", f"cus_free{n}", (free, 1)) for n in range(3)],
        stripe_subscription("sub_m", "cus_meter", (metered, None)),
    ]
    charges = [
        charge("ch_1", 1500, "cus_buyer", refunded=True, amount_refunded=1500),
        charge("ch_2", 1500, "cus_failed", status="failed"),
        charge("ch_3", 0, "cus_zero"),
        charge("ch_4", 900, None),
        charge("ch_5", 2000, "cus_paid"),
    ]
    verification = verified(fake_providers, subscriptions=subscriptions, charges=charges)
    assert verification.customers == 3
    assert verification.mrr == 20


def test_a_one_off_seller_has_customers_and_null_mrr(fake_providers):
    # No subscription of any status; 7 buyers with one $10 charge each: customers 7, MRR null.
    charges = [charge(f"ch_{n}", 1000, f"cus_{n}") for n in range(7)]
    verification = verified(fake_providers, charges=charges)
    assert verification.customers == 7
    assert (verification.mrr, verification.arr) == (None, None)


def test_test_mode_objects_never_verify(fake_providers):
    # A live key whose data says livemode: false: refused, nothing written.
    sub = stripe_subscription("sub_t", "cus_t", (stripe_price("p", 1000), 1), livemode=False)
    connection = synced(fake_providers, subscriptions=[sub])
    assert connection.status == ProviderConnection.Status.ERROR
    assert "test-mode" in connection.last_error
    assert not Verification.objects.filter(startup__slug="acme").exists()
