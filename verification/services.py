"""The sync of verified revenue: fetch a provider's data, convert it to whole US dollars once,
and replace the startup's verified figures in one transaction. Connecting, disconnecting and
the stored keys are verification/connections.py."""

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Q
from django.utils import timezone

from core import plainsql
from startups.changes import (
    VERIFIED_FIGURES,
    nothing_visible,
    startup_change_record,
    verified_figures_changes,
)
from startups.freshness import METHODOLOGY_VERSION, verification_stamp, verified_at_write
from startups.history import day_snapshot_write
from startups.models import MonthlyRevenue, Startup, Verification
from verification import crypto
from verification.http import KeyRejected, ProviderError, ProviderHttp
from verification.models import ProviderConnection
from verification.money import MissingExchangeRate, rates_used, to_whole_usd
from verification.providers import provider_named
from verification.providers.base import Provider, ProviderFigures, ProviderReported

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


# A connection's lease, ended (a stored sync ends it in the transaction that stores).
RELEASED = {"lease_owner": None, "lease_until": None}


class SyncInProgress(Exception):
    """Another process holds this connection's sync lease; this sync did nothing."""


def revenue_sync(*, connection: ProviderConnection, now: datetime) -> ProviderConnection:
    """Fetch the provider's data and replace the startup's verified figures in one transaction.

    Never raises for a provider problem: the connection's status (`error`, or `key_revoked` for a
    refused key) and last_error say what went wrong and the last good figures stay as they are
    (never zeroed). Raises SyncInProgress when another process is syncing this connection (a
    lease in the database); a sync whose fetch started before the stored figures' fetch never
    overwrites them, nor does one whose lease ran out and was taken by another sync.
    """
    lease = Lease(owner=uuid.uuid4().hex)
    started = timezone.now()
    if not _lease_take(connection, owner=lease.owner, at=started):
        raise SyncInProgress(f"{connection.startup.slug}: another sync is running; skipped")
    try:
        return _sync_leased(connection, now=now, started=started, lease=lease)
    finally:
        if lease.held:  # a stored sync released it in its own transaction
            ours = ProviderConnection.objects.filter(pk=connection.pk, lease_owner=lease.owner)
            ours.update(**RELEASED)
        connection.lease_owner = connection.lease_until = None


@dataclass
class Lease:
    """This sync's hold on its connection (`lease_owner`), until released."""

    owner: str
    held: bool = True


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
        account = {
            "account_id": identity.id,
            "account_name": identity.name,
            "account_domain": identity.domain,
        }
        if ProviderConnection.objects.filter(pk=connection.pk, account_id__isnull=True).update(
            **account
        ):
            for name, value in account.items():
                setattr(connection, name, value)


_CONNECTIONS = plainsql.table(ProviderConnection)
_LEASE_TAKE_SQL = (
    f"UPDATE {_CONNECTIONS} SET lease_owner = %s, lease_until = %s"  # noqa: S608 - a table name
    " WHERE id = %s AND (lease_until IS NULL OR lease_until <= %s)"
)


def _lease_take(connection: ProviderConnection, *, owner: str, at: datetime) -> bool:
    """Take the sync's lease unless another holds one still running. Plain SQL
    (core/plainsql.py): the lease's fields show nowhere, so nothing is invalidated."""
    until = at + timedelta(seconds=settings.PROVIDER_SYNC_LEASE_SECONDS)
    instant = partial(plainsql.to_db, ProviderConnection, "lease_until")
    taken, _ = plainsql.run(_LEASE_TAKE_SQL, [owner, instant(until), connection.pk, instant(at)])
    return taken == 1


def _sync_leased(
    connection: ProviderConnection, *, now: datetime, started: datetime, lease: Lease
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
            connection,
            provider_name=provider.name,
            figures=figures,
            now=now,
            started=started,
            lease=lease,
        )
        lease.held = written is None  # committed: the write released it
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
    if written is None:
        connection.refresh_from_db()
        logger.info("sync of %s finished after a newer one; its older figures were dropped", slug)
        return connection
    # What the write stored on the connection, without reading it back (the startup stays
    # loaded for the caller).
    for name, value in written.items():
        setattr(connection, name, value)
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


