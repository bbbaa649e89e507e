"""Founders' changes that wait for an operator before they are public (PendingChange): a
self-reported MRR above SELF_REPORTED_MRR_REVIEW_ABOVE, and a new name or website for a startup
whose figures a provider verifies. Until an operator approves one in the admin, what is public
stays as it was: the old figure (a startup held at creation is unpublished, so it is on no
surface and takes no rank) and the old name and website, under which the figures were
verified."""

from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import User
from founders.models import PendingChange, ReportedRevenue
from startups.changes import api_fields, change_of, startups_change_record
from startups.models import Startup
from verification.selectors import startup_revenue_is_locked

Kind, Status = PendingChange.Kind, PendingChange.Status


def mrr_needs_review(mrr: int | None) -> bool:
    """Whether a self-reported MRR is above the figure published without an operator's look."""
    return mrr is not None and mrr > settings.SELF_REPORTED_MRR_REVIEW_ABOVE


def identity_needs_review(*, startup: Startup) -> bool:
    """Whether a new name or website waits: the startup's figures come from a provider, so they
    must not move to another name or site unchecked."""
    return startup_revenue_is_locked(startup=startup)


def pending_of(*, startup: Startup) -> dict[str, PendingChange]:
    """The startup's changes waiting for an operator, by kind."""
    return {
        change.kind: change
        for change in PendingChange.objects.filter(startup=startup, status=Status.PENDING)
    }


def pending_change_hold(
    *, startup: Startup, account: User | None, kind: str, **values
) -> PendingChange:
    """Hold (or replace the held) change of this kind for an operator's approval."""
    change, _ = PendingChange.objects.update_or_create(
        startup=startup, kind=kind, status=Status.PENDING, defaults={"account": account, **values}
    )
    return change


def pending_change_drop(*, startup: Startup, kind: str) -> PendingChange | None:
    """Withdraw the held change of this kind (the founder changed their mind); returns it."""
    change = PendingChange.objects.filter(startup=startup, kind=kind, status=Status.PENDING).first()
    if change is not None:
        change.delete()
    return change


def reported_mrr_apply(startup: Startup, mrr: int | None) -> None:
    """The founder's reported MRR becomes public: kept for after a disconnect, and the
    headline unless a provider verifies the startup."""
    ReportedRevenue.objects.update_or_create(startup=startup, defaults={"mrr": mrr})
    if not startup_revenue_is_locked(startup=startup):
        arr = None if mrr is None else mrr * 12
        # Written only when it differs, so an unchanged figure leaves `updated_at` as it was.
        Startup.objects.filter(pk=startup.pk).exclude(mrr=mrr, arr=arr).update(
            mrr=mrr, arr=arr, updated_at=timezone.now()
        )


def held_startup_publish(change: PendingChange) -> None:
    if change.publishes:
        Startup.objects.filter(pk=change.startup_id).update(
            is_published=True, updated_at=timezone.now()
        )


@transaction.atomic
def pending_changes_approve(
    *, changes: QuerySet[PendingChange], now: datetime | None = None
) -> int:
    """Publish each pending change: the figure (and the startup, if it was held at creation),
    or the new name and website. Returns how many were approved."""
    now = now or timezone.now()
    touched: list[int] = []
    for change in changes.filter(status=Status.PENDING).select_related("startup"):
        startup = change.startup
        if change.kind == Kind.MRR:
            reported_mrr_apply(startup, change.mrr)
        else:
            Startup.objects.filter(pk=startup.pk).update(
                name=change.name, website=change.website, updated_at=now
            )
        held_startup_publish(change)
        PendingChange.objects.filter(pk=change.pk).update(status=Status.APPROVED, decided_at=now)
        touched.append(startup.pk)
    _record(touched)
    return len(touched)


@transaction.atomic
def pending_changes_reject(*, changes: QuerySet[PendingChange], now: datetime | None = None) -> int:
    """Refuse pending changes: the public figure, name and website stay as they are. A
    startup held at creation is published without the refused figure (its MRR unknown);
    operators unpublish a bogus startup itself in the startup admin."""
    now = now or timezone.now()
    touched: list[int] = []
    for change in changes.filter(status=Status.PENDING):
        held_startup_publish(change)
        PendingChange.objects.filter(pk=change.pk).update(status=Status.REJECTED, decided_at=now)
        touched.append(change.startup_id)
    _record(touched)
    return len(touched)


def _record(startup_ids: list[int]) -> None:
    """One Change row per startup an operator's decision touched, as it now reads (a figure,
    a name or website, or the startup published), in the decision's transaction."""
    startups = Startup.objects.filter(pk__in=startup_ids)
    startups_change_record(
        change_of(startup, fields=api_fields(["name", "website", "mrr", "arr", "is_published"]))
        for startup in startups
    )
