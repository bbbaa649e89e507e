"""Whop: golden cases built from the shapes of Whop's SDKs (`whopsdk-python`:
PaymentListResponse, MembershipListResponse, PlanListResponse and the cursor page `{data,
page_info}`), served by the local fake. Time is fixed at NOW (2026-11-15 12:00 UTC); every
figure is worked out in a comment.
"""

import io
import json
import sys

import pytest
from django.core.management import call_command

from startups.models import Startup
from tests.support.connectors import (
    Connector,
    assert_refused_answer,
    assert_revoked_key_keeps_the_last_figures,
    sync_through_a_429,
)
from tests.support.factories import make_account, make_startup
from tests.support.provider_surfaces import assert_verified_everywhere, dashboard_connect
from tests.support.verification_fakes import rows, whop_routes
from verification.connections import ConnectionRefused, provider_connection_connect
from verification.models import ProviderConnection

pytestmark = pytest.mark.django_db

KEY = "apik_whop_company_read_only_0001"
COMPANY = "biz_uZIgn00JqEYqUL"


def plan(pid: str, renewal: float, days: int | None, currency="usd", kind="renewal", initial=0.0):
    return {
        "id": pid, "billing_period": days, "company": {"id": COMPANY, "title": "Acme"},
        "created_at": "2026-01-01T00:00:00.000Z", "currency": currency, "description": None,
        "expiration_days": None, "initial_price": initial, "internal_notes": None,
        "invoice": None, "member_count": 1, "payment_method_configuration": None,
        "plan_type": kind, "product": {"id": "prod_1", "title": "Pro"},
        "purchase_url": f"https://whop.com/checkout/{pid}", "release_method": "buy_now",
        "renewal_price": renewal, "split_pay_required_payments": None, "stock": None,
        "title": pid, "trial_period_days": None, "unlimited_stock": True,
        "updated_at": "2026-01-01T00:00:00.000Z", "visibility": "visible",
    }  # fmt: skip


def membership(mid: str, user: str, plan_id: str, status="active", **extra) -> dict:
    return {
        "id": mid, "cancel_at_period_end": False, "cancel_option": None, "canceled_at": None,
        "cancellation_reason": None, "checkout_configuration_id": None,
        "company": {"id": COMPANY, "title": "Acme"}, "created_at": "2026-01-01T00:00:00.000Z",
        "currency": "usd", "joined_at": "2026-01-01T00:00:00.000Z", "license_key": None,
        "manage_url": None, "member": {"id": f"mber_{user}"}, "metadata": {},
        "payment_collection_paused": False, "plan": {"id": plan_id, "metadata": None},
        "product": {"id": "prod_1", "metadata": None, "title": "Pro"}, "promo_code": None,
        "renewal_period_end": "2026-12-01T00:00:00.000Z",
        "renewal_period_start": "2026-11-01T00:00:00.000Z", "status": status,
        "updated_at": "2026-11-01T00:00:00.000Z",
        "user": {"id": user, "email": None, "name": user, "username": user}, **extra,
    }  # fmt: skip


def payment(pid: str, user: str, total: float, paid: str | None, currency="usd", **extra):
    return {
        "id": pid, "amount_after_fees": round(total * 0.97, 2), "application_fee": None,
        "auto_refunded": False, "billing_address": None, "billing_reason": "subscription_cycle",
        "card_brand": "visa", "card_last4": "4242", "company": {"id": COMPANY, "route": "acme",
        "title": "Acme"}, "created_at": paid or "2026-11-06T10:00:00.000Z",
        "currency": currency, "member": {"id": f"mber_{user}", "phone": None},
        "membership": None, "metadata": {}, "paid_at": paid, "plan": None, "product": None,
        "promo_code": None, "refundable": True, "refunded_amount": None, "refunded_at": None,
        "retryable": False, "settlement_currency": currency,
        "status": "paid" if paid else "open", "substatus": "succeeded" if paid else "open",
        "subtotal": total, "tax_amount": None, "tax_behavior": "exclusive", "total": total,
        "updated_at": paid or "2026-11-06T10:00:00.000Z", "usd_total": total,
        "user": {"id": user, "email": None, "name": user, "username": user},
        "voidable": False, **extra,
    }  # fmt: skip


