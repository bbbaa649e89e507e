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
from founders.models import PendingChange, ReportedRevenue, StartupClaim
from founders.reviews import (
    held_startup_publish,
    identity_needs_review,
    mrr_needs_review,
    pending_change_drop,
    pending_change_hold,
    pending_of,
    reported_mrr_apply,
)
from startups.changes import (
    CREATED,
    api_fields,
    change_of,
    startup_change_record,
    startups_change_record,
)
from startups.models import Startup
from verification.connections import provider_connection_connect, provider_connection_disconnect
from verification.keycheck import KeyRefused, key_check, provider_api_base
from verification.models import ProviderConnection
from verification.selectors import startup_revenue_is_locked
from verification.services import SyncInProgress, revenue_sync

logger = logging.getLogger(__name__)

Kind = PendingChange.Kind

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


class EmailNotConfirmed(FounderActionRefused):
    """Adding, claiming, editing and connecting need a confirmed e-mail address."""


EMAIL_NOT_CONFIRMED = (
    "Confirm your e-mail address first: adding, claiming, editing and connecting startups "
    "need it. Open the link we e-mailed you, or send a new one from your dashboard."
)


def founder_may_act(account: User | None) -> None:
    """Refuse (EmailNotConfirmed) a founder whose e-mail address is not confirmed."""
    if account is None or account.email_confirmed_at is None:
        raise EmailNotConfirmed(EMAIL_NOT_CONFIRMED)


def founder_startup_limit(account: User) -> int:
    """How many startups the account may own: the operator's override, else the setting."""
    override = account.founder_max_startups_override
    return settings.FOUNDER_MAX_STARTUPS if override is None else override


def _startup_room_check(account: User) -> None:
    """Refuse another startup past the account's limit (the account row is locked, so two
    requests at once cannot both take the last place)."""
    User.objects.select_for_update().filter(pk=account.pk).first()
    limit = founder_startup_limit(account)
    if Startup.objects.filter(owner=account).count() >= limit:
        raise FounderActionRefused(
            f"An account may own at most {limit} startups. If you need more, write to the operator."
        )


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
    """A new startup owned by `owner`, with self-reported figures. An MRR above the review
    threshold is held for an operator: the startup stays unpublished until they decide."""
    founder_may_act(owner)
    _startup_room_check(owner)
    held = mrr_needs_review(mrr)
    public_mrr = None if held else mrr
    fields = {name: profile.get(name) for name in PROFILE_FIELDS}
    startup = Startup.objects.create(
        slug=startup_slug_for(fields["name"]),
        owner=owner,
        is_published=not held,
        **fields,
        **_headline(public_mrr),
    )
    ReportedRevenue.objects.create(startup=startup, mrr=public_mrr)
    if held:
        pending_change_hold(startup=startup, account=owner, kind=Kind.MRR, mrr=mrr, publishes=True)
    startup_change_record(startup=startup, kind=CREATED)
    return startup


# What a founder's edit can change that anyone sees: the profile, the headline figures, and
# publication (withdrawing a figure held at creation publishes the startup).
EDITED_COLUMNS = (*PROFILE_FIELDS, "mrr", "arr", "is_published")


@transaction.atomic
def startup_update(*, startup: Startup, profile: dict, mrr: int | None) -> Startup:
    """Save the founder's profile and reported MRR. While a provider verifies the startup the
    headline figures stay the provider's: the reported MRR is kept for after a disconnect.
    An MRR above the review threshold, and a new name or website of a verified startup, wait
    for an operator (founders/reviews.py); what is public stays as it was meanwhile.

    Only what differs is written and recorded: a save that changes nothing anyone sees writes
    no Change row and leaves `updated_at` and every cached copy as they are."""
    founder_may_act(startup.owner)
    pending = pending_of(startup=startup)
    before = Startup.objects.filter(pk=startup.pk).values(*EDITED_COLUMNS).get()
    fields = [name for name in PROFILE_FIELDS if name not in ("name", "website")]
    name, website = profile.get("name"), profile.get("website")
    if (name, website) == (before["name"], before["website"]):
        pending_change_drop(startup=startup, kind=Kind.IDENTITY)
    elif identity_needs_review(startup=startup):
        pending_change_hold(
            startup=startup, account=startup.owner, kind=Kind.IDENTITY, name=name, website=website
        )
    else:
        fields += ["name", "website"]
    edits = {field: profile.get(field) for field in fields if profile.get(field) != before[field]}
    if edits:
        # An UPDATE, not a save: no model signal, so the read cache drops only this startup's
        # copies (from its Change row) instead of starting a new epoch (core/rowcopies.py).
        Startup.objects.filter(pk=startup.pk).update(**edits, updated_at=timezone.now())
    reported = ReportedRevenue.objects.filter(startup=startup).first()
    unchanged = reported is not None and reported.mrr == mrr
    if mrr_needs_review(mrr) and not unchanged:
        held = pending.get(Kind.MRR)
        pending_change_hold(
            startup=startup,
            account=startup.owner,
            kind=Kind.MRR,
            mrr=mrr,
            publishes=bool(held and held.publishes),
        )
    else:
        withdrawn = pending_change_drop(startup=startup, kind=Kind.MRR)
        reported_mrr_apply(startup, mrr)
        if withdrawn is not None:
            held_startup_publish(withdrawn)
    startup.refresh_from_db()
    changed = [name for name in EDITED_COLUMNS if getattr(startup, name) != before[name]]
    if changed:
        startup_change_record(startup=startup, fields=api_fields(changed))
    return startup


