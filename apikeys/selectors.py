"""Reads for the founders' dashboard. Every read is scoped to the signed-in account."""

from django.db.models import QuerySet

from accounts.models import User
from apikeys.models import ApiKey


def api_key_list(*, account: User) -> QuerySet[ApiKey]:
    """The account's keys, newest first, revoked ones included."""
    return ApiKey.objects.filter(account=account).order_by("-created_at", "-id")


def api_key_get(*, account: User, pk: int) -> ApiKey | None:
    """One of the account's own keys, or None (another account's key is never returned)."""
    return ApiKey.objects.filter(account=account, pk=pk).first()
