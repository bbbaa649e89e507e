"""`verification.credential`, the kind of key behind verified figures, as the key
check saw it at connect: stored on the connection, copied to the figures at sync, shown in the
REST detail, in the attestation and on the profile page (null for figures without it)."""

import base64
import json

import pytest

from startups.models import Credential
from tests.support.factories import make_startup, make_verification
from tests.support.provider_rows import ls_price, ls_routes, ls_subscription, sale, sync
from tests.support.verification_fakes import (
    NOW,
    gumroad_routes,
    paddle_routes,
    polar_month,
    polar_routes,
    stripe_account,
)
from verification.providers import PROVIDERS
from verification.providers.base import Provider

pytestmark = pytest.mark.django_db

POLAR = polar_routes(
    min_date="2026-11-01",
    monthly=[polar_month("2026-11", revenue=4500, mrr=4500)],
    daily=[],
    subscriptions=[{"id": "s1", "status": "active", "amount": 4500, "customer_id": "c1"}],
)
STRIPE = stripe_account(charged=int(NOW.timestamp()) - 3600)
GUMROAD = gumroad_routes(sales=[sale(1, 900, "2026-11-02T10:00:00Z")])
LEMON = ls_routes(prices=[ls_price(1, 2500)], subscriptions=[ls_subscription(1, 1)])


@pytest.mark.parametrize(
    ("provider", "routes", "key", "kind"),
    [
        ("stripe", STRIPE, "rk_live_a", "restricted_read"),
        ("paddle", paddle_routes(), "pdl_live_apikey_a", "restricted_read"),
        ("polar", POLAR, "polar_oat_a", "restricted_read"),
        ("gumroad", GUMROAD, "gum_a", "restricted_read"),
        ("lemonsqueezy", LEMON, "ls_a", "full_access"),
    ],
)  # fmt: skip
def test_each_provider_records_the_kind_of_key_and_the_figures_carry_it(
    fake_providers, client, provider, routes, key, kind
):
    connection = sync(fake_providers, provider=provider, routes=routes, key=key)
    assert connection.status == "ok", connection.last_error
    assert connection.credential == kind
    assert connection.startup.verification.credential == kind
    detail = client.get("/api/v1/startups/acme").json()["data"]
    assert detail["verification"]["credential"] == kind
    attestation = client.get("/api/v1/startups/acme/attestation").json()["data"]
    claims = json.loads(base64.urlsafe_b64decode(attestation["jws"].split(".")[1] + "=="))
    assert claims["credential"] == kind
    assert json.loads(base64.b64decode(attestation["logEntry"]))["credential"] == kind
    page = client.get("/startups/acme").content.decode()
    assert f'data-testid="credential">{Credential(kind).label}<' in page


def test_a_stripe_secret_key_would_be_full_access():
    # The founders' key check refuses sk_live_ keys; an operator's connect still says so.
    assert PROVIDERS["stripe"].credential("sk_live_x") == "full_access"


def test_a_connector_that_says_nothing_gets_the_default_from_read_only_key():
    def plain(**flags):
        return Provider(
            name="new", default_api_base="https://x.invalid", auth_headers=dict,
            fetch=None, compute=None, **flags,
        )  # fmt: skip

    assert plain().credential("k") == "read_only"
    assert plain(read_only_key=False).credential("k") == "full_access"
    assert PROVIDERS["demo"].credential("k") == "read_only"


def test_figures_without_a_recorded_kind_show_null_and_self_reported_have_no_verification(client):
    make_verification(make_startup(slug="old", mrr=10))
    make_startup(slug="self", mrr=10)
    assert client.get("/api/v1/startups/old").json()["data"]["verification"]["credential"] is None
    assert client.get("/api/v1/startups/self").json()["data"]["verification"] is None
    assert 'data-testid="credential"' not in client.get("/startups/old").content.decode()
