"""What every connector's tests do against the local fakes, written once: connect a startup and
sync it, survive a 429, keep the last figures when the key is revoked, and refuse a malformed
answer with an error that names what is wrong. Each connector's module holds one `Connector`."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from startups.models import Startup
from tests.support.verification_fakes import NOW, FakeProviders, failing_first, stripe_account
from verification.connections import provider_connection_connect
from verification.models import ProviderConnection
from verification.services import revenue_sync


@dataclass(frozen=True)
class Connector:
    provider: str  # the PROVIDERS key
    token: str  # what the fake provider knows the account by
    credential: str  # what the founder pastes: the token itself, or a JSON line holding it
    golden_routes: Callable[[], dict]  # the fake's routes for the connector's golden case
    golden_mrr: int  # the MRR the golden case syncs to
    slug: str

    def sync(
        self,
        fake: FakeProviders,
        routes: dict,
        *,
        credential: str | None = None,
        token: str | None = None,
        slug: str | None = None,
        now: datetime = NOW,
    ) -> ProviderConnection:
        """Connect a new startup (its key checked against the fake) and sync it at `now`."""
        slug = slug or self.slug
        startup = Startup.objects.create(name=slug.title(), slug=slug)
        fake.account(token or self.token, routes)
        connection = provider_connection_connect(
            startup=startup,
            provider=self.provider,
            raw_key=credential or self.credential,
            api_base=fake.base_url,
        )
        return revenue_sync(connection=connection, now=now)


def sync_through_a_429(
    connector: Connector, fake: FakeProviders, routes: dict, path: str, **failing
) -> ProviderConnection:
    """Sync with `path` answering 429 (with Retry-After) once: the retry succeeds, the sync is
    ok."""
    routes[path] = failing_first(routes[path], status=429, **failing)
    connection = connector.sync(fake, routes)
    assert connection.status == "ok", connection.last_error
    return connection


def assert_revoked_key_keeps_the_last_figures(
    connector: Connector, fake: FakeProviders, *, revoke: Callable[[], None] | None = None
) -> None:
    """After a good sync the provider stops accepting the key (`fake.revoke` unless `revoke`
    says how): the next sync marks the connection key_revoked and the figures stay, never
    zeroed."""
    connection = connector.sync(fake, connector.golden_routes())
    if revoke is None:
        fake.revoke(connector.token)
    else:
        revoke()
    connection = revenue_sync(connection=connection, now=NOW)
    assert connection.status == ProviderConnection.Status.KEY_REVOKED
    assert connection.startup.verification.mrr == connector.golden_mrr


def assert_refused_answer(
    connection: ProviderConnection, words: str, *, nothing_written: bool = False
) -> None:
    """The sync ended in error with a message saying `words`; with `nothing_written`, the
    startup has no verified figures at all (a malformed first sync writes nothing)."""
    assert connection.status == ProviderConnection.Status.ERROR
    assert words in connection.last_error
    if nothing_written:
        assert not hasattr(Startup.objects.get(pk=connection.startup.pk), "verification")


def stripe_connection(fake: FakeProviders, *, slug: str = "acme") -> ProviderConnection:
    """A new startup connected to a fake Stripe account with one subscription and a charge the
    day before NOW: syncs at NOW and a few days later in the month find the same figures."""
    startup = Startup.objects.create(name=slug.title(), slug=slug)
    token = f"rk_live_{slug}_fresh"
    fake.account(token, stripe_account(charged=int(NOW.timestamp()) - 86_400))
    return provider_connection_connect(
        startup=startup, provider="stripe", raw_key=token, api_base=fake.base_url
    )
