"""Formatting for the HTML pages (money in whole dollars, UTC times, trust badges)."""

from datetime import datetime

from django import template
from django.utils.dateparse import parse_datetime
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.timesince import timesince

from core.formats import usd_text
from startups.models import Startup
from startups.trust import Trust, trust_of

register = template.Library()


@register.filter
def usd(value: int | None) -> str:
    """Whole US dollars with thousands separators ("$4,200"); unknown is an em dash. Every
    page shows money through this filter."""
    if value is None or value == "":
        return "—"
    return usd_text(value)


def _when(value: datetime | str | None) -> datetime | None:
    return parse_datetime(value) if isinstance(value, str) else value


@register.filter
def utc(value: datetime | str | None) -> str:
    """A time shown with its zone named: '2026-11-01 00:00 UTC'."""
    value = _when(value)
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


@register.filter
def ago(value: datetime | str | None) -> str:
    """'3 hours ago' (the largest unit only); '—' when unknown."""
    value = _when(value)
    if value is None:
        return "—"
    return f"{timesince(value, depth=1)} ago"


@register.filter
def trust(value: Startup | Trust) -> Trust:
    """A startup's badge (see startups.trust); list rows carry theirs already."""
    return value if isinstance(value, Trust) else trust_of(value)


@register.inclusion_tag("_trust_badge.html")
def trust_badge(value: Startup | Trust, fresh: bool = True) -> dict:
    """The badge: verified by which provider, self-reported or demo; then the status when it
    is not `ok` and, with `fresh`, how long ago the figures were synced."""
    return {"t": trust(value), "fresh": fresh}


@register.filter
def ticks(value: object) -> str:
    """Text from the OpenAPI document with its `code` spans as <code> (everything escaped)."""
    parts = str(value or "").split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick stays a backtick
        parts[-2:] = ["`".join(parts[-2:])]
    return mark_safe(  # noqa: S308 (each part escaped)
        "".join(
            escape(p) if i % 2 == 0 else f"<code>{escape(p)}</code>" for i, p in enumerate(parts)
        )
    )
