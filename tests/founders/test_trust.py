"""The founders' flow as an attacker would try it, through the dashboard's forms
(Django test client), the operator's admin and the fake providers:
- unconfirmed accounts cannot add, claim, edit or connect; a cap on startups per account;
- a huge self-reported MRR is held for an operator, on no public surface until approved;
- claims show the claimant's confirmation and domain match; unconfirmed claims never approved;
- one provider account verifies one startup; a verified startup's rename waits for review;
- connecting again within the "Sync now" interval runs no second sync."""

import json
import re
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from founders.models import StartupClaim
from founders.services import claims_approve
from startups.models import Startup
from tests.support.factories import (
    bearer,
    make_account,
    make_api_key,
    make_startup,
    make_subscription,
)
from tests.support.verification_fakes import FakeProviders, stripe_account, stripe_account_object
from verification.models import ProviderConnection

pytestmark = pytest.mark.django_db

KEY = "rk_live_trust_key_0001"
HUGE = 999_999_999_999


def signed_in(account) -> Client:
    client = Client()
    client.force_login(account)
    return client


def operator() -> Client:
    account = make_account()
    account.is_staff = account.is_superuser = True
    account.save()
    return signed_in(account)


def admin_action(path: str, action: str, pks: list[int]) -> str:
    response = operator().post(path, {"action": action, "_selected_action": pks}, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def stripe_data(**account) -> dict:
    charged = int((timezone.now() - timedelta(days=2)).timestamp())
    return stripe_account(charged=charged, account=stripe_account_object(**account))


@pytest.fixture
def stripe_fake(fake_providers: FakeProviders, settings) -> FakeProviders:
    settings.PROVIDER_API_BASES = {"stripe": fake_providers.base_url}
    return fake_providers


def connect(client: Client, slug: str, key: str = KEY, **extra):
    return client.post(
        f"/dashboard/startups/{slug}/connect/",
        {"provider": "stripe", "key": key},
        follow=True,
        **extra,
    )


def profile(slug: str, **extra) -> dict:
    return {"name": slug.title(), "website": "", "mrr": "", **extra}


# --- a confirmed e-mail for every founder's action ---


@pytest.mark.django_db(transaction=True)
def test_an_unconfirmed_account_cannot_add_claim_edit_or_connect(stripe_fake):
    stripe_fake.account(KEY, stripe_data())
    founder = make_account(confirmed=False)
    owned = make_startup(name="Mine", owner=founder, mrr=10)  # from before confirmation mattered
    unowned = make_startup(name="Orphan")
    client = signed_in(founder)
    attempts = [
        ("/dashboard/startups/new/", {"name": "Fake Giant", "mrr": str(HUGE)}),
        ("/dashboard/startups/claim/", {"slug": unowned.slug}),
        (f"/dashboard/startups/{owned.slug}/edit/", {"name": "Renamed", "mrr": "99"}),
        (f"/dashboard/startups/{owned.slug}/connect/", {"provider": "stripe", "key": KEY}),
    ]
    for path, data in attempts:
        for response in (client.get(path), client.post(path, data)):
            assert response.status_code == 403, path
            page = response.content.decode()
            assert "Confirm your e-mail address first" in page
            assert 'action="/accounts/confirm/resend/"' in page  # the way to resend the link
    assert not Startup.objects.filter(name="Fake Giant").exists()
    assert not StartupClaim.objects.exists()
    owned.refresh_from_db()
    assert (owned.name, owned.mrr) == ("Mine", 10)
    assert not ProviderConnection.objects.exists()
    assert stripe_fake.calls("/v1/subscriptions") == 0

    # Once confirmed, the same account may.
    founder.email_confirmed_at = timezone.now()
    founder.save()
    assert client.post("/dashboard/startups/new/", profile("real", mrr="10")).status_code == 302


def test_an_account_owns_at_most_founder_max_startups_unless_an_operator_raises_it(settings):
    settings.FOUNDER_MAX_STARTUPS = 2
    founder = make_account()
    client = signed_in(founder)
    for name in ("one", "two"):
        assert client.post("/dashboard/startups/new/", profile(name)).status_code == 302
    refused = client.post("/dashboard/startups/new/", profile("three"))
    assert refused.status_code == 200
    assert "at most 2 startups" in refused.content.decode()
    unowned = make_startup(name="Orphan")
    claim = client.post("/dashboard/startups/claim/", {"slug": unowned.slug})
    assert "at most 2 startups" in claim.content.decode()
    assert Startup.objects.filter(owner=founder).count() == 2

    # The operator's per-account override, a field of the account in the admin.
    staff = operator()
    change = staff.get(f"/admin/accounts/user/{founder.pk}/change/").content.decode()
    assert 'name="founder_max_startups_override"' in change
    founder.founder_max_startups_override = 3
    founder.save()
    assert client.post("/dashboard/startups/new/", profile("three")).status_code == 302
    assert Startup.objects.filter(owner=founder).count() == 3


# --- a huge self-reported MRR waits for an operator ---


def public_surfaces(slug: str, name: str) -> dict[str, bool]:
    """Whether the startup shows on each public surface (True: it leaks there). The public
    pages' shared cache is emptied first (it keeps an answer a few seconds after a change).
    llms.txt names no startup at all (an overview of the surfaces)."""
    cache.clear()
    anonymous = Client()
    pro = make_account()
    make_subscription(account=pro)
    _, raw = make_api_key(account=pro)
    listing = anonymous.get("/api/v1/startups", {"limit": 100}).json()
    export = b"".join(
        anonymous.get("/api/v1/exports/startups.ndjson", **bearer(raw)).streaming_content
    )
    mcp = anonymous.post(
        "/api/mcp",
        data=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "get_startup", "arguments": {"slug": slug}},
            }
        ),
        content_type="application/json",
    ).json()
    return {
        "rest list": any(item["slug"] == slug for item in listing["data"]),
        "rest detail": anonymous.get(f"/api/v1/startups/{slug}").status_code != 404,
        "ai profile": anonymous.get(f"/api/ai/startups/{slug}").status_code != 404,
        "ai discovery": slug in anonymous.get("/api/ai/discovery").content.decode(),
        "mcp": not mcp["result"].get("isError"),
        "html list": name in anonymous.get("/startups/").content.decode(),
        "html profile": anonymous.get(f"/startups/{slug}").status_code != 404,
        "markdown": anonymous.get(f"/startups/{slug}.md").status_code != 404,
        "badge": anonymous.get(f"/startups/{slug}/badge.svg").status_code != 404,
        "export": slug.encode() in export,
    }


