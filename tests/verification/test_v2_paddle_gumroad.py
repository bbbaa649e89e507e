"""Methodology v2 golden cases for Paddle Billing and Gumroad.

Paddle objects follow the API reference (transaction `details.totals` with `credit`,
`credit_to_balance`, `balance`, `grand_total`; adjustments with their `action`; prices with
`unit_price_overrides`; addresses with `country_code`). Transactions before the 2024-03-11
changelog have no `credit_to_balance` and never a negative total; both shapes are served where
a case can have either. Gumroad sales follow its sale object (`price` in US cents,
`currency_symbol`, `amount_refundable_in_currency`, `chargedback`, `dispute_won`,
`subscription_id`, `subscription_duration`, `cancelled`, `ended`). Time is fixed at NOW
(2026-11-15 12:00 UTC); every figure is worked out by hand from docs/methodology.md (v2).
"""

import pytest

from tests.support.provider_rows import (
    paddle_adjustment,
    paddle_price,
    paddle_subscription,
    paddle_transaction,
    sync,
    verified,
)
from tests.support.verification_fakes import gumroad_routes, paddle_routes, rows

pytestmark = pytest.mark.django_db


# --- Paddle Billing ------------------------------------------------------------------------------


def paddle_txn(
    tid: str,
    customer: str,
    subtotal: int,
    tax: int,
    billed: str,
    *,
    credit: int = 0,
    to_balance: int | None = None,
    origin: str = "subscription_recurring",
) -> dict:
    """A completed transaction; `to_balance` None is the shape before 2024-03-11 (no
    `credit_to_balance`). total = subtotal + tax; grand_total = total - credit +
    credit_to_balance (what was due after credits)."""
    transaction = paddle_transaction(tid, customer, subtotal, tax, billed)
    transaction["origin"] = origin
    total = subtotal + tax
    totals = transaction["details"]["totals"]
    totals.update(
        credit=str(credit),
        grand_total=str(total - credit + (to_balance or 0)),
        fee=str(max(0, total - credit) // 20),
        earnings=str(max(0, subtotal - credit)),
    )
    if to_balance is not None:
        totals["credit_to_balance"] = str(to_balance)
    return transaction


def test_paddle_a_chargeback_is_money_returned_and_a_reversed_one_nets_to_zero(fake_providers):
    # Oct 10 txn_1: subtotal 50.00 + tax 10.00 = 60.00 -> gross 50.00 (net of tax).
    # Oct 12 txn_2: subtotal 30.00, no tax -> gross 30.00.
    # Nov 4: chargeback of txn_1 (total 60.00, tax 10.00) -> 50.00 returned, a November refund.
    # Nov 5: chargeback of txn_2 (30.00); Nov 9: chargeback_reverse of it (Paddle won): 0.
    # Nov 6: a chargeback_warning of txn_2: an early warning, no money.
    #   2026-10: gross 80, refunds 0,  net 80
    #   2026-11: gross 0,  refunds 50, net -50   -> total revenue 30
    # Last 30 days (from Oct 16 12:00): -50 -> 0 (never below 0).
    # v1 read only `action=refund` adjustments: refunds 0, total revenue 80.
    transactions = [
        paddle_transaction("txn_1", "ctm_1", 5000, 1000, "2026-10-10T10:00:00Z"),
        paddle_transaction("txn_2", "ctm_2", 3000, 0, "2026-10-12T10:00:00Z"),
    ]
    adjustments = [
        paddle_adjustment("adj_1", "chargeback", "txn_1", 6000, 1000, "2026-11-04T10:00:00Z"),
        paddle_adjustment("adj_2", "chargeback", "txn_2", 3000, 0, "2026-11-05T10:00:00Z"),
        paddle_adjustment("adj_3", "chargeback_warning", "txn_2", 3000, 0, "2026-11-06T10:00:00Z"),
        paddle_adjustment("adj_4", "chargeback_reverse", "txn_2", 3000, 0, "2026-11-09T10:00:00Z"),
    ]
    verification = verified(
        fake_providers,
        provider="paddle",
        routes=paddle_routes(transactions=transactions, adjustments=adjustments),
    )
    assert rows(verification.startup) == [("2026-10", 80, 0, 80), ("2026-11", 0, 50, -50)]
    assert (verification.total_revenue, verification.last_30_days) == (30, 0)


def test_paddle_a_negative_total_downgrade_is_valid_data_not_an_error(fake_providers):
    # Oct 1 renewal txn_1: subtotal 50.00 + tax 10.00 -> gross 50.00.
    # Oct 20 downgrade txn_2 (origin subscription_update), prorated: subtotal -20.00, tax -4.00,
    #   total -24.00; Paddle puts the 24.00 on the customer's credit balance
    #   (credit_to_balance 2400), grand_total 0: the customer paid nothing and got nothing back
    #   in money, so it books 0 x (-2400 - -400) / -2400 = 0.
    #   2026-10: gross 50, refunds 0, net 50; 2026-11: zeros. Total revenue 50; last 30 days 0.
    # v1 refused the negative total and the sync ended in `error` (no figures at all).
    transactions = [
        paddle_txn("txn_1", "ctm_1", 5000, 1000, "2026-10-01T10:00:00Z", to_balance=0),
        paddle_txn(
            "txn_2", "ctm_1", -2000, -400, "2026-10-20T10:00:00Z",
            to_balance=2400, origin="subscription_update",
        ),
    ]  # fmt: skip
    verification = verified(
        fake_providers, provider="paddle", routes=paddle_routes(transactions=transactions)
    )
    assert rows(verification.startup) == [("2026-10", 50, 0, 50), ("2026-11", 0, 0, 0)]
    assert verification.customers == 1


@pytest.mark.parametrize("shape", ["before_2024_03_11", "from_2024_03_11"])
def test_paddle_a_renewal_paid_from_credit_books_what_was_paid(fake_providers, shape):
    # Nov 1 renewal txn_3: subtotal 30.00 + tax 6.00 = total 36.00, of which 24.00 paid from
    # the customer's credit balance (`credit` 2400): grand_total 12.00 was paid. Net of tax,
    # in the transaction's proportion: 1200 x (3600 - 600) / 3600 = 1000 -> gross 10.00.
    # (The credit came from an earlier downgrade that booked 0: over both, the customer paid
    # 36.00 - 24.00 = 12.00, of which 10.00 net of tax.) v1 booked the full 30.00.
    to_balance = None if shape == "before_2024_03_11" else 0
    transactions = [
        paddle_txn(
            "txn_3", "ctm_1", 3000, 600, "2026-11-01T10:00:00Z", credit=2400, to_balance=to_balance
        )
    ]
    verification = verified(
        fake_providers, provider="paddle", routes=paddle_routes(transactions=transactions)
    )
    assert rows(verification.startup) == [("2026-11", 10, 0, 10)]
    assert (verification.total_revenue, verification.last_30_days) == (10, 10)


def test_paddle_mrr_uses_the_price_override_of_the_customers_country(fake_providers):
    # One price: $10.00/month base, overridden to €9.00 for DE and FR and £8.00 for GB
    # (`unit_price_overrides`). Subscriptions:
    #   sub_de: 10 seats, address add_de (country DE), currency EUR -> 10 x €9.00 = €90.00
    #   sub_us: 1 seat, address add_us (country US, no override) -> $10.00
    # MRR = 90 x 1.08 + 10 = 97.20 + 10 = 107.20 -> 107, ARR 1284.
    # v1 used the base 1000 x 10 filed under EUR: €100 x 1.08 + 10 = 118.
    price = paddle_price("pri_intl", "1000")
    price["unit_price_overrides"] = [
        {"country_codes": ["DE", "FR"], "unit_price": {"amount": "900", "currency_code": "EUR"}},
        {"country_codes": ["GB"], "unit_price": {"amount": "800", "currency_code": "GBP"}},
    ]
    subscriptions = [
        paddle_subscription(
            "sub_de", "ctm_de", price, quantity=10, address_id="add_de", currency_code="EUR"
        ),
        paddle_subscription("sub_us", "ctm_us", price, address_id="add_us"),
    ]
    addresses = [
        {"id": "add_de", "customer_id": "ctm_de", "country_code": "DE", "status": "active"},
        {"id": "add_us", "customer_id": "ctm_us", "country_code": "US", "status": "active"},
    ]
    verification = verified(
        fake_providers,
        provider="paddle",
        routes=paddle_routes(subscriptions=subscriptions, addresses=addresses),
    )
    assert (verification.mrr, verification.arr) == (107, 1284)
    assert fake_providers.calls("/customers/ctm_de/addresses/add_de") == 1


def test_paddle_a_negative_credit_names_the_field_and_the_rule(fake_providers):
    # `credit` is documented as zero or more: "-100" contradicts the shape -> `error`.
    transaction = paddle_txn("txn_bad", "ctm_1", 1000, 0, "2026-11-01T10:00:00Z", credit=-100)
    connection = sync(
        fake_providers, provider="paddle", routes=paddle_routes(transactions=[transaction])
    )
    assert connection.status == "error"
    assert connection.last_error == (
        "the provider sent transaction txn_bad details.totals.credit = '-100', which breaks the "
        "rule: an amount in minor units, never negative; nothing was written"
    )


# --- Gumroad ------------------------------------------------------------------------------------


def gumroad_sale(sid: str, price: int, created: str, *, symbol: str = "$", **extra) -> dict:
    """A sale as GET /v2/sales returns it: `price` in US cents whatever the product's currency,
    `amount_refundable_in_currency` formatted in the product's currency (`currency_symbol`)."""
    return {
        "id": sid,
        "email": f"{sid}@example.com",
        "purchase_email": f"{sid}@example.com",
        "seller_id": "seller_1",
        "created_at": created,
        "product_name": "Course",
        "product_id": "prod_1",
        "product_permalink": "course",
        "price": price,
        "gumroad_fee": price // 10,
        "currency_symbol": symbol,
        "formatted_display_price": f"{symbol}{price // 100}",
        "amount_refundable_in_currency": "0",
        "refunded": False,
        "partially_refunded": False,
        "chargedback": False,
        "disputed": False,
        "dispute_won": False,
        "paid": True,
        "quantity": 1,
        **extra,
    }


def test_gumroad_a_chargedback_sale_is_money_returned(fake_providers):
    # Nov 2 sale $40.00, `chargedback`, dispute not won: $40.00 returned (no chargeback date on
    # a sale: in the sale's month). Nov 3 sale $25.00 chargedback but `dispute_won`: nets to
    # zero. Nov 4 sale $10.00.
    #   2026-11: gross 75, refunds 40, net 35. v1 kept the chargeback: refunds 0, net 75.
    sales = [
        gumroad_sale("s1", 4000, "2026-11-02T10:00:00Z", chargedback=True, disputed=True),
        gumroad_sale(
            "s2", 2500, "2026-11-03T10:00:00Z", chargedback=True, disputed=True, dispute_won=True
        ),
        gumroad_sale("s3", 1000, "2026-11-04T10:00:00Z", amount_refundable_in_currency="10"),
    ]
    verification = verified(fake_providers, provider="gumroad", routes=gumroad_routes(sales=sales))
    assert rows(verification.startup) == [("2026-11", 75, 40, 35)]
    assert (verification.total_revenue, verification.last_30_days) == (35, 35)


def test_gumroad_partial_refunds_of_non_usd_products(fake_providers):
    # A euro product (€), price 5400 = $54.00 (always US cents); "30" euros still refundable =
    #   30 x 1.08 = $32.40 -> $54.00 - $32.40 = $21.60 refunded.
    # A yen product (¥), price 1340 = $13.40; "1,000" yen still refundable = 1000 x 0.0067 =
    #   $6.70 -> $6.70 refunded.
    # No refund dates: in the sales' month. 2026-11: gross 54 + 13.40 = 67.40 -> 67; refunds
    # 21.60 + 6.70 = 28.30 -> 28; net 39. v1 read the euros as US cents ($24.00 refunded) and
    # ¥1,000 as 100000 cents (refund 0): refunds 24.
    sales = [
        gumroad_sale(
            "eu", 5400, "2026-11-02T10:00:00Z", symbol="€", partially_refunded=True,
            amount_refundable_in_currency="30",
        ),
        gumroad_sale(
            "jp", 1340, "2026-11-03T10:00:00Z", symbol="¥", partially_refunded=True,
            amount_refundable_in_currency="1,000",
        ),
    ]  # fmt: skip
    verification = verified(fake_providers, provider="gumroad", routes=gumroad_routes(sales=sales))
    assert rows(verification.startup) == [("2026-11", 67, 28, 39)]


def membership(sid: str, subscription: str, recurrence: str, price: int, created: str, **extra):
    fields = {"is_recurring_billing": True, "cancelled": False, "ended": False, **extra}
    return gumroad_sale(
        sid, price, created, subscription_id=subscription, subscription_duration=recurrence,
        **fields,
    )  # fmt: skip


def test_gumroad_memberships_give_mrr(fake_providers):
    # Each membership's latest charge, price / months of its recurrence, while it covers NOW:
    #   sub_A monthly, charged Sep 20 and Oct 20 ($10): Oct 20 + 1 month = Nov 20 > NOW -> 10.00
    #   sub_B yearly, $120 on 2026-03-01: covers to 2027-03-01 -> 120 / 12 = 10.00
    #   sub_C monthly $5, last charge Sep 1: lapsed on Oct 1 -> 0
    #   sub_D monthly $20 on Nov 1, `cancelled` (ends at period end) -> 0
    #   sub_E quarterly $45 on Oct 1 -> 45 / 3 = 15.00
    #   sub_F monthly $20 on Nov 3, `refunded` in full -> 0
    #   sub_G monthly $8 on Nov 4, partially refunded ($4 still refundable): still runs -> 8.00
    #   one-off sale $30 on Nov 2: not a membership -> 0
    # MRR = 10 + 10 + 15 + 8 = 43, ARR 516 (v1: null).
    # Gross: 10 + 10 + 120 + 5 + 20 + 45 + 20 + 8 + 30 = 268; refunds 20 + (8 - 4) = 24;
    # total revenue 244.
    sales = [
        membership("a1", "sub_A", "monthly", 1000, "2026-09-20T10:00:00Z"),
        membership("a2", "sub_A", "monthly", 1000, "2026-10-20T10:00:00Z", recurring_charge=True),
        membership("b1", "sub_B", "yearly", 12000, "2026-03-01T10:00:00Z"),
        membership("c1", "sub_C", "monthly", 500, "2026-09-01T10:00:00Z"),
        membership("d1", "sub_D", "monthly", 2000, "2026-11-01T10:00:00Z", cancelled=True),
        membership("e1", "sub_E", "quarterly", 4500, "2026-10-01T10:00:00Z"),
        membership("f1", "sub_F", "monthly", 2000, "2026-11-03T10:00:00Z", refunded=True),
        membership(
            "g1",
            "sub_G",
            "monthly",
            800,
            "2026-11-04T10:00:00Z",
            partially_refunded=True,
            amount_refundable_in_currency="4",
        ),
        gumroad_sale("o1", 3000, "2026-11-02T10:00:00Z"),
    ]
    verification = verified(fake_providers, provider="gumroad", routes=gumroad_routes(sales=sales))
    assert (verification.mrr, verification.arr) == (43, 516)
    assert verification.startup.mrr == 43
    assert verification.total_revenue == 244


def test_gumroad_an_unknown_recurrence_names_the_field_and_the_rule(fake_providers):
    sales = [membership("x1", "sub_X", "fortnightly", 1000, "2026-11-01T10:00:00Z")]
    connection = sync(fake_providers, provider="gumroad", routes=gumroad_routes(sales=sales))
    assert connection.status == "error"
    assert connection.last_error == (
        "the provider sent sale x1 subscription_duration = 'fortnightly', which breaks the rule: "
        "one of monthly, quarterly, biannually, yearly, every_two_years; nothing was written"
    )
