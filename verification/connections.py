"""Connections to a payment provider: connect (the key checked, then stored encrypted),
disconnect, operators' shared accounts and the rotation of stored keys. The sync of the
figures is verification/services.py."""

import ipaddress
import logging
import time
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction

from startups.changes import startup_change_record
from startups.models import Startup, Verification
from verification import crypto
from verification.http import KeyRejected, ProviderError, ProviderHttp
from verification.models import ProviderConnection, SharedProviderAccount
from verification.providers import credential_problem, provider_named
from verification.providers.base import AccountIdentity, Provider, TestModeData

logger = logging.getLogger(__name__)

Status = ProviderConnection.Status


class ConnectionRefused(ValueError):
    """A connection we will not make; the message is written for the founder and safe to show."""


LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1"}


def _is_loopback(host: str) -> bool:
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def provider_api_base_check(provider: Provider, api_base: str) -> str:
    """The API host override, refused unless https (plain http only to a loopback host outside
    production: the tests' fake providers) and unless it is the provider's sandbox."""
    try:
        URLValidator(schemes=["http", "https"])(api_base)
    except ValidationError:
        raise ConnectionRefused(
            f"--api-base must be an https URL, not {api_base[:100]!r}"
        ) from None
    url = urlsplit(api_base)
    host = (url.hostname or "").lower()
    if url.scheme != "https" and (settings.PRODUCTION or not _is_loopback(host)):
        raise ConnectionRefused(
            "the provider's API address must use https (plain http is only allowed to this "
            "machine, outside production)"
        )
    if host in provider.sandbox_hosts:
        raise ConnectionRefused(
            f"{host} is {provider.title}'s sandbox: sandbox data is not real revenue and is never "
            f"verified. Connect your live {provider.title} account instead."
        )
    return api_base


def provider_connection_connect(
    *, startup: Startup, provider: str, raw_key: str, api_base: str | None = None
) -> ProviderConnection:
    """Connect (or reconnect) the startup's one provider; the key is stored encrypted.

    Raises ConnectionRefused (a ValueError with a founder-readable message) for an unknown
    provider, an empty key, a test-mode or sandbox key or account, or an unsafe API address.
    """
    try:
        connector = provider_named(provider)
    except ValueError as exc:
        raise ConnectionRefused(str(exc)) from None
    raw_key = raw_key.strip()
    if not raw_key:
        raise ConnectionRefused("the provider key is empty")
    if problem := credential_problem(provider, raw_key):
        raise ConnectionRefused(problem)
    if api_base:
        provider_api_base_check(connector, api_base)
    if raw_key.startswith(connector.test_key_prefixes):
        raise ConnectionRefused(
            f"this is a {connector.title} test-mode key: test data is not real revenue and is "
            f"never verified. Create a key in live mode ({connector.key_hint})."
        )
    if connector.probe is not None:
        _probe_live_mode(connector, raw_key=raw_key, api_base=api_base)
    identity = _identify(connector, raw_key=raw_key, api_base=api_base)
    with transaction.atomic():
        if identity is not None and provider_account_taken(
            provider=provider, account_id=identity.id, startup=startup
        ):
            raise ConnectionRefused(
                f"this {connector.title} account already verifies another startup: one provider "
                "account verifies one startup. If both startups are yours and really share the "
                "account, write to the operator, who can link them."
            )
        connection, _ = ProviderConnection.objects.update_or_create(
            startup=startup,
            defaults={
                "provider": provider,
                "encrypted_key": crypto.encrypt_key(raw_key),
                "api_base": api_base or None,
                "status": Status.STALE,
                "last_error": None,
                "account_id": identity.id if identity else None,
                "account_name": identity.name if identity else None,
                "account_domain": identity.domain if identity else None,
                "credential": connector.credential(raw_key),
            },
        )
    logger.info("connected %s to %s", startup.slug, provider)
    return connection