# The stored sync's bookkeeping, which also ends its lease: one statement, plain SQL. What it
# writes shows only through the change the caller records, or the sync's stamp.
BOOKKEEPING = ("fetch_started_at", "status", "last_synced_at", "last_attempt_at", "last_error")
BOOKKEEPING += ("fx_rates", "updated_at")
_BOOKKEEPING_SQL = (
    f"UPDATE {_CONNECTIONS} SET "  # noqa: S608 - names of columns only
    + "".join(f"{name} = %s, " for name in BOOKKEEPING)
    + "lease_owner = NULL, lease_until = NULL WHERE id = %s AND lease_owner = %s"
    " AND (fetch_started_at IS NULL OR fetch_started_at <= %s)"
)


@transaction.atomic
def _write_figures(
    connection: ProviderConnection,
    *,
    provider_name: str,
    figures: FiguresInUsd,
    now: datetime,
    started: datetime,
    lease: Lease,
) -> dict | None:
    """Store the figures unless a sync whose fetch started later already stored its own (then
    None), with the day's snapshot; returns what it stored on the connection.

    The conditional UPDATE comes first: it locks the connection row, so of two concurrent
    writers the one with the older fetch finds the newer start time and writes nothing. It
    also ends the sync's lease, so the lease ends when the figures are stored.
    """
    bookkeeping = {
        "fetch_started_at": started,
        "status": Status.OK,
        "last_synced_at": now,
        "last_attempt_at": now,
        "last_error": None,
        "fx_rates": figures.fx_rates,
        "updated_at": timezone.now(),
    }
    # Only the lease's holder stores (a sync whose lease ran out was followed by a newer one).
    values = [plainsql.to_db(ProviderConnection, name, bookkeeping[name]) for name in BOOKKEEPING]
    started_at = plainsql.to_db(ProviderConnection, "fetch_started_at", started)
    claimed, _ = plainsql.run(_BOOKKEEPING_SQL, [*values, connection.pk, lease.owner, started_at])
    if not claimed:
        return None
    startup = connection.startup
    shown = {name: getattr(figures, name) for name in VERIFIED_FIGURES}
    changed = verified_figures_changes(
        startup_id=startup.pk,
        provider=provider_name,
        figures=shown,
        monthly=[(row.month, row.gross, row.refunds) for row in figures.monthly],
        previous_status=connection.status,
        now=now,
        described={
            "methodology_version": METHODOLOGY_VERSION,
            "credential": connection.credential,
            "provider_reported": figures.provider_reported,
        },
    )
    # The day's snapshot, in the same transaction: its growth is a change of its own.
    snapshot = {"provider": provider_name, **shown}
    if not changed:  # nothing anyone sees changes: only the time of the sync is stamped
        if growth := day_snapshot_write(startup=startup, now=now, figures=snapshot):
            verified_at_write(startup_id=startup.pk, at=now)
            startup_change_record(startup=startup, fields=growth, now=now)
        else:  # only the sync's time moves: read beside the kept copies (core/beside.py)
            verification_stamp(startup=startup, at=now)
        return bookkeeping | RELEASED
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
    verification_id = Verification.objects.filter(startup=startup).values_list("pk", flat=True)
    verification_id = verification_id.first()
    if verification_id is None:
        verification_id = Verification.objects.create(startup=startup, **stored).pk
    else:
        Verification.objects.filter(pk=verification_id).update(**stored)
    MonthlyRevenue.objects.filter(verification_id=verification_id).delete()
    MonthlyRevenue.objects.bulk_create(
        MonthlyRevenue(
            verification_id=verification_id, month=row.month, gross=row.gross, refunds=row.refunds
        )
        for row in figures.monthly
    )
    Startup.objects.filter(pk=startup.pk).update(
        mrr=figures.mrr, arr=figures.arr, currency="USD", updated_at=now
    )
    growth = day_snapshot_write(startup=startup, now=now, figures=snapshot)
    startup_change_record(startup=startup, fields=[*changed, *growth], now=now)
    return bookkeeping | RELEASED


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
