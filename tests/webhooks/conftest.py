import pytest

from tests.support.factories import make_account, make_api_key, make_startup
from tests.support.webhooks import Watched


@pytest.fixture(autouse=True)
def _local_receivers(settings):
    """Tests deliver to a receiver on 127.0.0.1 over http (a development setting)."""
    settings.WEBHOOKS_ALLOW_HTTP = True
    settings.WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = True
    settings.SITE_URL = "https://openstartup.test"


@pytest.fixture
def watched(db) -> Watched:
    """A caller's key and a startup whose edits the endpoints it registers hear."""
    key, raw = make_api_key()
    startup = make_startup("A", owner=make_account(), slug="a", mrr=10)
    return Watched(key=key, raw=raw, startup=startup)