@transaction.atomic
def startup_claim(*, account: User, slug: str) -> StartupClaim:
    """Ask to own the unowned startup `slug`; an operator approves it in the admin. Needs a
    confirmed e-mail address and room under the account's startup limit."""
    founder_may_act(account)
    startup = Startup.objects.filter(slug=slug.strip(), is_published=True).first()
    if startup is None:
        raise FounderActionRefused("No startup has that slug.")
    if startup.owner_id == account.pk:
        raise FounderActionRefused("You already own this startup.")
    if startup.owner_id is not None:
        raise FounderActionRefused(
            "This startup already has an owner. If that is wrong, write to the operator."
        )
    _startup_room_check(account)
    try:
        with transaction.atomic():
            return StartupClaim.objects.create(startup=startup, account=account)
    except IntegrityError:
        raise FounderActionRefused("You already asked to claim this startup.") from None


@transaction.atomic
def claims_approve(*, claims: QuerySet[StartupClaim], now: datetime | None = None) -> int:
    """Make each pending claim's account the owner of its still-unowned startup; other
    pending claims on that startup are rejected. A claim whose account has not confirmed its
    e-mail address is never approved (it stays pending). Returns how many were approved."""
    now = now or timezone.now()
    approved: list[Startup] = []
    pending = claims.filter(status=StartupClaim.Status.PENDING)
    for claim in pending.filter(account__email_confirmed_at__isnull=False).select_related(
        "startup"
    ):
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
    # False: no sync ran, one ran less than SYNC_NOW_INTERVAL_SECONDS ago (connect again).
    synced: bool = True


def _sync_slot_take(connection: ProviderConnection, *, now: datetime) -> bool:
    """Take the startup's sync slot: at most one founder-started sync (connect or "Sync now")
    per SYNC_NOW_INTERVAL_SECONDS, taken atomically so two requests never both sync."""
    interval = timedelta(seconds=settings.SYNC_NOW_INTERVAL_SECONDS)
    return bool(
        ProviderConnection.objects.filter(pk=connection.pk)
        .filter(Q(last_attempt_at__isnull=True) | Q(last_attempt_at__lte=now - interval))
        .update(last_attempt_at=now)
    )


def sync_wait_minutes() -> int:
    return max(1, round(settings.SYNC_NOW_INTERVAL_SECONDS / 60))


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
    in time). Raises KeyRefused, with a founder-readable message, before storing anything.
    Connecting takes the same slot as "Sync now": connecting again within
    SYNC_NOW_INTERVAL_SECONDS stores the key but runs no sync (`synced` False)."""
    try:
        founder_may_act(startup.owner)
    except EmailNotConfirmed as exc:
        raise KeyRefused(str(exc)) from None
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
    if not _sync_slot_take(connection, now=timezone.now()):
        connection.refresh_from_db()
        return SyncOutcome(connection=connection, finished=True, synced=False)
    return _sync_and_reload(connection)


def startup_sync_now(*, startup: Startup, now: datetime | None = None) -> SyncOutcome:
    """A founder's "Sync now": at most once per SYNC_NOW_INTERVAL_SECONDS per startup (the
    slot is taken atomically, so two clicks or a running refresh never sync twice)."""
    now = now or timezone.now()
    connection = ProviderConnection.objects.filter(startup=startup).first()
    if connection is None:
        raise FounderActionRefused("Connect a payment provider first.")
    if not _sync_slot_take(connection, now=now):
        raise FounderActionRefused(
            f"A sync ran less than {sync_wait_minutes()} minutes ago. Please try again a "
            "little later."
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
