"""Writes of verified revenue: connect a provider, sync its figures, rotate stored keys."""

import ipaddress
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import DatabaseError, transaction
from django.db.models import Q
from django.utils import timezone

from startups.changes import (
    VERIFIED_FIGURES,
    nothing_visible,
    startup_change_record,
    verified_figures_changes,
)
from startups.freshness import METHODOLOGY_VERSION
from startups.history import revenue_snapshot_record
from startups.models import MonthlyRevenue, Startup, Verification
from verification import crypto
from verification.http import KeyRejected, ProviderError, ProviderHttp
from verification.models import ProviderConnection, SharedProviderAccount
from verification.money import MissingExchangeRate, rates_used, to_whole_usd
from verification.providers import credential_problem, provider_named
from verification.providers.base import (
    AccountIdentity,
    Provider,
    ProviderFigures,
    ProviderReported,
    TestModeData,
)

logger = logging.getLogger(__name__)

Status = ProviderConnection.Status


@dataclass(frozen=True)
class MonthInUsd:
    month: date
    gross: int
    refunds: int


@dataclass(frozen=True)
class FiguresInUsd:
    """Whole US dollars, as the Verification row and the API show them."""

    mrr: int | None
    arr: int | None
    total_revenue: int
    last_30_days: int
    customers: int
    monthly: list[MonthInUsd]
    fx_rates: dict[str, dict[str, str]]
    # The provider's own figure in whole dollars ({mrr, revenue, definition, period}), or None.
    provider_reported: dict | None = None


def reported_in_usd(reported: ProviderReported | None) -> dict | None:
    """The provider's own figure in whole US dollars; None when it has none, or when it is in
    a currency without a rate (it is a comparison, never a reason to fail the sync)."""
    if reported is None:
        return None
    try:
        mrr = None if reported.mrr is None else to_whole_usd(reported.mrr)
        revenue = None if reported.revenue is None else to_whole_usd(reported.revenue)
    except MissingExchangeRate:
        return None
    return {
        "mrr": mrr,
        "revenue": revenue,
        "definition": reported.definition,
        "period": reported.period,
    }


def figures_in_usd(figures: ProviderFigures) -> FiguresInUsd:
    """Convert once, at output: each month's gross and refunds, MRR, the last 30 days."""
    monthly = [
        MonthInUsd(month=month, gross=to_whole_usd(row.gross), refunds=to_whole_usd(row.refunds))
        for month, row in sorted(figures.monthly.items())
    ]
    mrr = None if figures.mrr is None else to_whole_usd(figures.mrr)
    amounts = [figures.last_30_days]
    if figures.mrr is not None:
        amounts.append(figures.mrr)
    for row in figures.monthly.values():
        amounts += [row.gross, row.refunds]
    return FiguresInUsd(
        mrr=mrr,
        # ARR is 12 x the published (rounded) MRR, so the two always agree.
        arr=None if mrr is None else mrr * 12,
        # Total revenue is the sum of the published monthly nets, so readers can add them up.
        total_revenue=max(0, sum(row.gross - row.refunds for row in monthly)),
        last_30_days=max(0, to_whole_usd(figures.last_30_days)),
        customers=figures.customers,
        monthly=monthly,
        fx_rates=rates_used(*amounts),
        provider_reported=reported_in_usd(figures.provider_reported),
    )


class ConnectionRefused(ValueError):
    """A connection we will not make; the message is written for the founder and safe to show."""


class SyncInProgress(Exception):
    """Another process holds this connection's sync lease; this sync did nothing."""


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


def revenue_sync(*, connection: ProviderConnection, now: datetime) -> ProviderConnection:
    """Fetch the provider's data and replace the startup's verified figures in one transaction.

    Never raises for a provider problem: the connection's status (`error`, or `key_revoked` for a
    refused key) and last_error say what went wrong and the last good figures stay as they are
    (never zeroed). Raises SyncInProgress when another process is syncing this connection (a
    lease in the database); a sync whose fetch started before the stored figures' fetch never
    overwrites them.
    """
    owner = uuid.uuid4().hex
    started = timezone.now()
    if not _lease_take(connection, owner=owner, at=started):
        raise SyncInProgress(f"{connection.startup.slug}: another sync is running; skipped")
    try:
        return _sync_leased(connection, now=now, started=started)
    finally:
        ProviderConnection.objects.filter(pk=connection.pk, lease_owner=owner).update(
            lease_owner=None, lease_until=None
        )


