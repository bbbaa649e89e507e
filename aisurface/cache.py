"""Shared caching of /api/ai answers: Django's cache, an ETag, 304 and Cache-Control.

The cache holds only what every caller sees (the curated AI set rendered for one site URL), never
anything per caller. Entries live `AI_CACHE_SECONDS`; the `Age` header tells HTTP caches how old
an entry already is, so a change shows everywhere within that many seconds at most. With Redis
down (IGNORE_EXCEPTIONS) every request is simply a miss served from the database.

Each process also mirrors the entries it served for up to `AI_LOCAL_SECONDS`, never past the
shared entry's own expiry, so a hit costs no round trip to Redis. Servers agree on an entry:
the first to build one stores it with `add`, and a server that loses that race serves the
winner's copy.
"""

import hashlib
import time
from collections.abc import Callable

import orjson
from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.utils.http import parse_etags
from rest_framework.request import Request
from rest_framework.response import Response

from openstartup.formats import site_url
from startups.renderers import JSONRenderer

CACHE_VERSION = "ai-v2"
# How long a process answers from its own mirror of a shared entry before reading it again.
AI_LOCAL_SECONDS = 10
_MAX_LOCAL_ENTRIES = 1_000
_local: dict[str, tuple[float, dict]] = {}


def clear_local() -> None:
    """Forget this process's mirrors (with `cache.clear()`, what expiry does)."""
    _local.clear()


def _shared_entry(key: str, seconds: int, build: Callable[[], dict]) -> dict:
    entry = cache.get(key)
    if entry is None:
        body = JSONRenderer().render(build())
        digest = hashlib.sha256(body).hexdigest()[:32]
        entry = {"body": body, "etag": f'"{digest}"', "built": time.time()}
        if not cache.add(key, entry, timeout=seconds):
            # Another server stored one first: serve that, so every server gives one answer.
            entry = cache.get(key) or entry
    return entry


def _entry(key: str, build: Callable[[], dict]) -> dict:
    seconds = settings.AI_CACHE_SECONDS
    now = time.time()
    mirrored = _local.get(key)
    if mirrored is not None and mirrored[0] > now:
        return mirrored[1]
    entry = _shared_entry(key, seconds, build)
    if len(_local) >= _MAX_LOCAL_ENTRIES:
        _local.clear()
    _local[key] = (min(now + AI_LOCAL_SECONDS, entry["built"] + seconds), entry)
    return entry


def _cache_key(request: Request, parts: dict) -> str:
    raw = orjson.dumps(
        {"site": site_url(request), "path": request.path, **parts}, option=orjson.OPT_SORT_KEYS
    )
    return f"{CACHE_VERSION}:{hashlib.sha256(raw).hexdigest()}"


def cached_response(request: Request, *, parts: dict, build: Callable[[], dict]) -> HttpResponse:
    """The JSON built by `build`, from the cache when fresh, with ETag and 304 handling.

    The cache holds the rendered JSON bytes (what every caller gets), so a hit neither unpickles
    a tree of dicts nor renders it again.
    """
    seconds = settings.AI_CACHE_SECONDS
    entry = _entry(_cache_key(request, parts), build)
    age = max(0, int(time.time() - entry["built"]))
    headers = {
        "ETag": entry["etag"],
        "Cache-Control": f"public, max-age={seconds}",
        "Age": str(age),
    }
    # Weak and strong validators compare alike (RFC 9110 weak comparison for If-None-Match).
    wanted = {
        tag.removeprefix("W/") for tag in parse_etags(request.META.get("HTTP_IF_NONE_MATCH", ""))
    }
    if "*" in wanted or entry["etag"] in wanted:
        return Response(status=304, headers=headers)
    return HttpResponse(entry["body"], content_type=JSONRenderer.media_type, headers=headers)
