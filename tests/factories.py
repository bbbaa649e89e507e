"""Plain factories: make_* functions that save and return rows."""

import itertools
from datetime import timedelta

from django.utils import timezone

from accounts.models import User
from accounts.services import account_create
from apikeys.models import ApiKey, Subscription
from apikeys.services import api_key_create
from startups.models import Startup

_counter = itertools.count(1)
PASSWORD = "correct-horse-battery-staple"


def make_account(*, email: str | None = None, password: str | None = PASSWORD) -> User:
    return account_create(email=email or f"founder{next(_counter)}@example.com", password=password)


def make_api_key(*, account: User | None = None, name: str = "") -> tuple[ApiKey, str]:
    created = api_key_create(account=account or make_account(), name=name)
    return created.api_key, created.raw


def make_subscription(*, account: User, days: int = 30) -> Subscription:
    """A Pro period ending `days` from now (negative: lapsed that long ago)."""
    return Subscription.objects.create(
        account=account, current_period_end=timezone.now() + timedelta(days=days)
    )


def make_startup(**fields) -> Startup:
    n = next(_counter)
    defaults = {"name": f"Startup {n}", "slug": f"startup-{n}", "mrr": 1000 + n}
    return Startup.objects.create(**(defaults | fields))


def make_startups(count: int) -> list[Startup]:
    return [make_startup() for _ in range(count)]
