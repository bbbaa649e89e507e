"""Hosts and registrable domains (the Public Suffix List's "private suffix": `shop.acme.co.uk`
-> `acme.co.uk`), so `www.` and subdomains count as the site while a look-alike such as
`acme-inc.co` never counts as `acme.com`."""

import ipaddress
import re
from functools import lru_cache
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList


@lru_cache(maxsize=1)
def _suffixes() -> PublicSuffixList:
    return PublicSuffixList()  # the list shipped in the package, read once


def host_of(value: str | None) -> str | None:
    """The lower-case host of a URL or bare domain ("https://www.Acme.com/x" -> "www.acme.com");
    None for nothing usable."""
    text = (value or "").strip().lower()
    if not text:
        return None
    if not re.match(r"^[a-z][a-z0-9+.-]*://", text):
        text = f"https://{text}"
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    host = (host or "").rstrip(".")
    try:
        ipaddress.ip_address(host)
        return None  # an address, not a domain
    except ValueError:
        return host if "." in host else None


def registrable_domain(value: str | None) -> str | None:
    """The registrable domain of a URL, host or e-mail address; None when there is none (a bare
    public suffix, an IP address, nothing)."""
    text = (value or "").strip()
    if "@" in text and "://" not in text:
        text = text.rsplit("@", 1)[1]
    host = host_of(text)
    if host is None:
        return None
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    return _suffixes().privatesuffix(host)


def email_matches_website(email: str | None, website: str | None) -> bool:
    """Whether the address is at the website's registrable domain (or one of its subdomains)."""
    mine = registrable_domain(email)
    return mine is not None and mine == registrable_domain(website)
