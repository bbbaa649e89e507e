"""Plain factory functions for test data (no fixed primary keys, no shared state)."""

import json
from datetime import UTC, date, datetime, timedelta
from itertools import count
from types import EllipsisType

from django.contrib.auth import get_user_model
from django.utils import timezone

from accounts.models import User
from accounts.services import account_create
from apikeys.models import ApiKey, Subscription
from apikeys.services import api_key_create
from startups.imports import startups_import
from startups.models import Founder, MonthlyRevenue, Social, Startup, Verification

_sequence = count(1)
PASSWORD = "correct-horse-battery-staple"
# A founder's profile as `startup_create`/`startup_update` take it.
PROFILE = {"name": "Acme", "website": "https://acme.example", "category": "Analytics"}


def make_account(
    *, email: str | None = None, password: str | None = PASSWORD, confirmed: bool = True
) -> User:
    """A founder account that can sign in; its e-mail address is confirmed unless asked not."""
    return account_create(
        email=email or f"founder{next(_sequence)}@example.com",
        password=password,
        confirmed=confirmed,
    )


def make_api_key(*, account: User | None = None, name: str = "") -> tuple[ApiKey, str]:
    created = api_key_create(account=account or make_account(), name=name)
    return created.api_key, created.raw


def make_subscription(*, account: User, days: int = 30) -> Subscription:
    """A Pro period ending `days` from now (negative: lapsed that long ago)."""
    return Subscription.objects.create(
        account=account, current_period_end=timezone.now() + timedelta(days=days)
    )


def make_pro_key() -> tuple[ApiKey, str]:
    """A key of a new account with a Pro period ending 30 days from now: (ApiKey, raw key)."""
    key, raw = make_api_key()
    make_subscription(account=key.account)
    return key, raw


def make_user(*, is_verified: bool = False, **fields) -> User:
    """An owner account that cannot sign in (see make_account for one that can)."""
    n = next(_sequence)
    fields.setdefault("username", f"user{n}")
    fields.setdefault("email", f"user{n}@example.com")
    return get_user_model().objects.create(is_verified=is_verified, **fields)


def make_startup(name: str | None = None, **fields) -> Startup:
    n = next(_sequence)
    name = name or f"Startup {n}"
    fields.setdefault("slug", f"startup-{n}")
    if "mrr" in fields and "arr" not in fields:
        fields["arr"] = None if fields["mrr"] is None else fields["mrr"] * 12
    return Startup.objects.create(name=name, **fields)


def make_ai_startup(*, owner_verified: bool = False, owner="new", **fields) -> Startup:
    """A startup with a live AI visibility add-on and (by default) a fresh owner account."""
    if owner == "new":
        owner = make_user(is_verified=owner_verified)
    fields.setdefault("ai_addon_active", True)
    fields.setdefault("category", "Developer Tools")
    fields.setdefault("industry", "Software")
    slug = fields.setdefault("slug", f"ai-startup-{next(_sequence)}")
    fields.setdefault("website", f"https://{slug}.example.com")
    fields.setdefault("description", f"{fields.get('name') or slug} helps teams ship.")
    return make_startup(owner=owner, **fields)


def make_founder(startup: Startup, name: str = "Ada Lovelace", **fields) -> Founder:
    return Founder.objects.create(startup=startup, name=name, **fields)


def make_social(startup: Startup, platform: str = "x", url: str | None = None) -> Social:
    return Social.objects.create(
        startup=startup, platform=platform, url=url or f"https://x.com/{startup.slug}"
    )


def make_verification(
    startup: Startup,
    *,
    provider: str = "stripe",
    mrr: int | None | EllipsisType = ...,
    months: list[tuple[date, int, int]] = (),
    verified_at: datetime | None = None,
    **fields,
) -> Verification:
    if mrr is ...:
        mrr = startup.mrr
    verification = Verification.objects.create(
        startup=startup,
        provider=provider,
        verified_at=verified_at or datetime(2026, 11, 1, 12, 30, 15, 123456, tzinfo=UTC),
        mrr=mrr,
        arr=None if mrr is None else mrr * 12,
        total_revenue=fields.pop("total_revenue", sum(g - r for _, g, r in months)),
        last_30_days=fields.pop("last_30_days", 0),
        customers=fields.pop("customers", 10),
        **fields,
    )
    for month, gross, refunds in months:
        MonthlyRevenue.objects.create(
            verification=verification, month=month, gross=gross, refunds=refunds
        )
    return verification


def make_startups(count: int) -> list[Startup]:
    """`count` startups, each with an MRR."""
    return [make_startup(mrr=1000 + i) for i in range(count)]


def bearer(raw: str) -> dict[str, str]:
    """Django test-client keyword arguments sending `raw` as a Bearer key."""
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def self_reported_revenue(mrr: int) -> dict:
    """The REST `revenue` of a startup reporting `mrr` (whole USD) itself: not verified, never
    synced, no growth yet (test_rest_api checks the same object field by field)."""
    return {
        "mrr": mrr,
        "arr": mrr * 12,
        "currency": "USD",
        "verified": False,
        "source": "self_reported",
        "lastSyncedAt": None,
        "growth30d": None,
    }


def import_startups(tmp_path, records: list[dict]) -> None:
    """Import `records` as an operator's JSON file would (startups.imports)."""
    path = tmp_path / "startups.json"
    path.write_text(json.dumps(records))
    startups_import(path=path)
