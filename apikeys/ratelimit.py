"""Fair use: a per-minute request limit per caller, and no API keys in URLs.

Every request except the health probes and static files takes a token from its caller's bucket:
the key's account when a valid key is sent, else the client address (per /64 for IPv6). A
bucket holds FAIR_USE_REQUESTS_PER_MINUTE tokens (the burst) and refills at that many per
minute. With Redis the bucket lives there (one atomic script, the server's clock, shared by every
instance); without it, in this process's memory. It covers the site's HTML pages too (per
client address): they are public, but not a bulk-read channel. An empty bucket answers 429
`rate_limited` (a styled page on the site) with `Retry-After` and the IETF draft's
`RateLimit`/`RateLimit-Policy` headers (policy "fair-use"); every limited answer carries those
two headers. The monthly allowance is a separate matter (quota/).

The limiter is a guard: when Redis cannot be reached, requests pass (logged once a minute).
"""

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apikeys.authentication import key_account_of
from core.accesslog import has_secret_parameter
from core.clientip import client_address, client_key
from core.errors import (
    ApiError,
    ApiKeyInQuery,
    RateLimited,
    error_body,
    is_database_unavailable,
    mcp_api_error,
)
from core.surfaces import is_api, is_machine_read, is_mcp_path
from quota.headers import add_policy_items

logger = logging.getLogger("openstartup.cache")  # logged at most once a minute (settings)

POLICY = "fair-use"
WINDOW_SECONDS = 60
# Query parameters that look like an API key (core/accesslog.py SECRET_PARAMETERS) are
# refused, so the key is not served as anonymous and the client learns to use the header.
EXEMPT_PATHS = frozenset({"/healthz", "/readyz"})


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int  # whole tokens left after this request
    reset: int  # seconds until the bucket is full again
    retry_after: int  # seconds until one token is back (0 when allowed)


def _decision(*, allowed: bool, tokens: float, capacity: int) -> Decision:
    rate = capacity / WINDOW_SECONDS
    return Decision(
        allowed=allowed,
        limit=capacity,
        remaining=max(0, math.floor(tokens)),
        reset=math.ceil(max(0.0, capacity - tokens) / rate),
        retry_after=0 if allowed else max(1, math.ceil((1 - tokens) / rate)),
    )


# --- the bucket, in Redis ---------------------------------------------------------------------

# KEYS[1] bucket; ARGV capacity, tokens per second. Returns {allowed, tokens as text}.
_TAKE = """
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate) + 1)
return {allowed, tostring(tokens)}
"""
_scripts: dict[int, Callable] = {}


def _take_redis(identity: str, capacity: int) -> Decision | None:
    try:
        client = cache.client.get_client(write=True)
        script = _scripts.get(id(client))
        if script is None:
            script = _scripts[id(client)] = client.register_script(_TAKE)
        allowed, tokens = script(
            keys=[cache.make_key(f"fair-use:{identity}")],
            args=[capacity, capacity / WINDOW_SECONDS],
        )
    except Exception:  # noqa: BLE001 - a cache outage must not take the service down
        logger.warning("Fair-use limiter: Redis unreachable, requests pass unlimited")
        return None
    return _decision(allowed=bool(int(allowed)), tokens=float(tokens), capacity=capacity)


# --- the bucket, in this process (no Redis) ----------------------------------------------------

_LOCAL_MAX_BUCKETS = 50_000
_local: OrderedDict[str, tuple[float, float]] = OrderedDict()
_local_lock = threading.Lock()


def _take_local(identity: str, capacity: int, now: float) -> Decision:
    rate = capacity / WINDOW_SECONDS
    with _local_lock:
        tokens, at = _local.pop(identity, (float(capacity), now))
        tokens = min(capacity, tokens + max(0.0, now - at) * rate)
        allowed = tokens >= 1
        if allowed:
            tokens -= 1
        _local[identity] = (tokens, now)
        while len(_local) > _LOCAL_MAX_BUCKETS:
            _local.popitem(last=False)  # the least recently seen caller
    return _decision(allowed=allowed, tokens=tokens, capacity=capacity)


