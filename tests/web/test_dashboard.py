"""The founders' dashboard through the test client: sign-up, keys, usage, access rules."""

import re

import pytest
from django.test import Client

from accounts.models import User
from apikeys import keys
from apikeys.models import ApiKey
from tests.support.factories import (
    PASSWORD,
    make_account,
    make_api_key,
    make_startups,
    make_subscription,
)

KEY = re.compile(r"osk_[0-9A-Za-z]{46}")


@pytest.fixture
def founder(db) -> User:
    return make_account(email="founder@example.com")


@pytest.fixture
def signed_in(client, founder) -> Client:
    client.force_login(founder)
    return client


def test_sign_up_creates_an_unconfirmed_account_and_asks_to_confirm_it(client, db, mailoutbox):
    # Sign-up does not sign in at once (it must answer a registered
    # address exactly like a new one); the founder confirms the address, then signs in.
    response = client.post(
        "/accounts/signup/",
        {"email": "New@Example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 200
    assert "Check your inbox" in response.content.decode()
    account = User.objects.get(username="new@example.com")
    assert account.email == "new@example.com"
    assert account.email_confirmed_at is None
    assert [m.to for m in mailoutbox] == [["new@example.com"]]
    signed_in = client.post(
        "/accounts/login/", {"username": "new@example.com", "password": PASSWORD}
    )
    assert signed_in.status_code == 302 and signed_in["Location"] == "/dashboard/"


def test_sign_up_refuses_weak_passwords(client, founder):
    weak = client.post(
        "/accounts/signup/", {"email": "w@example.com", "password1": "123", "password2": "123"}
    )
    assert weak.status_code == 200
    assert not User.objects.filter(username="w@example.com").exists()


def test_sign_in_takes_the_email_in_any_case_and_sign_out_needs_post(client, founder):
    response = client.post(
        "/accounts/login/", {"username": "Founder@Example.com", "password": PASSWORD}
    )
    assert response.status_code == 302 and response["Location"] == "/dashboard/"
    assert client.get("/accounts/logout/").status_code == 405
    client.post("/accounts/logout/")
    assert client.get("/dashboard/").status_code == 302


def test_the_dashboard_needs_a_signed_in_founder(client, db):
    response = client.get("/dashboard/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_forms_are_csrf_protected(founder):
    client = Client(enforce_csrf_checks=True)
    client.force_login(founder)
    assert client.post("/dashboard/keys/new/", {"name": "x"}).status_code == 403
    assert not ApiKey.objects.exists()


def test_the_dashboard_shows_plan_usage_and_keys(signed_in, founder):
    obj, _ = make_api_key(account=founder, name="production")
    page = signed_in.get("/dashboard/")
    html = page.content.decode()
    assert page.context["usage"].plan.name == "Free"
    assert obj.display in html and "production" in html and "Active" in html
    assert obj.digest not in html


def test_a_pro_founder_sees_pro_without_a_cap(signed_in, founder):
    make_subscription(account=founder)
    html = signed_in.get("/dashboard/").content.decode()
    assert "Pro" in html and "No cap" in html


def test_creating_a_key_shows_it_once_and_it_works(signed_in, founder, api_client):
    # Creation is POST -> 303 -> GET: a reload never posts the form again.
    make_startups(3)
    created = signed_in.post("/dashboard/keys/new/", {"name": "laptop"})
    assert created.status_code == 303 and created["Location"] == "/dashboard/keys/created/"
    response = signed_in.get(created["Location"])
    html = response.content.decode()
    raw = KEY.search(html).group(0)
    assert keys.is_well_formed(raw)
    assert "will not be shown again" in html
    assert "no-store" in response["Cache-Control"]
    assert raw not in signed_in.get("/dashboard/").content.decode()
    assert founder.api_keys.get().name == "laptop"
    api = api_client.get("/api/v1/startups", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api.status_code == 200
    assert signed_in.get("/dashboard/").context["usage"].used == 3


def test_creating_a_key_needs_post(signed_in):
    assert signed_in.get("/dashboard/keys/new/").status_code == 405


def test_revoking_asks_for_confirmation_first(signed_in, founder):
    obj, raw = make_api_key(account=founder)
    confirm = signed_in.get(f"/dashboard/keys/{obj.pk}/revoke/")
    assert confirm.status_code == 200 and "Revoke this key?" in confirm.content.decode()
    obj.refresh_from_db()
    assert obj.revoked_at is None
    done = signed_in.post(f"/dashboard/keys/{obj.pk}/revoke/", follow=True)
    obj.refresh_from_db()
    assert obj.revoked_at is not None
    assert "Revoked" in done.content.decode()


def test_a_founder_can_never_see_or_revoke_another_founders_key(signed_in):
    other, _ = make_api_key(account=make_account())
    assert other.display not in signed_in.get("/dashboard/").content.decode()
    assert signed_in.get(f"/dashboard/keys/{other.pk}/revoke/").status_code == 404
    assert signed_in.post(f"/dashboard/keys/{other.pk}/revoke/").status_code == 404
    other.refresh_from_db()
    assert other.revoked_at is None
