"""Pro paid through Stripe: Checkout and the Customer Portal through the official SDK against a
local fake Stripe; webhook events signed here with the secret, replayed, reordered, tampered."""

import time

import pytest
from django.test import Client

from apikeys.services import account_plan
from billing.models import BillingCustomer, StripeEvent
from tests.support.billing_fakes import (
    SECRET,
    WEBHOOK,
    event,
    operator_stripe,
    signature,
    subscription,
)
from tests.support.factories import bearer, make_account, make_api_key, make_startups


@pytest.fixture
def stripe_settings(settings):
    with operator_stripe(settings) as fake:
        yield fake


@pytest.fixture
def account(db):
    return make_account()


@pytest.fixture
def now() -> int:
    """The time of the test's first webhook event, in Unix seconds."""
    return int(time.time())


def signed_in(account) -> Client:
    client = Client()
    client.force_login(account)
    return client


def deliver(payload: str, *, at: int | None = None, secret: str = SECRET):
    return Client().post(
        WEBHOOK,
        payload,
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=signature(payload, secret=secret, at=at),
    )


def subscription_event(account, event_id: str, kind: str, status: str, *, created: int) -> str:
    """A `customer.subscription.<kind>` event carrying the account's subscription in `status`."""
    return event(
        event_id, f"customer.subscription.{kind}", subscription(account, status), created=created
    )


def checkout_completed(account, *, payment_status: str = "paid") -> dict:
    """The Checkout Session of checkout_session_create, as Stripe sends it once completed."""
    return {
        "id": "cs_1",
        "object": "checkout.session",
        "mode": "subscription",
        "status": "complete",
        "payment_status": payment_status,
        "client_reference_id": str(account.pk),
        "metadata": {"account_id": str(account.pk), "price": "price_pro"},
        "customer": "cus_1",
        "subscription": "sub_pro_1",
    }


def page_size(raw: str) -> int:
    response = Client().get("/api/v1/startups", {"limit": 50}, **bearer(raw))
    assert response.status_code == 200
    return len(response.json()["data"])


def plan_name(account) -> str:
    return account_plan(account=account)[0].name


@pytest.mark.django_db
def test_without_stripe_settings_the_dashboard_says_how_to_reach_the_operator(settings):
    settings.OPERATOR_CONTACT = "ops@example.com"
    client = signed_in(make_account())
    page = client.get("/dashboard/").content.decode()
    assert "ops@example.com" in page
    assert "Upgrade to Pro" not in page
    response = client.post("/dashboard/billing/upgrade/", follow=True)
    assert response.status_code == 200
    assert "not set up" in response.content.decode()


@pytest.mark.django_db
def test_upgrade_creates_a_subscription_checkout_session_with_the_sdk(stripe_settings):
    account = make_account()
    client = signed_in(account)
    assert "Upgrade to Pro" in client.get("/dashboard/").content.decode()
    response = client.post("/dashboard/billing/upgrade/")
    assert response.status_code == 200
    assert 'href="https://checkout.stripe.test/c/pay/cs_test_1"' in response.content.decode()
    path, auth, form = stripe_settings.requests[-1]
    assert path == "/v1/checkout/sessions"
    assert auth == "Bearer sk_test_operator"
    assert form["mode"] == ["subscription"]
    assert form["line_items[0][price]"] == ["price_pro"]
    assert form["client_reference_id"] == [str(account.pk)]
    assert form["subscription_data[metadata][account_id]"] == [str(account.pk)]
    assert form["metadata[price]"] == ["price_pro"]
    assert form["customer_email"] == [account.email]


@pytest.mark.django_db
def test_a_stripe_outage_at_checkout_is_a_message_not_a_500(stripe_settings):
    stripe_settings.fail_with = 500
    response = signed_in(make_account()).post("/dashboard/billing/upgrade/", follow=True)
    assert response.status_code == 200
    assert "could not start the checkout" in response.content.decode()


