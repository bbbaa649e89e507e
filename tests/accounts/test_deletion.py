"""Deleting an account leaves nothing of it acting. Its startups are
disconnected (key and verification deleted, figures back to self-reported, nothing left for the
hourly worker), its Pro subscription is cancelled through the Stripe SDK (against the local fake
Stripe), its keys are revoked; if Stripe cannot cancel, nothing changes."""

import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.models import User
from apikeys.services import account_plan
from billing.models import StripeSubscription
from startups.models import Startup, Verification
from tests.support.billing_fakes import (
    SECRET,
    WEBHOOK,
    FakeStripe,
    event,
    operator_stripe,
    signature,
    subscription,
)
from tests.support.factories import (
    PASSWORD,
    bearer,
    make_account,
    make_api_key,
    self_reported_revenue,
)
from tests.support.verification_fakes import FakeProviders, stripe_account
from verification.models import ProviderConnection

KEY = "rk_live_founder_deleting_account_1234"


@pytest.fixture
def fakes(fake_providers: FakeProviders, settings):
    """The founder's payment provider (Stripe, read-only key) and the operator's Stripe
    billing, both local fakes."""
    settings.PROVIDER_API_BASES = {"stripe": fake_providers.base_url}
    fake_providers.account(KEY, stripe_account(charged=int(time.time()) - 2 * 86400))
    with operator_stripe(settings) as billing:
        yield fake_providers, billing


def founder_with_everything(billing: FakeStripe) -> tuple[User, Client, str]:
    """A founder with a verified startup ("Kept Co", reported $1,500 MRR), Pro through Stripe
    and an API key."""
    founder = make_account()
    client = Client()
    client.force_login(founder)
    client.post("/dashboard/startups/new/", {"name": "Kept Co", "mrr": "1500"})
    client.post("/dashboard/startups/kept-co/connect/", {"provider": "stripe", "key": KEY})
    assert ProviderConnection.objects.filter(startup__slug="kept-co").exists()
    pro = subscription(founder, "active")
    billing.subscriptions[pro["id"]] = pro
    payload = event("evt_pro", "customer.subscription.created", pro, created=int(time.time()))
    Client().post(
        WEBHOOK,
        payload,
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=signature(payload, secret=SECRET),
    )
    assert account_plan(account=founder)[0].name == "Pro"
    _, raw = make_api_key(account=founder)
    return founder, client, raw


def revenue(slug: str) -> dict:
    data = Client().get(f"/api/v1/startups/{slug}").json()["data"]
    return {"revenue": data["revenue"], "verification": data["verification"]}


@pytest.mark.django_db(transaction=True)
def test_deleting_an_account_disconnects_its_startups_and_cancels_pro(fakes):
    providers, billing = fakes
    founder, client, raw = founder_with_everything(billing)
    assert revenue("kept-co")["revenue"]["verified"] is True
    page = client.get("/accounts/delete/").content.decode()
    assert "Kept Co" in page and "cancelled with Stripe" in page and "self-reported" in page

    done = client.post("/accounts/delete/", {"password": PASSWORD}, follow=True)
    assert done.status_code == 200
    assert "1 startup(s) disconnected" in done.content.decode()
    assert "1 Pro subscription(s) cancelled" in done.content.decode()
    assert not User.objects.filter(pk=founder.pk).exists()
    # Pro cancelled at Stripe, with the operator's key, through DELETE /v1/subscriptions/{id}.
    assert billing.cancelled == ["sub_pro_1"]
    assert billing.requests[-1][:2] == (
        "DELETE /v1/subscriptions/sub_pro_1",
        "Bearer sk_test_operator",
    )
    # The startup: no key, no verification, the founder's own figures, no owner.
    startup = Startup.objects.get(slug="kept-co")
    assert startup.owner_id is None
    assert not ProviderConnection.objects.exists()
    assert not Verification.objects.exists()
    assert revenue("kept-co") == {"revenue": self_reported_revenue(1500), "verification": None}
    # The hourly worker has nothing left to sync with the deleted founder's key.
    synced = providers.calls("/v1/subscriptions")
    call_command("sync_revenue", "--all", stdout=StringIO())
    assert providers.calls("/v1/subscriptions") == synced
    assert Client().get("/api/v1/startups", **bearer(raw)).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_when_stripe_cannot_cancel_pro_the_deletion_is_refused_and_nothing_changes(fakes):
    providers, billing = fakes
    founder, client, raw = founder_with_everything(billing)
    billing.fail_with = 500
    refused = client.post("/accounts/delete/", {"password": PASSWORD})
    assert refused.status_code == 503
    assert "nothing was deleted" in refused.content.decode()
    assert User.objects.filter(pk=founder.pk).exists()
    assert Startup.objects.get(slug="kept-co").owner_id == founder.pk
    assert ProviderConnection.objects.filter(startup__slug="kept-co").exists()
    assert revenue("kept-co")["revenue"]["verified"] is True
    assert account_plan(account=founder)[0].name == "Pro"
    assert Client().get("/api/v1/startups", **bearer(raw)).status_code == 200
    # Stripe back: the deletion goes through.
    billing.fail_with = None
    assert client.post("/accounts/delete/", {"password": PASSWORD}).status_code == 302
    assert billing.cancelled == ["sub_pro_1"]
    assert not User.objects.filter(pk=founder.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_subscription_stripe_no_longer_knows_does_not_block_the_deletion(fakes):
    _, billing = fakes
    founder, client, _ = founder_with_everything(billing)
    billing.subscriptions.clear()  # Stripe answers 404 resource_missing
    assert client.post("/accounts/delete/", {"password": PASSWORD}).status_code == 302
    assert not User.objects.filter(pk=founder.pk).exists()
    assert not StripeSubscription.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_operator_deleting_the_account_in_the_admin_does_the_same(fakes):
    _, billing = fakes
    founder, _, raw = founder_with_everything(billing)
    operator = make_account(email="ops@example.com")
    User.objects.filter(pk=operator.pk).update(is_staff=True, is_superuser=True)
    admin = Client()
    admin.force_login(operator)
    answer = admin.post(f"/admin/accounts/user/{founder.pk}/delete/", {"post": "yes"})
    assert answer.status_code == 302
    assert not User.objects.filter(pk=founder.pk).exists()
    assert billing.cancelled == ["sub_pro_1"]
    assert not ProviderConnection.objects.exists()
    assert revenue("kept-co") == {"revenue": self_reported_revenue(1500), "verification": None}
    assert Client().get("/api/v1/startups", **bearer(raw)).status_code == 401
