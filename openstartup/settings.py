"""Settings for OpenStartup: the only settings module.

Works with no environment at all (SQLite, local-memory cache, DEBUG off); production is a few
environment variables away (DATABASE_URL, REDIS_URL, DJANGO_SECRET_KEY, ...). Every variable is
listed in .env.example and the README.
"""

import base64
import hashlib
import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from core.env import (
    database_from_url as env_database,
)
from core.env import (
    env_bool,
    env_int,
    env_list,
    env_str_map,
    refuse_unsafe_production,
)
from openstartup.logging_settings import logging_settings
from openstartup.openapi_settings import openapi_settings

BASE_DIR = Path(__file__).resolve().parent.parent

# "production" is explicit, never guessed from other variables: CI and `make test` run against
# PostgreSQL without a secret key, and must keep working with no environment at all.
ENVIRONMENT = os.environ.get("DJANGO_ENV", "development").strip().lower() or "development"
if ENVIRONMENT not in {"development", "production"}:
    raise ImproperlyConfigured(f"DJANGO_ENV must be development or production, not {ENVIRONMENT!r}")
PRODUCTION = ENVIRONMENT == "production"

DEBUG = env_bool("DJANGO_DEBUG", False)

# A clearly-marked development fallback; production sets DJANGO_SECRET_KEY.
DEV_SECRET_KEY = "django-insecure-development-only-do-not-use-in-production"  # noqa: S105
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "").strip() or DEV_SECRET_KEY
# DEVELOPMENT ONLY: a fixed, public Fernet key for providers' keys at rest, so the project runs
# with no environment (verification/crypto.py). Refused in production.
DEV_PROVIDER_KEY_ENCRYPTION_KEY = base64.urlsafe_b64encode(
    hashlib.sha256(b"openstartup development-only provider key encryption").digest()
).decode()
PROVIDER_KEY_ENCRYPTION_KEYS = env_list("PROVIDER_KEY_ENCRYPTION_KEYS", [])
# Public address of the service, used in absolute links (profileUrl, api_url, /llms.txt, the
# links in e-mails). Empty: links are built from the request's own host (development only).
SITE_URL = os.environ.get("SITE_URL", "").rstrip("/")


if PRODUCTION:
    refuse_unsafe_production(
        secret_key=SECRET_KEY,
        dev_secret_key=DEV_SECRET_KEY,
        debug=DEBUG,
        provider_keys=PROVIDER_KEY_ENCRYPTION_KEYS,
        dev_provider_key=DEV_PROVIDER_KEY_ENCRYPTION_KEY,
        site_url=SITE_URL,
    )

# HTTPS behind a TLS-terminating proxy (on by default in production): redirect plain HTTP,
# secure cookies and HSTS. X-Forwarded-Proto is believed only from TRUSTED_PROXIES
# (core/proxies.py; gunicorn's forwarded_allow_ips is the same list), never from any
# peer as Django's SECURE_PROXY_SSL_HEADER would.
SECURE = env_bool("DJANGO_SECURE", PRODUCTION)
if SECURE:
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", True)
    # Paths (regexes, no leading slash) answered over plain HTTP too, e.g. a load balancer's
    # health check that cannot speak HTTPS.
    SECURE_REDIRECT_EXEMPT = env_list("DJANGO_SECURE_REDIRECT_EXEMPT", [])
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
# Preload-list submission is the operator's decision (it cannot be undone quickly), so its
# absence is not a deployment warning unless asked for with DJANGO_HSTS_PRELOAD=1.
SILENCED_SYSTEM_CHECKS = ["security.W021"]

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

SERVICE_NAME = "OpenStartup"

