"""Founders' startups in the dashboard, through the test client: add, claim (approved by an
operator's admin action), edit, connect a provider (checked, encrypted, synced), sync now,
disconnect; and nobody reaches another account's startup."""

import logging
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from founders.models import ReportedRevenue, StartupClaim
from startups.models import Startup
from tests.support.factories import (
    make_account,
    make_startup,
    make_verification,
    self_reported_revenue,
)
from tests.support.founder_stripe import KEY, assert_verified_by_stripe_data, stripe_data
from tests.support.verification_fakes import FakeProviders, always
from verification.models import ProviderConnection


def signed_in(account) -> Client:
    client = Client()
    client.force_login(account)
    return client


def detail(slug: str) -> dict:
    response = Client().get(f"/api/v1/startups/{slug}")
    assert response.status_code == 200
    return response.json()["data"]


@pytest.fixture
def stripe_fake(fake_providers: FakeProviders, settings) -> FakeProviders:
    settings.PROVIDER_API_BASES = {"stripe": fake_providers.base_url}
    fake_providers.account(KEY, stripe_data())
    return fake_providers


# --- adding and editing ---


@pytest.mark.django_db
def test_a_founder_adds_a_startup_and_owns_it_with_self_reported_figures():
    founder = make_account()
    client = signed_in(founder)
    response = client.post(
        "/dashboard/startups/new/",
        {
            "name": "Acme Rockets",
            "website": "https://acme.example.com",
            "description": "Rockets for everyone.",
            "category": "Aerospace",
            "mrr": "1200",
            "country": "France",
            "founded": "2021",
        },
    )
    assert response.status_code == 302
    startup = Startup.objects.get(slug="acme-rockets")
    assert startup.owner == founder
    assert response["Location"] == "/dashboard/startups/acme-rockets/"
    data = detail("acme-rockets")
    assert data["revenue"] == self_reported_revenue(1200)
    assert data["verification"] is None
    assert data["country"] == "France"
    # The slug follows the import rule; a second startup of that name gets a suffix.
    client.post("/dashboard/startups/new/", {"name": "Acme Rockets"})
    assert Startup.objects.get(slug="acme-rockets-2").mrr is None
    page = client.get("/dashboard/startups/acme-rockets/")
    assert "self-reported" in page.content.decode()


@pytest.mark.django_db
def test_the_add_form_refuses_bad_input_without_a_500():
    client = signed_in(make_account())
    response = client.post("/dashboard/startups/new/", {"name": " ", "mrr": "-5", "founded": "x"})
    assert response.status_code == 200
    assert not Startup.objects.exists()


@pytest.mark.django_db
def test_an_owner_edits_reported_fields_but_never_verified_figures():
    founder = make_account()
    startup = make_startup(name="Verified Co", owner=founder, mrr=4900)
    make_verification(startup, mrr=4900)
    ProviderConnection.objects.create(startup=startup, provider="stripe", encrypted_key="x")
    client = signed_in(founder)
    client.post(
        f"/dashboard/startups/{startup.slug}/edit/",
        {"name": "Verified Co", "description": "New words", "mrr": "99999"},
    )
    startup.refresh_from_db()
    assert startup.description == "New words"
    assert startup.mrr == 4900  # the provider's, untouched
    assert ReportedRevenue.objects.get(startup=startup).mrr == 99999
    assert detail(startup.slug)["revenue"]["verified"] is True


def change_feed() -> list[dict]:
    """Every entry of GET /api/v1/changes, oldest first, as a consumer reads it."""
    response = Client().get("/api/v1/changes")
    assert response.status_code == 200, response.content
    return response.json()["data"]


