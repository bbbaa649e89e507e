"""Demo data, freshness, history and growth, signed attestations, through
the HTTP surfaces a consumer uses (REST, /api/ai, MCP tool handlers, JWKS)."""

import html
import io
import json
import re
import time
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from core import readcache
from quota.models import MonthlyUsage
from startups.history import revenue_snapshot_record
from startups.models import RevenueSnapshot, Startup, Verification
from tests.support.demo_keys import demo_key
from tests.support.factories import bearer, make_ai_startup, make_startup, make_verification
from verification.connections import provider_connection_connect
from verification.models import ProviderConnection
from verification.services import revenue_sync

pytestmark = pytest.mark.django_db

REAL_PROVIDERS = {
    "stripe",
    "lemonsqueezy",
    "polar",
    "gumroad",
    "paddle",
    "dodo_payments",
    "revenuecat",
}


def connect_demo(slug: str, **fields) -> ProviderConnection:
    startup = make_startup(slug=slug, **fields)
    return provider_connection_connect(startup=startup, provider="demo", raw_key=demo_key())


def sync(connection: ProviderConnection, now: datetime) -> ProviderConnection:
    connection.refresh_from_db()
    return revenue_sync(connection=connection, now=now)


def detail(client: Client, slug: str, **headers) -> dict:
    response = client.get(f"/api/v1/startups/{slug}", **headers)
    assert response.status_code == 200, response.content
    return response.json()["data"]


def used_by(account) -> int:
    return sum(MonthlyUsage.objects.filter(account=account).values_list("used", flat=True))


# Demo data never verified under a real provider's name


def test_a_fresh_demo_seed_serves_no_figure_as_verified_by_a_real_provider(client):
    call_command("seed_demo", count=40, stdout=io.StringIO())
    verified = Verification.objects.all()
    assert verified.exists()
    assert set(verified.values_list("provider", flat=True)) == {"demo"}
    # Through the same sync path as real figures: a demo connection, synced ok, snapshotted.
    connections = ProviderConnection.objects.all()
    assert set(connections.values_list("provider", "status")) == {("demo", "ok")}
    assert connections.count() == verified.count()
    slugs = list(verified.values_list("startup__slug", flat=True))
    for slug in slugs:
        verification = detail(client, slug)["verification"]
        assert verification["provider"] == "demo"
        assert verification["provider"] not in REAL_PROVIDERS
        assert verification["status"] == "ok"
    items = client.get("/api/v1/startups", {"verified": "true", "limit": 10}).json()["data"]
    assert items and all(item["revenue"]["verified"] for item in items)
    # Plausible history: a month and a half of daily snapshots, so growth30d shows.
    assert RevenueSnapshot.objects.filter(startup__slug=slugs[0]).count() > 30
    assert Startup.objects.filter(growth_30d__isnull=False).exists()


def test_the_profile_page_says_demo_figures_are_demo_data(client):
    connection = connect_demo("page-co")
    sync(connection, timezone.now())
    page = client.get("/startups/page-co").content.decode()
    assert "Demo data" in page and "Verified revenue" not in page
    assert "/docs/methodology/v2" in page


def test_the_demo_provider_is_refused_in_production(settings):
    connection = connect_demo("demo-co", mrr=5)
    settings.PRODUCTION = True
    connection = sync(connection, timezone.now())
    assert connection.status == "error"
    assert "production" in connection.last_error
    assert not Verification.objects.filter(startup__slug="demo-co").exists()


# Freshness and provenance


def test_status_is_ok_after_a_sync_then_stale_with_time_alone_figures_kept(
    client, settings, monkeypatch
):
    settings.VERIFICATION_STALE_HOURS = 6
    connection = connect_demo("fresh-co")
    synced_at = timezone.now() - timedelta(hours=5)
    sync(connection, synced_at)
    first = detail(client, "fresh-co")["verification"]
    assert first["status"] == "ok"
    assert first["methodology"] == "http://testserver/docs/methodology/v2"
    assert first["methodologyVersion"] == "v2"
    # Two hours later, no write anywhere: 7 hours since the last successful sync.
    later_now = synced_at + timedelta(hours=7)
    monkeypatch.setattr(timezone, "now", lambda: later_now)
    later = detail(client, "fresh-co")["verification"]
    assert later["status"] == "stale"
    assert later["mrr"] == first["mrr"] and later["mrr"] is not None  # kept, never zeroed
    assert later["lastSyncedAt"] == first["lastSyncedAt"]


