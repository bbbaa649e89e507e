import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from tests.factories import make_api_key


@pytest.fixture(autouse=True)
def _clear_cache():
    """No test sees another's cached answers."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api_key(db):
    """A fresh Free account's key: (ApiKey, raw key)."""
    return make_api_key()


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()
