"""The REST detail document of a startup, rendered once and kept per process while current.

A profile changes only when its data does, so the rendered camelCase JSON is kept in a
per-process copy that any write to the startups' data, on any server, makes stale
(openstartup/readcache.py). The view wraps it in the envelope as an `orjson.Fragment`.
"""

from django.http import HttpRequest

from openstartup import readcache
from openstartup.formats import site_url
from startups.freshness import freshness_epoch
from startups.renderers import CamelCaseJSONRenderer
from startups.selectors import startup_get
from startups.serializers import StartupDetailSerializer

_PROFILES = readcache.LocalCache("data", max_entries=5_000)


def startup_profile_json(*, slug: str, request: HttpRequest) -> bytes | None:
    """The `data` object of /api/v1/startups/{slug} as JSON bytes, or None when there is no
    such published startup. Links in it are absolute, so copies are kept per site address."""

    def build() -> bytes | None:
        startup = startup_get(slug=slug)
        if startup is None:
            return None
        data = StartupDetailSerializer(startup, context={"request": request}).data
        return CamelCaseJSONRenderer().render(data)

    # Keyed by the minute too: the verification `status` turns `stale` with time alone.
    return _PROFILES.get_or_build((site_url(request), slug, freshness_epoch()), build)
