"""Counters that slow down abuse of the account pages: sign-ups per client address, and failed
sign-ins per account name and per client address (lockout).

They must hold across every worker and instance: in the shared cache (Redis) when one is
configured, else in the database (ThrottleCounter), never in a per-process cache, where each
worker would count alone. With Redis they are guards, not accounting: a cache outage lets
requests through rather than locking everyone out. Counting is by the name typed, whether or
not such an account exists, so the answers never tell an attacker which addresses are
registered.
"""

import hashlib
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.dummy import DummyCache
from django.core.cache.backends.locmem import LocMemCache
from django.db import IntegrityError, transaction
from django.db.models import F
from django.http import HttpRequest
from django.utils import timezone

from accounts.models import ThrottleCounter
from core.clientip import client_address, client_key

LOCKED_MESSAGE = (
    "Too many failed sign-in attempts. Sign-in is paused for this account and network; "
    "try again in {minutes} minutes."
)
SIGNUP_THROTTLED_MESSAGE = (
    "Too many accounts were created from your network recently; try again in an hour."
)


def request_client(request: HttpRequest) -> str:
    """The client address a request comes from (per /64 for IPv6), proxies considered."""
    address = client_address(
        remote_addr=request.META.get("REMOTE_ADDR", ""),
        forwarded_for=request.META.get("HTTP_X_FORWARDED_FOR"),
    )
    return client_key(address)


def _in_database() -> bool:
    """Whether the counters live in the database: no cache shared between processes."""
    return isinstance(caches["default"], LocMemCache | DummyCache)


def _count(key: str) -> int:
    if _in_database():
        live = ThrottleCounter.objects.filter(key=key, expires_at__gt=timezone.now())
        return live.values_list("count", flat=True).first() or 0
    return cache.get(key) or 0


def _bump(key: str, timeout: int) -> int:
    """Add one to the counter `key` (started for `timeout` seconds if it was not running)."""
    if _in_database():
        return _bump_row(key, timeout)
    cache.add(key, 0, timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout)
        return 1


def _bump_row(key: str, timeout: int) -> int:
    now = timezone.now()
    running = ThrottleCounter.objects.filter(key=key, expires_at__gt=now)
    for _ in range(3):
        with transaction.atomic():
            if running.update(count=F("count") + 1):
                return running.values_list("count", flat=True).first() or 1
        ThrottleCounter.objects.filter(expires_at__lte=now).delete()  # this one and any other
        try:
            with transaction.atomic():
                ThrottleCounter.objects.create(
                    key=key, count=1, expires_at=now + timedelta(seconds=timeout)
                )
            return 1
        except IntegrityError:
            continue  # another process started it just now: count on it
    return running.values_list("count", flat=True).first() or 1


def _clear(key: str) -> None:
    if _in_database():
        ThrottleCounter.objects.filter(key=key).delete()
    else:
        cache.delete(key)


def _account_key(username: str) -> str:
    digest = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    return f"signin-failures:account:{digest}"


def _address_key(client: str) -> str:
    return f"signin-failures:address:{client}"


def signin_locked(*, username: str, client: str) -> bool:
    """Whether sign-in is paused for this account name or this client address."""
    return (
        _count(_account_key(username)) >= settings.SIGNIN_MAX_FAILURES
        or _count(_address_key(client)) >= settings.SIGNIN_MAX_FAILURES_PER_ADDRESS
    )


def signin_failed(*, username: str, client: str) -> None:
    """Count a failed sign-in against the account name and the address."""
    timeout = settings.SIGNIN_LOCKOUT_SECONDS
    _bump(_account_key(username), timeout)
    _bump(_address_key(client), timeout)


def signin_succeeded(*, username: str) -> None:
    """A correct password clears the account's failures (not the address's)."""
    _clear(_account_key(username))


def locked_message() -> str:
    return LOCKED_MESSAGE.format(minutes=max(1, settings.SIGNIN_LOCKOUT_SECONDS // 60))


def signup_allowed(*, client: str) -> bool:
    """Count a sign-up from `client`; False once the hourly limit per address is reached."""
    limit = settings.SIGNUPS_PER_ADDRESS_PER_HOUR
    if limit <= 0:
        return True
    key = f"signups:address:{client}"
    if _count(key) >= limit:
        return False
    _bump(key, 3600)
    return True


# Confirmation e-mails an account may ask for again per hour (the address may not be its owner's:
# this bounds how often a stranger's sign-up can make the service write to it).
CONFIRMATION_RESENDS_PER_HOUR = 3


def confirmation_resend_allowed(*, account_id: int) -> bool:
    """Count a resend of the confirmation e-mail; False once the hourly limit is reached."""
    key = f"confirm-resends:account:{account_id}"
    if _count(key) >= CONFIRMATION_RESENDS_PER_HOUR:
        return False
    _bump(key, 3600)
    return True