@pytest.mark.django_db
def test_a_founders_edit_records_only_what_changed_and_an_unchanged_save_records_nothing():
    # Consumers of the change feed (webhooks, mirrors, the rank index that rebuilds when a
    # revenue field moves) hear of the fields an edit really changed, and nothing at all when a
    # founder saves the form unchanged: the startup's updatedAt stays too.
    client = signed_in(make_account())
    form = {"name": "Acme Rockets", "website": "https://acme.example.com", "mrr": "1200"}
    assert client.post("/dashboard/startups/new/", form).status_code == 302
    edit = "/dashboard/startups/acme-rockets/edit/"

    def edited(changes: dict) -> list[tuple[str, str, list[str]]]:
        seen = len(change_feed())
        assert client.post(edit, {**form, **changes}).status_code == 302
        return [(e["kind"], e["slug"], e["fields"]) for e in change_feed()[seen:]]

    assert edited({"description": "Rockets."}) == [("updated", "acme-rockets", ["description"])]
    form["description"] = "Rockets."
    updated_at = change_feed()[-1]["startup"]["updatedAt"]
    assert edited({}) == []
    assert Client().get("/api/v1/startups").json()["data"][0]["updatedAt"] == updated_at
    assert edited({"mrr": "1500"}) == [("updated", "acme-rockets", ["revenue.arr", "revenue.mrr"])]
    assert detail("acme-rockets")["revenue"] == self_reported_revenue(1500)


# --- claiming ---


@pytest.mark.django_db
def test_a_claim_stays_pending_until_an_operator_approves_it_in_the_admin():
    founder = make_account()
    unowned = make_startup(name="Orphan", mrr=300)
    client = signed_in(founder)
    client.post("/dashboard/startups/claim/", {"slug": unowned.slug})
    claim = StartupClaim.objects.get(startup=unowned, account=founder)
    assert claim.status == "pending"
    listing = client.get("/dashboard/startups/").content.decode()
    assert "pending" in listing and "Orphan" in listing
    assert client.get(f"/dashboard/startups/{unowned.slug}/").status_code == 404

    operator = make_account()
    operator.is_staff = operator.is_superuser = True
    operator.save()
    admin = signed_in(operator)
    response = admin.post(
        "/admin/founders/startupclaim/",
        {"action": "approve", "_selected_action": [claim.pk]},
        follow=True,
    )
    assert "1 claim(s) approved" in response.content.decode()
    unowned.refresh_from_db()
    assert unowned.owner == founder
    claim.refresh_from_db()
    assert claim.status == "approved"
    page = client.get(f"/dashboard/startups/{unowned.slug}/")
    assert page.status_code == 200
    assert ReportedRevenue.objects.get(startup=unowned).mrr == 300


@pytest.mark.django_db
def test_claims_on_owned_or_unknown_startups_are_refused():
    founder = make_account()
    owned = make_startup(owner=make_account())
    client = signed_in(founder)
    for slug, words in ((owned.slug, "already has an owner"), ("nope", "No startup")):
        response = client.post("/dashboard/startups/claim/", {"slug": slug})
        assert response.status_code == 200
        assert words in response.content.decode()
    client.post("/dashboard/startups/claim/", {"slug": make_startup().slug})
    assert StartupClaim.objects.count() == 1


# --- nobody reaches another account's startup ---


@pytest.mark.django_db
def test_a_founder_can_never_see_edit_connect_sync_or_disconnect_anothers_startup(settings):
    owner = make_account()
    theirs = make_startup(name="Theirs", owner=owner, mrr=700, description="kept")
    make_verification(theirs, mrr=700)
    connection = ProviderConnection.objects.create(
        startup=theirs, provider="stripe", encrypted_key="token", status="ok"
    )
    intruder = signed_in(make_account())
    base = f"/dashboard/startups/{theirs.slug}"
    attempts = [
        ("get", f"{base}/", {}),
        ("get", f"{base}/edit/", {}),
        ("post", f"{base}/edit/", {"name": "Pwned", "mrr": "1"}),
        ("get", f"{base}/connect/", {}),
        ("post", f"{base}/connect/", {"provider": "stripe", "key": KEY}),
        ("post", f"{base}/sync/", {}),
        ("get", f"{base}/disconnect/", {}),
        ("post", f"{base}/disconnect/", {}),
    ]
    for method, url, data in attempts:
        response = getattr(intruder, method)(url, data)
        assert response.status_code == 404, (method, url)
        assert "Theirs" not in response.content.decode()
    theirs.refresh_from_db()
    assert (theirs.name, theirs.description, theirs.owner) == ("Theirs", "kept", owner)
    assert ProviderConnection.objects.get(pk=connection.pk).encrypted_key == "token"
    assert detail(theirs.slug)["revenue"]["verified"] is True
    # Signed out: every page asks to sign in.
    assert Client().get(f"{base}/").status_code == 302
    assert Client().post(f"{base}/disconnect/").status_code == 302
    assert ProviderConnection.objects.filter(pk=connection.pk).exists()


