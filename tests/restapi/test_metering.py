"""Metering and headers that never surprise (HEAD, OPTIONS, RateLimit, warnings,
X-Request-Id), through the HTTP test client and a real gunicorn."""

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from quota.models import MonthlyUsage
from startups.models import Startup
from tests.support.contract import openapi_document
from tests.support.factories import (
    bearer,
    make_account,
    make_api_key,
    make_startup,
    make_subscription,
    make_verification,
)

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def twelve():
    return [make_startup(f"S{n:02d}", slug=f"s{n:02d}", mrr=1000 - n) for n in range(12)]


def pro_key() -> str:
    account = make_account()
    make_subscription(account=account)
    return make_api_key(account=account)[1]


def remaining(response) -> int:
    return int(response["X-Service-Quota-Remaining"])


# --- HEAD and OPTIONS ---------------------------------------------------------------------------


def test_head_on_the_list_and_a_detail_spends_nothing(client, twelve):
    for path in ("/api/v1/startups?limit=10", "/api/v1/startups/s01"):
        head = client.head(path)
        assert head.status_code == 200
        assert head.content == b""
        assert remaining(head) == 100
    assert not MonthlyUsage.objects.filter(used__gt=0).exists()
    # GET still spends: 10 records, then 1.
    assert remaining(client.get("/api/v1/startups")) == 90
    assert remaining(client.get("/api/v1/startups/s01")) == 89
    assert remaining(client.head("/api/v1/startups")) == 89


def test_head_on_history_and_attestation_spends_nothing(client, twelve):
    make_verification(Startup.objects.get(slug="s01"))
    for path in ("/api/v1/startups/s01/history", "/api/v1/startups/s01/attestation"):
        head = client.head(path)
        assert head.status_code == 200 and head.content == b""
        assert remaining(head) == 100
    assert not MonthlyUsage.objects.filter(used__gt=0).exists()
    assert remaining(client.get("/api/v1/startups/s01/history")) == 99


def test_head_answers_what_get_would_when_the_allowance_is_used_up(client, twelve):
    for _ in range(10):
        client.get("/api/v1/startups")
    head = client.head("/api/v1/startups")
    assert head.status_code == 429
    assert int(head["Retry-After"]) > 0
    assert client.get("/api/v1/startups").status_code == 429


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/startups",
        "/api/v1/startups/s01",
        "/api/v1/startups/s01/history",
        "/api/v1/startups/s01/attestation",
        "/api/v1/categories",
        "/api/v1/exports/startups.ndjson",
        "/api/ai/discovery",
        "/api/ai/startups/s01",
    ],
)
def test_options_is_answered_as_documented(client, twelve, path):
    response = client.options(path)
    assert response.status_code == 204
    assert set(response["Allow"].replace(" ", "").split(",")) == {"GET", "HEAD", "OPTIONS"}
    assert response["X-Request-Id"]
    assert remaining(client.get("/api/v1/categories")) == 100


def test_the_document_describes_head_options_and_a_server():
    document = openapi_document()
    assert document["servers"] and document["servers"][0]["url"]
    for path, item in document["paths"].items():
        assert {"get", "head", "options"} <= set(item), path
        assert "204" in item["options"]["responses"]
        assert item["options"]["responses"]["204"]["headers"]["Allow"]["required"]
        for response in item["head"]["responses"].values():
            assert "content" not in response


# --- RateLimit and Retry-After --------------------------------------------------------------------

POLICY = re.compile(r'^"monthly";q=(\d+);w=(\d+)$')
STATE = re.compile(r'^"monthly";r=(\d+);t=(\d+)$')


def test_free_answers_carry_the_monthly_ratelimit_policy_and_state(client, twelve):
    response = client.get("/api/v1/startups?limit=4")
    quota, window = map(int, POLICY.match(response["RateLimit-Policy"]).groups())
    left, reset = map(int, STATE.match(response["RateLimit"]).groups())
    assert quota == 100
    assert 28 * 86400 <= window <= 31 * 86400
    assert left == 96 == remaining(response)
    assert 0 < reset <= window


def test_pro_answers_have_no_monthly_policy(client, twelve):
    response = client.get("/api/v1/startups", **bearer(pro_key()))
    assert response.status_code == 200
    assert "RateLimit-Policy" not in response and "RateLimit" not in response


def test_every_429_says_when_to_retry_and_ratelimit_shows_nothing_left(client, twelve):
    for _ in range(10):
        client.get("/api/v1/startups")
    for path in ("/api/v1/startups", "/api/v1/startups/s01"):
        response = client.get(path)
        assert response.status_code == 429
        assert response.json()["error"]["code"] == "monthly_quota_exceeded"
        left, reset = map(int, STATE.match(response["RateLimit"]).groups())
        assert left == 0
        assert abs(int(response["Retry-After"]) - reset) <= 2


