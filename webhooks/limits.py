"""What each plan allows for webhooks, and the delivery schedule. One home for the numbers the
README's "Webhooks" section states."""

from datetime import timedelta

ENDPOINTS = {"Free": 2, "Pro": 20}
EVENTS_PER_MONTH = {"Free": 1_000, "Pro": 100_000}
# Undelivered events one endpoint may hold. When full, the endpoint is disabled (with an
# e-mail) rather than dropping events silently: resync from the change feed, then re-enable.
QUEUE_BOUND = 10_000
# Wait before each retry after a failed attempt: 5 s, 5 min, 30 min, 2 h, 5 h, then 10 h
# seven times: 13 attempts over 3 days 5 hours. An event still failing after the last one
# is `failed` and the endpoint (failing that whole time) is disabled with an e-mail.
RETRY_DELAYS = (
    timedelta(seconds=5),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=5),
    *(timedelta(hours=10),) * 7,
)
EVENT_TYPES = (
    "startup.created",
    "startup.updated",
    "startup.deleted",
    "verification.status_changed",
    "revenue.changed",
    "attestation.issued",
)
# Delivered and failed events are kept this long (the dashboard's log; the month's count).
DELIVERY_RETENTION = timedelta(days=35)
