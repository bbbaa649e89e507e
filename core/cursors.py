"""Cursors the API issues: opaque tokens, sealed with a MAC so that a cursor the server did not
issue (forged, edited, truncated, made for another endpoint) is refused, never read as a place.

A cursor is `base64url(payload || mac)`: the MAC is HMAC-SHA256 under SECRET_KEY (fallback keys
too, so cursors survive a key rotation), salted with the cursor's purpose (`list`, `changes`)
and cut to 12 bytes. Every endpoint that takes a cursor answers `400 invalid_cursor` for one it
cannot open (core/errors.py InvalidCursor); a cursor is a token, not a filter, so the
lenient rule for query parameters does not apply to it.
"""

import base64
import binascii
import hmac

from django.conf import settings
from django.utils.crypto import salted_hmac

MAC_BYTES = 12
MAX_CURSOR = 4096  # characters; a list cursor holds a name and a slug of up to 200 each


def _mac(purpose: str, payload: bytes, secret: str) -> bytes:
    salt = f"openstartup.cursor.{purpose}"
    return salted_hmac(salt, payload, secret=secret, algorithm="sha256").digest()[:MAC_BYTES]


def cursor_seal(purpose: str, payload: bytes) -> str:
    """The cursor carrying `payload` for `purpose`."""
    sealed = payload + _mac(purpose, payload, settings.SECRET_KEY)
    return base64.urlsafe_b64encode(sealed).decode().rstrip("=")


def cursor_open(purpose: str, cursor: str) -> bytes | None:
    """The payload of a cursor this server issued for `purpose`; None for any other text."""
    if not 0 < len(cursor) <= MAX_CURSOR or not cursor.isascii():
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (binascii.Error, ValueError):
        return None
    payload, mac = raw[:-MAC_BYTES], raw[-MAC_BYTES:]
    if len(raw) <= MAC_BYTES:
        return None
    for secret in (settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", ())):
        if hmac.compare_digest(mac, _mac(purpose, payload, secret)):
            return payload
    return None


def cursor_sent(query, name: str = "cursor") -> bool:
    """Whether the request sent a cursor (an empty value counts as none)."""
    return bool(str(query.get(name, "")).strip())
