"""Formatting for the HTML pages (money in whole dollars, UTC times)."""

from datetime import datetime

from django import template
from django.utils.dateparse import parse_datetime

register = template.Library()


@register.filter
def usd(value: int | None) -> str:
    """Whole US dollars with thousands separators; unknown is an em dash."""
    if value is None or value == "":
        return "—"
    return f"${int(value):,}"


@register.filter
def utc(value: datetime | str | None) -> str:
    """A time shown with its zone named: '2026-11-01 00:00 UTC'."""
    if isinstance(value, str):
        value = parse_datetime(value)
    if value is None:
        return "—"
    return value.strftime("%Y-%m-%d %H:%M UTC")


@register.filter
def provider_title(name: str | None) -> str:
    """A provider's name as founders know it ('App Store Connect', not 'app_store_connect');
    a name no connector has any more is shown as stored."""
    from verification.providers import PROVIDERS

    connector = PROVIDERS.get(name or "")
    return connector.title if connector and connector.title else (name or "").capitalize()


@register.filter
def credential_label(value: str | None) -> str:
    """`verification.credential` in words: 'restricted read-only key', ..."""
    from startups.models import Credential

    return Credential(value).label if value in Credential.values else str(value or "")