def test_a_huge_self_reported_mrr_is_held_off_every_surface_until_an_operator_approves(settings):
    settings.SELF_REPORTED_MRR_REVIEW_ABOVE = 100_000
    make_startup(name="Honest Co", slug="honest", mrr=5000)
    founder = make_account()
    client = signed_in(founder)
    response = client.post(
        "/dashboard/startups/new/", profile("giant", mrr=str(HUGE), website="https://giant.io")
    )
    assert response.status_code == 302
    startup = Startup.objects.get(owner=founder)
    # The AI add-on bought: still nowhere while held.
    Startup.objects.filter(pk=startup.pk).update(ai_addon_active=True)

    page = client.get(f"/dashboard/startups/{startup.slug}/").content.decode()
    assert 'data-testid="pending-mrr"' in page and f"${HUGE:,}" in page
    assert "Not published yet" in page
    assert 'data-testid="waiting-review"' in client.get("/dashboard/startups/").content.decode()
    leaks = public_surfaces(startup.slug, "Giant")
    assert not any(leaks.values()), leaks
    top = Client().get("/api/v1/startups").json()["data"][0]
    assert (top["slug"], top["rank"]) == ("honest", 1)

    from founders.models import PendingChange

    pending = PendingChange.objects.get(startup=startup)
    staff = operator()
    assert "Giant" in staff.get("/admin/founders/pendingchange/").content.decode()
    assert staff.get(f"/admin/founders/pendingchange/{pending.pk}/change/").status_code == 200
    assert "1 change(s) approved" in admin_action(
        "/admin/founders/pendingchange/", "approve", [pending.pk]
    )
    detail = Client().get(f"/api/v1/startups/{startup.slug}").json()["data"]
    assert detail["revenue"]["mrr"] == HUGE
    top = Client().get("/api/v1/startups").json()["data"][0]
    assert (top["slug"], top["rank"]) == (startup.slug, 1)
    assert all(public_surfaces(startup.slug, "Giant").values())