# /api/ai answers are cached (shared, never per caller) under the data token, so a write shows at
# once; this long at most (what changes with time alone, e.g. an add-on ending); also max-age.
AI_CACHE_SECONDS = env_int("AI_CACHE_SECONDS", 300)
# Bytes of /api/ai and MCP answers each process keeps (aisurface/cache.py), at most.
AI_ANSWER_BYTES = env_int("AI_ANSWER_BYTES", 32 * 1024 * 1024)
# The list's exact total, which startups make up a page and their ranks are kept in the shared
# cache this long per filter set and page (rows are always read fresh); 0 turns it off.
LIST_CACHE_SECONDS = env_int("LIST_CACHE_SECONDS", 30)
# Public HTML pages (/, /startups/, profiles, their .md and badge.svg) are kept whole in the
# shared cache this long; 0 turns it off. They spend no API allowance, so the list page also
# stops at PUBLIC_LIST_MAX_PAGES pages of PUBLIC_LIST_PAGE_SIZE: deeper browsing is the API's.
PUBLIC_PAGE_CACHE_SECONDS = env_int("PUBLIC_PAGE_CACHE_SECONDS", 180)
PUBLIC_LIST_PAGE_SIZE = 25
PUBLIC_LIST_MAX_PAGES = env_int("PUBLIC_LIST_MAX_PAGES", 20)
# Records charged to an answer that never reached the client (a killed worker) are given back
# after this many seconds (quota/services.py); longer than any request may take.
QUOTA_HOLD_SECONDS = env_int("QUOTA_HOLD_SECONDS", 120)
# On PostgreSQL the Free charge and its delivery confirmation commit without waiting for the
# WAL flush (quota/services.py says what a database crash can cost); 1 makes them wait.
QUOTA_SYNCHRONOUS_COMMIT = env_bool("QUOTA_SYNCHRONOUS_COMMIT", False)
# Per-process copies of hot reads (keys and plans, profiles, list rows, AI answers), kept exact
# by generation tokens in the database (core/readcache.py); also the longest an unchanged
# copy is kept. 0 turns copies off (and shared entries then only age out).
READ_CACHE_SECONDS = env_int("READ_CACHE_SECONDS", 300)
# How long the change feed keeps its entries, tombstones included (startups/feed.py); the refresh
# worker prunes older ones. A consumer must read the feed at least this often.
CHANGE_RETENTION_DAYS = env_int("CHANGE_RETENTION_DAYS", 90)
# Each process keeps the data generation token in memory, current through PostgreSQL's
# LISTEN/NOTIFY, so a cached anonymous answer sends no query (core/tokenwatch.py).
# PostgreSQL only, never behind PGBOUNCER_TRANSACTION_MODE; 0 reads the token on every request.
READ_TOKEN_WATCH = env_bool("READ_TOKEN_WATCH", True)
# The rank index (startups/rankindex.py: list totals and ranks by binary search, kept per
# process under the data token) is rebuilt in the request that finds it stale while a build
# takes at most RANK_INDEX_INLINE_SECONDS; past that (about 100,000 startups), in a background
# thread at most once per RANK_INDEX_REBUILD_SECONDS, the SQL path answering meanwhile.
RANK_INDEX_INLINE_SECONDS = float(os.environ.get("RANK_INDEX_INLINE_SECONDS", "0.25"))
# A dataset larger than this builds its first rank index in the background too.
RANK_INDEX_INLINE_STARTUPS = env_int("RANK_INDEX_INLINE_STARTUPS", 200_000)
RANK_INDEX_REBUILD_SECONDS = env_int("RANK_INDEX_REBUILD_SECONDS", 10)
# With a shared cache (Redis), a built rank index and its search-term places are shared for this
# long: another worker, or a worker recycled by GUNICORN_MAX_REQUESTS, loads them instead of
# reading every startup again. 0 turns sharing off.
RANK_INDEX_SHARED_SECONDS = env_int("RANK_INDEX_SHARED_SECONDS", 600)
# Browser origins allowed to call /api/mcp (besides the site itself); others get 403.
MCP_ALLOWED_ORIGINS = [o.rstrip("/") for o in env_list("MCP_ALLOWED_ORIGINS", [])]
MCP_SERVER_NAME = "openstartup"
MCP_SERVER_VERSION = "1.0.0"

