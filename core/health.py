"""Probes for load balancers and orchestrators: plain Django views, no authentication, no quota.

`/healthz` says the process answers (liveness: restart it if not). It touches neither the
database nor Redis, so it answers while either is down or slow; under gunicorn it is served
by a thread of its own (core/gunicorn_worker.py), so it answers too while every request thread
waits on the database.

`/readyz` says it can serve (readiness: take it out of rotation if not): PostgreSQL and the
cache both answer. Each database alias is checked under its own deadline,
READYZ_DEADLINE_SECONDS (core/dbdeadline.bounded; connecting is bounded by
DB_CONNECT_TIMEOUT too) and the cache check is one PING with the cache's socket timeout. The
read replica (when configured) is reported under `checks.replica` but never makes the instance
unready: requests then read the primary (core/replica.py), and a replica shared by every
instance must not take the whole fleet out of rotation; a failed check opens the replica's
breaker, a success closes it. Probes share nothing, so any number of concurrent probes never
report a healthy dependency as down. The cache check always asks Redis, even while the circuit
breaker is open, and a success closes the breaker. Under gunicorn `/readyz` also has a thread
of its own: it never queues behind the requests it judges, nor delays `/healthz`.
"""

import secrets

from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from core import dbdeadline, replica
from core.cachebreaker import breaker
from core.errors import error_body


def database_ok(alias: str = DEFAULT_DB_ALIAS) -> bool:
    """One `SELECT 1` on `alias` within its own READYZ_DEADLINE_SECONDS."""
    try:
        with dbdeadline.bounded(dbdeadline.READYZ_DEADLINE_SECONDS):
            with connections[alias].cursor() as cursor:
                cursor.execute("SELECT 1")
                return cursor.fetchone() == (1,)
    except Exception:  # any failure means "not ready"; the reason is in the database logs
        replica._discard(alias)
        return False


def replica_ok() -> bool:
    ok = database_ok(replica.REPLICA)
    if ok:
        replica.breaker.reset()
    else:
        replica.breaker.trip("the readiness check failed")
    return ok


def cache_ok() -> bool:
    """One round trip to the cache, bypassing the breaker (a probe is how it closes)."""
    try:
        if hasattr(cache, "client"):  # django-redis
            from django_redis import get_redis_connection

            ok = bool(get_redis_connection("default").ping())
        else:  # Django's local-memory cache (development, tests): a key of this probe's own
            key, token = f"readyz:{secrets.token_hex(8)}", secrets.token_hex(8)
            cache.set(key, token, timeout=10)
            ok = cache.get(key) == token
            cache.delete(key)
    except Exception:
        return False
    if ok:
        breaker.reset()
    return ok


@require_safe
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@require_safe
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    checks = {"database": "ok" if database_ok() else "down"}
    if replica.configured():
        checks["replica"] = "ok" if replica_ok() else "down"
    checks["cache"] = "ok" if cache_ok() else "down"
    down = [name for name, state in checks.items() if state != "ok" and name != "replica"]
    if not down:
        return JsonResponse({"status": "ready", "checks": checks})
    body = error_body("not_ready", f"Not ready: {' and '.join(down)} unreachable.")
    return JsonResponse({**body, "status": "unavailable", "checks": checks}, status=503)
