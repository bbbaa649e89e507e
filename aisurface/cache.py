"""/api/ai and MCP answers, kept; HTTP caching of /api/ai answers (ETag, 304, Cache-Control).

The answers are the rendered JSON bytes every caller gets (never anything per caller), kept
per process and shared between servers under the data generation token (core/readcache.py),
so a write shows on /api/ai at the same moment as on /api/v1 and MCP. Entries also end after
AI_CACHE_SECONDS, for what changes with time alone (an add-on expiring). 304s are Django's
conditional-GET rules (`get_conditional_response`: weak comparison, `*`).
"""

import hashlib
import time
from collections.abc import Callable
from typing import Any

import orjson
from django.conf import settings
from django.http import HttpResponse
from django.utils.cache import get_conditional_response
from rest_framework.request import Request

from core import readcache
from core.formats import site_url
from core.renderers import JSONRenderer

AI_CACHE_VERSION = "ai-v3"
_AI_ANSWERS = readcache.LocalCache("data", max_entries=1_000)


def ai_answer(*, identity: dict, build: Callable[[], Any]) -> dict:
    """{"body": JSON bytes, "etag": strong validator, "built": epoch seconds} for the answer
    named by `identity` (site, path and filters; or site, MCP tool and arguments), built by
    `build` on a miss (read `readcache.fill_db()`); what `build` raises is never kept."""
    seconds = settings.AI_CACHE_SECONDS
    raw = orjson.dumps(identity, option=orjson.OPT_SORT_KEYS, default=str)
    found, token = _AI_ANSWERS.lookup([raw])
    entry = found.get(raw)
    now = time.time()
    if entry is not None and entry["built"] + seconds > now:
        return entry
    key = readcache.shared_key(AI_CACHE_VERSION, token, hashlib.sha256(raw).hexdigest())
    entry = readcache.shared_get(key)
    if entry is None:
        body = JSONRenderer().render(build())
        etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
        entry = readcache.shared_add(key, {"body": body, "etag": etag, "built": now}, seconds)
    if token is not None:
        _AI_ANSWERS.put(raw, entry, token)
    return entry


def cached_response(request: Request, *, parts: dict, build: Callable[[], dict]) -> HttpResponse:
    """The JSON built by `build` (kept as rendered bytes), with its ETag and 304 handling."""
    seconds = settings.AI_CACHE_SECONDS
    identity = {"site": site_url(request), "path": request.path, **parts}
    entry = ai_answer(identity=identity, build=build)
    headers = {
        "ETag": entry["etag"],
        "Cache-Control": f"public, max-age={seconds}",
        "Age": str(max(0, int(time.time() - entry["built"]))),
    }
    response = HttpResponse(entry["body"], content_type=JSONRenderer.media_type, headers=headers)
    return get_conditional_response(request, etag=entry["etag"], response=response) or response
