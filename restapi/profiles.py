"""The REST detail document of a startup, rendered once and kept (core/readcache.py).

Camel-case JSON bytes of `data`; a copy lives until its startup changes (or a write the
change sequence does not itemise). The public profile page reads the same copies.
"""

from django.http import HttpRequest

from core import readcache
from core.formats import site_url
from core.renderers import CamelCaseJSONRenderer
from startups.freshness import freshness_epoch
from startups.selectors import startup_get
from startups.serializers import StartupDetailSerializer

PROFILES = readcache.row_copies(5_000)


def startup_profile_json(*, slug: str, request: HttpRequest) -> bytes | None:
    """The `data` object of /api/v1/startups/{slug} as JSON bytes, or None when there is no
    such published startup. Links in it are absolute, so copies are kept per site address."""

    # Keyed by the minute too: the verification `status` turns `stale` with time alone.
    key = (site_url(request), slug, freshness_epoch())
    stamp = readcache.row_stamp()
    if (found := PROFILES.lookup([key], stamp).get(key)) is not None:
        return found
    startup = readcache.fills_cache(startup_get)(slug=slug)
    if startup is None:
        return None
    data = StartupDetailSerializer(startup, context={"request": request}).data
    body = CamelCaseJSONRenderer().render(data)
    PROFILES.put(key, body, startup.pk, stamp)
    return body
