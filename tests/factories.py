"""Plain factory functions for test data: `make_*`, keyword arguments, sensible defaults."""

import itertools
from datetime import date, timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone

from startups.models import Founder, MonthlyRevenue, Social, Startup, Verification

_counter = itertools.count(1)


def make_user(*, is_verified: bool = False, **fields):
    n = next(_counter)
    fields.setdefault("username", f"user{n}")
    fields.setdefault("email", f"user{n}@example.com")
    return get_user_model().objects.create(is_verified=is_verified, **fields)


def make_startup(*, name: str | None = None, **fields) -> Startup:
    n = next(_counter)
    name = name or f"Startup {n}"
    fields.setdefault("slug", f"startup-{n}")
    fields.setdefault("website", f"https://{fields['slug']}.example.com")
    fields.setdefault("category", "Developer Tools")
    fields.setdefault("industry", "Software")
    fields.setdefault("description", f"{name} helps teams ship.")
    return Startup.objects.create(name=name, **fields)


def make_ai_startup(*, owner_verified: bool = False, owner="new", **fields) -> Startup:
    """A startup with a live AI visibility add-on and (by default) a fresh owner account."""
    if owner == "new":
        owner = make_user(is_verified=owner_verified)
    fields.setdefault("ai_addon_active", True)
    return make_startup(owner=owner, **fields)


def make_founder(startup: Startup, **fields) -> Founder:
    fields.setdefault("name", "Ada Founder")
    return Founder.objects.create(startup=startup, **fields)


def make_social(startup: Startup, *, platform: str = "x", url: str | None = None) -> Social:
    url = url or f"https://x.com/{startup.slug}"
    return Social.objects.create(startup=startup, platform=platform, url=url)


def make_verification(startup: Startup, *, months: int = 3, **fields) -> Verification:
    fields.setdefault("provider", "stripe")
    fields.setdefault("verified_at", timezone.now())
    fields.setdefault("mrr", startup.mrr)
    fields.setdefault("arr", startup.arr)
    fields.setdefault("total_revenue", 1000 * months)
    fields.setdefault("last_30_days", 1000)
    fields.setdefault("customers", 10)
    verification = Verification.objects.create(startup=startup, **fields)
    start = date(2026, 1, 1)
    for i in range(months):
        month = (start + timedelta(days=32 * i)).replace(day=1)
        MonthlyRevenue.objects.create(verification=verification, month=month, gross=1000)
    return verification