def test_a_huge_mrr_on_an_edit_keeps_the_old_figure_public_until_approved(settings):
    settings.SELF_REPORTED_MRR_REVIEW_ABOVE = 100_000
    founder = make_account()
    client = signed_in(founder)
    client.post("/dashboard/startups/new/", profile("steady", mrr="4000"))
    startup = Startup.objects.get(owner=founder)
    edit = client.post(f"/dashboard/startups/{startup.slug}/edit/", profile("steady", mrr="500000"))
    assert edit.status_code == 302
    public = Client().get(f"/api/v1/startups/{startup.slug}").json()["data"]
    assert public["revenue"]["mrr"] == 4000
    assert "$500,000" in client.get(f"/dashboard/startups/{startup.slug}/").content.decode()
    # Saving the form again (it shows the waiting figure) keeps it waiting, not public.
    form = client.get(f"/dashboard/startups/{startup.slug}/edit/").content.decode()
    assert 'value="500000"' in form
    client.post(f"/dashboard/startups/{startup.slug}/edit/", profile("steady", mrr="500000"))
    assert Client().get(f"/api/v1/startups/{startup.slug}").json()["data"]["revenue"]["mrr"] == 4000

    from founders.models import PendingChange

    pending = PendingChange.objects.get(startup=startup, status="pending")
    admin_action("/admin/founders/pendingchange/", "approve", [pending.pk])
    assert Client().get(f"/api/v1/startups/{startup.slug}").json()["data"]["revenue"] == {
        "mrr": 500000,
        "arr": 6000000,
        "currency": "USD",
        "verified": False,
        "source": "self_reported",
        "growth30d": None,
        "lastSyncedAt": None,
    }


# --- claims ---


def claim_rows(html: str) -> dict[str, str]:
    """The admin claim list's rows by the claimant's address."""
    rows = re.findall(r"<tr[^>]*>.*?</tr>", html, re.S)
    return {m.group(0): row for row in rows if (m := re.search(r"[\w.+-]+@[\w.-]+", row))}


def test_claims_need_a_confirmed_account_and_the_admin_shows_confirmation_and_domain():
    acme = make_startup(name="Acme", website="https://www.acme.com/pricing")
    unconfirmed = make_account(email="ceo@acme.com", confirmed=False)
    assert (
        signed_in(unconfirmed).post("/dashboard/startups/claim/", {"slug": acme.slug}).status_code
        == 403
    )
    assert not StartupClaim.objects.exists()

    insider = make_account(email="jo@mail.acme.com")
    lookalike = make_account(email="ceo@acme-inc.co")
    for account in (insider, lookalike):
        assert (
            signed_in(account)
            .post("/dashboard/startups/claim/", {"slug": acme.slug}, follow=True)
            .status_code
            == 200
        )
    # A claim filed before its account's address was unconfirmed again (changed address).
    stale = StartupClaim.objects.create(startup=acme, account=unconfirmed)

    rows = claim_rows(operator().get("/admin/founders/startupclaim/").content.decode())
    icons = {email: re.findall(r'alt="(True|False)"', row) for email, row in rows.items()}
    assert icons["jo@mail.acme.com"] == ["True", "True"]
    assert icons["ceo@acme-inc.co"] == ["True", "False"]
    assert icons["ceo@acme.com"] == ["False", "True"]

    staff = operator()
    lookalike_claim = StartupClaim.objects.get(account=lookalike)
    change = staff.get(f"/admin/founders/startupclaim/{lookalike_claim.pk}/change/")
    text = change.content.decode()
    assert change.status_code == 200
    assert "E-mail at the website" in text and "https://www.acme.com/pricing" in text
    assert re.findall(r'alt="(True|False)"', text) == ["True", "False"]

    page = admin_action("/admin/founders/startupclaim/", "approve", [stale.pk])
    assert "0 claim(s) approved" in page and "has not confirmed" in page
    stale.refresh_from_db()
    acme.refresh_from_db()
    assert stale.status == "pending" and acme.owner is None
    assert claims_approve(claims=StartupClaim.objects.filter(pk=stale.pk)) == 0
    acme.refresh_from_db()
    assert acme.owner is None


# --- a verified label bound to its startup ---