# --- connecting a provider ---


@pytest.mark.django_db(transaction=True)
def test_connecting_checks_the_key_syncs_at_once_and_never_shows_or_logs_the_key(
    stripe_fake, caplog
):
    caplog.set_level(logging.DEBUG)
    founder = make_account()
    startup = make_startup(name="Rocket", owner=founder, mrr=1000)
    client = signed_in(founder)
    form = client.get(f"/dashboard/startups/{startup.slug}/connect/").content.decode()
    assert "rk_live_" in form and "Read" in form  # the instructions say which key to make
    from verification.providers import PROVIDERS

    for provider in PROVIDERS:  # every real provider, each with its instructions
        if provider == "demo":  # invented figures: the demo seed's only, never a founder's
            assert 'value="demo"' not in form
            continue
        assert f'value="{provider}"' in form
        assert f'data-testid="guide-{provider}"' in form

    response = client.post(
        f"/dashboard/startups/{startup.slug}/connect/", {"provider": "stripe", "key": KEY}
    )
    assert response.status_code == 302
    connection = ProviderConnection.objects.get(startup=startup)
    assert connection.status == "ok"
    assert KEY not in connection.encrypted_key
    assert stripe_fake.calls("/v1/balance_transactions", limit="1") == 1  # the key check
    data = detail(startup.slug)
    assert_verified_by_stripe_data(data)

    page = client.get(f"/dashboard/startups/{startup.slug}/").content.decode()
    assert KEY not in page
    assert f"…{KEY[-4:]}" in page
    assert "Sync now" in page and "Disconnect" in page
    assert KEY not in caplog.text


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("sk_live_full_secret_key", "full secret key"),
        ("rk_test_restricted_test", "test-mode key"),
        ("sk_test_secret_test", "test-mode key"),
        ("whatever", "starts with rk_live_"),
        ("rk_live_two\nlines", "paste only the key"),
        ("rk_live_ünïcode", "paste only the key"),
        ("rk_live_unknown_to_stripe", "Stripe refused this key"),
    ],
)
def test_keys_that_cannot_verify_are_refused_with_an_explanation(stripe_fake, key, words, caplog):
    caplog.set_level(logging.DEBUG)
    founder = make_account()
    startup = make_startup(owner=founder, mrr=1000)
    response = signed_in(founder).post(
        f"/dashboard/startups/{startup.slug}/connect/", {"provider": "stripe", "key": key}
    )
    assert response.status_code == 200
    assert words in response.content.decode()
    assert key not in response.content.decode()
    assert key not in caplog.text
    assert not ProviderConnection.objects.exists()
    assert Startup.objects.get(pk=startup.pk).mrr == 1000


@pytest.mark.django_db(transaction=True)
def test_a_failed_first_sync_is_explained_in_words_a_founder_understands(stripe_fake):
    stripe_fake.accounts[KEY]["/v1/subscriptions"] = always(503)
    founder = make_account()
    startup = make_startup(owner=founder, mrr=1000)
    client = signed_in(founder)
    response = client.post(
        f"/dashboard/startups/{startup.slug}/connect/",
        {"provider": "stripe", "key": KEY},
        follow=True,
    )
    page = response.content.decode()
    assert "again automatically" in page and "Stripe" in page
    assert ProviderConnection.objects.get(startup=startup).status in {"stale", "error"}
    assert detail(startup.slug)["revenue"]["verified"] is False


