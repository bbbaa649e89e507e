"""Methodology v2 golden cases for Stripe: restricted and multi-currency coupons,
lost and won disputes.

Objects follow the API reference's shapes (subscription, price, discount, coupon, dispute,
balance transaction), built with the helpers of tests/verification/test_stripe_shapes.py.
Discounts come in every shape Stripe shipped: before 2025-09-30.clover the coupon is embedded in
the discount (`coupon`); from clover it is `source.coupon`, expanded (an object) or an id. A
coupon's `applies_to` and `currency_options` are returned only when the coupon is fetched with
`expand[]=applies_to` / `expand[]=currency_options`: the fake serves them only then, and never
inside a subscription list. The dispute object did not change shape at clover. Time is fixed at
NOW (2026-11-15 12:00 UTC); every figure is worked out by hand from docs/methodology.md (v2).
"""

import pytest

from tests.support.stripe_shapes import (
    discount_before_clover,
    discount_from_clover,
    stripe_coupon,
    stripe_price,
    stripe_subscription,
    synced,
    ts,
    verified,
)
from tests.support.verification_fakes import NOW, always, rows
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db

SHAPES = ["before_clover", "clover_expanded", "clover_id"]


def discount(shape: str, coupon: dict, sid: str) -> dict:
    """The discount of `coupon` as a subscription list returns it in `shape`: the coupon as the
    list embeds or expands it, without the fields returned only on request."""
    listed = {k: v for k, v in coupon.items() if k not in ("applies_to", "currency_options")}
    if shape == "before_clover":
        return discount_before_clover(listed, sid)
    return discount_from_clover(listed if shape == "clover_expanded" else coupon["id"], sid)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_coupon_restricted_to_products_reduces_only_their_items(fake_providers, shape):
    # One subscription: a $100/month seat (prod_seat) and a $50/month add-on (prod_addon). Its
    # forever 20%-off coupon applies only to prod_addon (`applies_to.products`, seen only with
    # expand[]=applies_to): 100 + 50 x 0.8 = 140.00 -> MRR 140, ARR 1680.
    # v1 applied it to the whole subscription: 150 x 0.8 = 120 (understated).
    # A second subscription: $30/month with a forever $10-off coupon restricted to prod_addon,
    # which it does not sell: the coupon takes nothing, 30. MRR = 140 + 30 = 170, ARR 2040.
    addon_20 = stripe_coupon("co_addon20", percent_off=20.0)
    addon_20["applies_to"] = {"products": ["prod_addon"]}
    addon_10_off = stripe_coupon("co_addon10off", amount_off=1000)
    addon_10_off["applies_to"] = {"products": ["prod_addon"]}
    seat = stripe_price("price_seat", 10000, product="prod_seat")
    addon = stripe_price("price_addon", 5000, product="prod_addon")
    other = stripe_price("price_other", 3000, product="prod_other")
    subscriptions = [
        stripe_subscription(
            "sub_r", "cus_r", (seat, 1), (addon, 1), discounts=[discount(shape, addon_20, "sub_r")]
        ),
        stripe_subscription(
            "sub_o", "cus_o", (other, 1), discounts=[discount(shape, addon_10_off, "sub_o")]
        ),
    ]
    verification = verified(
        fake_providers, subscriptions=subscriptions, coupons=[addon_20, addon_10_off]
    )
    assert (verification.mrr, verification.arr) == (170, 2040)
    # Fetched once, with both expansions (its restrictions are returned only then).
    expands = [
        q["expand[]"] for _, path, q in fake_providers.requests if path == "/v1/coupons/co_addon20"
    ]
    assert expands == [["applies_to", "currency_options"]]