def provider_account_taken(*, provider: str, account_id: str, startup: Startup) -> bool:
    """Whether this provider account already verifies another startup and no operator allowed
    it to be shared (SharedProviderAccount)."""
    if SharedProviderAccount.objects.filter(provider=provider, account_id=account_id).exists():
        return False
    return (
        ProviderConnection.objects.select_for_update()
        .filter(provider=provider, account_id=account_id)
        .exclude(startup=startup)
        .exists()
    )


def provider_accounts_share(*, connections, note: str = "") -> int:
    """An operator's link: the provider accounts of these connections may each verify more
    than one startup. Returns how many accounts were newly allowed."""
    linked = 0
    pairs = connections.exclude(account_id=None).values_list("provider", "account_id").distinct()
    for provider, account_id in pairs:
        _, created = SharedProviderAccount.objects.get_or_create(
            provider=provider, account_id=account_id, defaults={"note": note[:300]}
        )
        linked += created
    return linked


def _identify(connector: Provider, *, raw_key: str, api_base: str | None) -> AccountIdentity | None:
    """Ask the provider which account the key reads (None where the connector cannot tell)."""
    if connector.identify is None:
        return None
    try:
        with ProviderHttp(
            base_url=api_base or connector.default_api_base,
            headers=connector.auth_headers(raw_key),
            secret=raw_key,
            deadline=time.monotonic() + settings.PROVIDER_HTTP_CALL_DEADLINE_SECONDS,
        ) as http:
            try:
                return connector.account_identity(http=http)
            except (AttributeError, TypeError, KeyError, IndexError):
                raise ProviderError("unexpected answer about the account") from None
    except KeyRejected:
        raise ConnectionRefused(
            f"{connector.title} would not say which account this key belongs to: give the key "
            "read access to the account's details too (see the instructions above)"
        ) from None
    except ProviderError as exc:
        raise ConnectionRefused(
            f"could not check the key with {connector.title} ({exc}); try again in a minute"
        ) from None


def _probe_live_mode(connector: Provider, *, raw_key: str, api_base: str | None) -> None:
    """Ask the provider for a sample of the account's data and refuse test-mode data; for
    providers whose keys do not say whether they are test keys (Lemon Squeezy)."""
    try:
        with ProviderHttp(
            base_url=api_base or connector.default_api_base,
            headers=connector.auth_headers(raw_key),
            secret=raw_key,
            deadline=time.monotonic() + settings.PROVIDER_HTTP_CALL_DEADLINE_SECONDS,
        ) as http:
            connector.probe(http=http)
    except TestModeData as exc:
        raise ConnectionRefused(str(exc)) from None
    except KeyRejected:
        raise ConnectionRefused(
            f"{connector.title} refused this key: check that it was copied whole and not revoked"
        ) from None
    except ProviderError as exc:
        # Retrying helps only when the provider was unreachable, not when its answer said no.
        later = "; try again in a minute" if exc.transient else ""
        raise ConnectionRefused(
            f"could not check the key with {connector.title} ({exc}){later}"
        ) from None


def provider_keys_rotate() -> int:
    """Re-encrypt every stored key under the first configured key; returns how many."""
    rotated = 0
    for connection in ProviderConnection.objects.only("id", "encrypted_key").iterator():
        ProviderConnection.objects.filter(pk=connection.pk).update(
            encrypted_key=crypto.reencrypt_key(connection.encrypted_key)
        )
        rotated += 1
    return rotated


@transaction.atomic
def provider_connection_disconnect(*, startup: Startup) -> bool:
    """Forget the startup's provider and key; its figures stop being verified.

    The headline MRR/ARR become unknown (null) rather than staying behind looking self-reported:
    the founder may enter new figures. Returns whether there was a connection.
    """
    deleted, _ = ProviderConnection.objects.filter(startup=startup).delete()
    Verification.objects.filter(startup=startup).delete()
    Startup.objects.filter(pk=startup.pk).update(mrr=None, arr=None)
    startup_change_record(startup=startup, fields=["revenue", "verification"])
    logger.info("disconnected %s from its provider", startup.slug)
    return bool(deleted)
