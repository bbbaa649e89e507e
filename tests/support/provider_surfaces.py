"""One founder's whole path for a connector: connect from the dashboard (key checked, first sync
run), then the verified figures on every surface: the REST detail, the HTML profile, the badge
and the signed attestation. Used by the connectors' tests."""

import json
from collections.abc import Callable

from django.test import Client

from tests.support.factories import bearer, make_account, make_api_key, make_startup
from tests.support.verification_fakes import FakeProviders
from verification.models import ProviderConnection
from verification.providers import PROVIDERS


def dashboard_connect(
    fake: FakeProviders, settings, *, provider: str, credential: str, slug: str
) -> ProviderConnection:
    """Connect `slug` from the dashboard with `credential` against the fake; it must succeed."""
    settings.PROVIDER_API_BASES = {provider: fake.base_url}
    founder = make_account()
    startup = make_startup(name=slug.title(), slug=slug, owner=founder, mrr=5)
    client = Client()
    client.force_login(founder)
    form = client.get(f"/dashboard/startups/{slug}/connect/").content.decode()
    assert f'value="{provider}"' in form and f'data-testid="guide-{provider}"' in form
    response = client.post(
        f"/dashboard/startups/{slug}/connect/", {"provider": provider, "key": credential}
    )
    assert response.status_code == 302, response.content.decode()[-3000:]
    connection = ProviderConnection.objects.get(startup=startup)
    assert connection.status == "ok", connection.last_error
    for part in _secrets(credential):
        assert part not in connection.encrypted_key
    return connection


def _secrets(credential: str) -> list[str]:
    try:
        parsed = json.loads(credential)
    except ValueError:
        return [credential]
    return [str(v) for k, v in parsed.items() if k in ("api_key", "private_key")]


def assert_verified_everywhere(
    slug: str, *, provider: str, mrr: int | None, total: int, check: Callable[[dict], None] = None
) -> dict:
    """The figures as the REST detail, the history, the profile page, the badge and the
    attestation show them; returns the detail's verification."""
    client = Client()
    _, raw = make_api_key()
    detail = client.get(f"/api/v1/startups/{slug}", **bearer(raw)).json()["data"]
    verification = detail["verification"]
    assert detail["revenue"]["verified"] is True
    assert verification["provider"] == provider and verification["status"] == "ok"
    assert (detail["revenue"]["mrr"], verification["totalRevenue"]) == (mrr, total)
    if check:
        check(verification)
    # History: the sync recorded today's snapshot of the same figures.
    history = client.get(f"/api/v1/startups/{slug}/history", **bearer(raw)).json()["data"]
    assert history[-1]["mrr"] == mrr and history[-1]["customers"] == verification["customers"]
    page = client.get(f"/startups/{slug}").content.decode()
    title = PROVIDERS[provider].title
    assert f"Verified · {title}" in page  # the profile's trust badge
    assert f"Figures verified by <strong>{title}</strong>" in page
    if mrr is not None:
        assert f"${mrr:,}" in page
    badge = client.get(f"/startups/{slug}/badge.svg").content.decode()
    assert ("MRR verified" in badge) if mrr is not None else ("verified" in badge)
    if mrr is not None:
        assert f"${mrr:,}" in badge
    attestation = client.get(f"/api/v1/startups/{slug}/attestation", **bearer(raw))
    assert attestation.status_code == 200
    import jwt

    claims = jwt.decode(attestation.json()["data"]["jws"], options={"verify_signature": False})
    assert claims["provider"] == provider
    assert (claims["mrr"], claims["totalRevenue"]) == (mrr, total)
    assert claims["monthly"] == verification["monthly"]
    return verification