# Benchmark-only views under /bench/ (bench/views.py), mounted only when this is on: `make bench`
# sets it for its own server. Never in production.
BENCH_VIEWS = env_bool("BENCH_VIEWS", False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "startups",
    "apikeys",
    "quota",
    "restapi",  # the /api/v1 surface
    "aisurface",
    "mcpserver",
    "verification",
    "openstartup",  # the roof: its migrations' history only
    "core",  # the read-cache generation tokens (core/models.py)
    "founders",
    "billing",
    "transparency",
    "webhooks",
    "demo",
    "web",  # the HTML site: above every domain app, nothing but the roof imports it
]

MIDDLEWARE = [
    # First: every response carries X-Request-Id, and errors and logs name it.
    "core.requestid.RequestIdMiddleware",
    # Then the request's database deadline covers everything below (core/dbdeadline.py).
    "core.dbdeadline.DatabaseDeadlineMiddleware",
    # Before SecurityMiddleware: the scheme (https behind a trusted proxy) decides redirects.
    "core.proxies.TrustedProxySchemeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    # Session, authentication and messages: Django's, for the site's pages only (the API
    # authenticates by key and never reads them; core/middleware.py).
    "core.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "core.middleware.AuthenticationMiddleware",
    "core.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.csp.ContentSecurityPolicyMiddleware",
    "core.middleware.ApiHeadersMiddleware",
    "quota.headers.QuotaHeadersMiddleware",
    # Inside QuotaHeadersMiddleware, so its 429s carry the X-Service-* headers like any answer.
    "apikeys.ratelimit.FairUseMiddleware",
    # Last, so it is the first to see a view's exception: a database outage becomes a 503.
    "core.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "openstartup.urls"
WSGI_APPLICATION = "openstartup.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
        # IMMEDIATE takes the write lock at BEGIN, so concurrent quota updates queue instead of
        # failing with "database is locked" half-way through a transaction.
        "OPTIONS": {"transaction_mode": "IMMEDIATE", "timeout": 20},
        # A file, not shared-cache memory: threads and live servers in tests then lock like
        # production does (shared-cache memory databases fail at once instead of waiting).
        "TEST": {"NAME": os.environ.get("SQLITE_TEST_PATH", str(BASE_DIR / "test_db.sqlite3"))},
    }
}


# Database deadlines (docs/deployment.md): connecting gives up after DB_CONNECT_TIMEOUT seconds
# (long enough for a slow handshake, which takes several round trips); a web request's database
# work, and each statement on the server, after DB_REQUEST_DEADLINE_SECONDS
# (core/dbdeadline.py). Either way the answer is a 503 with Retry-After. 0 turns the
# request deadline off.
DB_CONNECT_TIMEOUT = env_int("DB_CONNECT_TIMEOUT", 5)
DB_REQUEST_DEADLINE_SECONDS = env_int("DB_REQUEST_DEADLINE_SECONDS", 5)
PGBOUNCER_TRANSACTION_MODE = env_bool("PGBOUNCER_TRANSACTION_MODE", False)


def database_from_url(url: str) -> dict:
    """One DATABASES entry from a URL, under this module's deadlines (core/env.py)."""
    return env_database(
        url, connect_timeout=DB_CONNECT_TIMEOUT, pgbouncer=PGBOUNCER_TRANSACTION_MODE
    )


if database_url := os.environ.get("DATABASE_URL"):
    DATABASES["default"] = database_from_url(database_url)
