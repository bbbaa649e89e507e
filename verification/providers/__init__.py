"""The connectors, by the name operators type in `connect_provider`."""

from collections.abc import Callable

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
# their `credential(raw)` reads it and raises ValueError saying why it can never work. The
# key-or-JSON reading RevenueCat and Whop share is `base.key_or_json`.
CREDENTIAL_RULES: dict[str, Callable[[str], object]] = {
    "revenuecat": revenuecat.credential,
    "whop": whop.credential,
    "app_store_connect": app_store_connect.credential,
}


def credential_problem(provider: str, raw: str) -> str | None:
    """Why this credential can never be used by `provider`, judged from its text alone before
    any network call (only for connectors with their own rules; None otherwise)."""
    rule = CREDENTIAL_RULES.get(provider)
    if rule is None:
        return None
    try:
        rule(raw)
    except ValueError as exc:
        return str(exc)
    return None