def test_a_failed_sync_shows_at_once_on_a_cached_profile(client):
    connection = connect_demo("flaky-co")
    sync(connection, timezone.now())
    assert detail(client, "flaky-co")["verification"]["status"] == "ok"
    # The key stops working: the sync fails with the provider's "not a demo key" error.
    ProviderConnection.objects.filter(pk=connection.pk).update(
        encrypted_key=ProviderConnection.objects.get(pk=connection.pk).encrypted_key[:-4] + "AAAA"
    )
    failed = sync(connection, timezone.now())
    assert failed.status == "error"
    shown = detail(client, "flaky-co")
    assert shown["verification"]["status"] == "error"
    assert shown["verification"]["mrr"] is not None  # last good figures kept


def test_list_items_say_verified_and_when_and_filter_on_it(client):
    connection = connect_demo("synced-co", mrr=1)
    moment = datetime(2026, 11, 20, 8, 30, 0, 250000, tzinfo=UTC)
    sync(connection, moment)
    make_startup(slug="self-co", mrr=100, owner=None)
    items = {item["slug"]: item for item in client.get("/api/v1/startups").json()["data"]}
    assert items["synced-co"]["revenue"]["verified"] is True
    assert items["synced-co"]["revenue"]["lastSyncedAt"] == "2026-11-20T08:30:00.250Z"
    assert items["self-co"]["revenue"]["verified"] is False
    assert items["self-co"]["revenue"]["lastSyncedAt"] is None
    only = client.get("/api/v1/startups", {"verified": "true"}).json()
    assert [item["slug"] for item in only["data"]] == ["synced-co"]
    assert only["meta"]["total"] == 1
    others = client.get("/api/v1/startups", {"verified": "false"}).json()["data"]
    assert [item["slug"] for item in others] == ["self-co"]
    # Not a boolean: ignored, like every list parameter.
    assert len(client.get("/api/v1/startups", {"verified": "maybe"}).json()["data"]) == 2
    # Page 2 of a non-default sort goes through the ranked (raw SQL) path: same answer.
    ranked = client.get("/api/v1/startups", {"sort": "name-asc"}).json()["data"]
    assert {i["slug"]: i["revenue"]["lastSyncedAt"] for i in ranked}["synced-co"] == (
        "2026-11-20T08:30:00.250Z"
    )


def test_ai_profile_and_mcp_results_carry_synced_at_and_status(client):
    startup = make_ai_startup(slug="ai-co", mrr=10, owner_verified=True)
    connection = provider_connection_connect(startup=startup, provider="demo", raw_key=demo_key())
    sync(connection, timezone.now())
    profile = client.get("/api/ai/startups/ai-co").json()
    assert profile["revenue"]["status"] == "ok"
    assert profile["revenue"]["source"] == "demo"
    synced = Verification.objects.get(startup=startup).verified_at
    assert profile["revenue"]["synced_at"] == synced.strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{synced.microsecond // 1000:03d}Z"
    )
    for name, arguments in (("get_startup", {"slug": "ai-co"}), ("search_startups", {})):
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        response = client.post(
            "/api/mcp", data=json.dumps(message), content_type="application/json"
        )
        result = response.json()["result"]["structuredContent"]
        shown = result if name == "get_startup" else result["startups"][0]
        assert shown["revenue"]["status"] == "ok", name
        assert shown["revenue"]["synced_at"] == profile["revenue"]["synced_at"], name


# History and growth


def test_each_successful_sync_records_the_day_last_of_the_day_wins_earlier_days_kept(client):
    startup = make_startup(slug="hist-co", mrr=1)
    make_verification(startup, mrr=100, customers=3, last_30_days=90)
    day1 = datetime(2026, 10, 1, 9, tzinfo=UTC)
    revenue_snapshot_record(startup=startup, now=day1)
    Verification.objects.filter(startup=startup).update(mrr=120)
    revenue_snapshot_record(startup=startup, now=day1 + timedelta(hours=5))  # same day: wins
    Verification.objects.filter(startup=startup).update(mrr=130, customers=4)
    revenue_snapshot_record(startup=startup, now=datetime(2026, 10, 2, 1, tzinfo=UTC))
    body = client.get("/api/v1/startups/hist-co/history").json()
    assert body["data"] == [
        {"date": "2026-10-01", "mrr": 120, "arr": 1200, "customers": 3, "last30Days": 90},
        {"date": "2026-10-02", "mrr": 130, "arr": 1200, "customers": 4, "last30Days": 90},
    ]
    assert body["meta"]["count"] == 2 and body["meta"]["slug"] == "hist-co"
    one = client.get("/api/v1/startups/hist-co/history", {"from": "2026-10-02"}).json()
    assert [row["date"] for row in one["data"]] == ["2026-10-02"]
    assert one["meta"]["from"] == "2026-10-02" and one["meta"]["to"] is None
    until = client.get("/api/v1/startups/hist-co/history", {"to": "2026-10-01"}).json()
    assert [row["date"] for row in until["data"]] == ["2026-10-01"]
    # A malformed date is ignored, as list parameters are.
    loose = client.get("/api/v1/startups/hist-co/history", {"from": "yesterday"}).json()
    assert loose["meta"]["count"] == 2 and loose["meta"]["from"] is None