def _identity_backfill(connection: ProviderConnection, provider: Provider, http) -> None:
    """A connection made before provider accounts were recorded gets its account noted at its
    next sync, best effort: a key without the permission stays unknown, nothing is refused and
    the sync goes on (operators find shared accounts by account id in the admin)."""
    if connection.account_id or provider.identify is None:
        return
    try:
        identity = provider.account_identity(http=http)
    except Exception:  # noqa: BLE001 - any failure leaves the identity unknown, as before
        return
    if identity is not None:
        ProviderConnection.objects.filter(pk=connection.pk, account_id__isnull=True).update(
            account_id=identity.id, account_name=identity.name, account_domain=identity.domain
        )


def _lease_take(connection: ProviderConnection, *, owner: str, at: datetime) -> bool:
    until = at + timedelta(seconds=settings.PROVIDER_SYNC_LEASE_SECONDS)
    free = Q(lease_until__isnull=True) | Q(lease_until__lte=at)
    taken = ProviderConnection.objects.filter(free, pk=connection.pk).update(
        lease_owner=owner, lease_until=until
    )
    return taken == 1


def _sync_leased(
    connection: ProviderConnection, *, now: datetime, started: datetime
) -> ProviderConnection:
    provider = provider_named(connection.provider)
    slug = connection.startup.slug
    secret = ""
    try:
        secret = crypto.decrypt_key(connection.encrypted_key)
        with ProviderHttp(
            base_url=connection.api_base or provider.default_api_base,
            headers=provider.auth_headers(secret),
            secret=secret,
            deadline=time.monotonic() + settings.PROVIDER_SYNC_DEADLINE_SECONDS,
        ) as http:
            raw = provider.fetch(http=http, now=now)
            _identity_backfill(connection, provider, http)
        figures = figures_in_usd(provider.compute(raw=raw, now=now))
        _check_figures(figures)
        written = _write_figures(
            connection, provider_name=provider.name, figures=figures, now=now, started=started
        )
    except KeyRejected as exc:
        return _sync_failed(
            connection, now=now, started=started, status=Status.KEY_REVOKED, error=str(exc)
        )
    except (ProviderError, MissingExchangeRate, crypto.UnreadableKey) as exc:
        return _sync_failed(
            connection, now=now, started=started, status=Status.ERROR, error=str(exc)
        )
    except DatabaseError as exc:
        logger.exception("storing the figures of %s failed", slug)
        error = f"the figures could not be stored ({type(exc).__name__}); nothing was changed"
        return _sync_failed(connection, now=now, started=started, status=Status.ERROR, error=error)
    except Exception as exc:
        # Unexpected data from the provider (a missing field, a new enum value): say which.
        logger.exception("sync of %s failed unexpectedly", slug)
        error = f"the provider sent data we could not read: {type(exc).__name__}: {exc}"
        if secret:
            error = error.replace(secret, "***")
        return _sync_failed(
            connection, now=now, started=started, status=Status.ERROR, error=error[:500]
        )
    connection.refresh_from_db()
    if not written:
        logger.info("sync of %s finished after a newer one; its older figures were dropped", slug)
        return connection
    revenue_snapshot_record(startup=connection.startup, now=now)
    logger.info(
        "synced %s from %s: mrr=%s total=%s months=%s",
        slug,
        provider.name,
        figures.mrr,
        figures.total_revenue,
        len(figures.monthly),
    )
    return connection


# A century of months: more than that is broken data (dates are also checked when read).
MAX_MONTHS = 1200


def _check_figures(figures: FiguresInUsd) -> None:
    """The last gate before writing: no negative money, no absurd history."""
    if len(figures.monthly) > MAX_MONTHS:
        raise ProviderError(
            f"the provider's data spans {len(figures.monthly)} months; nothing was written"
        )
    negative = [
        name
        for name, value in (("MRR", figures.mrr), ("customers", figures.customers))
        if value is not None and value < 0
    ]
    negative += [
        f"{row.month:%Y-%m}" for row in figures.monthly if row.gross < 0 or row.refunds < 0
    ]
    if negative:
        raise ProviderError(
            f"the provider sent negative amounts ({', '.join(negative[:3])}); nothing was written"
        )


