"""Fair use: a per-minute token bucket per caller on the API surfaces and pages,
and API keys refused (and never logged) in the query string."""

import json
import os
import re
import time
import urllib.request
from urllib.error import HTTPError

import pytest

from core.accesslog import redact_target
from tests.support.factories import bearer, make_ai_startup, make_api_key, make_startups

LIMIT = 5
MCP_PING = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


@pytest.fixture
def limited(settings, db):
    settings.FAIR_USE_REQUESTS_PER_MINUTE = LIMIT
    return settings


def fair_use(header: str) -> str:
    """The fair-use item of a RateLimit list header (the monthly allowance may be listed too)."""
    items = [item for item in header.split(", ") if item.startswith('"fair-use";')]
    assert len(items) == 1, header
    return items[0]


def burst(client, path: str, n: int = LIMIT, **extra) -> list[int]:
    return [client.get(path, **extra).status_code for _ in range(n)]


def test_the_request_after_the_burst_gets_429_rate_limited_with_retry_after(client, limited):
    make_startups(2)
    assert burst(client, "/api/v1/startups") == [200] * LIMIT
    response = client.get("/api/v1/startups")
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "rate_limited"
    assert "slow down" in error["message"]
    # 5 a minute: one request is back within 12 s.
    assert 1 <= int(response["Retry-After"]) <= 12
    assert fair_use(response["RateLimit-Policy"]) == f'"fair-use";q={LIMIT};w=60'
    assert re.fullmatch(r'"fair-use";r=0;t=\d+', fair_use(response["RateLimit"]))
    assert response["X-Service-Plan"] == "Free"


def test_every_limited_answer_says_what_is_left(client, limited):
    first = client.get("/api/v1/startups")
    assert fair_use(first["RateLimit"]).startswith(f'"fair-use";r={LIMIT - 1};')
    second = client.get("/api/v1/startups")["RateLimit"]
    assert fair_use(second).startswith(f'"fair-use";r={LIMIT - 2};')


def test_the_ai_surface_mcp_and_public_pages_are_limited_too(client, limited):
    startup = make_ai_startup()
    for path in ("/api/ai/discovery", f"/api/ai/startups/{startup.slug}"):
        client.cookies.clear()
        burst(client, path, REMOTE_ADDR="192.0.2.1")
        response = client.get(path, REMOTE_ADDR="192.0.2.1")
        assert response.status_code == 429
        assert response.json()["error"]["code"] == "rate_limited"
        assert "Retry-After" in response
        from apikeys.ratelimit import fair_use_reset

        fair_use_reset()

    for _ in range(LIMIT):
        client.post("/api/mcp", data=MCP_PING, content_type="application/json")
    mcp = client.post("/api/mcp", data=MCP_PING, content_type="application/json")
    assert mcp.status_code == 429
    assert mcp.json()["error"]["data"]["code"] == "rate_limited"
    assert mcp.json()["id"] == 1  # the JSON-RPC answer names the request it refuses
    assert "Retry-After" in mcp

    page = client.get("/docs/guide/", REMOTE_ADDR="192.0.2.2")
    burst(client, "/docs/guide/", LIMIT - 1, REMOTE_ADDR="192.0.2.2")
    assert page.status_code == 200
    refused = client.get("/docs/guide/", REMOTE_ADDR="192.0.2.2")
    assert refused.status_code == 429
    assert "Retry-After" in refused


def test_a_key_has_its_accounts_own_bucket_shared_by_all_its_keys(client, limited):
    key, raw = make_api_key()
    _, second = make_api_key(account=key.account)
    burst(client, "/api/v1/startups")
    assert client.get("/api/v1/startups").status_code == 429  # the address is spent...
    assert client.get("/api/v1/startups", **bearer(raw)).status_code == 200  # ...not the account
    burst(client, "/api/v1/startups", LIMIT - 2, **bearer(raw))
    assert client.get("/api/v1/startups", **bearer(second)).status_code == 200  # last token
    assert client.get("/api/v1/startups", **bearer(raw)).status_code == 429


def test_other_addresses_are_not_affected(client, limited):
    burst(client, "/api/ai/discovery", LIMIT + 1)
    assert client.get("/api/ai/discovery", REMOTE_ADDR="198.51.100.7").status_code == 200


def test_health_checks_are_exempt(client, limited):
    assert burst(client, "/healthz", LIMIT * 3) == [200] * (LIMIT * 3)
    assert client.get("/readyz").status_code == 200


