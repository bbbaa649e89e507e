"""Reads of provider connections."""

from django.db.models import F, QuerySet

from startups.models import Startup, Verification
from verification.models import ProviderConnection


def connections_to_sync(*, slug: str | None = None) -> QuerySet[ProviderConnection]:
    """Connections to refresh, never synced then oldest first; or the one of `slug`."""
    connections = ProviderConnection.objects.select_related("startup").order_by(
        F("last_synced_at").asc(nulls_first=True), "id"
    )
    if slug is not None:
        connections = connections.filter(startup__slug=slug)
    return connections


def startup_revenue_is_locked(*, startup: Startup) -> bool:
    """Whether the headline figures come from a provider, so nobody may edit them by hand."""
    if startup.pk is None:
        return False
    return (
        ProviderConnection.objects.filter(startup=startup).exists()
        or Verification.objects.filter(startup=startup).exists()
    )