@pytest.mark.django_db
def test_manage_billing_opens_the_customer_portal(stripe_settings):
    account = make_account()
    BillingCustomer.objects.create(account=account, stripe_customer_id="cus_9")
    response = signed_in(account).post("/dashboard/billing/manage/")
    assert response.status_code == 200
    assert 'href="https://billing.stripe.test/p/session/bps_1"' in response.content.decode()
    path, _, form = stripe_settings.requests[-1]
    assert path == "/v1/billing_portal/sessions"
    assert form["customer"] == ["cus_9"]


@pytest.mark.django_db
def test_a_signed_checkout_makes_the_account_pro_at_once_and_its_end_makes_it_free(
    stripe_settings,
):
    make_startups(60)
    api_key, raw = make_api_key()
    account = api_key.account
    assert page_size(raw) == 10
    now = int(time.time())
    assert (
        deliver(
            event("evt_1", "checkout.session.completed", checkout_completed(account), created=now)
        ).status_code
        == 200
    )
    assert plan_name(account) == "Pro"
    assert page_size(raw) == 50  # the key has Pro's page size on the very next request
    assert "Manage billing" in signed_in(account).get("/dashboard/").content.decode()

    deliver(subscription_event(account, "evt_2", "updated", "active", created=now + 1))
    assert plan_name(account) == "Pro"
    ended = subscription_event(account, "evt_3", "deleted", "canceled", created=now + 2)
    assert deliver(ended).status_code == 200
    assert plan_name(account) == "Free"
    assert page_size(raw) == 10


def test_replayed_and_late_events_change_nothing(stripe_settings, account, now):
    created = subscription_event(account, "evt_c", "created", "active", created=now)
    deleted = subscription_event(account, "evt_d", "deleted", "canceled", created=now + 5)
    late_checkout = event(
        "evt_k", "checkout.session.completed", checkout_completed(account), created=now - 1
    )
    # Out of order: the end arrives first, then the older events.
    assert deliver(deleted).status_code == 200
    assert deliver(created).status_code == 200
    assert deliver(late_checkout).status_code == 200
    assert plan_name(account) == "Free"
    # A replay of an event already handled is acknowledged and ignored.
    again = deliver(created)
    assert again.status_code == 200
    assert again.json()["outcome"] == "duplicate"
    assert StripeEvent.objects.count() == 3
    assert plan_name(account) == "Free"


def test_pro_comes_back_when_a_newer_subscription_event_says_active(stripe_settings, account, now):
    deliver(subscription_event(account, "evt_a", "updated", "unpaid", created=now))
    assert plan_name(account) == "Free"
    deliver(subscription_event(account, "evt_b", "updated", "active", created=now + 1))
    assert plan_name(account) == "Pro"


def test_a_failed_payment_is_shown_and_pro_lasts_while_stripe_retries(
    stripe_settings, account, now
):
    deliver(subscription_event(account, "evt_1", "created", "active", created=now))
    # The invoice names its subscription where current API versions put it.
    invoice = {
        "id": "in_1",
        "object": "invoice",
        "customer": "cus_1",
        "parent": {"subscription_details": {"subscription": "sub_pro_1"}},
    }
    answer = deliver(event("evt_2", "invoice.payment_failed", invoice, created=now + 1))
    assert answer.json()["outcome"] == "payment failure noted"
    assert answer.status_code == 200
    deliver(subscription_event(account, "evt_3", "updated", "past_due", created=now + 2))
    assert plan_name(account) == "Pro"
    assert "payment failed" in signed_in(account).get("/dashboard/").content.decode()


@pytest.mark.django_db
def test_unsigned_tampered_stale_or_foreign_webhooks_get_400(stripe_settings):
    account = make_account()
    payload = event(
        "evt_x", "checkout.session.completed", checkout_completed(account), created=int(time.time())
    )
    client = Client()
    unsigned = client.post(WEBHOOK, payload, content_type="application/json")
    assert unsigned.status_code == 400
    good = signature(payload, secret=SECRET)
    tampered = payload.replace(str(account.pk), str(account.pk + 1000))
    assert (
        client.post(
            WEBHOOK, tampered, content_type="application/json", HTTP_STRIPE_SIGNATURE=good
        ).status_code
        == 400
    )
    assert deliver(payload, at=int(time.time()) - 3600).status_code == 400  # stale
    assert deliver(payload, secret="whsec_someone_else").status_code == 400
    assert deliver("not json").status_code == 400
    assert deliver('{"id": 1}').status_code == 400
    absurd = event("evt_z", "customer.subscription.created", {"id": "sub_z"}, created=10**15)
    assert deliver(absurd).status_code == 400
    assert (
        client.post(
            WEBHOOK, b"\xff\xfe", content_type="application/json", HTTP_STRIPE_SIGNATURE="t=1,v1=zz"
        ).status_code
        == 400
    )
    assert client.get(WEBHOOK).status_code == 405
    assert not StripeEvent.objects.exists()
    assert plan_name(account) == "Free"


