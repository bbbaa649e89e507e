"""The REST detail document of a startup, rendered once and kept (core/readcache.py).

Camel-case JSON bytes of `data`; a copy lives until its startup changes (or a write the
change sequence does not itemise). The public profile page reads the same copies.

The freshness fields (`lastSyncedAt`, `verifiedAt`, the verification `status`) move without a
Change row (a sync that found the same figures) and with time alone (`ok` turns `stale`): a
copy keeps placeholders for them, filled on each use from `startups.freshness.FRESHNESS`.
"""

import re
import secrets

import orjson
from django.http import HttpRequest

from core import readcache
from core.formats import site_url
from core.renderers import CamelCaseJSONRenderer
from startups.freshness import FRESHNESS, NOT_READ, freshness_of, shown
from startups.profilerow import startup_profile
from startups.serializers import profile_data

PROFILES = readcache.row_copies(5_000)

# Placeholders no founder can type (random per process), and the pattern that finds them in a
# rendered body: (`synced` or `status`).
_NONCE = secrets.token_hex(12)
SYNCED, STATUS = f"fresh:{_NONCE}:synced", f"fresh:{_NONCE}:status"
_SLOT = re.compile(rb'"fresh:' + _NONCE.encode() + rb':(synced|status)"')


def startup_profile_json(*, slug: str, request: HttpRequest) -> bytes | None:
    """The `data` object of /api/v1/startups/{slug} as JSON bytes, or None when there is no
    such published startup. Links in it are absolute, so copies are kept per site address."""
    key = (site_url(request), slug)
    stamp = readcache.row_stamp()
    if (found := PROFILES.lookup([key], stamp).get(key)) is not None:
        startup_id, parts = found
        usable = lambda value: value[1] != NOT_READ  # noqa: E731 - a list row's lacks the status
        return _filled(parts, FRESHNESS.values([startup_id], usable=usable)[startup_id])
    position = FRESHNESS.position()
    profile = readcache.fills_cache(startup_profile)(slug=slug)
    if profile is None:
        return None
    data = profile_data(profile, request)
    freshness = freshness_of(profile)
    startup_id = profile["id"]
    FRESHNESS.seed(startup_id, freshness, position)
    parts = _parts(CamelCaseJSONRenderer().render(_with_slots(data)))
    PROFILES.put(key, (startup_id, parts), startup_id, stamp)
    return _filled(parts, freshness)


def _with_slots(data: dict) -> dict:
    """`data` with placeholders where the freshness fields are (none where they are null)."""
    if data["revenue"]["last_synced_at"] is not None:
        data["revenue"]["last_synced_at"] = SYNCED
    if (verification := data["verification"]) is not None:
        verification.update(status=STATUS, last_synced_at=SYNCED, verified_at=SYNCED)
    return data


def _parts(body: bytes) -> tuple[bytes, ...]:
    """The body split around its placeholders: text, slot name, text, slot name, ... text."""
    return tuple(_SLOT.split(body))


def _filled(parts: tuple[bytes, ...], freshness: tuple) -> bytes:
    synced, status = shown(freshness)
    values = {b"synced": orjson.dumps(synced), b"status": orjson.dumps(status)}
    return b"".join(part if i % 2 == 0 else values[part] for i, part in enumerate(parts))
