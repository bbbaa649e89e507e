"""When a connection is due for its refresh, and taking it so only one process syncs it."""

from datetime import datetime, timedelta

from django.db.models import F, Q, QuerySet

from verification.models import ProviderConnection


def connections_due(*, now: datetime, every: timedelta) -> QuerySet[ProviderConnection]:
    """Connections not tried for `every` (never tried first, then the longest waiting); one
    synced recently, by the worker or a founder's "Sync now", waits its turn."""
    return (
        ProviderConnection.objects.select_related("startup")
        .filter(Q(last_attempt_at__isnull=True) | Q(last_attempt_at__lte=now - every))
        .order_by(F("last_attempt_at").asc(nulls_first=True), "id")
    )


def connection_take(*, connection: ProviderConnection, now: datetime, every: timedelta) -> bool:
    """Mark the connection as being synced now, if it is still due: of two workers (or a
    worker and a founder) only one gets it, so one startup is never synced twice at once."""
    return bool(
        ProviderConnection.objects.filter(pk=connection.pk)
        .filter(Q(last_attempt_at__isnull=True) | Q(last_attempt_at__lte=now - every))
        .update(last_attempt_at=now)
    )