def test_another_policy_already_on_the_response_is_kept():
    from django.http import HttpResponse

    from quota.headers import stamp, status_of
    from quota.plans import FREE
    from quota.services import Caller

    response = HttpResponse()
    response["RateLimit-Policy"] = '"per-minute";q=60;w=60'
    stamp(response, status_of(caller=Caller(plan=FREE, client="192.0.2.1")))
    assert response["RateLimit-Policy"].startswith('"per-minute";q=60;w=60, "monthly";q=100;')


# --- meta.warnings ------------------------------------------------------------------------------


def test_a_clean_request_has_no_warnings(client, twelve):
    assert "warnings" not in client.get("/api/v1/startups?sort=name-asc&limit=3").json()["meta"]


def test_ignored_parameters_are_named_in_meta_warnings(client, twelve):
    body = client.get("/api/v1/startups?sort=best&colour=blue&onSale=maybe&limit=3").json()
    warnings = body["meta"]["warnings"]
    assert [item["slug"] for item in body["data"]] == ["s00", "s01", "s02"]  # lenient as ever
    assert any("'colour'" in warning for warning in warnings)
    assert any("sort 'best'" in warning and "mrr-desc" in warning for warning in warnings)
    assert any("onSale='maybe'" in warning for warning in warnings)
    assert len(warnings) == 3


# --- X-Request-Id ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/api/v1/startups", "/api/v1/nothing", "/api/ai/discovery", "/llms.txt", "/healthz"]
)
def test_every_response_has_a_request_id(client, path):
    first, second = client.get(path), client.get(path)
    uuid.UUID(first["X-Request-Id"])
    assert first["X-Request-Id"] != second["X-Request-Id"]


def test_a_sane_incoming_request_id_is_kept_and_echoed_in_the_error(client):
    response = client.get("/api/v1/startups/nope", headers={"X-Request-Id": "edge-42.abc:1"})
    assert response.status_code == 404
    assert response["X-Request-Id"] == "edge-42.abc:1"
    assert response.json()["error"]["requestId"] == "edge-42.abc:1"


@pytest.mark.parametrize("bad", ["x" * 200, "has space", "<script>", "ünï"])
def test_an_insane_incoming_request_id_is_replaced(client, bad):
    response = client.get("/api/v1/startups", headers={"X-Request-Id": bad})
    uuid.UUID(response["X-Request-Id"])


def test_every_error_object_carries_the_request_id(client):
    answers = [
        client.get("/api/v1/startups", headers={"Authorization": "Bearer wrong"}),  # 401
        client.post("/api/v1/startups", {}),  # 405
        client.get("/api/v1/nothing"),  # 404 outside any view
        client.get("/api/ai/startups/nope"),  # the AI surface too
        client.get("/api/v1/exports/startups.ndjson"),  # 403
    ]
    for response in answers:
        assert response.status_code >= 400
        assert response.json()["error"]["requestId"] == response["X-Request-Id"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_gunicorn_access_log_names_the_request_id(tmp_path):
    port, log = _free_port(), tmp_path / "access.log"
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "gunicorn"), "openstartup.wsgi"]
        + ["--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=ROOT,
        env={**os.environ, "WEB_CONCURRENCY": "1", "GUNICORN_ACCESS_LOG": str(log)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/healthz", headers={"X-Request-Id": "trace-me-123"}
        )
        for _ in range(200):
            try:
                with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310
                    assert response.headers["X-Request-Id"] == "trace-me-123"
                break
            except OSError:
                time.sleep(0.05)
        for _ in range(100):
            if log.exists() and "trace-me-123" in log.read_text():
                break
            time.sleep(0.05)
        assert "trace-me-123" in log.read_text()
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_head_sends_the_get_length_and_no_body(client, twelve):
    """What the WSGI server receives (the test client would strip a body itself): none, so
    gunicorn has nothing to drop and log."""
    from django.core import signals
    from django.core.handlers.wsgi import WSGIHandler
    from django.db import close_old_connections
    from django.test.client import RequestFactory

    get = client.get("/api/v1/startups/s01")
    environ = RequestFactory()._base_environ(
        REQUEST_METHOD="HEAD", PATH_INFO="/api/v1/startups/s01"
    )
    headers: dict = {}
    # As the test client does: keep the test's transaction open.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        body = b"".join(WSGIHandler()(environ, lambda status, h: headers.update(h)))
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
    assert body == b""
    assert int(headers["Content-Length"]) == len(get.content)
