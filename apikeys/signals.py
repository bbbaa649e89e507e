"""Key, subscription and account changes mark every server's copies of key lookups stale."""

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from accounts.models import User
from apikeys.models import ApiKey, Subscription
from openstartup import readcache


@receiver(post_save, sender=ApiKey)
@receiver(post_delete, sender=ApiKey)
@receiver(post_save, sender=Subscription)
@receiver(post_delete, sender=Subscription)
@receiver(post_save, sender=User)
@receiver(post_delete, sender=User)
def key_lookup_changed(sender: type, update_fields=None, created=False, **kwargs: Any) -> None:
    if sender is ApiKey and created:
        return  # a new key was never looked up, so no copy of it exists
    if sender is User and (created or readcache.saves_only_last_login(update_fields)):
        return  # a new account has no keys yet; a sign-in changes nothing a lookup reads
    readcache.bump("auth")