# Read replica for the dataset reads (list and detail); see core/routers.py and
# docs/deployment.md. Counters, keys and accounts always use the primary. In tests the replica
# alias mirrors the primary.
if replica_url := os.environ.get("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = database_from_url(replica_url)
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
DATABASE_ROUTERS = ["core.routers.ReplicaRouter"]
# The replica serves a request only when it has replayed every write the primary had; it is
# skipped for REPLICA_BREAKER_SECONDS when down, slower than REPLICA_CHECK_SECONDS to answer
# its check, or lagging more than REPLICA_MAX_LAG_SECONDS (core/replica.py).
REPLICA_MAX_LAG_SECONDS = float(os.environ.get("REPLICA_MAX_LAG_SECONDS") or 1)
REPLICA_CHECK_SECONDS = float(os.environ.get("REPLICA_CHECK_SECONDS") or 2)
REPLICA_BREAKER_SECONDS = env_int("REPLICA_BREAKER_SECONDS", 5)


REDIS_TIMEOUT_MS = env_int("REDIS_TIMEOUT_MS", 250)
REDIS_BREAKER_SECONDS = env_int("REDIS_BREAKER_SECONDS", 5)


def redis_cache(url: str) -> dict:
    """The CACHES entry for a redis:// URL (django-redis)."""
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": url,
        "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "openstartup"),
        "OPTIONS": {
            # A cache outage must not take the API down: misses are served from the database,
            # a dead or silent Redis costs at most REDIS_TIMEOUT_MS per call, and after a
            # failure the breaker skips Redis for REDIS_BREAKER_SECONDS (cachebreaker.py).
            "CLIENT_CLASS": "core.cachebreaker.BreakerClient",
            "IGNORE_EXCEPTIONS": True,
            "SOCKET_CONNECT_TIMEOUT": REDIS_TIMEOUT_MS / 1000,
            "SOCKET_TIMEOUT": REDIS_TIMEOUT_MS / 1000,
        },
    }


CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if redis_url := os.environ.get("REDIS_URL"):
    CACHES["default"] = redis_cache(redis_url)
DJANGO_REDIS_IGNORE_EXCEPTIONS = True
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True
# Its own logger, so the LOGGING filter below keeps an outage to one line a minute per process.
DJANGO_REDIS_LOGGER = "openstartup.cache"

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
# Password sign-in (dashboard and admin) locks out after repeated failures (accounts/throttle.py):
# SIGNIN_MAX_FAILURES wrong passwords for one account name, or SIGNIN_MAX_FAILURES_PER_ADDRESS
# from one client address, pause sign-in for SIGNIN_LOCKOUT_SECONDS.
AUTHENTICATION_BACKENDS = ["accounts.backends.LockoutModelBackend"]
SIGNIN_MAX_FAILURES = env_int("SIGNIN_MAX_FAILURES", 5)
SIGNIN_MAX_FAILURES_PER_ADDRESS = env_int("SIGNIN_MAX_FAILURES_PER_ADDRESS", 20)
SIGNIN_LOCKOUT_SECONDS = env_int("SIGNIN_LOCKOUT_SECONDS", 900)
# Sign-ups per client address (IPv6: per /64) per hour; 0 turns the limit off.
SIGNUPS_PER_ADDRESS_PER_HOUR = env_int("SIGNUPS_PER_ADDRESS_PER_HOUR", 5)
# How long an e-mail confirmation link works.
EMAIL_CONFIRMATION_MAX_AGE_SECONDS = env_int("EMAIL_CONFIRMATION_MAX_AGE_SECONDS", 3 * 86400)
# Fair use: requests per minute per caller (account with a key, else client address) on the
# API surfaces and public pages, as a token bucket with a burst of the same size
# (apikeys/ratelimit.py). 0 turns it off (load tests, the test suite).
FAIR_USE_REQUESTS_PER_MINUTE = env_int("FAIR_USE_REQUESTS_PER_MINUTE", 120)

# E-mail (confirmation links, sign-up notices). Without EMAIL_HOST, messages are printed to
# stdout (console backend); with it, sent by SMTP.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
if PRODUCTION and not EMAIL_HOST and not os.environ.get("EMAIL_BACKEND"):
    # Printed to the logs, reset and confirmation links would be anyone's who reads them.
    raise ImproperlyConfigured(
        "DJANGO_ENV=production needs EMAIL_HOST (SMTP) or an explicit EMAIL_BACKEND: the "
        "console backend would print password-reset links to the logs."
    )
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", not EMAIL_USE_SSL)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "OpenStartup <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
LOGIN_REDIRECT_URL = "/dashboard/"
LOGOUT_REDIRECT_URL = "/"