def test_zero_turns_the_limit_off(client, settings, db):
    settings.FAIR_USE_REQUESTS_PER_MINUTE = 0
    responses = [client.get("/api/ai/discovery") for _ in range(50)]
    assert {r.status_code for r in responses} == {200}
    assert "RateLimit" not in responses[-1]


def test_tokens_come_back_at_the_configured_rate(db):
    from apikeys.ratelimit import fair_use_take

    taken = [fair_use_take(identity="refill-test", capacity=120) for _ in range(121)]
    assert [d.allowed for d in taken] == [True] * 120 + [False]  # a burst of 120
    assert taken[-1].retry_after == 1
    time.sleep(0.6)  # two a second come back
    assert fair_use_take(identity="refill-test", capacity=120).allowed


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
def test_with_redis_the_bucket_is_shared_and_atomic(limited):
    from apikeys.ratelimit import fair_use_take

    decisions = [fair_use_take(identity="shared-test", capacity=LIMIT) for _ in range(LIMIT + 1)]
    assert [d.allowed for d in decisions] == [True] * LIMIT + [False]
    assert decisions[-1].retry_after >= 1


def server_database_env() -> dict[str, str]:
    """Environment that points a server process at this test run's database."""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return {"SQLITE_PATH": str(db["NAME"])}
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    return {"DATABASE_URL": f"postgres://{db['USER']}@{host}:{port}/{db['NAME']}"}


# --- keys in the query string -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["api_key", "apikey", "key", "API_KEY"])
def test_a_key_in_the_query_string_gets_400_telling_to_use_the_header(client, db, name):
    _, raw = make_api_key()
    for path in ("/api/v1/startups", "/api/ai/discovery"):
        response = client.get(path, {name: raw})
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "api_key_in_query"
        assert "Authorization: Bearer" in error["message"]
        assert raw not in response.content.decode()


def test_the_access_log_redaction_keeps_everything_but_the_key():
    assert (
        redact_target("/api/v1/startups?limit=3&api%5Fkey=osk_secret&q=a")
        == "/api/v1/startups?limit=3&api%5Fkey=[redacted]&q=a"
    )
    assert redact_target("/api/v1/startups?limit=3") == "/api/v1/startups?limit=3"


@pytest.mark.django_db(transaction=True)
def test_gunicorn_answers_400_and_never_logs_a_key_sent_in_the_url(tmp_path):
    from tests.support.processes import gunicorn_server

    log = tmp_path / "access.log"
    secret = "osk_" + "S3cr3tKeyValue" * 3
    with gunicorn_server({**server_database_env(), "GUNICORN_ACCESS_LOG": str(log)}) as port:
        for query in (f"api_key={secret}", f"limit=2&apikey={secret}", f"key={secret}"):
            url = f"http://127.0.0.1:{port}/api/v1/startups?{query}"
            with pytest.raises(HTTPError) as refused:
                urllib.request.urlopen(url, timeout=10)  # noqa: S310 - loopback test server
            assert refused.value.code == 400
            assert json.loads(refused.value.read())["error"]["code"] == "api_key_in_query"
        time.sleep(0.5)  # the access line is written after the answer
    written = log.read_text()
    assert written.count("/api/v1/startups?") == 3
    assert secret not in written
    assert "[redacted]" in written


def test_html_pages_get_the_fair_use_429_as_a_page(client, limited):
    """The public pages are public, but the fair-use limit covers them too
    (per address), and its refusal there is the site's page, not JSON."""
    make_startups(2)
    address = {"REMOTE_ADDR": "192.0.2.9"}
    paths = ["/", "/startups/", "/startups/?page=2", "/docs/guide/", "/startups/"]
    assert [client.get(path, **address).status_code for path in paths] == [200] * LIMIT
    for path in ("/startups/", "/"):
        refused = client.get(path, **address)
        assert refused.status_code == 429
        assert refused["Content-Type"] == "text/html; charset=utf-8"
        html = refused.content.decode()
        assert "<h1>Too many requests</h1>" in html and "slow down" in html
        assert 'aria-label="Site"' in html  # the site's navigation, as on every page
        assert "default-src 'self'" in refused["Content-Security-Policy"]
        assert 1 <= int(refused["Retry-After"]) <= 12
        assert fair_use(refused["RateLimit-Policy"]) == f'"fair-use";q={LIMIT};w=60'
    # Another address is not affected; the API keeps its JSON refusal.
    assert client.get("/startups/", REMOTE_ADDR="192.0.2.10").status_code == 200
    api = client.get("/api/v1/startups", **address)
    assert api.status_code == 429 and api.json()["error"]["code"] == "rate_limited"
