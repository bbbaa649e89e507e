"""HTTP caching of /api/ai answers: ETag, 304 and Cache-Control around the read cache.

The answers themselves are kept by openstartup/readcache.py (`ai_answer`) under the data
generation token, so a change shows here at the same moment as on every other surface. 304s
are Django's conditional-GET rules (`get_conditional_response`: weak comparison, `*`).
"""

import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpResponse
from django.utils.cache import get_conditional_response
from rest_framework.request import Request

from core.formats import site_url
from core.renderers import JSONRenderer
from openstartup import readcache


def cached_response(request: Request, *, parts: dict, build: Callable[[], dict]) -> HttpResponse:
    """The JSON built by `build` (kept as rendered bytes), with its ETag and 304 handling."""
    seconds = settings.AI_CACHE_SECONDS
    identity = {"site": site_url(request), "path": request.path, **parts}
    entry = readcache.ai_answer(identity=identity, build=build)
    headers = {
        "ETag": entry["etag"],
        "Cache-Control": f"public, max-age={seconds}",
        "Age": str(max(0, int(time.time() - entry["built"]))),
    }
    response = HttpResponse(entry["body"], content_type=JSONRenderer.media_type, headers=headers)
    return get_conditional_response(request, etag=entry["etag"], response=response) or response
