"""A served API answer is freed by reference counting once written (core/cycles.py).

Before: every list, detail, history, /api/ai and MCP answer left its view, its requests, its
serializers and its rows in reference cycles, for the garbage collector to find; its
collections then took about a tenth of each worker's CPU on the bench dataset and stopped the
worker's threads for up to 200 ms (bench/NOTES.md, "Garbage collection").

Requests go through Django's WSGI handler, the callable gunicorn calls, and the body is
closed as gunicorn closes it. Only objects of the framework's and the service's own classes
are looked for in what the collector finds: plain dicts and lists may come from the test
runner itself.
"""

import gc
import io
import json
import sys
from datetime import date

import pytest
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections

from startups.models import RevenueSnapshot
from tests.support.factories import (
    make_ai_startup,
    make_api_key,
    make_founder,
    make_pro_key,
    make_verification,
)

OURS = (
    "django.",
    "rest_framework.",
    "core.",
    "restapi.",
    "startups.",
    "aisurface.",
    "mcpserver.",
    "quota.",
    "apikeys.",
)


@pytest.fixture
def handler():
    """Django's WSGI handler, as gunicorn calls it; the test's database connection stays open
    at the end of each request (as Django's test client keeps it)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def serve(handler: WSGIHandler, path: str, key: str, body: bytes = b"") -> tuple[str, bytes]:
    route, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": "POST" if body else "GET",
        "PATH_INFO": route,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "testserver",
        "HTTP_X_API_KEY": key,
        "HTTP_ACCEPT": "application/json, text/event-stream",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
    }
    statuses = []
    response = handler(environ, lambda status, headers, exc_info=None: statuses.append(status))
    try:
        content = b"".join(response)
    finally:
        response.close()
    return statuses[0], content


def left_in_cycles(serve_once) -> list[str]:
    """The framework's and the service's objects that only the cycle collector would free
    after `serve_once()`."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        serve_once()
        gc.collect()
        return sorted(
            f"{type(found).__module__}.{type(found).__qualname__}"
            for found in gc.garbage
            if type(found).__module__.startswith(OURS)
        )
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


MCP_SEARCH = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "search_startups", "arguments": {"query": "acme"}},
    }
).encode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/startups?minMrr=100&page=1", b""),
        ("/api/v1/startups?sort=updated-desc", b""),
        ("/api/v1/startups/acme", b""),
        ("/api/v1/startups/acme/history", b""),
        ("/api/ai/discovery", b""),
        ("/api/mcp", MCP_SEARCH),
    ],
    ids=["list", "list-by-update", "detail", "history", "ai-discovery", "mcp-search"],
)
@pytest.mark.parametrize("plan", ["free", "pro"])
def test_an_answer_leaves_nothing_for_the_garbage_collector(
    path, body, plan, handler, read_cache_on
):
    acme = make_ai_startup(slug="acme", name="Acme", mrr=4200, owner_verified=True)
    make_founder(acme)
    make_verification(acme, months=[(date(2026, 10, 1), 5000, 100)])
    RevenueSnapshot.objects.create(
        startup=acme,
        date=date(2026, 11, 1),
        provider="stripe",
        mrr=4200,
        arr=50400,
        customers=12,
        last_30_days=4300,
        total_revenue=4900,
        synced_at="2026-11-01T12:00:00Z",
    )
    make_ai_startup(slug="beta", name="Beta", mrr=900)
    _, key = make_pro_key() if plan == "pro" else make_api_key()

    def serve_once() -> None:
        status, content = serve(handler, path, key, body)
        assert status.startswith("200"), (status, content[:300])
        assert b"acme" in content.lower()

    serve_once()  # the first answer fills the process's copies and caches
    assert left_in_cycles(serve_once) == []
