"""Delivering queued events: signed per the Standard Webhooks specification with the
`standardwebhooks` library, one at a time per endpoint and in order, retried on the schedule of
webhooks/limits.py, the endpoint disabled (with an e-mail to its owner) when an event has failed
for the whole schedule or its queue is full."""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db.models import Min, Q
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from verification.crypto import UnreadableKey, decrypt_key
from webhooks.events import events_produce, stale_events_produce
from webhooks.limits import DELIVERY_RETENTION, RETRY_DELAYS
from webhooks.models import Delivery, Endpoint
from webhooks.transport import Outcome, post

logger = logging.getLogger("webhooks")
LEASE = timedelta(seconds=60)


def signed_headers(*, secret: str, event_id: str, body: str, now: datetime) -> dict[str, str]:
    """webhook-id, webhook-timestamp and webhook-signature of one attempt."""
    signature = Webhook(secret).sign(msg_id=event_id, timestamp=now, data=body)
    return {
        "webhook-id": event_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
    }


def endpoint_disable(endpoint: Endpoint, *, reason: str, now: datetime) -> None:
    """Stop delivering to `endpoint` and tell its owner (plain-text e-mail; the URL is the
    only text from the owner, and plain text interprets nothing)."""
    updated = Endpoint.objects.filter(pk=endpoint.pk, enabled=True).update(
        enabled=False, disabled_reason=reason
    )
    endpoint.enabled, endpoint.disabled_reason = False, reason
    if not updated or not endpoint.account.email:
        return
    send_mail(
        subject="Your OpenStartup webhook endpoint was disabled",
        message=(
            f"We stopped sending events to your webhook endpoint\n\n  {endpoint.url}\n\n"
            f"Reason: {reason} (at {now:%Y-%m-%d %H:%M} UTC).\n\n"
            "Events after this are not queued. Fix the receiver, catch up from the change "
            "feed (GET /api/v1/changes), then enable the endpoint again in the dashboard or "
            'with PATCH /api/v1/webhooks/endpoints/{id} {"enabled": true}.\n'
        ),
        from_email=settings.DEFAULT_FROM_EMAIL,
        recipient_list=[endpoint.account.email],
    )


def _take(endpoint: Endpoint, now: datetime) -> bool:
    """The endpoint's lease: one delivery at a time per endpoint, across processes."""
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    return bool(Endpoint.objects.filter(free, pk=endpoint.pk).update(lease_until=now + LEASE))


def delivery_attempt(delivery: Delivery, *, now: datetime) -> Outcome:
    """One attempt now: sign, send, record; schedule the retry or give up."""
    endpoint = delivery.endpoint
    try:
        secret = decrypt_key(endpoint.secret)
    except UnreadableKey:
        endpoint_disable(endpoint, reason="signing secret unreadable (encryption keys)", now=now)
        return Outcome(None, "signing secret unreadable")
    headers = signed_headers(
        secret=secret, event_id=delivery.event_id, body=delivery.payload, now=now
    )
    outcome = post(endpoint.url, delivery.payload.encode(), headers)
    delivery.attempts += 1
    delivery.last_attempt_at = now
    delivery.last_status_code = outcome.status_code
    delivery.last_error = outcome.error[:300]
    if outcome.ok:
        delivery.status, delivery.next_attempt_at = Delivery.Status.DELIVERED, None
    elif delivery.attempts <= len(RETRY_DELAYS):
        delivery.next_attempt_at = now + RETRY_DELAYS[delivery.attempts - 1]
    else:
        delivery.status, delivery.next_attempt_at = Delivery.Status.FAILED, None
    delivery.save()
    if delivery.status == Delivery.Status.FAILED:
        endpoint_disable(endpoint, reason="deliveries failed for 3 days", now=now)
    return outcome


def deliveries_send(*, now: datetime) -> int:
    """For each enabled endpoint, its oldest pending event when due (events of one endpoint go
    out one at a time, in order). Returns how many attempts were made."""
    attempts = 0
    firsts = (
        Delivery.objects.filter(status=Delivery.Status.PENDING, endpoint__enabled=True)
        .values("endpoint_id")
        .annotate(first=Min("id"))
        .values_list("first", flat=True)
    )
    heads = Delivery.objects.filter(pk__in=list(firsts)).select_related("endpoint__account")
    for delivery in heads.order_by("endpoint_id"):
        if delivery.next_attempt_at and delivery.next_attempt_at > now:
            continue
        if not _take(delivery.endpoint, now):
            continue
        try:
            delivery_attempt(delivery, now=now)
            attempts += 1
        finally:
            Endpoint.objects.filter(pk=delivery.endpoint_id).update(lease_until=None)
    return attempts


def webhooks_run_once(*, now: datetime | None = None) -> int:
    """One round of the delivery process: queue the new changes' events, then send what is
    due. The `deliver_webhooks` command calls this in a loop."""
    now = now or timezone.now()
    while events_produce(now=now):
        pass
    stale_events_produce(now=now)
    deliveries_prune(now=now)
    return deliveries_send(now=now)


def deliveries_prune(*, now: datetime) -> int:
    """Forget delivered and failed events older than DELIVERY_RETENTION (pending ones stay)."""
    old = Delivery.objects.filter(created_at__lt=now - DELIVERY_RETENTION).exclude(
        status=Delivery.Status.PENDING
    )
    deleted, _ = old.delete()
    return deleted


def delivery_resend(delivery: Delivery, *, now: datetime | None = None) -> None:
    """ "Send again": the event goes back to the endpoint's queue, due now (same webhook-id)."""
    Delivery.objects.filter(pk=delivery.pk).update(
        status=Delivery.Status.PENDING, next_attempt_at=now or timezone.now(), attempts=0
    )
