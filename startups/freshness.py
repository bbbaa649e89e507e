"""How current a verified figure is: the one rule every surface shows.

`status` is `key_revoked` or `error` when the provider's last answer says so (the last good
figures are kept, never zeroed); otherwise `ok` while the last successful sync is younger than
VERIFICATION_STALE_HOURS, `stale` after. `last_synced_at` is the last successful sync.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone

from core.formats import site_url
from startups.models import Startup, Verification

OK, STALE, KEY_REVOKED, ERROR = "ok", "stale", "key_revoked", "error"
STATUSES = [OK, STALE, KEY_REVOKED, ERROR]
# The methodology every sync computes with now, and every version ever published (each stays
# served at /docs/methodology/<version>: stored figures name the one they were computed with).
METHODOLOGY_VERSION = "v2"
METHODOLOGY_VERSIONS = ("v1", "v2")


def last_synced_at(verification: Verification | None) -> datetime | None:
    """When the figures were last fetched successfully (each sync stamps `verified_at`)."""
    return None if verification is None else verification.verified_at


def verification_status(startup: Startup, *, now: datetime | None = None) -> str | None:
    """ok, stale, key_revoked or error; None for a startup without verified figures."""
    verification = getattr(startup, "verification", None)
    if verification is None:
        return None
    connection = getattr(startup, "provider_connection", None)
    return status_of(verification.verified_at, connection and connection.status, now=now)


def status_of(verified_at: datetime, connection_status: str | None, *, now=None) -> str:
    """The rule above from its two inputs (list rows read them as plain columns)."""
    if connection_status in (KEY_REVOKED, ERROR):
        return connection_status
    now = now or timezone.now()
    fresh_for = timedelta(hours=settings.VERIFICATION_STALE_HOURS)
    return OK if now - verified_at <= fresh_for else STALE


def methodology_url(request: HttpRequest | None, version: str = METHODOLOGY_VERSION) -> str:
    """Absolute address of the published methodology `version` (the current one by default)."""
    return site_url(request) + reverse("methodology", kwargs={"version": version})


def freshness_epoch() -> int:
    """A number that changes every minute: rendered copies that show a status are keyed by it,
    so `ok` turns `stale` on time without any write."""
    return int(timezone.now().timestamp() // 60)
