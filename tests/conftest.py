import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _clear_cache():
    """No test sees another's cached answers."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api_client(client):
    """Django's test client, for HTTP through the real middleware, URLs and views."""
    return client