@pytest.mark.django_db(transaction=True)
def test_sync_now_runs_at_most_once_per_five_minutes(stripe_fake):
    founder = make_account()
    startup = make_startup(owner=founder)
    client = signed_in(founder)
    client.post(f"/dashboard/startups/{startup.slug}/connect/", {"provider": "stripe", "key": KEY})
    synced = stripe_fake.calls("/v1/subscriptions")
    refused = client.post(f"/dashboard/startups/{startup.slug}/sync/", follow=True)
    assert "try again a little later" in refused.content.decode()
    assert stripe_fake.calls("/v1/subscriptions") == synced
    ProviderConnection.objects.filter(startup=startup).update(
        last_attempt_at=timezone.now() - timedelta(minutes=5, seconds=1)
    )
    done = client.post(f"/dashboard/startups/{startup.slug}/sync/", follow=True)
    assert "Synced." in done.content.decode()
    assert stripe_fake.calls("/v1/subscriptions") > synced


@pytest.mark.django_db(transaction=True)
def test_disconnecting_deletes_the_key_and_brings_back_the_reported_figures_at_once(stripe_fake):
    founder = make_account()
    client = signed_in(founder)
    client.post("/dashboard/startups/new/", {"name": "Back Again", "mrr": "1500"})
    slug = "back-again"
    client.post(f"/dashboard/startups/{slug}/connect/", {"provider": "stripe", "key": KEY})
    assert detail(slug)["revenue"]["verified"] is True
    assert "Disconnect" in client.get(f"/dashboard/startups/{slug}/disconnect/").content.decode()
    client.post(f"/dashboard/startups/{slug}/disconnect/")
    assert not ProviderConnection.objects.exists()
    data = detail(slug)
    assert data["revenue"] == self_reported_revenue(1500)
    assert data["verification"] is None


@pytest.mark.django_db(transaction=True)
def test_a_slow_provider_does_not_hold_the_founder_longer_than_the_first_sync_wait(
    stripe_fake, settings
):
    settings.FIRST_SYNC_WAIT_SECONDS = 0.2
    settings.PROVIDER_HTTP_BACKOFF_SECONDS = 0.5
    settings.PROVIDER_HTTP_MAX_WAIT_SECONDS = 0.5
    settings.PROVIDER_HTTP_RETRIES = 2
    stripe_fake.accounts[KEY]["/v1/subscriptions"] = always(503)
    founder = make_account()
    startup = make_startup(owner=founder)
    started = time.monotonic()
    response = signed_in(founder).post(
        f"/dashboard/startups/{startup.slug}/connect/",
        {"provider": "stripe", "key": KEY},
        follow=True,
    )
    assert time.monotonic() - started < 1.0
    assert "still running" in response.content.decode()
    # The sync goes on in the background and records its failure; wait for it before the
    # database is flushed.
    for _ in range(100):
        if ProviderConnection.objects.get(startup=startup).last_error:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the background sync never finished")
    time.sleep(0.2)  # its thread closes its database connection right after writing


@pytest.mark.django_db
def test_odd_slugs_in_dashboard_urls_are_404_not_500():
    client = signed_in(make_account())
    for slug in ("%00", "a%00b", "%FF%FE", "x" * 500, "..", "%E2%80%AE"):
        for suffix in ("", "edit/", "connect/", "disconnect/"):
            assert client.get(f"/dashboard/startups/{slug}/{suffix}").status_code == 404
        assert client.post(f"/dashboard/startups/{slug}/sync/").status_code == 404
    assert client.post("/dashboard/startups/claim/", {"slug": "a\x00b"}).status_code == 200


@pytest.mark.django_db
def test_a_founder_cannot_verify_with_the_demo_provider():
    # The demo provider invents figures from its "key": offered to founders, anyone could
    # self-verify any MRR. Only the demo seed uses it.
    founder = make_account()
    startup = make_startup(name="Invented", owner=founder, mrr=10)
    client = signed_in(founder)
    response = client.post(
        f"/dashboard/startups/{startup.slug}/connect/",
        {"provider": "demo", "key": "demo:1:2:2025-01-01:2025-06-01:subscriptions"},
    )
    assert response.status_code == 200  # the form again, with the refusal
    assert detail(startup.slug)["revenue"]["verified"] is False
