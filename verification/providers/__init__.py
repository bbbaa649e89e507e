"""The connectors, by the name operators type in `connect_provider`."""

from verification.providers import (
    app_store_connect,
    demo,
    dodo_payments,
    gumroad,
    lemonsqueezy,
    paddle,
    polar,
    revenuecat,
    stripe,
    whop,
)
from verification.providers.base import Provider

PROVIDERS: dict[str, Provider] = {
    module.PROVIDER.name: module.PROVIDER
    for module in (
        stripe,
        lemonsqueezy,
        polar,
        gumroad,
        paddle,
        dodo_payments,
        revenuecat,
        whop,
        app_store_connect,
        demo,
    )
}


def provider_named(name: str) -> Provider:
    try:
        return PROVIDERS[name]
    except KeyError:
        raise ValueError(f"unknown provider {name!r}; one of: {', '.join(PROVIDERS)}") from None


# Connectors whose credential has its own form (a JSON line of several parts, a key prefix):
# `credential_problem(raw)` says why it can never work, before any network call.
CREDENTIAL_RULES = {
    "revenuecat": revenuecat.credential_problem,
    "whop": whop.credential_problem,
    "app_store_connect": app_store_connect.credential_problem,
}


def credential_problem(provider: str, raw: str) -> str | None:
    """Why this credential can never be used by `provider`, judged from its text alone (only
    for connectors with their own rules; None otherwise)."""
    rule = CREDENTIAL_RULES.get(provider)
    return rule(raw) if rule else None
