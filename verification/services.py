"""Writes of verified revenue: connect a provider, sync its figures, rotate stored keys."""

import logging
from dataclasses import dataclass
from datetime import date, datetime

from django.core.validators import URLValidator
from django.db import transaction

from openstartup import readcache
from startups.history import revenue_snapshot_record
from startups.models import MonthlyRevenue, Startup, Verification
from verification import crypto
from verification.http import KeyRejected, ProviderError, ProviderHttp
from verification.models import ProviderConnection
from verification.money import MissingExchangeRate, rates_used, to_whole_usd
from verification.providers import provider_named
from verification.providers.base import ProviderFigures

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
    )


def provider_connection_connect(
    *, startup: Startup, provider: str, raw_key: str, api_base: str | None = None
) -> ProviderConnection:
    """Connect (or reconnect) the startup's one provider; the key is stored encrypted."""
    provider_named(provider)  # refuse unknown providers before storing anything
    raw_key = raw_key.strip()
    if not raw_key:
        raise ValueError("the provider key is empty")
    if api_base:
        URLValidator(schemes=["http", "https"])(api_base)
    connection, _ = ProviderConnection.objects.update_or_create(
        startup=startup,
        defaults={
            "provider": provider,
            "encrypted_key": crypto.encrypt_key(raw_key),
            "api_base": api_base or None,
            "status": Status.STALE,
            "last_error": None,
        },
    )
    logger.info("connected %s to %s", startup.slug, provider)
    return connection


def revenue_sync(*, connection: ProviderConnection, now: datetime) -> ProviderConnection:
    """Fetch the provider's data and replace the startup's verified figures in one transaction.

    Never raises for a provider problem: the connection's status and last_error say what went
    wrong and the last good figures stay as they are (never zeroed).
    """
    provider = provider_named(connection.provider)
    slug = connection.startup.slug
    secret = ""
    try:
        secret = crypto.decrypt_key(connection.encrypted_key)
        with ProviderHttp(
            base_url=connection.api_base or provider.default_api_base,
            headers=provider.auth_headers(secret),
            secret=secret,
        ) as http:
            raw = provider.fetch(http=http, now=now)
        figures = figures_in_usd(provider.compute(raw=raw, now=now))
    except KeyRejected as exc:
        return _sync_failed(connection, now=now, status=Status.KEY_REVOKED, error=str(exc))
    except ProviderError as exc:
        status = Status.STALE if exc.transient else Status.ERROR
        return _sync_failed(connection, now=now, status=status, error=str(exc))
    except (MissingExchangeRate, crypto.UnreadableKey) as exc:
        return _sync_failed(connection, now=now, status=Status.ERROR, error=str(exc))
    except Exception as exc:
        # Unexpected data from the provider (a missing field, a new enum value): say which.
        logger.exception("sync of %s failed unexpectedly", slug)
        error = f"unexpected {type(exc).__name__}: {exc}"
        if secret:
            error = error.replace(secret, "***")
        return _sync_failed(connection, now=now, status=Status.ERROR, error=error[:500])
    _write_figures(connection, provider_name=provider.name, figures=figures, now=now)
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


@transaction.atomic
def _write_figures(
    connection: ProviderConnection, *, provider_name: str, figures: FiguresInUsd, now: datetime
) -> None:
    # Serialise concurrent syncs of one startup (a manual run during the hourly loop).
    ProviderConnection.objects.select_for_update().filter(pk=connection.pk).first()
    startup = connection.startup
    verification, _ = Verification.objects.update_or_create(
        startup=startup,
        defaults={
            "provider": provider_name,
            "level": "verified",
            "verified_at": now,
            "currency": "USD",
            "mrr": figures.mrr,
            "arr": figures.arr,
            "total_revenue": figures.total_revenue,
            "last_30_days": figures.last_30_days,
            "customers": figures.customers,
        },
    )
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
    connection.status = Status.OK
    connection.last_synced_at = now
    connection.last_attempt_at = now
    connection.last_error = None
    connection.fx_rates = figures.fx_rates
    connection.save(
        update_fields=[
            "status",
            "last_synced_at",
            "last_attempt_at",
            "last_error",
            "fx_rates",
            "updated_at",
        ]
    )
    readcache.bump("data")  # bulk writes and update() send no model signals


def _sync_failed(
    connection: ProviderConnection, *, now: datetime, status: str, error: str
) -> ProviderConnection:
    logger.warning("sync of %s failed (%s): %s", connection.startup.slug, status, error)
    connection.status = status
    connection.last_attempt_at = now
    connection.last_error = error
    connection.save(update_fields=["status", "last_attempt_at", "last_error", "updated_at"])
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
    readcache.bump("data")
    logger.info("disconnected %s from its provider", startup.slug)
    return bool(deleted)
