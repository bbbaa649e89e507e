"""Wire formats shared by every surface: timestamps, months and absolute links."""

from datetime import UTC, date, datetime

from django.conf import settings
from django.http import HttpRequest


def iso_timestamp(value: datetime | None) -> str | None:
    """ISO 8601 in UTC with milliseconds and Z: 2026-11-01T00:00:00.000Z."""
    if value is None:
        return None
    utc = value.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def month_start(moment: datetime) -> date:
    """The UTC calendar month of a moment, as its first day (quota months, revenue months)."""
    utc = moment.astimezone(UTC)
    return date(utc.year, utc.month, 1)


def iso_month(value: date | None) -> str | None:
    """A calendar month as YYYY-MM."""
    return None if value is None else f"{value.year:04d}-{value.month:02d}"


def site_url(request: HttpRequest | None) -> str:
    """The service's public address without a trailing slash: SITE_URL, else the request's host."""
    if settings.SITE_URL:
        return settings.SITE_URL
    if request is None:
        return "http://127.0.0.1:8000"
    return f"{request.scheme}://{request.get_host()}"
