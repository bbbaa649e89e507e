"""Writes that change what the startups' surfaces show mark the per-process copies stale.

Saves through the ORM (admin, services, factories) are caught here. Bulk paths that skip model
signals (the demo seed, imports, provider syncs) and admin deletions call `readcache.bump`
themselves. No delete receiver is connected on purpose: one would stop Django from deleting
large querysets in bulk.
"""

from typing import Any

from django.db.models.signals import post_save
from django.dispatch import receiver

from accounts.models import User
from openstartup import readcache
from startups.models import Founder, MonthlyRevenue, RevenueSnapshot, Social, Startup, Verification
from verification.models import ProviderConnection


@receiver(post_save, sender=Startup)
@receiver(post_save, sender=Founder)
@receiver(post_save, sender=Social)
@receiver(post_save, sender=Verification)
@receiver(post_save, sender=MonthlyRevenue)
@receiver(post_save, sender=RevenueSnapshot)
@receiver(post_save, sender=ProviderConnection)  # a failed sync changes the shown `status`
@receiver(post_save, sender=User)  # an owner's verification shows on their startups
def startup_data_changed(sender: type, update_fields=None, created=False, **kwargs: Any) -> None:
    if sender is User and (created or readcache.saves_only_last_login(update_fields)):
        return  # a new account owns nothing yet; a sign-in changes nothing shown
    readcache.bump("data")