@pytest.mark.parametrize("shape", SHAPES)
def test_an_amount_off_coupon_in_another_currency_applies_its_currency_option(
    fake_providers, shape
):
    # A euro subscription, €40.00/month, with a forever coupon of $10.00 off (`currency: usd`)
    # whose `currency_options.eur.amount_off` is 900 (€9.00), seen only with
    # expand[]=currency_options. Stripe bills €40 - €9 = €31.00 a month.
    # MRR = 31 x 1.08 = 33.48 -> 33, ARR 396. v1 ignored the coupon: 40 x 1.08 = 43.2 -> 43.
    # A second euro subscription, €20.00/month, with a forever $5-off coupon that has no euro
    # option: Stripe cannot apply it to a euro invoice, so 20 x 1.08 = 21.60.
    # MRR = (31 + 20) x 1.08 = 55.08 -> 55, ARR 660.
    ten_off = stripe_coupon("co_10off", amount_off=1000)
    ten_off["currency_options"] = {"eur": {"amount_off": 900}}
    five_off = stripe_coupon("co_5off_usd", amount_off=500)
    five_off["currency_options"] = {}
    subscriptions = [
        stripe_subscription(
            "sub_eur",
            "cus_eur",
            (stripe_price("price_eur40", 4000, currency="eur"), 1),
            currency="eur",
            discounts=[discount(shape, ten_off, "sub_eur")],
        ),
        stripe_subscription(
            "sub_eur2",
            "cus_eur2",
            (stripe_price("price_eur20", 2000, currency="eur"), 1),
            currency="eur",
            discounts=[discount(shape, five_off, "sub_eur2")],
        ),
    ]
    verification = verified(
        fake_providers, subscriptions=subscriptions, coupons=[ten_off, five_off]
    )
    assert (verification.mrr, verification.arr) == (55, 660)


def balance_transaction(tid: str, kind: str, amount: int, created: int, **extra) -> dict:
    """A balance transaction as /v1/balance_transactions lists it (fees in `fee`)."""
    fee = extra.pop("fee", 0)
    return {
        "id": tid,
        "object": "balance_transaction",
        "amount": amount,
        "available_on": created,
        "created": created,
        "currency": "usd",
        "description": None,
        "exchange_rate": None,
        "fee": fee,
        "fee_details": [],
        "net": amount - fee,
        "reporting_category": extra.pop("reporting_category", kind),
        "source": extra.pop("source", None),
        "status": "available",
        "type": kind,
        **extra,
    }


def dispute(did: str, charge: str, amount: int, status: str, moved: list[dict]) -> dict:
    """A Dispute as the API reference shows it; `balance_transactions` lists the funds it
    moved (a withdrawal, then a reinstatement if won)."""
    return {
        "id": did,
        "object": "dispute",
        "amount": amount,
        "balance_transactions": moved,
        "charge": charge,
        "created": moved[0]["created"] if moved else ts(2026, 10, 20),
        "currency": "usd",
        "evidence_details": {"due_by": ts(2026, 11, 5), "has_evidence": True, "past_due": False},
        "is_charge_refundable": False,
        "livemode": True,
        "metadata": {},
        "payment_intent": None,
        "reason": "fraudulent",
        "status": status,
    }


def test_a_lost_dispute_is_money_returned_and_a_won_one_nets_to_zero(fake_providers):
    # Oct 18: charge ch_1 $200.00; Oct 19: charge ch_2 $80.00.
    # Oct 20: ch_1 disputed; Stripe withdraws $200.00 (+ a $15.00 dispute fee, in `fee`). The
    #   dispute is `lost`: $200.00 returned for good, a refund of October (the month it was
    #   withdrawn; Stripe records no date for the loss). The fee stays out, like every fee.
    # Oct 25: ch_2 disputed, $80.00 withdrawn; Nov 3 the dispute is `won`, $80.00 reinstated:
    #   the two sum to zero, nothing counts.
    # The `adjustment` balance transactions of the disputes are not sales or refunds themselves.
    #   2026-10: gross 280, refunds 200, net 80
    #   2026-11: gross 0,   refunds 0,   net 0     -> total revenue 80
    # Last 30 days (from Oct 16 12:00): 200 + 80 - 200 = 80.
    # v1 skipped disputes: refunds 0, total revenue 280, last 30 days 280.
    lost_withdrawal = balance_transaction(
        "txn_du1", "adjustment", -20000, ts(2026, 10, 20), fee=1500,
        reporting_category="dispute", source="du_1",
    )  # fmt: skip
    won_withdrawal = balance_transaction(
        "txn_du2a", "adjustment", -8000, ts(2026, 10, 25), fee=1500,
        reporting_category="dispute", source="du_2",
    )  # fmt: skip
    won_reinstated = balance_transaction(
        "txn_du2b", "adjustment", 8000, ts(2026, 11, 3), fee=-1500,
        reporting_category="dispute_reversal", source="du_2",
    )  # fmt: skip
    connection = synced(
        fake_providers,
        balance_transactions=[
            balance_transaction("txn_1", "charge", 20000, ts(2026, 10, 18), source="ch_1"),
            balance_transaction("txn_2", "charge", 8000, ts(2026, 10, 19), source="ch_2"),
            lost_withdrawal,
            won_withdrawal,
            won_reinstated,
        ],
        disputes=[
            dispute("du_1", "ch_1", 20000, "lost", [lost_withdrawal]),
            dispute("du_2", "ch_2", 8000, "won", [won_withdrawal, won_reinstated]),
        ],
    )
    assert connection.status == "ok", connection.last_error
    verification = connection.startup.verification
    assert rows(connection.startup) == [("2026-10", 280, 200, 80), ("2026-11", 0, 0, 0)]
    assert (verification.total_revenue, verification.last_30_days) == (80, 80)