def fair_use_reset() -> None:
    """Forget every local bucket (tests; Redis buckets go with the cache)."""
    with _local_lock:
        _local.clear()


def fair_use_take(*, identity: str, capacity: int) -> Decision | None:
    """Take one request from `identity`'s bucket of `capacity` requests a minute; None when
    the shared bucket cannot be reached."""
    if getattr(cache, "client", None) is not None and hasattr(cache.client, "get_client"):
        return _take_redis(identity, capacity)
    return _take_local(identity, capacity, time.monotonic())


# --- the middleware ---------------------------------------------------------------------------


def caller_identity(request: HttpRequest) -> str:
    """Whose bucket a request uses: its key's account, else its client address. A refused key
    (wrong, revoked, unconfirmed) counts against the address; the view then refuses it."""
    try:
        account = key_account_of(request)
    except ApiError:
        account = None
    except Exception as error:
        if not is_database_unavailable(error):
            raise
        account = None  # the view meets the outage again and answers its 503
    if account is not None:
        return f"account:{account.pk}"
    address = client_address(
        remote_addr=request.META.get("REMOTE_ADDR", ""),
        forwarded_for=request.META.get("HTTP_X_FORWARDED_FOR"),
    )
    return f"address:{client_key(address)}"


def rate_limit_headers(decision: Decision) -> dict[str, str]:
    """The IETF draft's headers (draft-ietf-httpapi-ratelimit-headers) for the fair-use policy."""
    return {
        "RateLimit-Policy": f'"{POLICY}";q={decision.limit};w={WINDOW_SECONDS}',
        "RateLimit": f'"{POLICY}";r={decision.remaining};t={decision.reset}',
    }


def _refusal(request: HttpRequest, error: ApiError) -> HttpResponse:
    """An error answer in the shape of the surface asked: JSON-RPC on /api/mcp, the API's error
    object elsewhere under /api/ and on /llms.txt, the site's styled page (templates/429.html)
    on the site."""
    path = request.path
    if is_mcp_path(path):
        return mcp_api_error(request, error.code, error.message, error.status_code, error.headers)
    if is_machine_read(path):
        response = HttpResponse(
            orjson.dumps(error_body(error.code, error.message)),
            status=error.status_code,
            content_type="application/json",
        )
    else:
        context = {"message": error.message}
        response = render(request, "429.html", context, status=error.status_code)
    for name, value in error.headers.items():
        response[name] = value
    return response


def _key_in_query(request: HttpRequest) -> bool:
    # The raw query string, not request.GET: parsing it here would refuse more parameters
    # than Django parses on routes that never read their query string.
    return is_api(request.path) and has_secret_parameter(request.META.get("QUERY_STRING", ""))


def _exempt(path: str) -> bool:
    return path in EXEMPT_PATHS or path.startswith(f"/{settings.STATIC_URL.strip('/')}/")


class FairUseMiddleware:
    """Refuses API keys in the query string, then applies the fair-use limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _exempt(request.path):
            return self.get_response(request)
        if _key_in_query(request):
            return _refusal(request, ApiKeyInQuery())
        capacity = settings.FAIR_USE_REQUESTS_PER_MINUTE
        if capacity <= 0:
            return self.get_response(request)
        decision = fair_use_take(identity=caller_identity(request), capacity=capacity)
        if decision is None:
            return self.get_response(request)
        headers = rate_limit_headers(decision)
        if not decision.allowed:
            retry = str(decision.retry_after)
            response = _refusal(
                request,
                RateLimited(
                    f"More than {decision.limit} requests in a minute: slow down, and retry "
                    f"in {retry} seconds.",
                    headers={"Retry-After": retry},
                ),
            )
        else:
            response = self.get_response(request)
        add_policy_items(response, headers)
        return response
