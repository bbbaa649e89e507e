"""Formats shared by every surface: timestamps, months, whole dollars and absolute links."""

import math
from datetime import UTC, date, datetime

from django.conf import settings
from django.http import HttpRequest


def iso_timestamp(value: datetime | None) -> str | None:
    """ISO 8601 in UTC with milliseconds and Z: 2026-11-01T00:00:00.000Z."""
    if value is None:
        return None
    utc = value.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def month_start(moment: datetime | date) -> date:
    """The UTC calendar month of a moment (or the month of a day), as its first day: quota
    months, revenue months."""
    day = moment.astimezone(UTC) if isinstance(moment, datetime) else moment
    return date(day.year, day.month, 1)


def month_start_at(moment: datetime | date) -> datetime:
    """The first instant (00:00 UTC) of the UTC calendar month of `moment`."""
    start = month_start(moment)
    return datetime(start.year, start.month, 1, tzinfo=UTC)


def next_month_start_at(moment: datetime | date) -> datetime:
    """The first instant (00:00 UTC) of the UTC calendar month after `moment`'s."""
    start = month_start(moment)
    year, month = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
    return datetime(year, month, 1, tzinfo=UTC)


def iso_month(value: date | None) -> str | None:
    """A calendar month as YYYY-MM."""
    return None if value is None else f"{value.year:04d}-{value.month:02d}"


def usd_text(dollars: int) -> str:
    """Whole US dollars as people read them, with thousands separators: "$4,200". Callers
    say what an unknown figure reads as (an em dash on pages, "unknown" in Markdown)."""
    return f"${int(dollars):,}"


def whole_dollars(amount: float, *, rounding: str) -> int:
    """A dollar bound a caller sent (5.5 is allowed) in whole dollars, rounded inward so the
    bound never takes in more than was asked: `up` for a lower bound, `down` for an upper one
    (minMrr on /api/v1, min_mrr/max_mrr on MCP). `amount` is finite."""
    return math.ceil(amount) if rounding == "up" else math.floor(amount)


def site_url(request: HttpRequest | None) -> str:
    """The service's public address without a trailing slash: SITE_URL, else the request's host."""
    if settings.SITE_URL:
        return settings.SITE_URL
    if request is None:
        return "http://127.0.0.1:8000"
    return f"{request.scheme}://{request.get_host()}"