def test_an_open_dispute_is_not_lost_yet(fake_providers):
    # Nov 2: charge $50.00; Nov 5 disputed, $50.00 withdrawn, status `needs_response`: not
    # lost (yet), so nothing is returned: 2026-11 gross 50, refunds 0.
    withdrawal = balance_transaction(
        "txn_du3", "adjustment", -5000, ts(2026, 11, 5), fee=1500,
        reporting_category="dispute", source="du_3",
    )  # fmt: skip
    connection = synced(
        fake_providers,
        balance_transactions=[
            balance_transaction("txn_3", "charge", 5000, ts(2026, 11, 2)),
            withdrawal,
        ],
        disputes=[dispute("du_3", "ch_3", 5000, "needs_response", [withdrawal])],
    )
    assert rows(connection.startup) == [("2026-11", 50, 0, 50)]


def test_a_refund_transaction_with_a_positive_amount_names_the_field_and_the_rule(
    fake_providers,
):
    # Stripe documents refund balance transactions as negative: a positive one contradicts the
    # shape, so the sync is an `error` naming the field, the value and the rule it broke.
    connection = synced(
        fake_providers,
        balance_transactions=[balance_transaction("txn_bad", "refund", 700, ts(2026, 11, 2))],
    )
    assert connection.status == "error"
    assert connection.last_error == (
        "the provider sent balance_transaction txn_bad amount (type refund) = '700', which "
        "breaks the rule: a refund balance transaction's amount is zero or negative; nothing "
        "was written"
    )


def test_a_deleted_coupon_still_applied_is_read_as_the_discount_embeds_it(fake_providers):
    # A forever 25%-off coupon deleted since it was applied: Stripe keeps applying it to the
    # subscription, but GET /v1/coupons/co_gone answers 404. It is read as embedded (no
    # restrictions known): $100 x 0.75 = 75.00 -> MRR 75. Valid data, never an `error`.
    gone = stripe_coupon("co_gone", percent_off=25.0)
    subscription = stripe_subscription(
        "sub_g",
        "cus_g",
        (stripe_price("price_100", 10000), 1),
        discounts=[discount("clover_expanded", gone, "sub_g")],
    )
    verification = verified(fake_providers, subscriptions=[subscription])
    assert verification.mrr == 75
    assert fake_providers.calls("/v1/coupons/co_gone") == 1


def test_a_key_without_read_access_to_disputes_says_what_to_add(fake_providers):
    # A restricted key made for v1 has no Disputes permission: Stripe answers 403 on
    # /v1/disputes. The connection shows `key_revoked` (not `error`) with what to fix.
    connection = synced(fake_providers, slug="nodisputes")
    fake_providers.accounts["rk_live_nodisputes"]["/v1/disputes"] = always(403)
    revenue_sync(connection=connection, now=NOW)
    connection.refresh_from_db()
    assert connection.status == "key_revoked"
    assert "needs read access to Disputes" in connection.last_error
