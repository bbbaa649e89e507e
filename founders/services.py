"""Writes from the founders' dashboard: add or claim a startup, edit what the founder reports,
connect, sync and disconnect a payment provider."""

import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, close_old_connections, connections, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.text import slugify

from accounts.models import User
from founders.models import ReportedRevenue, StartupClaim
from startups.changes import (
    CREATED,
    api_fields,
    change_of,
    startup_change_record,
    startups_change_record,
)
from startups.models import Startup
from verification.keycheck import KeyRefused, key_check, provider_api_base
from verification.models import ProviderConnection
from verification.selectors import startup_revenue_is_locked
from verification.services import (
    SyncInProgress,
    provider_connection_connect,
    provider_connection_disconnect,
    revenue_sync,
)

logger = logging.getLogger(__name__)

# The fields a founder edits; revenue is separate (`mrr`, self-reported).
PROFILE_FIELDS = (
    "name",
    "website",
    "description",
    "category",
    "industry",
    "business_type",
    "founded",
    "country",
    "team_size",
    "founder_name",
    "icon",
)


class FounderActionRefused(Exception):
    """The founder asked for something that cannot be done; the message says why."""


def startup_slug_for(name: str) -> str:
    """The slug rule of imports (slugify the name), made unique with -2, -3, ..."""
    base = slugify(name, allow_unicode=True)[:190] or "startup"
    slug, n = base, 1
    while Startup.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def _headline(mrr: int | None) -> dict:
    return {"mrr": mrr, "arr": None if mrr is None else mrr * 12}


@transaction.atomic
def startup_create(*, owner: User, profile: dict, mrr: int | None) -> Startup:
    """A new startup owned by `owner`, with self-reported figures."""
    fields = {name: profile.get(name) for name in PROFILE_FIELDS}
    startup = Startup.objects.create(
        slug=startup_slug_for(fields["name"]), owner=owner, **fields, **_headline(mrr)
    )
    ReportedRevenue.objects.create(startup=startup, mrr=mrr)
    startup_change_record(startup=startup, kind=CREATED)
    return startup


@transaction.atomic
def startup_update(*, startup: Startup, profile: dict, mrr: int | None) -> Startup:
    """Save the founder's profile and reported MRR. While a provider verifies the startup the
    headline figures stay the provider's: the reported MRR is kept for after a disconnect."""
    for name in PROFILE_FIELDS:
        setattr(startup, name, profile.get(name))
    startup.updated_at = timezone.now()
    update = [*PROFILE_FIELDS, "updated_at"]
    if not startup_revenue_is_locked(startup=startup):
        startup.mrr, startup.arr = _headline(mrr).values()
        update += ["mrr", "arr"]
    # An UPDATE, not a save: no model signal, so the read cache drops only this startup's
    # copies (from its Change row) instead of starting a new epoch (openstartup/rowcopies.py).
    Startup.objects.filter(pk=startup.pk).update(
        **{name: getattr(startup, name) for name in update}
    )
    ReportedRevenue.objects.update_or_create(startup=startup, defaults={"mrr": mrr})
    startup_change_record(startup=startup, fields=api_fields(update))
    return startup


def startup_claim(*, account: User, slug: str) -> StartupClaim:
    """Ask to own the unowned startup `slug`; an operator approves it in the admin."""
    startup = Startup.objects.filter(slug=slug.strip(), is_published=True).first()
    if startup is None:
        raise FounderActionRefused("No startup has that slug.")
    if startup.owner_id == account.pk:
        raise FounderActionRefused("You already own this startup.")
    if startup.owner_id is not None:
        raise FounderActionRefused(
            "This startup already has an owner. If that is wrong, write to the operator."
        )
    try:
        with transaction.atomic():
            return StartupClaim.objects.create(startup=startup, account=account)
    except IntegrityError:
        raise FounderActionRefused("You already asked to claim this startup.") from None


@transaction.atomic
def claims_approve(*, claims: QuerySet[StartupClaim], now: datetime | None = None) -> int:
    """Make each pending claim's account the owner of its still-unowned startup; other
    pending claims on that startup are rejected. Returns how many were approved."""
    now = now or timezone.now()
    approved: list[Startup] = []
    for claim in claims.filter(status=StartupClaim.Status.PENDING).select_related("startup"):
        taken = Startup.objects.filter(pk=claim.startup_id, owner__isnull=True).update(
            owner=claim.account_id, updated_at=now
        )
        status = StartupClaim.Status.APPROVED if taken else StartupClaim.Status.REJECTED
        StartupClaim.objects.filter(pk=claim.pk).update(status=status, decided_at=now)
        if taken:
            approved.append(claim.startup)
            StartupClaim.objects.filter(
                startup_id=claim.startup_id, status=StartupClaim.Status.PENDING
            ).update(status=StartupClaim.Status.REJECTED, decided_at=now)
            ReportedRevenue.objects.get_or_create(
                startup_id=claim.startup_id, defaults={"mrr": claim.startup.mrr}
            )
    startups_change_record(change_of(startup, fields=["owner"]) for startup in approved)
    return len(approved)