def golden_routes(company=None) -> dict:
    return whop_routes(
        company=company,
        plans=[
            plan("plan_m", 29.99, 30),
            plan("plan_y", 120.00, 365, currency="eur"),
            plan("plan_w", 5.00, 7),
            plan("plan_45", 50.00, 45),
            plan("plan_once", 0.0, None, kind="one_time", initial=99.00),
        ],
        memberships=[
            membership("mem_1", "user_1", "plan_m"),
            membership("mem_2", "user_2", "plan_y"),
            membership("mem_3", "user_3", "plan_w", status="past_due"),
            membership("mem_4", "user_4", "plan_m", cancel_at_period_end=True),
            membership("mem_5", "user_5", "plan_m", status="trialing"),
            membership("mem_6", "user_6", "plan_45"),
            membership("mem_7", "user_7", "plan_m", status="canceled"),
            membership("mem_8", "user_8", "plan_once"),
            membership("mem_9", "user_10", "plan_old", cancel_at_period_end=True),
        ],
        archived=[plan("plan_old", 9.00, 30)],
        payments=[
            payment("pay_1", "user_1", 29.99, "2026-10-05T10:00:00.000Z"),
            payment("pay_2", "user_2", 144.00, "2026-11-02T10:00:00.000Z", currency="eur",
                    tax_amount=24.00),
            payment("pay_3", "user_8", 99.00, "2026-11-03T10:00:00.000Z",
                    refunded_amount=49.50, refunded_at="2026-11-09T10:00:00.000Z"),
            payment("pay_4", "user_9", 29.99, None),  # open: never collected
            payment("pay_5", "user_3", 12.00, "2026-11-04T10:00:00.000Z", tax_amount=2.00,
                    refunded_amount=6.00, refunded_at="2026-11-12T10:00:00.000Z"),
        ],
    )  # fmt: skip


# Worked by hand:
# MRR (memberships active or past_due, their plan's renewal_price per month): mem_1 $29.99 every
# 30 days = 29.99; mem_2 €120.00 every 365 days = €10.00 = $10.80; mem_3 (past_due) $5.00 every 7
# days = 5 x 52/12 = 21.6667; mem_6 $50.00 every 45 days = 50 / (45 x 12/365) = 33.7963; mem_4
# cancels at period end (0, still a customer), as does mem_9 on an archived plan (not in the list:
# read alone); trialing, canceled and the one-time plan: 0.
# MRR = 29.99 + 10.80 + 21.6667 + 33.7963 = 96.2530 -> 96, ARR 1152.
# Money (paid payments, total - tax_amount, dated paid_at): Oct 5 $29.99; Nov 2 €144.00 - €24.00
# VAT = €120.00 = $129.60; Nov 3 $99.00; Nov 4 $12.00 - $2.00 = $10.00; the open payment moves
# nothing. Refunds without their share of tax: Nov 9 $49.50 (no tax); Nov 12 $6.00 x 10/12 = $5.00.
#   2026-10: gross 29.99 -> 30, refunds 0, net 30
#   2026-11: gross 129.60 + 99 + 10 = 238.60 -> 239; refunds 49.50 + 5 = 54.50 -> 55; net 184
# Total 214. Last 30 days (from Oct 16 12:00): 238.60 - 54.50 = 184.10 -> 184.
# Paying customers: user_1, user_2, user_3, user_4, user_6, user_10 (memberships above zero),
# user_8 (a payment) = 7.
GOLDEN = {"mrr": 96, "arr": 1152, "total": 214, "last_30_days": 184, "customers": 7}


WHOP = Connector(
    provider="whop",
    token=KEY,
    credential=KEY,
    golden_routes=golden_routes,
    golden_mrr=GOLDEN["mrr"],
    slug="whopco",
)
sync = WHOP.sync


def test_whop_golden_case(fake_providers):
    connection = sync(fake_providers, golden_routes())
    assert connection.status == "ok", connection.last_error
    verification = connection.startup.verification
    assert (verification.mrr, verification.arr) == (GOLDEN["mrr"], GOLDEN["arr"])
    assert rows(connection.startup) == [("2026-10", 30, 0, 30), ("2026-11", 239, 55, 184)]
    assert (verification.total_revenue, verification.last_30_days) == (214, 184)
    assert verification.customers == 7
    assert fake_providers.calls("/api/v1/plans/plan_old") == 1


def test_whop_json_credential_sends_the_company_id(fake_providers):
    credential = json.dumps({"api_key": KEY, "company_id": COMPANY})
    connection = sync(fake_providers, golden_routes(company=COMPANY), credential=credential)
    assert connection.status == "ok", connection.last_error
    assert fake_providers.calls("/api/v1/payments", company_id=COMPANY, first="100") == 1