# Proxies (addresses or CIDR networks) whose X-Forwarded-For is believed when they are the
# socket peer: the client is then the right-most untrusted address. Empty: the socket address.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Under DEBUG-less test runs the static root may not exist yet; serve from finders then.
WHITENOISE_USE_FINDERS = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# CORS: a public read API. Every response carries Access-Control-Allow-Origin: *.
CORS_ALLOW_ALL_ORIGINS = True
CORS_URLS_REGEX = r"^/(api/|llms\.txt$|\.well-known/jwks\.json$).*"
CORS_ALLOW_HEADERS = [
    "authorization",
    "content-type",
    "x-api-key",
    "accept",
    "if-none-match",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "x-request-id",
]
CORS_EXPOSE_HEADERS = [
    "X-Service-Plan",
    "X-Service-Max-Limit",
    "X-Service-Quota-Limit",
    "X-Service-Quota-Remaining",
    "X-Service-Quota-Reset",
    "ETag",
    "X-Request-Id",
    "RateLimit-Policy",
    "RateLimit",
    "Retry-After",
    "Link",
]

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["core.renderers.CamelCaseJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.renderers.JSONOnlyNegotiation",
    "DEFAULT_AUTHENTICATION_CLASSES": ["apikeys.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "core.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

# Bodies larger than this (bytes) are refused: /api/mcp answers 413 with a JSON-RPC error. A
# JSON-RPC tool call is a few hundred bytes; 1 MiB leaves room without inviting abuse.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 1_048_576)

# OpenAPI 3.1 for /api/v1 and /api/ai (openstartup/openapi_settings.py); served at
# /api/v1/openapi.json, rendered at /docs.
SPECTACULAR_SETTINGS = openapi_settings()

# One line per record, naming its request id; Redis failures once a minute per process
# (openstartup/logging_settings.py).
LOGGING = logging_settings(level=os.environ.get("LOG_LEVEL", "INFO"))

# Attestations (GET /api/v1/startups/{slug}/attestation) are signed with the first of these
# base64url Ed25519 private keys; all are published at /.well-known/jwks.json (rotation: prepend
# a new key, drop the old one once its attestations no longer matter). Unset: a public
# development key, refused in production.
ATTESTATION_SIGNING_KEYS = env_list("ATTESTATION_SIGNING_KEYS", [])
if PRODUCTION and not ATTESTATION_SIGNING_KEYS:
    raise ImproperlyConfigured(
        "DJANGO_ENV=production needs ATTESTATION_SIGNING_KEYS (the development signing key is "
        "public)."
    )
# How long an attestation is valid: its `exp` claim is `iat` + this (default 7 days). Verifiers
# must refuse it afterwards, and check `iss` (SITE_URL) and `sub` (the slug).
ATTESTATION_VALIDITY_SECONDS = env_int("ATTESTATION_VALIDITY_SECONDS", 7 * 86400)

# A verified figure is `stale` when its last successful sync is older than this (refresh: hourly).
VERIFICATION_STALE_HOURS = env_int("VERIFICATION_STALE_HOURS", 6)

# Verified revenue (verification app). Provider keys are encrypted at rest with Fernet under
# PROVIDER_KEY_ENCRYPTION_KEYS (above): the first key encrypts, every key decrypts (rotation:
# prepend a new key, run `rotate_provider_keys`, then drop the old one). Unset: the development
# key (`check --deploy` warns; production refuses to start).
# Every provider call is bounded in time and retried with backoff on 429/5xx and network errors.
PROVIDER_HTTP_TIMEOUT_SECONDS = float(env_int("PROVIDER_HTTP_TIMEOUT_SECONDS", 15))
PROVIDER_HTTP_RETRIES = env_int("PROVIDER_HTTP_RETRIES", 4)
PROVIDER_HTTP_BACKOFF_SECONDS = 0.5
PROVIDER_HTTP_MAX_WAIT_SECONDS = float(env_int("PROVIDER_HTTP_MAX_WAIT_SECONDS", 30))
# Total deadlines (not per read): one provider call, retries included, and one whole sync. A
# provider that drips bytes or pages forever is cut at these, so it never delays the others longer.
PROVIDER_HTTP_CALL_DEADLINE_SECONDS = float(env_int("PROVIDER_HTTP_CALL_DEADLINE_SECONDS", 60))
PROVIDER_SYNC_DEADLINE_SECONDS = float(env_int("PROVIDER_SYNC_DEADLINE_SECONDS", 300))
# One sync per connection at a time, across processes: a lease in the database that expires this
# long after it was taken (longer than the sync deadline, so a live sync never loses it).
PROVIDER_SYNC_LEASE_SECONDS = float(
    env_int("PROVIDER_SYNC_LEASE_SECONDS", int(PROVIDER_SYNC_DEADLINE_SECONDS) + 60)
)
# Caps on what one provider may send: bytes per response and pages per list.
PROVIDER_HTTP_MAX_BODY_BYTES = env_int("PROVIDER_HTTP_MAX_BODY_BYTES", 20 * 1024 * 1024)
PROVIDER_MAX_PAGES = env_int("PROVIDER_MAX_PAGES", 2000)
PROVIDER_SYNC_MAX_BYTES = env_int("PROVIDER_SYNC_MAX_BYTES", 200 * 1024 * 1024)
# Stripe API version sent on every Stripe call, so an account's default version never changes
# the figures (tests and fixtures use this version's shapes).
STRIPE_API_VERSION = "2025-09-30.clover"
# Provider name -> another base URL for its API (staging, the tests' local fakes), as a JSON
# object; empty: each provider's own API. Used when a founder connects from the dashboard.
PROVIDER_API_BASES = env_str_map("PROVIDER_API_BASES")
# The first sync after a founder connects runs while they wait, at most this long; a slower one
# finishes in the background and the startup's page shows it.
FIRST_SYNC_WAIT_SECONDS = float(env_int("FIRST_SYNC_WAIT_SECONDS", 10))
# Founders may press "Sync now" once per this many seconds per startup.
SYNC_NOW_INTERVAL_SECONDS = env_int("SYNC_NOW_INTERVAL_SECONDS", 300)
# How many startups one founder account may own (add or claim); operators raise it per account
# in the admin (founder_max_startups_override).
FOUNDER_MAX_STARTUPS = env_int("FOUNDER_MAX_STARTUPS", 5)
# A self-reported MRR above this (whole US dollars) waits for an operator's approval in the
# admin before it is published (founders/reviews.py).
SELF_REPORTED_MRR_REVIEW_ABOVE = env_int("SELF_REPORTED_MRR_REVIEW_ABOVE", 100_000)

# Pro billing through Stripe Checkout and the Customer Portal (billing app). Without
# STRIPE_SECRET_KEY and STRIPE_PRO_PRICE_ID the dashboard shows how to reach the operator.
STRIPE_SECRET_KEY = os.environ.get("STRIPE_SECRET_KEY", "").strip()
STRIPE_PRO_PRICE_ID = os.environ.get("STRIPE_PRO_PRICE_ID", "").strip()
STRIPE_WEBHOOK_SECRET = os.environ.get("STRIPE_WEBHOOK_SECRET", "").strip()
# Another host for Stripe's API (tests' local fake); empty: Stripe's own.
STRIPE_API_BASE = os.environ.get("STRIPE_API_BASE", "").strip()
# Shown to founders when Stripe is not configured: how to reach the operator for Pro.
OPERATOR_CONTACT = os.environ.get("OPERATOR_CONTACT", "").strip()
# US dollars per unit. None: the documented static table in verification/money.py. A dict
# {"USD": "1", "EUR": "1.08", ...} replaces it; REVENUE_FX_RATES_DATE says when those rates held.
REVENUE_FX_RATES = None
REVENUE_FX_RATES_DATE = None

# Webhooks (webhooks/, README "Webhooks"). Plain http:// endpoints only while DEBUG or
# WEBHOOKS_ALLOW_HTTP; loopback and private addresses only with WEBHOOKS_ALLOW_PRIVATE_ADDRESSES
# (tests and local development; never in production).
WEBHOOKS_ALLOW_HTTP = env_bool("WEBHOOKS_ALLOW_HTTP", DEBUG and not PRODUCTION)
WEBHOOKS_ALLOW_PRIVATE_ADDRESSES = env_bool("WEBHOOKS_ALLOW_PRIVATE_ADDRESSES", False)