@pytest.mark.django_db(transaction=True)
def test_one_stripe_account_verifies_one_startup_unless_an_operator_links_them(stripe_fake):
    account = stripe_account_object("acct_1Shared", name="Acme Payments Inc")
    stripe_fake.account(KEY, stripe_account(charged=1_700_000_000, account=account))
    stripe_fake.account(
        "rk_live_second_key_02", stripe_account(charged=1_700_000_000, account=account)
    )
    first, second = make_account(), make_account()
    one = make_startup(name="One", owner=first)
    two = make_startup(name="Two", owner=second)
    assert "Connected and verified" in connect(signed_in(first), one.slug).content.decode()
    connection = ProviderConnection.objects.get(startup=one)
    assert (connection.account_id, connection.account_name) == ("acct_1Shared", "Acme Payments Inc")

    refused = connect(signed_in(second), two.slug, "rk_live_second_key_02")
    assert "already verifies another startup" in refused.content.decode()
    assert not ProviderConnection.objects.filter(startup=two).exists()

    page = admin_action("/admin/verification/providerconnection/", "allow_shared_account", [
        connection.pk
    ])  # fmt: skip
    assert "1 provider account(s) may be shared" in page
    accepted = connect(signed_in(second), two.slug, "rk_live_second_key_02")
    assert "Connected and verified" in accepted.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_profile_shows_the_provider_accounts_own_name_and_domain(stripe_fake):
    stripe_fake.account(
        KEY, stripe_data(name="Acme Payments <Inc>", url="https://www.acme-payments.com/")
    )
    founder = make_account()
    startup = make_startup(name="Acme", owner=founder)
    connect(signed_in(founder), startup.slug)
    detail = Client().get(f"/api/v1/startups/{startup.slug}").json()["data"]
    assert detail["providerAccount"] == {
        "name": "Acme Payments <Inc>",
        "domain": "acme-payments.com",
    }
    html = Client().get(f"/startups/{startup.slug}").content.decode()
    assert "Acme Payments &lt;Inc&gt;" in html and "acme-payments.com" in html
    unverified = make_startup(name="Plain", mrr=5)
    assert (
        Client().get(f"/api/v1/startups/{unverified.slug}").json()["data"]["providerAccount"]
        is None
    )


@pytest.mark.django_db(transaction=True)
def test_renaming_a_verified_startup_waits_for_an_operator(stripe_fake):
    stripe_fake.account(KEY, stripe_data())
    founder = make_account()
    client = signed_in(founder)
    client.post("/dashboard/startups/new/", profile("tiny", website="https://tiny.dev", mrr="10"))
    startup = Startup.objects.get(owner=founder)
    connect(client, startup.slug)
    edit = client.post(
        f"/dashboard/startups/{startup.slug}/edit/",
        profile("Stripe", website="https://stripe.com", description="Payments"),
    )
    assert edit.status_code == 302
    public = Client().get(f"/api/v1/startups/{startup.slug}").json()["data"]
    assert (public["name"], public["website"]) == ("Tiny", "https://tiny.dev")
    assert public["description"] == "Payments"  # other fields are saved at once
    assert public["revenue"]["verified"] is True
    page = client.get(f"/dashboard/startups/{startup.slug}/").content.decode()
    assert 'data-testid="pending-identity"' in page and "https://stripe.com" in page

    from founders.models import PendingChange

    pending = PendingChange.objects.get(startup=startup, kind="identity")
    admin_action("/admin/founders/pendingchange/", "approve", [pending.pk])
    public = Client().get(f"/api/v1/startups/{startup.slug}").json()["data"]
    assert (public["name"], public["website"]) == ("Stripe", "https://stripe.com")

    # A startup without a provider renames at once.
    client.post("/dashboard/startups/new/", profile("other", mrr="5"))
    other = Startup.objects.get(owner=founder, name="Other")
    client.post(f"/dashboard/startups/{other.slug}/edit/", profile("Other Two"))
    other.refresh_from_db()
    assert other.name == "Other Two"


# --- connecting takes the "Sync now" slot ---


@pytest.mark.django_db(transaction=True)
def test_connecting_again_within_the_sync_interval_runs_no_second_sync(stripe_fake, settings):
    settings.SYNC_NOW_INTERVAL_SECONDS = 300
    stripe_fake.account(KEY, stripe_data())
    founder = make_account()
    client = signed_in(founder)
    startup = make_startup(name="Busy", owner=founder)
    assert "Connected and verified" in connect(client, startup.slug).content.decode()
    syncs = stripe_fake.calls("/v1/subscriptions")
    assert syncs >= 1
    for _ in range(2):
        again = connect(client, startup.slug).content.decode()
        assert "A sync ran less than 5 minutes ago" in again
    assert stripe_fake.calls("/v1/subscriptions") == syncs
    # "Sync now" shares the slot too.
    client.post(f"/dashboard/startups/{startup.slug}/sync/")
    assert stripe_fake.calls("/v1/subscriptions") == syncs


# --- every connector records its provider account (fakes of the documented endpoints) ---