def claims_reject(*, claims: QuerySet[StartupClaim], now: datetime | None = None) -> int:
    """Refuse pending claims."""
    return claims.filter(status=StartupClaim.Status.PENDING).update(
        status=StartupClaim.Status.REJECTED, decided_at=now or timezone.now()
    )


@dataclass(frozen=True)
class SyncOutcome:
    connection: ProviderConnection
    finished: bool  # False: still running in the background after the wait


def _sync_within(*, connection_id: int, seconds: float) -> bool:
    """Run one sync in a thread of its own and wait at most `seconds` for it."""
    done = threading.Event()

    def run() -> None:
        try:
            connection = ProviderConnection.objects.select_related("startup").get(pk=connection_id)
            revenue_sync(connection=connection, now=timezone.now())
        except SyncInProgress:
            pass  # another process is syncing it right now: its result will show
        except Exception:
            logger.exception("dashboard sync of connection %s crashed", connection_id)
        finally:
            connections.close_all()
            done.set()

    threading.Thread(target=run, name=f"sync-{connection_id}", daemon=True).start()
    return done.wait(seconds)


def _sync_and_reload(connection: ProviderConnection) -> SyncOutcome:
    finished = _sync_within(connection_id=connection.pk, seconds=settings.FIRST_SYNC_WAIT_SECONDS)
    close_old_connections()
    connection.refresh_from_db()
    return SyncOutcome(connection=connection, finished=finished)


def startup_connect(*, startup: Startup, provider: str, raw_key: str) -> SyncOutcome:
    """Check the key with the provider, store it encrypted, and run the first sync (bounded
    in time). Raises KeyRefused, with a founder-readable message, before storing anything."""
    key_check(provider=provider, raw=raw_key)
    if not startup_revenue_is_locked(startup=startup):
        # Keep the founder's own MRR for when the provider is disconnected again.
        ReportedRevenue.objects.get_or_create(startup=startup, defaults={"mrr": startup.mrr})
    try:
        connection = provider_connection_connect(
            startup=startup,
            provider=provider,
            raw_key=raw_key,
            api_base=provider_api_base(provider),
        )
    except ValueError as exc:
        # The connect service's own refusals (unknown provider, test-mode data, bad address)
        # carry a message written for the founder.
        message = str(exc)
        raise KeyRefused(message[:1].upper() + message[1:]) from None
    ProviderConnection.objects.filter(pk=connection.pk).update(last_attempt_at=timezone.now())
    return _sync_and_reload(connection)


def startup_sync_now(*, startup: Startup, now: datetime | None = None) -> SyncOutcome:
    """A founder's "Sync now": at most once per SYNC_NOW_INTERVAL_SECONDS per startup (the
    slot is taken atomically, so two clicks or a running refresh never sync twice)."""
    now = now or timezone.now()
    connection = ProviderConnection.objects.filter(startup=startup).first()
    if connection is None:
        raise FounderActionRefused("Connect a payment provider first.")
    interval = timedelta(seconds=settings.SYNC_NOW_INTERVAL_SECONDS)
    taken = (
        ProviderConnection.objects.filter(pk=connection.pk)
        .filter(Q(last_attempt_at__isnull=True) | Q(last_attempt_at__lte=now - interval))
        .update(last_attempt_at=now)
    )
    if not taken:
        minutes = max(1, round(interval.total_seconds() / 60))
        raise FounderActionRefused(
            f"A sync ran less than {minutes} minutes ago. Please try again a little later."
        )
    return _sync_and_reload(connection)


@transaction.atomic
def startup_disconnect(*, startup: Startup) -> bool:
    """Delete the provider key and verified figures; the headline figures go back to the
    founder's reported MRR at once. Returns whether a provider was connected."""
    was_connected = provider_connection_disconnect(startup=startup)
    reported = ReportedRevenue.objects.filter(startup=startup).first()
    mrr = reported.mrr if reported else None
    Startup.objects.filter(pk=startup.pk).update(**_headline(mrr), currency="USD")
    startup_change_record(startup=startup, fields=["revenue", "verification"])
    return was_connected