@transaction.atomic
def _write_figures(
    connection: ProviderConnection,
    *,
    provider_name: str,
    figures: FiguresInUsd,
    now: datetime,
    started: datetime,
) -> bool:
    """Store the figures unless a sync whose fetch started later already stored its own.

    The conditional UPDATE comes first: it locks the connection row, so of two concurrent
    writers the one with the older fetch finds the newer start time and writes nothing.
    """
    newer_or_same = Q(fetch_started_at__isnull=True) | Q(fetch_started_at__lte=started)
    claimed = ProviderConnection.objects.filter(newer_or_same, pk=connection.pk).update(
        fetch_started_at=started,
        status=Status.OK,
        last_synced_at=now,
        last_attempt_at=now,
        last_error=None,
        fx_rates=figures.fx_rates,
        updated_at=timezone.now(),
    )
    if not claimed:
        return False
    startup = connection.startup
    changed = verified_figures_changes(
        startup_id=startup.pk,
        provider=provider_name,
        figures={name: getattr(figures, name) for name in VERIFIED_FIGURES},
        monthly=[(row.month, row.gross, row.refunds) for row in figures.monthly],
        previous_status=connection.status,
        now=now,
        described={
            "methodology_version": METHODOLOGY_VERSION,
            "credential": connection.credential,
            "provider_reported": figures.provider_reported,
        },
    )
    if not changed:  # nothing anyone sees changes: only the time of the sync is stamped
        Verification.objects.filter(startup=startup).update(verified_at=now)
        nothing_visible()
        return True
    stored = {
        "provider": provider_name,
        "level": "verified",
        "verified_at": now,
        "currency": "USD",
        "mrr": figures.mrr,
        "arr": figures.arr,
        "total_revenue": figures.total_revenue,
        "last_30_days": figures.last_30_days,
        "customers": figures.customers,
        # Recomputed now, so under the current methodology (earlier figures kept theirs).
        "methodology_version": METHODOLOGY_VERSION,
        "credential": connection.credential,
        "provider_reported": figures.provider_reported,
    }
    # UPDATEs, no model save: the Change row below says which startup changed, so the read
    # cache drops only its copies (a save would start a new epoch: core/rowcopies.py).
    verification = Verification.objects.filter(startup=startup).first()
    if verification is None:
        verification = Verification.objects.create(startup=startup, **stored)
    else:
        Verification.objects.filter(pk=verification.pk).update(**stored)
    MonthlyRevenue.objects.filter(verification=verification).delete()
    MonthlyRevenue.objects.bulk_create(
        MonthlyRevenue(
            verification=verification, month=row.month, gross=row.gross, refunds=row.refunds
        )
        for row in figures.monthly
    )
    Startup.objects.filter(pk=startup.pk).update(
        mrr=figures.mrr, arr=figures.arr, currency="USD", updated_at=now
    )
    startup_change_record(startup=startup, fields=changed, now=now)
    return True


def _sync_failed(
    connection: ProviderConnection, *, now: datetime, started: datetime, status: str, error: str
) -> ProviderConnection:
    """Record the failure, unless a sync whose fetch started later has already succeeded."""
    logger.warning("sync of %s failed (%s): %s", connection.startup.slug, status, error)
    newer_or_same = Q(fetch_started_at__isnull=True) | Q(fetch_started_at__lte=started)
    with transaction.atomic():
        updated = ProviderConnection.objects.filter(newer_or_same, pk=connection.pk).update(
            status=status, last_attempt_at=now, last_error=error, updated_at=timezone.now()
        )
        # Every surface shows the status of a startup with verified figures.
        if (
            updated
            and connection.status != status
            and Verification.objects.filter(startup_id=connection.startup_id).exists()
        ):
            startup_change_record(startup=connection.startup, fields=["verification.status"])
        else:  # the same status again, or one no surface shows (no verified figures)
            nothing_visible()
    connection.refresh_from_db()
    return connection


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