def test_a_history_range_without_days_is_empty_and_an_unpublished_startups_is_not_found(client):
    """The startup and its days are read together (one statement, its days joined to it):
    a range holding none of its days is still its history (200, no days), never a 404;
    an unpublished startup's days are nobody's."""
    startup = make_startup(slug="range-co", mrr=1)
    make_verification(startup, mrr=100, customers=3, last_30_days=90)
    for day in (1, 2):
        revenue_snapshot_record(startup=startup, now=datetime(2026, 10, day, 9, tzinfo=UTC))
    url = "/api/v1/startups/range-co/history"
    for bounds in (
        {"from": "2026-10-03"},
        {"to": "2026-09-30"},
        {"from": "2026-10-02", "to": "2026-10-01"},
    ):
        body = client.get(url, bounds).json()
        assert body["data"] == [] and body["meta"]["count"] == 0, bounds
        assert body["meta"]["slug"] == "range-co"
    both = client.get(url, {"from": "2026-10-01", "to": "2026-10-02"}).json()
    assert [row["date"] for row in both["data"]] == ["2026-10-01", "2026-10-02"]
    Startup.objects.filter(pk=startup.pk).update(is_published=False)
    readcache.clear_local()
    missing = client.get(url)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_sync_revenue_records_a_snapshot(client):
    connection = connect_demo("cmd-co")
    out = io.StringIO()
    call_command("sync_revenue", "--slug", "cmd-co", stdout=out)
    assert "cmd-co: ok" in out.getvalue()
    snapshot = RevenueSnapshot.objects.get(startup__slug="cmd-co")
    verification = Verification.objects.get(startup__slug="cmd-co")
    assert snapshot.date == timezone.now().astimezone(UTC).date()
    assert (snapshot.mrr, snapshot.customers, snapshot.total_revenue) == (
        verification.mrr,
        verification.customers,
        verification.total_revenue,
    )
    assert connection.provider == snapshot.provider == "demo"


def test_growth_30d_compares_with_the_snapshot_30_days_earlier_never_invented(client):
    startup = make_startup(slug="grow-co", mrr=1)
    make_verification(startup, mrr=100)
    now = datetime(2026, 11, 20, 12, tzinfo=UTC)
    revenue_snapshot_record(startup=startup, now=now - timedelta(days=29))
    Verification.objects.filter(startup=startup).update(mrr=112)
    revenue_snapshot_record(startup=startup, now=now)
    Startup.objects.filter(pk=startup.pk).update(mrr=112)
    assert detail(client, "grow-co")["revenue"]["growth30d"] is None  # 29 days: not that old
    RevenueSnapshot.objects.create(
        startup=startup,
        date=(now - timedelta(days=30)).date(),
        provider="stripe",
        mrr=100,
        customers=1,
        last_30_days=0,
        total_revenue=0,
        synced_at=now - timedelta(days=30),
    )
    revenue_snapshot_record(startup=startup, now=now)
    assert detail(client, "grow-co")["revenue"]["growth30d"] == 0.12
    make_startup(slug="flat-co", mrr=5000)  # no history: null, sorted last
    listed = client.get("/api/v1/startups", {"sort": "growth-desc"}).json()["data"]
    assert [item["slug"] for item in listed] == ["grow-co", "flat-co"]
    assert listed[0]["revenue"]["growth30d"] == 0.12
    assert listed[1]["revenue"]["growth30d"] is None


def test_history_404s_like_the_detail_and_costs_one_record_on_free(client, api_key):
    obj, raw = api_key
    startup = make_startup(slug="paid-co", mrr=1)
    make_verification(startup)
    revenue_snapshot_record(startup=startup, now=timezone.now())
    missing = client.get("/api/v1/startups/nope/history", **bearer(raw))
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    assert used_by(obj.account) == 0
    assert client.get("/api/v1/startups/paid-co/history", **bearer(raw)).status_code == 200
    assert used_by(obj.account) == 1


