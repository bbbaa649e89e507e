import os

import pytest
from django.core.handlers.base import BaseHandler
from rest_framework.test import APIClient

from apikeys.ratelimit import fair_use_reset
from core.readcache import clear_local
from quota.confirmations import pending_discard
from tests.support.caches import clear_caches
from tests.support.contract import violations_of
from tests.support.factories import make_api_key
from tests.support.verification_fakes import FakeProviders

# The suite sends many requests quickly from one address: no per-minute fair-use limit, here or
# in the servers tests start (they inherit the environment). tests/apikeys/test_ratelimit.py
# turns it on.
os.environ.setdefault("FAIR_USE_REQUESTS_PER_MINUTE", "0")


@pytest.fixture(autouse=True)
def _responses_follow_the_openapi_document(monkeypatch):
    """Every /api/v1 and /api/ai response of every test is checked against the OpenAPI
    document; a response it does not describe fails the test that got it.

    BaseHandler.get_response serves both the test client and the live server, so the check
    sees every request made in this process. Violations are collected (a live server's
    thread cannot fail the test itself) and reported when the test ends.
    """
    violations: list[str] = []
    original = BaseHandler.get_response

    def get_response(handler, request):
        response = original(handler, request)
        violations.extend(violations_of(request, response))
        return response

    monkeypatch.setattr(BaseHandler, "get_response", get_response)
    yield
    assert not violations, "Responses that break the OpenAPI contract:\n" + "\n".join(violations)


@pytest.fixture(autouse=True)
def _no_fair_use_limit(settings):
    """The settings may have been read before the environment above was set."""
    settings.FAIR_USE_REQUESTS_PER_MINUTE = 0


@pytest.fixture(autouse=True)
def _no_token_watch(settings):
    """The token watch holds a session on the test database, which is dropped at teardown:
    in this process only the tests of the watch turn it on (and stop it). Servers the tests
    start run with the production default."""
    settings.READ_TOKEN_WATCH = False


@pytest.fixture(autouse=True)
def _no_queued_confirmations():
    """No test's queued hold deletions (quota/confirmations.py) outlive it: the next test's
    charge would carry them, and the flusher would connect to a database being dropped."""
    pending_discard()
    yield
    pending_discard()


@pytest.fixture(autouse=True)
def _clear_cache():
    """No test sees another's cached answers (nor another's fair-use buckets)."""
    clear_caches()
    fair_use_reset()
    yield
    clear_caches()


@pytest.fixture
def read_cache_on(settings):
    """Copies kept five minutes, and this process's copies empty before and after (the tests
    of the read cache ask for it)."""
    settings.READ_CACHE_SECONDS = 300
    clear_local()
    yield
    clear_local()


@pytest.fixture
def rank_index_on(read_cache_on, settings):
    """The read cache on (this process's copies empty before and after) and the rank index
    built inline for a minute (the tests of kept rows and the rank index ask for it)."""
    settings.RANK_INDEX_INLINE_SECONDS = 60


@pytest.fixture
def api_key(db):
    """A fresh Free account's key: (ApiKey, raw key)."""
    return make_api_key()


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def fake_providers(settings):
    """The local fake payment-provider APIs, with retries that wait milliseconds, not seconds."""
    settings.PROVIDER_HTTP_BACKOFF_SECONDS = 0.001
    settings.PROVIDER_HTTP_MAX_WAIT_SECONDS = 0.01
    with FakeProviders() as server:
        yield server
