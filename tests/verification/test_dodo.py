"""Dodo Payments: golden cases built from the shapes of the `dodopayments` SDKs
(PaymentListResponse, SubscriptionListResponse, Refund, DisputeListResponse), served by the local
fake. Time is fixed at NOW (2026-11-15 12:00 UTC); every figure is worked out in a comment.
"""

import io
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from startups.models import Startup
from tests.support.connectors import (
    Connector,
    assert_refused_answer,
    assert_revoked_key_keeps_the_last_figures,
    sync_through_a_429,
)
from tests.support.provider_surfaces import assert_verified_everywhere, dashboard_connect
from tests.support.verification_fakes import dodo_routes, rows
from verification.connections import ConnectionRefused, provider_connection_connect

pytestmark = pytest.mark.django_db

KEY = "dodo_live_read_only_key_0001"


def customer(cid: str) -> dict:
    return {"customer_id": cid, "email": f"{cid}@example.com", "name": cid, "metadata": {}}


def payment(pid: str, cid: str, total: int, created: str, currency="USD", status="succeeded"):
    return {
        "brand_id": "bus_brand_1",
        "created_at": created,
        "currency": currency,
        "customer": customer(cid),
        "digital_products_delivered": False,
        "has_license_key": False,
        "metadata": {},
        "payment_id": pid,
        "total_amount": total,
        "invoice_id": f"inv_{pid}",
        "payment_method": "card",
        "payment_method_type": "credit",
        "status": status,
        "subscription_id": None,
    }


def subscription(sid: str, cid: str, amount: int, interval="Month", count=1, **extra) -> dict:
    return {
        "billing": {"city": "Bengaluru", "country": "IN", "state": "KA", "street": "1",
                    "zipcode": "560001"},
        "cancel_at_next_billing_date": False,
        "created_at": "2026-01-01T00:00:00Z",
        "currency": "USD",
        "customer": customer(cid),
        "discounts": [],
        "metadata": {},
        "next_billing_date": "2026-12-01T00:00:00Z",
        "on_demand": False,
        "payment_frequency_count": count,
        "payment_frequency_interval": interval,
        "previous_billing_date": "2026-11-01T00:00:00Z",
        "product_id": "pdt_1",
        "quantity": 1,
        "recurring_pre_tax_amount": amount,
        "status": "active",
        "subscription_id": sid,
        "subscription_period_count": 10,
        "subscription_period_interval": "Year",
        "tax_inclusive": False,
        "trial_period_days": 0,
        **extra,
    }  # fmt: skip


def refund(rid: str, pid: str, amount: int | None, created: str, status="succeeded", **extra):
    return {
        "business_id": "bus_1",
        "created_at": created,
        "customer": customer("cus_x"),
        "is_partial": amount is not None,
        "payment_id": pid,
        "refund_id": rid,
        "status": status,
        "amount": amount,
        "currency": "USD" if amount is not None else None,
        "reason": "requested_by_customer",
        **extra,
    }


def dispute(did: str, pid: str, amount: str, created: str, status: str, currency="USD") -> dict:
    return {
        "amount": amount,
        "business_id": "bus_1",
        "created_at": created,
        "currency": currency,
        "dispute_id": did,
        "dispute_stage": "dispute",
        "dispute_status": status,
        "payment_id": pid,
        "payment_provider": "dodo",
    }


def golden_routes() -> dict:
    return dodo_routes(
        subscriptions=[
            subscription("sub_1", "cus_1", 5800, quantity=2),
            subscription("sub_2", "cus_2", 24000, "Year", currency="EUR"),
            subscription("sub_3", "cus_3", 9900, cancel_at_next_billing_date=True),
            subscription("sub_4", "cus_4", 1000, "Week", 2, status="on_hold"),
            subscription("sub_5", "cus_5", 9900, status="pending"),
            subscription("sub_6", "cus_6", 9900, status="cancelled"),
        ],
        payments=[
            payment("pay_1", "cus_1", 5800, "2026-10-03T10:00:00Z"),
            payment("pay_2", "cus_2", 24000, "2026-11-02T10:00:00Z", currency="EUR"),
            payment("pay_3", "cus_7", 1000, "2026-11-05T10:00:00Z"),
            payment("pay_4", "cus_8", 5000, "2026-11-06T10:00:00Z", status="failed"),
        ],
        refunds=[
            refund("ref_1", "pay_1", 1000, "2026-11-10T10:00:00Z"),
            refund("ref_2", "pay_3", None, "2026-11-12T10:00:00Z"),  # no amount: in full
            refund("ref_3", "pay_2", 5000, "2026-11-12T11:00:00Z", status="pending"),
        ],
        disputes=[
            dispute("dsp_1", "pay_2", "4000", "2026-11-13T10:00:00Z", "dispute_lost", "EUR"),
            dispute("dsp_2", "pay_1", "5800", "2026-11-13T11:00:00Z", "dispute_won"),
        ],
    )