def test_whop_reads_every_page_and_survives_a_429(fake_providers):
    # 250 paid payments of $1.00 on Nov 1: pages of 100 -> 100 + 100 + 50, followed by
    # page_info.end_cursor. Memberships answer 429 once. No membership at all: MRR null.
    routes = whop_routes(
        payments=[payment(f"p{n}", f"u{n}", 1.00, "2026-11-01T10:00:00.000Z") for n in range(250)]
    )
    connection = sync_through_a_429(WHOP, fake_providers, routes, "/api/v1/memberships")
    verification = connection.startup.verification
    assert (verification.total_revenue, verification.customers, verification.mrr) == (
        250,
        250,
        None,
    )
    assert fake_providers.calls("/api/v1/payments") == 3
    assert fake_providers.calls("/api/v1/payments", after="cur_200") == 1
    assert fake_providers.calls("/api/v1/memberships") == 2


def test_whop_revoked_key_keeps_the_last_figures(fake_providers):
    assert_revoked_key_keeps_the_last_figures(WHOP, fake_providers)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"/api/v1/payments": lambda q: (200, {}, {"items": []})}, "without a `data` list"),
        ({"/api/v1/payments": lambda q: (200, {}, {"data": [
            {**payment("p", "u", 1.0, "2026-11-01T00:00:00Z"), "total": None}]})},
         "payment without `total`"),
        ({"/api/v1/memberships": lambda q: (200, {}, {"data": [
            membership("m", "u", "plan_gone")]})}, "GET /api/v1/plans/plan_gone answered HTTP 404"),
        ({"/api/v1/plans": lambda q: (200, {}, {"data": [plan("plan_m", 29.99, None)]}),
          "/api/v1/memberships": lambda q: (200, {}, {"data": [membership("m", "u", "plan_m")]})},
         "without `billing_period`"),
        ({"/api/v1/payments": lambda q: (200, {}, {"data": [],
            "page_info": {"has_next_page": True, "end_cursor": None}})}, "`end_cursor`"),
    ],
)  # fmt: skip
def test_whop_malformed_answers_name_the_field(fake_providers, change, words):
    connection = sync(fake_providers, {**whop_routes(), **change})
    assert_refused_answer(connection, words)


@pytest.mark.parametrize(
    ("credential", "words"),
    [
        ('{"api_key": "k", "company_id": "acme"}', "starts with biz_"),
        ('{"company_id": "biz_1"}', "one line of JSON"),
        ("two words", "paste only the key"),
    ],
)
def test_whop_credentials_that_cannot_work_are_refused(credential, words):
    startup = Startup.objects.create(name="X", slug="x")
    with pytest.raises(ConnectionRefused, match=words):
        provider_connection_connect(startup=startup, provider="whop", raw_key=credential)


def test_connect_provider_takes_the_whop_json_line(fake_providers, monkeypatch):
    Startup.objects.create(name="Cli", slug="cli")
    fake_providers.account(KEY, golden_routes(company=COMPANY))
    line = json.dumps({"api_key": KEY, "company_id": COMPANY})
    monkeypatch.setattr(sys, "stdin", io.StringIO(line + "\n"))
    out = io.StringIO()
    call_command(
        "connect_provider", "cli", "whop", "--api-base", fake_providers.base_url, stdout=out
    )
    assert "Connected cli to whop" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_a_whop_key_for_another_company_is_refused_at_the_dashboard(fake_providers, settings):
    settings.PROVIDER_API_BASES = {"whop": fake_providers.base_url}
    fake_providers.account(KEY, golden_routes(company=COMPANY))
    founder = make_account()
    startup = make_startup(owner=founder)
    from django.test import Client

    client = Client()
    client.force_login(founder)
    credential = json.dumps({"api_key": KEY, "company_id": "biz_someone_else"})
    response = client.post(
        f"/dashboard/startups/{startup.slug}/connect/", {"provider": "whop", "key": credential}
    )
    assert response.status_code == 200
    assert "Whop refused this key" in response.content.decode()
    assert KEY not in response.content.decode()
    assert not ProviderConnection.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_whop_connects_from_the_dashboard_and_shows_verified_everywhere(fake_providers, settings):
    fake_providers.account(KEY, golden_routes(company=COMPANY))
    credential = json.dumps({"api_key": KEY, "company_id": COMPANY})
    dashboard_connect(fake_providers, settings, provider="whop", credential=credential, slug="w")
    assert fake_providers.calls("/api/v1/payments", first="1", company_id=COMPANY) == 1
    assert_verified_everywhere("w", provider="whop", mrr=GOLDEN["mrr"], total=GOLDEN["total"])