# Signed attestations


def _verify_with_pyjwt(client: Client, token: str) -> dict:
    """Verify as a third party would: PyJWT (not joserfc, which signs), keys from the JWKS."""
    keys = client.get("/.well-known/jwks.json").json()
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "EdDSA"
    (jwk,) = [key for key in keys["keys"] if key["kid"] == header["kid"]]
    public = jwt.PyJWK(jwk, algorithm="EdDSA")
    return jwt.decode(token, key=public.key, algorithms=["EdDSA"])


def test_an_attestation_verifies_with_another_library_and_matches_the_detail(client, api_key):
    obj, raw = api_key
    connection = connect_demo("signed-co")
    sync(connection, timezone.now())
    response = client.get("/api/v1/startups/signed-co/attestation", **bearer(raw))
    assert response.status_code == 200
    data = response.json()["data"]
    assert set(data) == {"jws", "keyId", "leafIndex", "logEntry", "treeHead", "inclusionProof"}
    assert data["jws"].count(".") == 2  # compact serialization
    payload = _verify_with_pyjwt(client, data["jws"])
    verification = detail(client, "signed-co", **bearer(raw))["verification"]
    assert payload["slug"] == "signed-co"
    assert payload["provider"] == "demo"
    for field in ("mrr", "arr", "totalRevenue", "last30Days", "customers", "currency"):
        assert payload[field] == verification[field], field
    assert payload["monthly"] == verification["monthly"] and payload["monthly"]
    assert payload["lastSyncedAt"] == verification["lastSyncedAt"]
    assert payload["methodology"] == verification["methodology"]
    assert payload["methodologyVersion"] == verification["methodologyVersion"] == "v2"
    assert datetime.fromisoformat(payload["issuedAt"].replace("Z", "+00:00")) <= timezone.now()
    assert jwt.get_unverified_header(data["jws"])["kid"] == data["keyId"]
    assert used_by(obj.account) == 2  # one record for the attestation, one for the detail


