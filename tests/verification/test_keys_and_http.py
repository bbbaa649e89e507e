"""Provider keys at rest, their rotation, the admin, and the HTTP client's retry rules."""

import httpx
import pytest
from cryptography.fernet import Fernet
from django.contrib.admin.sites import AdminSite
from django.core.checks import run_checks
from django.core.management import call_command

from startups.models import Startup
from tests.support.verification_fakes import stripe_routes
from verification import crypto
from verification.admin import ProviderConnectionAdmin
from verification.connections import provider_connection_connect
from verification.http import KeyRejected, ProviderHttp, ProviderUnavailable
from verification.models import ProviderConnection
from web.admin import StartupAdmin

pytestmark = pytest.mark.django_db


FAKE: dict[str, str] = {}


@pytest.fixture
def stripe_fake(fake_providers):
    """Connecting asks Stripe which account the key reads (GET /v1/account): a fake answers."""
    fake_providers.account(
        "rk_live_abc123", stripe_routes(subscriptions=[], balance_transactions=[])
    )
    FAKE["base"] = fake_providers.base_url
    return fake_providers


def connected(slug: str = "acme", key: str = "rk_live_abc123") -> ProviderConnection:
    startup = Startup.objects.create(name=slug, slug=slug)
    return provider_connection_connect(
        startup=startup, provider="stripe", raw_key=key, api_base=FAKE["base"]
    )


@pytest.mark.usefixtures("stripe_fake")
def test_the_key_is_stored_encrypted_and_reads_back(settings):
    settings.PROVIDER_KEY_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    connection = connected()
    assert "rk_live_abc123" not in connection.encrypted_key
    assert crypto.decrypt_key(connection.encrypted_key) == "rk_live_abc123"
    assert "rk_live_abc123" not in str(connection) and "rk_live_abc123" not in repr(connection)


@pytest.mark.usefixtures("stripe_fake")
def test_keys_rotate_to_a_new_encryption_key(settings):
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.PROVIDER_KEY_ENCRYPTION_KEYS = [old]
    connection = connected()
    # Rotation: prepend the new key, re-encrypt, then drop the old one.
    settings.PROVIDER_KEY_ENCRYPTION_KEYS = [new, old]
    call_command("rotate_provider_keys", stdout=None)
    settings.PROVIDER_KEY_ENCRYPTION_KEYS = [new]
    connection.refresh_from_db()
    assert crypto.decrypt_key(connection.encrypted_key) == "rk_live_abc123"


@pytest.mark.usefixtures("stripe_fake")
def test_an_unknown_encryption_key_is_an_error_not_a_crash(settings):
    settings.PROVIDER_KEY_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    connection = connected()
    settings.PROVIDER_KEY_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(crypto.UnreadableKey):
        crypto.decrypt_key(connection.encrypted_key)


def test_the_development_key_is_flagged_by_the_deployment_checks(settings):
    settings.PROVIDER_KEY_ENCRYPTION_KEYS = []
    ids = [message.id for message in run_checks(include_deployment_checks=True)]
    assert "verification.W001" in ids
    settings.PROVIDER_KEY_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    ids = [message.id for message in run_checks(include_deployment_checks=True)]
    assert "verification.W001" not in ids


@pytest.mark.usefixtures("stripe_fake")
def test_admin_never_shows_the_key_and_cannot_add_or_edit(rf):
    admin = ProviderConnectionAdmin(ProviderConnection, AdminSite())
    request = rf.get("/")
    assert "encrypted_key" not in admin.get_fields(request, connected())
    assert not admin.has_add_permission(request)
    assert not admin.has_change_permission(request)


@pytest.mark.usefixtures("stripe_fake")
def test_verified_figures_are_read_only_in_the_startup_admin(rf):
    admin = StartupAdmin(Startup, AdminSite())
    request = rf.get("/")
    self_reported = Startup.objects.create(name="Self", slug="self", mrr=100)
    assert "mrr" not in admin.get_readonly_fields(request, self_reported)
    connection = connected()
    readonly = admin.get_readonly_fields(request, connection.startup)
    assert {"mrr", "arr", "currency"} <= set(readonly)


def client(handler, *, sleeps: list[float]) -> ProviderHttp:
    return ProviderHttp(
        base_url="https://provider.test",
        headers={"Authorization": "Bearer sk_secret"},
        secret="sk_secret",
        sleep=sleeps.append,
        transport=httpx.MockTransport(handler),
    )


def test_retry_after_is_respected_and_bounded(settings):
    settings.PROVIDER_HTTP_MAX_WAIT_SECONDS = 30
    answers = iter(
        [
            httpx.Response(429, headers={"Retry-After": "7"}),
            httpx.Response(429, headers={"Retry-After": "3600"}),
            httpx.Response(200, json={"ok": True}),
        ]
    )
    sleeps: list[float] = []
    assert client(lambda request: next(answers), sleeps=sleeps).get("/x") == {"ok": True}
    assert sleeps == [7.0, 30.0]


def test_5xx_backs_off_exponentially_and_gives_up(settings):
    settings.PROVIDER_HTTP_RETRIES = 3
    settings.PROVIDER_HTTP_BACKOFF_SECONDS = 0.5
    sleeps: list[float] = []
    http = client(lambda request: httpx.Response(503), sleeps=sleeps)
    with pytest.raises(ProviderUnavailable, match="503 after 4 attempts"):
        http.get("/x")
    assert sleeps == [0.5, 1.0, 2.0]


def test_timeouts_are_retried_and_never_mention_the_key(settings):
    settings.PROVIDER_HTTP_RETRIES = 1

    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out sk_secret", request=request)

    sleeps: list[float] = []
    with pytest.raises(ProviderUnavailable) as raised:
        client(handler, sleeps=sleeps).get("/x")
    assert len(sleeps) == 1  # one retry before giving up
    assert "sk_secret" not in str(raised.value)


def test_401_and_403_mean_the_key_was_rejected():
    for status in (401, 403):
        with pytest.raises(KeyRejected):
            client(lambda request, s=status: httpx.Response(s), sleeps=[]).get("/x")
