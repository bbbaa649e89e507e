"""Writes and lookups for API keys and subscriptions."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from accounts.models import User
from apikeys import keys
from apikeys.models import ApiKey, Subscription
from core import readcache
from core.errors import EmailNotConfirmed, InvalidApiKey
from quota.callers import KeyAccount
from quota.plans import PlanLimits, plan_for

# last_used_at is shown with minute precision; writing it at most once a minute keeps the
# hot path to a read for busy keys.
LAST_USED_RESOLUTION = timedelta(minutes=1)
PRO_PERIOD = timedelta(days=30)

PlanChoice = Literal["free", "pro", "lapsed"]


@dataclass(frozen=True)
class CreatedKey:
    api_key: ApiKey
    raw: str  # shown once, to the account owner, then forgotten


def api_key_create(*, account: User, name: str = "") -> CreatedKey:
    """Make a key for `account`; the raw key exists only in the returned value."""
    raw = keys.generate()
    api_key = ApiKey.objects.create(
        account=account, name=name.strip(), digest=keys.digest(raw), last_four=keys.last_four(raw)
    )
    return CreatedKey(api_key=api_key, raw=raw)


@dataclass
class KeyRecord:
    """What authenticating a key needs, as kept per process between requests."""

    key_id: int
    account_id: int
    allowance_override: int | None
    pro_until: datetime | None  # end of the latest Pro period running when it was read
    last_used_at: datetime | None
    email_confirmed: bool


# Key records: one query per key, or none while this process holds a current copy.
KEY_RECORDS = readcache.LocalCache("auth", max_entries=10_000)


@readcache.fills_cache(kind="auth")
def _key_record(*, digest: str, now: datetime, db: str) -> KeyRecord | None:
    """The record of an active key, filling a per-process copy (core/readcache.py)."""
    row = (
        ApiKey.objects.using(db)
        .filter(digest=digest, revoked_at__isnull=True, account__is_active=True)
        .annotate(
            pro_until=Subquery(
                _active_pro(account=OuterRef("account_id"), now=now)
                .order_by("-current_period_end")
                .values("current_period_end")[:1]
            )
        )
        .values_list(
            "pk",
            "account_id",
            "account__monthly_allowance_override",
            "pro_until",
            "last_used_at",
            "account__email_confirmed_at",
        )
        .first()
    )
    return None if row is None else KeyRecord(*row[:5], email_confirmed=row[5] is not None)


def api_key_authenticate(*, raw: str, now: datetime | None = None) -> KeyAccount:
    """The account (with its plan) of the active key `raw`, or raise InvalidApiKey.

    `raw` is the key exactly as the client sent it (no scheme, surrounding whitespace
    stripped). Malformed, unknown, revoked keys and keys of deactivated accounts all raise
    InvalidApiKey (401 `invalid_api_key`); a good key of an account whose e-mail address is not
    confirmed raises EmailNotConfirmed (403); callers must never fall back to anonymous access.
    Used by the DRF authentication class and the MCP view alike. The lookup is one query, or
    none while this process holds a current copy (`KEY_RECORDS`): a revocation or
    a plan change anywhere shows on the very next request, on every server.
    """
    if not keys.is_well_formed(raw):
        raise InvalidApiKey()
    now = now or timezone.now()
    digest = keys.digest(raw)
    record = KEY_RECORDS.get_or_build(digest, lambda: _key_record(digest=digest, now=now))
    if record is None:
        raise InvalidApiKey()
    if not record.email_confirmed:
        raise EmailNotConfirmed()
    if record.last_used_at is None or now - record.last_used_at >= LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=record.key_id).update(last_used_at=now)
        record.last_used_at = now
    pro = record.pro_until is not None and record.pro_until > now
    return KeyAccount(
        pk=record.account_id,
        key_id=record.key_id,
        plan=plan_for(pro=pro, allowance_override=record.allowance_override),
    )


@transaction.atomic
def api_key_revoke(*, api_key: ApiKey, now: datetime | None = None) -> ApiKey:
    """Revoke a key for good; revoking twice keeps the first revocation time. The revocation
    and the new "auth" token commit together: every server refuses the key from the next
    request on, or (the database failing) nothing happened and the error propagates."""
    if api_key.revoked_at is None:
        api_key.revoked_at = now or timezone.now()
        ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(
            revoked_at=api_key.revoked_at
        )  # the "auth" token is replaced with it (apikeys/apps.py registers ApiKey)
    return api_key


def api_key_revoke_raw(*, raw: str, now: datetime | None = None) -> ApiKey | None:
    """Revoke the key whose raw text is `raw` (operators' command); None if unknown."""
    api_key = ApiKey.objects.filter(digest=keys.digest(raw.strip())).first()
    return None if api_key is None else api_key_revoke(api_key=api_key, now=now)


@transaction.atomic
def api_keys_revoke_all(*, account: User, now: datetime | None = None) -> int:
    """Revoke every active key of the account (they stop working on every server at once, once
    the caller's transaction commits); returns how many. Part of web.deletion."""
    revoked = ApiKey.objects.filter(account=account, revoked_at__isnull=True).update(
        revoked_at=now or timezone.now()
    )
    return revoked


def _active_pro(*, account, now: datetime):
    """The account's Pro subscriptions whose period has not ended (an account, or an
    OuterRef to one)."""
    return Subscription.objects.filter(
        account_id=account, plan=Subscription.Plan.PRO, current_period_end__gt=now
    )


def account_plan(
    *, account: User, now: datetime | None = None
) -> tuple[PlanLimits, datetime | None]:
    """The account's plan now (Pro while a subscription period runs, else Free with the
    operator's allowance override, if any) and, on Pro, when the period ends. One query."""
    now = now or timezone.now()
    until = (
        _active_pro(account=account.pk, now=now)
        .order_by("-current_period_end")
        .values_list("current_period_end", flat=True)
        .first()
    )
    plan = plan_for(pro=until is not None, allowance_override=account.monthly_allowance_override)
    return plan, until


@transaction.atomic
def subscription_set(*, account: User, plan: PlanChoice, now: datetime | None = None) -> None:
    """Put the account on `plan`: free ends any Pro period now, pro starts a 30-day period,
    lapsed leaves a Pro period that ended a day ago (the key keeps working, on Free)."""
    now = now or timezone.now()
    Subscription.objects.filter(account=account, current_period_end__gt=now).update(
        current_period_end=now
    )
    if plan == "pro":
        Subscription.objects.create(account=account, current_period_end=now + PRO_PERIOD)
    elif plan == "lapsed":
        Subscription.objects.create(account=account, current_period_end=now - timedelta(days=1))


def account_allowance_set(*, account: User, allowance: int | None) -> None:
    """Set (or with None clear) the account's monthly allowance override (operators only)."""
    account.monthly_allowance_override = allowance
    User.objects.filter(pk=account.pk).update(monthly_allowance_override=allowance)
