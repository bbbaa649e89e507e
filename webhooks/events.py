"""Events from the change sequence (startups.Change), queued for the endpoints that want them.

The delivery process keeps its own checkpoint (the last Change id it turned into events) and
moves it in the same transaction that queues the events, so a committed change is never lost
and never queued twice (event ids come from the sequence: `msg_<sequence>_<type>`, unique per
endpoint). Sequence numbers commit in order (startups/changes.py), so nothing is skipped.
"""

from collections.abc import Iterable
from datetime import datetime, timedelta

import orjson
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max

from accounts.models import User
from apikeys.services import account_plan
from core.formats import iso_timestamp, month_start_at
from core.renderers import camelize
from startups.attestation import attestation_payload, attestation_sign
from startups.changes import TOMBSTONES
from startups.feed import change_feed
from startups.freshness import OK, verification_status
from startups.models import Change, Startup, Verification
from startups.serializers import StartupListSerializer
from webhooks.limits import EVENTS_PER_MONTH, QUEUE_BOUND
from webhooks.models import Checkpoint, Delivery, Endpoint, StartupSeen

CHECKPOINT = "events"
BATCH = 200
FIGURES = ("verification", "verification.mrr", "verification.arr", "verification.totalRevenue")
FIGURES += ("verification.last30Days", "verification.customers", "verification.monthly")


def _seen_of(startup: Startup, now: datetime | None = None) -> StartupSeen:
    return StartupSeen(
        startup_id=startup.pk,
        slug=startup.slug,
        category=startup.category,
        categories=list(startup.categories or []),
        verified=hasattr(startup, "verification"),
        mrr=startup.mrr,
        status=verification_status(startup, now=now),
    )


def _full(ids: Iterable[int]) -> dict[int, Startup]:
    rows = Startup.objects.filter(pk__in=list(ids)).select_related(
        "verification", "provider_connection"
    )
    return {row.pk: row for row in rows.prefetch_related("verification__monthly")}


def _start() -> Checkpoint:
    """The checkpoint; on the very first run, what exists now is the baseline."""
    checkpoint = Checkpoint.objects.select_for_update().filter(name=CHECKPOINT).first()
    if checkpoint is not None:
        return checkpoint
    last = Change.objects.aggregate(last=Max("id"))["last"] or 0
    StartupSeen.objects.all().delete()
    seen = [_seen_of(s) for s in _full(Startup.objects.values_list("pk", flat=True)).values()]
    StartupSeen.objects.bulk_create(seen, batch_size=1000)
    try:
        with transaction.atomic():
            Checkpoint.objects.create(name=CHECKPOINT, position=last)
    except IntegrityError:
        pass  # another process started first
    return Checkpoint.objects.select_for_update().get(name=CHECKPOINT)


def _matches(endpoint: Endpoint, states: list[StartupSeen]) -> bool:
    """The endpoint's filters against the startup as it was or as it is now (so a startup
    leaving a filtered category still reaches the consumer that had it)."""
    for state in states:
        if endpoint.slugs and state.slug not in endpoint.slugs:
            continue
        if endpoint.categories:
            wanted = {c.lower() for c in endpoint.categories}
            have = {c.lower() for c in [state.category or "", *state.categories] if c}
            if not wanted & have:
                continue
        if endpoint.verified_only and not state.verified:
            continue
        return True
    return False


def _crosses(endpoint: Endpoint, before: int | None, after: int | None) -> bool:
    if before == after:
        return False
    if not before or after is None:
        return True  # from nothing (or zero) to a figure, or a figure gone
    return abs(after - before) * 100 >= endpoint.revenue_threshold_percent * before


def _change_events(change: Change, row, startup, before: StartupSeen | None) -> list[tuple]:
    """(type, data, predicate on endpoint) for one change."""
    base = {"sequence": change.id, "slug": change.slug}
    if change.kind in TOMBSTONES:
        return [("startup.deleted", {**base, "reason": change.kind}, None)]
    if row is None or startup is None:
        return []  # no longer published under this slug: its tombstone follows
    item = camelize(StartupListSerializer(row).data)
    kind = "startup.created" if change.kind == Change.Kind.CREATED else "startup.updated"
    events = [(kind, {**base, "fields": change.fields, "startup": item}, None)]
    now = _seen_of(startup)
    if before is not None and kind == "startup.updated":
        if before.status != now.status:
            data = {**base, "previousStatus": before.status, "status": now.status}
            events.append(("verification.status_changed", data, None))
        if before.mrr != now.mrr:
            data = {**base, "previousMrr": before.mrr, "mrr": now.mrr, "currency": "USD"}
            old, new = before.mrr, now.mrr
            events.append(("revenue.changed", data, lambda e: _crosses(e, old, new)))
    if hasattr(startup, "verification") and set(change.fields) & set(FIGURES):
        token, kid = attestation_sign(attestation_payload(startup, request=None, now=change.at))
        data = {**base, "attestation": token, "kid": kid}
        events.append(("attestation.issued", data, None))
    return events


