"""Reading settings from the environment: helpers that refuse ambiguous values, and the
refusals of an unsafe production configuration (used by openstartup/settings.py only)."""

import base64
import binascii
import json
import os
import zlib

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0/true/false/yes/no/on/off, not {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}") from None


def env_str_map(name: str) -> dict[str, str]:
    """A JSON object of strings to strings, e.g. {"stripe": "https://stripe.internal"}."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a JSON object, not {raw!r}") from None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ImproperlyConfigured(f"{name} must be a JSON object of strings to strings")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def secret_key_is_strong(key: str) -> bool:
    """At least 50 characters that are not a repetition: enough distinct characters, and a text
    that does not compress (`'a' * 62 + 'bcde'` or a short word repeated both fail)."""
    return (
        len(key) >= 50
        and len(set(key)) >= 10
        and len(zlib.compress(key.encode(), 9)) >= 0.85 * len(key.encode())
    )


def is_fernet_key(key: str) -> bool:
    try:
        return len(base64.urlsafe_b64decode(key.encode())) == 32
    except (ValueError, binascii.Error):
        return False


def refuse_unsafe_production(
    *,
    secret_key: str,
    dev_secret_key: str,
    debug: bool,
    provider_keys: list[str],
    dev_provider_key: str,
    site_url: str,
) -> None:
    """Refuse to start rather than run with a setting that is public in this repository or
    guessed from the request (DJANGO_ENV=production)."""
    if secret_key == dev_secret_key or secret_key.startswith("django-insecure"):
        raise ImproperlyConfigured("DJANGO_ENV=production needs a real DJANGO_SECRET_KEY.")
    if not secret_key_is_strong(secret_key):
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is too weak: use at least 50 random characters, e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe(64))'."
        )
    if debug:
        raise ImproperlyConfigured("DJANGO_DEBUG must be off when DJANGO_ENV=production.")
    if not provider_keys:
        raise ImproperlyConfigured(
            "DJANGO_ENV=production needs PROVIDER_KEY_ENCRYPTION_KEYS (Fernet keys, "
            "comma-separated): without it provider keys would be encrypted with the public "
            "development key."
        )
    if dev_provider_key in provider_keys:
        raise ImproperlyConfigured(
            "PROVIDER_KEY_ENCRYPTION_KEYS holds the public development key; generate a new one "
            "with python -c 'from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())'."
        )
    if not all(is_fernet_key(key) for key in provider_keys):
        raise ImproperlyConfigured(
            "PROVIDER_KEY_ENCRYPTION_KEYS must be Fernet keys (32 url-safe base64 bytes)."
        )
    if not os.environ.get("DJANGO_ALLOWED_HOSTS", "").strip():
        raise ImproperlyConfigured(
            "DJANGO_ENV=production needs DJANGO_ALLOWED_HOSTS (the host names served)."
        )
    if not site_url.startswith(("https://", "http://")):
        raise ImproperlyConfigured(
            "DJANGO_ENV=production needs SITE_URL, the public address (https://...), for the "
            "links in answers and e-mails."
        )


def database_from_url(url: str, *, connect_timeout: int, pgbouncer: bool) -> dict:
    """One DATABASES entry from any URL dj-database-url knows (postgres:// in production,
    sqlite:///path too); the PostgreSQL-only options go to PostgreSQL only. `connect_timeout` is
    DB_CONNECT_TIMEOUT, `pgbouncer` PGBOUNCER_TRANSACTION_MODE."""
    database = dj_database_url.parse(
        url, conn_max_age=env_int("DB_CONN_MAX_AGE", 60), conn_health_checks=True
    )
    options = database.setdefault("OPTIONS", {})
    if database["ENGINE"] == "django.db.backends.postgresql":
        # Django's backend, with connecting bounded by the request's deadline too.
        database["ENGINE"] = "core.postgresql"
        # Fail fast when PostgreSQL is unreachable instead of hanging the worker: a refused or
        # silent connect gives up after connect_timeout seconds, and a server that vanishes
        # mid-query is noticed by TCP (keepalives, unacknowledged sends) or, sooner, by the
        # request deadline.
        options.setdefault("connect_timeout", connect_timeout)
        options.setdefault("keepalives", 1)
        options.setdefault("keepalives_idle", 5)
        options.setdefault("keepalives_interval", 2)
        options.setdefault("keepalives_count", 2)
        options.setdefault("tcp_user_timeout", connect_timeout * 2000)
        if pgbouncer:
            # Behind PgBouncer in transaction mode a session is not ours between transactions:
            # no server-side (named) cursors and no prepared statements.
            database["DISABLE_SERVER_SIDE_CURSORS"] = True
            options["prepare_threshold"] = None
        else:
            # psycopg's own default (Django turns it off): a statement is prepared on its
            # 5th use. Only the hot statements sent through `prepared_cursor` bind on the
            # server and so can be; the ORM's client-side binding never prepares.
            options.setdefault("prepare_threshold", 5)
    elif database["ENGINE"] == "django.db.backends.sqlite3":
        # As the built-in SQLite database: writers queue for the lock instead of failing.
        options.setdefault("transaction_mode", "IMMEDIATE")
        options.setdefault("timeout", 20)
    return database