# Worked by hand:
# MRR: sub_1 $58.00/month (recurring_pre_tax_amount covers both seats); sub_2 €240.00/year =
# €20.00/month = $21.60; sub_3 cancels at its next billing date (0, customer still counts);
# sub_4 on hold (a retried renewal) $10.00 every 2 weeks = 10 x 52/12 / 2 = $21.6667; pending and
# cancelled: nothing. MRR = 58 + 21.60 + 21.6667 = 101.2667 -> 101, ARR 1212.
# Money (succeeded payments only): Oct 3 $58.00; Nov 2 €240.00 = $259.20; Nov 5 $10.00; the failed
# payment moves nothing. Refunds (succeeded): Nov 10 $10.00 partial; Nov 12 pay_3 in full $10.00
# (no amount: the whole payment); pending: nothing. Disputes: lost €40.00 = $43.20 on Nov 13
# (money back to the customer), won: nothing.
#   2026-10: gross 58, refunds 0, net 58
#   2026-11: gross 259.20 + 10 = 269.20 -> 269; refunds 10 + 10 + 43.20 = 63.20 -> 63; net 206
# Total 58 + 206 = 264. Last 30 days (from Oct 16 12:00): 269.20 - 63.20 = 206.00 -> 206.
# Paying customers: cus_1..cus_4 (billing subscriptions above zero) and cus_7 (a payment) = 5.
GOLDEN = {"mrr": 101, "arr": 1212, "total": 264, "last_30_days": 206, "customers": 5}


DODO = Connector(
    provider="dodo_payments",
    token=KEY,
    credential=KEY,
    golden_routes=golden_routes,
    golden_mrr=GOLDEN["mrr"],
    slug="dodo",
)
sync = DODO.sync


def test_dodo_golden_case(fake_providers):
    connection = sync(fake_providers, golden_routes())
    assert connection.status == "ok", connection.last_error
    verification = connection.startup.verification
    assert (verification.mrr, verification.arr) == (GOLDEN["mrr"], GOLDEN["arr"])
    assert rows(connection.startup) == [("2026-10", 58, 0, 58), ("2026-11", 269, 63, 206)]
    assert (verification.total_revenue, verification.last_30_days) == (264, 206)
    assert verification.customers == 5
    assert fake_providers.calls("/payments", page_number="0", page_size="100") == 1


def test_dodo_reads_every_page_and_survives_a_429(fake_providers):
    # 230 payments of $1.00 on Nov 1: pages 0, 1, 2 hold 100, 100 and 30 -> $230, 230 customers.
    # The subscriptions list answers 429 (Retry-After: 1) once; the retry succeeds. No
    # subscription ever: MRR null.
    routes = dodo_routes(
        payments=[payment(f"pay_{n}", f"cus_{n}", 100, "2026-11-01T10:00:00Z") for n in range(230)]
    )
    connection = sync_through_a_429(DODO, fake_providers, routes, "/subscriptions")
    verification = connection.startup.verification
    assert (verification.total_revenue, verification.customers, verification.mrr) == (
        230,
        230,
        None,
    )
    assert fake_providers.calls("/payments") == 3
    assert fake_providers.calls("/subscriptions") == 2


def test_dodo_revoked_key_keeps_the_last_figures(fake_providers):
    assert_revoked_key_keeps_the_last_figures(DODO, fake_providers)


@pytest.mark.parametrize(
    ("broken", "words"),
    [
        ({"/payments": lambda q: (200, {}, {"data": []})}, "without an `items` list"),
        (
            {"/payments": lambda q: (200, {}, {"items": [{"payment_id": "p", "status": "succeeded",
                                                         "currency": "USD"}]})},
            "payment without `total_amount`",
        ),
        (
            {"/subscriptions": lambda q: (200, {}, {"items": [
                subscription("s", "c", 100, "Fortnight")]})},
            "unknown payment_frequency_interval",
        ),
        (
            {"/payments": lambda q: (200, {}, {"items": [
                payment("p", "c", -100, "2026-11-01T00:00:00Z")]})},
            "negative",
        ),
    ],
)  # fmt: skip
def test_dodo_malformed_answers_name_the_field_and_write_nothing(fake_providers, broken, words):
    connection = sync(fake_providers, {**dodo_routes(), **broken})
    assert_refused_answer(connection, words, nothing_written=True)


def test_dodo_test_mode_host_is_refused(fake_providers):
    startup = Startup.objects.create(name="T", slug="t")
    with pytest.raises(ConnectionRefused, match="sandbox"):
        provider_connection_connect(
            startup=startup, provider="dodo_payments", raw_key=KEY,
            api_base="https://test.dodopayments.com",
        )  # fmt: skip


def test_connect_provider_reads_the_dodo_key_from_standard_input(fake_providers, monkeypatch):
    Startup.objects.create(name="Cli", slug="cli")
    fake_providers.account(KEY, golden_routes())
    monkeypatch.setattr(sys, "stdin", io.StringIO(KEY + "\n"))
    out = io.StringIO()
    call_command(
        "connect_provider", "cli", "dodo_payments", "--api-base", fake_providers.base_url,
        stdout=out,
    )  # fmt: skip
    assert "Connected cli to dodo_payments" in out.getvalue()
    monkeypatch.setattr(sys, "stdin", io.StringIO(KEY + "\n"))
    with pytest.raises(CommandError, match="sandbox"):
        call_command(
            "connect_provider", "cli", "dodo_payments", "--api-base",
            "https://test.dodopayments.com",
        )  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_dodo_connects_from_the_dashboard_and_shows_verified_everywhere(fake_providers, settings):
    fake_providers.account(KEY, golden_routes())
    dashboard_connect(
        fake_providers, settings, provider="dodo_payments", credential=KEY, slug="dodo-app"
    )
    # The key check: one small read of payments before anything was stored.
    assert fake_providers.calls("/payments", page_size="1") == 1
    # The dashboard's sync runs at the real time, so the figures are today's (not NOW's): all
    # the golden payments are in the past, the MRR does not depend on the date.
    assert_verified_everywhere(
        "dodo-app", provider="dodo_payments", mrr=GOLDEN["mrr"], total=GOLDEN["total"]
    )