class _Queue:
    """Queues events for the enabled endpoints whose filters and subscriptions want them."""

    def __init__(self, now: datetime):
        self.now = now
        self.endpoints = list(Endpoint.objects.filter(enabled=True))
        self.month = month_start_at(now)
        self.allowance: dict[int, int] = {}

    def _allowance_left(self, endpoint: Endpoint) -> int:
        account_id = endpoint.account_id
        if account_id not in self.allowance:
            plan, _ = account_plan(account=User.objects.get(pk=account_id))
            used = Delivery.objects.filter(
                endpoint__account_id=account_id, created_at__gte=self.month
            ).count()
            self.allowance[account_id] = EVENTS_PER_MONTH[plan.name] - used
        return self.allowance[account_id]

    def fan_out(self, events: list, states: list, *, at: datetime, id_prefix: str) -> None:
        """Queue `events` ((type, data, predicate)) that happened `at` to every endpoint that
        wants them; each event's id is `<id_prefix>_<type>` (unique per endpoint)."""
        from webhooks.delivery import endpoint_disable  # the delivery side imports this module

        for endpoint in self.endpoints:
            if not endpoint.enabled or at < endpoint.created_at or not _matches(endpoint, states):
                continue
            for event_type, data, wanted in events:
                if event_type not in endpoint.events or (wanted and not wanted(endpoint)):
                    continue
                if self._allowance_left(endpoint) <= 0:
                    continue  # the month's events are used up: not queued (README)
                pending = endpoint.deliveries.filter(status=Delivery.Status.PENDING)
                if pending.count() >= QUEUE_BOUND:
                    endpoint_disable(endpoint, reason="queue full", now=self.now)
                    break
                body = {"type": event_type, "timestamp": iso_timestamp(at), "data": data}
                Delivery.objects.get_or_create(
                    endpoint=endpoint,
                    event_id=f"{id_prefix}_{event_type}",
                    defaults={
                        "event_type": event_type,
                        "payload": orjson.dumps(body).decode(),
                        "next_attempt_at": self.now,
                        "created_at": self.now,
                    },
                )
                self.allowance[endpoint.account_id] -= 1


def events_produce(*, now: datetime, batch: int = BATCH) -> int:
    """Turn the changes after the checkpoint (up to `batch`) into queued deliveries. Returns
    how many changes were read (0: caught up)."""
    with transaction.atomic():
        checkpoint = _start()
        page = change_feed(after=checkpoint.position, limit=batch)
        if not page.entries:
            return 0
        startups = _full(e.change.startup_id for e in page.entries)
        seen = StartupSeen.objects.in_bulk([e.change.startup_id for e in page.entries])
        queue = _Queue(now)
        for entry in page.entries:
            change = entry.change
            startup = startups.get(change.startup_id)
            if startup is not None and startup.slug != change.slug:
                startup = None
            before = seen.get(change.startup_id)
            events = _change_events(change, entry.startup, startup, before)
            states = [s for s in (before, startup and _seen_of(startup)) if s is not None]
            if not states:
                states = [StartupSeen(startup_id=change.startup_id, slug=change.slug)]
            queue.fan_out(events, states, at=change.at, id_prefix=f"msg_{change.id}")
            if change.kind in TOMBSTONES:
                StartupSeen.objects.filter(startup_id=change.startup_id).delete()
                seen.pop(change.startup_id, None)
            elif startup is not None:
                seen[change.startup_id] = _seen_of(startup)
                seen[change.startup_id].save()
        checkpoint.position = page.last
        checkpoint.save(update_fields=["position"])
        return len(page.entries)


def stale_events_produce(*, now: datetime) -> int:
    """`verification.status_changed` to `stale` for verified figures that aged past
    VERIFICATION_STALE_HOURS without any write (no Change row marks that moment). The event id
    is `msg_stale_<startup id>_<verified-at seconds>`: once per aging. Returns how many."""
    cutoff = now - timedelta(hours=settings.VERIFICATION_STALE_HOURS)
    aged = StartupSeen.objects.filter(status=OK).values_list("startup_id", flat=True)
    ids = list(
        Verification.objects.filter(startup_id__in=aged, verified_at__lt=cutoff).values_list(
            "startup_id", flat=True
        )[:BATCH]
    )
    if not ids:
        return 0
    with transaction.atomic():
        queue = _Queue(now)
        startups = _full(ids)
        for before in StartupSeen.objects.select_for_update().filter(pk__in=ids, status=OK):
            startup = startups.get(before.startup_id)
            if startup is None:
                continue
            after = _seen_of(startup, now)
            if after.status == before.status:
                continue
            data = {"sequence": None, "slug": startup.slug}
            data |= {"previousStatus": before.status, "status": after.status}
            verified_at = startup.verification.verified_at
            stamp = int(verified_at.timestamp())
            queue.fan_out(
                [("verification.status_changed", data, None)],
                [before, after],
                at=startup.verification.verified_at
                + timedelta(hours=settings.VERIFICATION_STALE_HOURS),
                id_prefix=f"msg_stale_{startup.pk}_{stamp}",
            )
            after.save()
    return len(ids)