@pytest.mark.django_db
def test_without_a_webhook_secret_every_delivery_is_refused(settings):
    settings.STRIPE_WEBHOOK_SECRET = ""
    account = make_account()
    payload = event(
        "evt_y", "checkout.session.completed", checkout_completed(account), created=int(time.time())
    )
    assert deliver(payload).status_code == 400
    assert plan_name(account) == "Free"


def test_half_configured_billing_is_a_system_check_warning(settings):
    from django.core.checks import run_checks

    settings.STRIPE_SECRET_KEY = "sk_live_x"
    settings.STRIPE_PRO_PRICE_ID = "price_pro"
    settings.STRIPE_WEBHOOK_SECRET = ""
    assert [m.id for m in run_checks() if m.id.startswith("billing")] == ["billing.W001"]
    settings.STRIPE_WEBHOOK_SECRET = SECRET
    assert not [m.id for m in run_checks() if m.id.startswith("billing")]


def test_a_subscription_to_another_price_of_the_operators_account_is_not_pro(
    stripe_settings, account, now
):
    other = subscription(account, "active", price="price_cheap_ebook")
    answer = deliver(event("evt_o", "customer.subscription.created", other, created=now))
    assert answer.status_code == 200
    assert "not the Pro price" in answer.json()["outcome"]
    assert plan_name(account) == "Free"
    # A Pro subscription switched to another price in the Customer Portal stops being Pro.
    deliver(subscription_event(account, "evt_p", "updated", "active", created=now + 1))
    assert plan_name(account) == "Pro"
    switched = subscription(account, "active", price="price_cheap_ebook")
    deliver(event("evt_q", "customer.subscription.updated", switched, created=now + 2))
    assert plan_name(account) == "Free"


def test_an_unpaid_checkout_is_not_pro_until_its_payment_succeeds(stripe_settings, account, now):
    unpaid = checkout_completed(account, payment_status="unpaid")
    answer = deliver(event("evt_u", "checkout.session.completed", unpaid, created=now))
    assert answer.status_code == 200
    assert answer.json()["outcome"] == "checkout not paid yet"
    assert plan_name(account) == "Free"
    settled = deliver(
        event("evt_s", "checkout.session.async_payment_succeeded", unpaid, created=now + 60)
    )
    assert settled.status_code == 200
    assert plan_name(account) == "Pro"


def test_a_checkout_with_no_payment_required_is_pro(stripe_settings, account, now):
    free_trial = checkout_completed(account, payment_status="no_payment_required")
    deliver(event("evt_t", "checkout.session.completed", free_trial, created=now))
    assert plan_name(account) == "Pro"


def test_a_checkout_this_service_did_not_make_for_the_pro_price_is_not_pro(
    stripe_settings, account, now
):
    # Another product sold through the same Stripe account, by a customer we know.
    other = {**checkout_completed(account), "metadata": {}, "client_reference_id": None}
    BillingCustomer.objects.create(account=account, stripe_customer_id="cus_1")
    answer = deliver(event("evt_x", "checkout.session.completed", other, created=now))
    assert answer.json()["outcome"] == "not a Pro checkout"
    assert plan_name(account) == "Free"


def test_a_subscription_event_with_odd_items_is_answered_not_a_500(stripe_settings, account, now):
    for n, items in enumerate(("x", {"data": "x"}, {"data": ["x", None]}, None)):
        odd = {**subscription(account, "active"), "items": items}
        answer = deliver(event(f"evt_odd{n}", "customer.subscription.updated", odd, created=now))
        assert answer.status_code == 200
        assert plan_name(account) == "Free"