def identity_routes(provider: str, n: int) -> dict:
    """A provider account of `provider` named Shop {n} at shop{n}.example, no sales."""
    from tests.support.verification_fakes import (
        gumroad_routes,
        gumroad_user,
        lemonsqueezy_routes,
        paddle_routes,
        paddle_seller,
        polar_organization,
        polar_routes,
    )

    name, site = f"Shop {n}", f"https://www.shop{n}.example/"
    if provider == "paddle":
        return paddle_routes(seller=paddle_seller(f"slr_01shop{n:020d}", name=name, website=site))
    if provider == "polar":
        organization = polar_organization(f"org-{n}", name=name, website=site)
        return polar_routes(min_date="2026-01-01", monthly=[], daily=[], organization=organization)
    if provider == "gumroad":
        user = gumroad_user(f"G_shop{n}==", name=name)
        user["user"]["url"] = site
        return gumroad_routes(sales=[], user=user)
    store = {"id": n, "name": name, "domain": f"shop{n}.example", "currency": "USD"}
    return lemonsqueezy_routes(stores=[store], prices=[], subscriptions=[], orders=[], invoices=[])


EXPECTED_IDS = {
    "paddle": "slr_01shop00000000000000000001",
    "polar": "org-1",
    "gumroad": "G_shop1==",
    "lemonsqueezy": "1",
}


@pytest.mark.parametrize("provider", ["paddle", "polar", "gumroad", "lemonsqueezy"])
def test_each_connector_records_its_account_and_refuses_it_for_a_second_startup(
    fake_providers, provider
):
    from verification.connections import ConnectionRefused, provider_connection_connect

    fake_providers.account("key-a", identity_routes(provider, 1))
    fake_providers.account("key-b", identity_routes(provider, 1))
    fake_providers.account("key-c", identity_routes(provider, 2))
    one, two = make_startup(name="One"), make_startup(name="Two")

    def connect_service(startup, key):
        return provider_connection_connect(
            startup=startup, provider=provider, raw_key=key, api_base=fake_providers.base_url
        )

    connection = connect_service(one, "key-a")
    assert (connection.account_id, connection.account_name, connection.account_domain) == (
        EXPECTED_IDS[provider],
        "Shop 1",
        "shop1.example",
    )
    connect_service(one, "key-b")  # the same account again for the same startup: fine
    with pytest.raises(ConnectionRefused, match="already verifies another startup"):
        connect_service(two, "key-b")
    assert connect_service(two, "key-c").account_id != EXPECTED_IDS[provider]


def test_a_key_that_may_not_read_its_account_is_refused_with_the_reason(stripe_fake):
    routes = stripe_data()
    routes["/v1/account"] = lambda query: (
        403,
        {},
        {"error": {"message": "The provided key does not have the required permissions"}},
    )
    stripe_fake.account(KEY, routes)
    founder = make_account()
    startup = make_startup(name="Nosy", owner=founder)
    page = connect(signed_in(founder), startup.slug).content.decode()
    assert "would not say which account this key belongs to" in page
    assert not ProviderConnection.objects.exists()


def test_a_connector_without_identify_records_no_account_and_refuses_nothing():
    """The base class's default: a connector added later keeps working (identity unknown)."""
    from tests.support.demo_keys import demo_key
    from verification.connections import provider_connection_connect
    from verification.providers import provider_named

    assert provider_named("demo").identify is None
    for name in ("One", "Two"):
        connection = provider_connection_connect(
            startup=make_startup(name=name), provider="demo", raw_key=demo_key()
        )
        assert connection.account_id is None


def test_a_connection_made_before_identities_gets_its_account_at_the_next_sync(fake_providers):
    from verification import crypto
    from verification.services import revenue_sync

    account = stripe_account_object("acct_1Older", name="Older Ltd", url="https://older.example")
    fake_providers.account(KEY, stripe_account(charged=1_700_000_000, account=account))
    startup = make_startup(name="Older")
    connection = ProviderConnection.objects.create(
        startup=startup,
        provider="stripe",
        encrypted_key=crypto.encrypt_key(KEY),
        api_base=fake_providers.base_url,
    )
    revenue_sync(connection=connection, now=timezone.now())
    connection.refresh_from_db()
    assert connection.status == "ok"
    assert (connection.account_id, connection.account_name, connection.account_domain) == (
        "acct_1Older",
        "Older Ltd",
        "older.example",
    )
    # A key that may not read its account still syncs; the account stays unknown.
    routes = stripe_account(charged=1_700_000_000)
    routes["/v1/account"] = lambda query: (403, {}, {"error": {"message": "no permission"}})
    fake_providers.account("rk_live_no_account_read", routes)
    other = ProviderConnection.objects.create(
        startup=make_startup(name="Other"),
        provider="stripe",
        encrypted_key=crypto.encrypt_key("rk_live_no_account_read"),
        api_base=fake_providers.base_url,
    )
    revenue_sync(connection=other, now=timezone.now())
    other.refresh_from_db()
    assert other.status == "ok" and other.account_id is None
