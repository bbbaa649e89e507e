"""Probes for load balancers and orchestrators: plain Django views, no authentication, no quota.

`/healthz` says the process answers (liveness: restart it if not). `/readyz` says it can serve
(readiness: take it out of rotation if not): PostgreSQL and the cache both answer. Each check is
bounded by the connection timeouts in the settings, so a probe never hangs.
"""

import secrets

from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from openstartup.errors import error_body


def database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:  # any failure means "not ready"; the reason is in the database logs
        return False


def cache_ok() -> bool:
    """A round trip through the cache. With Redis down django-redis swallows the error
    (IGNORE_EXCEPTIONS) and the read comes back empty, which is what we detect."""
    key, token = "readyz:probe", secrets.token_hex(8)
    try:
        cache.set(key, token, timeout=10)
        return cache.get(key) == token
    except Exception:
        return False


@require_safe
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@require_safe
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    checks = {
        "database": "ok" if database_ok() else "down",
        "cache": "ok" if cache_ok() else "down",
    }
    down = [name for name, state in checks.items() if state != "ok"]
    if not down:
        return JsonResponse({"status": "ready", "checks": checks})
    body = error_body("not_ready", f"Not ready: {' and '.join(down)} unreachable.")
    return JsonResponse({**body, "status": "unavailable", "checks": checks}, status=503)
