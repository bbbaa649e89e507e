"""The connectors, by the name operators type in `connect_provider`."""

from verification.providers import (
    demo,
    dodo_payments,
    gumroad,
    lemonsqueezy,
    paddle,
    polar,
    stripe,
)
from verification.providers.base import Provider

PROVIDERS: dict[str, Provider] = {
    module.PROVIDER.name: module.PROVIDER
    for module in (stripe, lemonsqueezy, polar, gumroad, paddle, dodo_payments, demo)
}


def provider_named(name: str) -> Provider:
    try:
        return PROVIDERS[name]
    except KeyError:
        raise ValueError(f"unknown provider {name!r}; one of: {', '.join(PROVIDERS)}") from None