def test_an_attestation_names_its_issuer_and_subject_and_expires(client, settings):
    settings.SITE_URL = "https://openstartup.example"
    settings.ATTESTATION_VALIDITY_SECONDS = 3600
    connection = connect_demo("claims-co")
    sync(connection, timezone.now())
    before = int(timezone.now().timestamp())
    token = client.get("/api/v1/startups/claims-co/attestation").json()["data"]["jws"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["iss"] == "https://openstartup.example"
    assert claims["sub"] == claims["slug"] == "claims-co"
    assert before <= claims["iat"] <= before + 5
    assert claims["exp"] == claims["iat"] + 3600
    # A verifier checking them: the right issuer passes, another is refused, and so is the
    # attestation once expired.
    assert _verify_with_pyjwt(client, token)["sub"] == "claims-co"
    keys = client.get("/.well-known/jwks.json").json()["keys"]
    public = jwt.PyJWK(keys[0], algorithm="EdDSA").key
    jwt.decode(token, public, algorithms=["EdDSA"], issuer="https://openstartup.example")
    with pytest.raises(jwt.InvalidIssuerError):
        jwt.decode(token, public, algorithms=["EdDSA"], issuer="https://evil.example")
    settings.ATTESTATION_VALIDITY_SECONDS = 1
    short = client.get("/api/v1/startups/claims-co/attestation").json()["data"]["jws"]
    time.sleep(1.1)
    with pytest.raises(jwt.ExpiredSignatureError):
        jwt.decode(short, public, algorithms=["EdDSA"])


def test_a_tampered_attestation_does_not_verify(client):
    connection = connect_demo("tamper-co")
    sync(connection, timezone.now())
    token = client.get("/api/v1/startups/tamper-co/attestation").json()["data"]["jws"]
    header, payload, signature = token.split(".")
    forged = jwt.utils.base64url_encode(
        jwt.utils.base64url_decode(payload).replace(b'"mrr":', b'"mrr":9')
    ).decode()
    with pytest.raises(jwt.InvalidSignatureError):
        _verify_with_pyjwt(client, f"{header}.{forged}.{signature}")


def test_only_verified_startups_get_an_attestation_and_a_404_costs_nothing(client, api_key):
    obj, raw = api_key
    make_startup(slug="self-co", mrr=10)
    for slug in ("self-co", "nope"):
        response = client.get(f"/api/v1/startups/{slug}/attestation", **bearer(raw))
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert used_by(obj.account) == 0


def test_jwks_publishes_every_configured_key_and_the_first_signs(client, settings):
    first = "cKzF1HqfJ3m1xk4tQ0e8l2Jm0G3a9q6y7Vw2b5nE4sU"
    second = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
    settings.ATTESTATION_SIGNING_KEYS = [first, second]
    keys = client.get("/.well-known/jwks.json").json()["keys"]
    assert len(keys) == 2
    for key in keys:
        assert (key["kty"], key["crv"], key["alg"]) == ("OKP", "Ed25519", "EdDSA")
        assert key["kid"] and "d" not in key  # never the private part
        assert not key["kid"].startswith("dev-")
    connection = connect_demo("rotated-co")
    sync(connection, timezone.now())
    data = client.get("/api/v1/startups/rotated-co/attestation").json()["data"]
    assert data["keyId"] == keys[0]["kid"]
    assert _verify_with_pyjwt(client, data["jws"])["slug"] == "rotated-co"


def test_the_jwks_is_public_cacheable_and_readable_from_any_origin(client):
    response = client.get("/.well-known/jwks.json", headers={"Origin": "https://else.example"})
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    assert "public" in response["Cache-Control"]


def test_without_configured_keys_a_marked_development_key_signs(client, settings):
    settings.ATTESTATION_SIGNING_KEYS = []
    (key,) = client.get("/.well-known/jwks.json").json()["keys"]
    assert key["kid"].startswith("dev-")


# The published methodology


def test_the_methodology_is_served_as_html_and_versioned(client):
    for version in ("v1", "v2"):
        response = client.get(f"/docs/methodology/{version}")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/html")
        html = response.content.decode()
        assert "<h1>How verified revenue is computed</h1>" in html
        assert "<table>" in html
    assert client.get("/docs/methodology/v9").status_code == 404


def test_v1_stays_served_as_it_was_and_v2_has_a_changelog(client):
    # v1 is the text first published, unchanged, with a link to the current version.
    v1 = client.get("/docs/methodology/v1").content.decode()
    assert "disputes are not revenue and are skipped" in v1
    assert "Gumroad (no subscription data)" in v1
    assert 'href="/docs/methodology/v2"' in v1
    v2 = client.get("/docs/methodology/v2").content.decode()
    assert "Changes from v1" in v2
    assert "disputes are not revenue and are skipped" not in v2


def test_figures_name_the_methodology_they_were_computed_with_until_the_next_sync(client):
    # Figures stored before v2 (the migration marks them v1) keep v1 until a sync recomputes them.
    startup = make_ai_startup(slug="old-co")
    connection = provider_connection_connect(startup=startup, provider="demo", raw_key=demo_key())
    sync(connection, timezone.now())
    Verification.objects.filter(startup__slug="old-co").update(methodology_version="v1")
    readcache.bump("data")
    old = detail(client, "old-co")["verification"]
    assert old["methodologyVersion"] == "v1"
    assert old["methodology"] == "http://testserver/docs/methodology/v1"
    token = client.get("/api/v1/startups/old-co/attestation").json()["data"]["jws"]
    payload = jwt.decode(token, options={"verify_signature": False})
    assert (payload["methodologyVersion"], payload["methodology"]) == ("v1", old["methodology"])
    ai = client.get("/api/ai/startups/old-co").json()
    assert ai["revenue"]["methodology_version"] == "v1"
    sync(connection, timezone.now())
    new = detail(client, "old-co")["verification"]
    assert (new["methodologyVersion"], new["methodology"][-3:]) == ("v2", "/v2")
    assert client.get("/api/ai/startups/old-co").json()["revenue"]["methodology_version"] == "v2"


def test_the_guides_offline_verification_snippet_works(client, tmp_path, monkeypatch, capsys):
    connection = connect_demo("guide-co")
    sync(connection, timezone.now())
    token = client.get("/api/v1/startups/guide-co/attestation").json()["data"]["jws"]
    (tmp_path / "attestation.jws").write_text(token)
    (tmp_path / "jwks.json").write_text(client.get("/.well-known/jwks.json").content.decode())
    guide = client.get("/docs/guide/").content.decode()
    snippet = html.unescape(re.search(r'<pre id="verify-offline">(.*?)</pre>', guide, re.S)[1])
    monkeypatch.chdir(tmp_path)
    exec(compile(snippet, "guide", "exec"), {})  # noqa: S102 - our own published snippet
    mrr = Verification.objects.get(startup__slug="guide-co").mrr
    assert capsys.readouterr().out.split()[:3] == ["guide-co", "demo", str(mrr)]
