"""Deleting a founder's account: nothing of it keeps acting once it is gone.

Its Pro subscription is cancelled at Stripe first: if Stripe does not answer, the deletion is
refused and nothing changes (the founder tries again). Then, in one transaction, every startup it
owns is disconnected from its payment provider (the key and the verified figures deleted, the
headline figures back to the founder's reported MRR, labelled self-reported, so the hourly worker
has nothing to sync), every API key is revoked and the account is deleted; its startups stay
listed, unowned and claimable like any other.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from accounts.models import User
from apikeys.services import api_keys_revoke_all
from billing.services import subscriptions_cancel
from founders.services import startup_disconnect
from startups.models import Startup


@dataclass(frozen=True)
class AccountDeleted:
    keys_revoked: int
    startups_disconnected: int
    subscriptions_cancelled: int


def account_delete(*, account: User, now: datetime | None = None) -> AccountDeleted:
    """Delete `account` as the module says. Raises billing.services.BillingUnavailable, having
    changed nothing, when its Pro subscription could not be cancelled."""
    cancelled = subscriptions_cancel(account=account)
    with transaction.atomic():
        disconnected = sum(
            startup_disconnect(startup=startup)
            for startup in Startup.objects.select_for_update().filter(owner=account)
        )
        revoked = api_keys_revoke_all(account=account, now=now)
        account.delete()  # its startups' owner becomes null (SET_NULL), its claims go
    return AccountDeleted(
        keys_revoked=revoked,
        startups_disconnected=disconnected,
        subscriptions_cancelled=cancelled,
    )
