"""The pricing section and the operator's contact, wherever Pro is mentioned."""

import re

from django import template
from django.conf import settings

from billing.services import billing_configured
from quota.plans import FREE, PRO
from startups.templatetags.links import web_url

register = template.Library()

EMAIL = re.compile(r"^[^@\s:/<>\"']+@[^@\s:/<>\"']+\.[^@\s:/<>\"']+$")


@register.filter
def contact_href(value: str) -> str:
    """A link for OPERATOR_CONTACT: mailto: for an address, the URL for an http(s) URL, else
    "" (shown as text, never linked: a typo must not become a javascript: link)."""
    value = (value or "").strip()
    if EMAIL.match(value):
        return f"mailto:{value}"
    return web_url(value)


def pro_offer() -> dict:
    """What every mention of Pro needs: the plans' numbers, whether Checkout is on, whom to ask."""
    return {
        "free": FREE,
        "pro": PRO,
        "checkout": billing_configured(),
        "operator_contact": settings.OPERATOR_CONTACT,
    }


@register.simple_tag
def free_allowance() -> int | None:
    """The Free plan's records a month (quota/plans.py), for pages that mention it in passing."""
    return FREE.monthly_allowance


@register.inclusion_tag("billing/_pricing.html")
def pricing(heading: str = "h2") -> dict:
    return {**pro_offer(), "heading": heading}


@register.inclusion_tag("billing/_contact.html")
def operator_contact() -> dict:
    return {"operator_contact": settings.OPERATOR_CONTACT}
