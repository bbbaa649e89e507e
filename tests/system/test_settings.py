"""Settings read the environment strictly and work with none at all."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core.env import env_bool, env_int, env_list, secret_key_is_strong
from openstartup.settings import DEV_PROVIDER_KEY_ENCRYPTION_KEY, DEV_SECRET_KEY
from tests.support.processes import run_to_the_end


def test_env_bool_accepts_clear_values_and_refuses_ambiguous_ones(monkeypatch):
    monkeypatch.setenv("FLAG", "yes")
    assert env_bool("FLAG", False) is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", True) is False
    monkeypatch.setenv("FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured):
        env_bool("FLAG", False)
    monkeypatch.delenv("FLAG")
    assert env_bool("FLAG", True) is True


def test_env_int_and_env_list(monkeypatch):
    monkeypatch.setenv("N", "12")
    assert env_int("N", 3) == 12
    monkeypatch.setenv("N", "twelve")
    with pytest.raises(ImproperlyConfigured):
        env_int("N", 3)
    monkeypatch.setenv("HOSTS", " a.example , b.example ,")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]


def test_debug_is_off_unless_asked_for():
    assert settings.DEBUG is False


# --- production mode, checked the way an operator runs it: a fresh process per environment ---

MANAGE = Path(__file__).resolve().parents[2] / "manage.py"
STRONG_KEY = "k3Jx9-production-secret-" + "abcdefghijklmnopqrstuvwxyz0123456789"
FERNET_KEY = "1WWtRUSsmmYYrjzBh6ZrS8uXL6W2hOjn4b9n6xlwFO8="  # a test key, not used anywhere real


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    """Run manage.py with only `env` set on top of a clean environment (no DJANGO_* leaks)."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "PROVIDER_", "ATTESTATION_", "EMAIL_"))
    }
    return subprocess.run(
        [sys.executable, str(MANAGE), *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


PRODUCTION = {
    "DJANGO_ENV": "production",
    "DJANGO_SECRET_KEY": STRONG_KEY,
    "DJANGO_ALLOWED_HOSTS": "api.example.com",
    "PROVIDER_KEY_ENCRYPTION_KEYS": FERNET_KEY,
    # A test key (base64url of 32 bytes), not used anywhere real.
    "ATTESTATION_SIGNING_KEYS": "cKzF1HqfJ3m1xk4tQ0e8l2Jm0G3a9q6y7Vw2b5nE4sU",
    "SITE_URL": "https://api.example.com",
    "EMAIL_HOST": "smtp.example.com",
}


def test_check_deploy_passes_in_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_serves_https_only_with_secure_cookies_and_hsts():
    code = (
        "from django.conf import settings as s; print("
        "s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
        "s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.DEBUG)"
    )
    result = manage("shell", "--no-imports", "-c", code, **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "True",
        "True",
        "True",
        "31536000",
        "True",
        "False",
    ]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"DJANGO_SECRET_KEY": ""}, "needs a real DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": DEV_SECRET_KEY}, "needs a real DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": "django-insecure-" + "x" * 60}, "needs a real DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": "short"}, "too weak"),
        # Long but repetitive: no real entropy.
        ({"DJANGO_SECRET_KEY": "a" * 62 + "bcde"}, "too weak"),
        ({"DJANGO_SECRET_KEY": "correcthorse" * 6}, "too weak"),
        ({"PROVIDER_KEY_ENCRYPTION_KEYS": ""}, "needs PROVIDER_KEY_ENCRYPTION_KEYS"),
        ({"PROVIDER_KEY_ENCRYPTION_KEYS": DEV_PROVIDER_KEY_ENCRYPTION_KEY}, "development key"),
        ({"PROVIDER_KEY_ENCRYPTION_KEYS": "not-a-fernet-key"}, "must be Fernet keys"),
        ({"DJANGO_ALLOWED_HOSTS": ""}, "needs DJANGO_ALLOWED_HOSTS"),
        ({"SITE_URL": ""}, "needs SITE_URL"),
        ({"DJANGO_DEBUG": "1"}, "DJANGO_DEBUG must be off"),
        ({"DJANGO_ENV": "prod"}, "DJANGO_ENV must be development or production"),
        ({"ATTESTATION_SIGNING_KEYS": ""}, "needs ATTESTATION_SIGNING_KEYS"),
        # No SMTP host and no explicit backend would print reset links to logs.
        ({"EMAIL_HOST": ""}, "needs EMAIL_HOST (SMTP) or an explicit EMAIL_BACKEND"),
    ],
)
def test_production_refuses_to_start_with_development_settings(override, message):
    result = manage("check", **{**PRODUCTION, **override})
    assert result.returncode != 0
    assert message in result.stderr


def manage_env_without(*names: str, **env: str) -> dict:
    return {k: v for k, v in {**PRODUCTION, **env}.items() if k not in names}


def test_production_refuses_to_start_without_the_variables_it_needs():
    # Unset, not just empty: DJANGO_ALLOWED_HOSTS would otherwise fall back to localhost.
    for name in ("PROVIDER_KEY_ENCRYPTION_KEYS", "DJANGO_ALLOWED_HOSTS", "SITE_URL"):
        result = manage("check", **manage_env_without(name))
        assert result.returncode != 0, name
        assert name in result.stderr


def test_production_sends_mail_by_smtp_or_an_explicitly_chosen_backend():
    code = "from django.conf import settings as s; print(s.EMAIL_BACKEND)"
    unset = manage("shell", "--no-imports", "-c", code, **manage_env_without("EMAIL_HOST"))
    assert unset.returncode != 0
    assert "needs EMAIL_HOST (SMTP) or an explicit EMAIL_BACKEND" in unset.stderr
    smtp = manage("shell", "--no-imports", "-c", code, **PRODUCTION)
    assert smtp.stdout.strip() == "django.core.mail.backends.smtp.EmailBackend"
    chosen = "django.core.mail.backends.console.EmailBackend"  # the operator's explicit choice
    explicit = manage(
        "shell",
        "--no-imports",
        "-c",
        code,
        **manage_env_without("EMAIL_HOST", EMAIL_BACKEND=chosen),
    )
    assert explicit.returncode == 0, explicit.stderr
    assert explicit.stdout.strip() == chosen


def test_random_secret_keys_are_strong_and_repetitive_ones_are_not():
    import secrets

    from django.core.management.utils import get_random_secret_key

    assert secret_key_is_strong(get_random_secret_key())
    assert secret_key_is_strong(secrets.token_urlsafe(64))
    assert secret_key_is_strong(secrets.token_hex(32))
    assert not secret_key_is_strong("abcdefghijklmnopqrstuvwxyz" * 3)


FORWARDED_PROTO_PROBE = (
    "from django.test import Client; c = Client(HTTP_HOST='api.example.com'); "
    "r1 = c.get('/healthz', REMOTE_ADDR='203.0.113.9', HTTP_X_FORWARDED_PROTO='https'); "
    "r2 = c.get('/healthz', REMOTE_ADDR='10.0.0.2', HTTP_X_FORWARDED_PROTO='https'); "
    "print(r1.status_code, r1.get('Location'), r2.status_code)"
)


def test_x_forwarded_proto_is_believed_only_from_trusted_proxies():
    # A client reaching the server directly cannot claim HTTPS: it is redirected; the load
    # balancer (trusted) is believed.
    result = manage(
        "shell",
        "--no-imports",
        "-c",
        FORWARDED_PROTO_PROBE,
        **PRODUCTION,
        TRUSTED_PROXIES="10.0.0.0/8",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["301", "https://api.example.com/healthz", "200"]


def test_with_no_environment_the_development_defaults_still_start():
    result = manage("check")
    assert result.returncode == 0, result.stderr
    insecure = manage("check", "--deploy")
    assert insecure.returncode == 0  # warnings only: development is allowed to be insecure
    assert "security.W009" in insecure.stdout + insecure.stderr


# Every standard DATABASE_URL works; PostgreSQL-only options go to PostgreSQL only.


def test_a_sqlite_database_url_migrates_and_serves(tmp_path):
    url = f"sqlite:///{tmp_path / 'site.sqlite3'}"
    migrated = manage("migrate", "--noinput", DATABASE_URL=url, REDIS_URL="")
    assert migrated.returncode == 0, migrated.stderr
    script = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "print(Client().get('/api/v1/startups').status_code)\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "openstartup.settings", "DATABASE_URL": url}
    out = run_to_the_end([sys.executable, "-c", script], cwd=MANAGE.parent, env=env, timeout=60)
    assert out.strip().splitlines()[-1] == "200"


def test_postgresql_only_options_go_to_postgresql_only(tmp_path):
    from openstartup.settings import database_from_url

    sqlite = database_from_url(f"sqlite:///{tmp_path / 'x.sqlite3'}")
    assert sqlite["ENGINE"] == "django.db.backends.sqlite3"
    assert "connect_timeout" not in sqlite["OPTIONS"]
    assert "keepalives" not in sqlite["OPTIONS"]
    assert sqlite["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    postgres = database_from_url("postgres://u@db.example:5432/app")
    assert postgres["ENGINE"] == "core.postgresql"  # Django's, deadline-aware connect
    assert postgres["OPTIONS"]["connect_timeout"] >= 5  # longer than a slow handshake
    assert postgres["OPTIONS"]["keepalives"] == 1


def test_statements_are_prepared_unless_behind_pgbouncer_in_transaction_mode(monkeypatch):
    from openstartup import settings as project_settings

    url = "postgres://u@db.example:5432/app"
    assert project_settings.database_from_url(url)["OPTIONS"]["prepare_threshold"] == 5
    monkeypatch.setattr(project_settings, "PGBOUNCER_TRANSACTION_MODE", True)
    assert project_settings.database_from_url(url)["OPTIONS"]["prepare_threshold"] is None


# The squashed migrations (accounts, quota, verification) replace the files a database migrated
# before the squash has recorded; such a database must be seen as up to date, not migrated again.
REPLACED = {
    "accounts": ["0001_initial", "0002_monthly_allowance_override", "0003_user_email_confirmed_at"],
    "quota": ["0001_initial", "0002_quota_hold_undelivered_records"],
    "verification": ["0001_initial", "0002_sync_lease_and_fetch_time"],
}


def test_a_database_migrated_before_the_squash_is_up_to_date(tmp_path):
    import sqlite3

    path = tmp_path / "deployed.sqlite3"
    url = f"sqlite:///{path}"
    assert manage("migrate", "--noinput", DATABASE_URL=url, REDIS_URL="").returncode == 0
    # Rewrite the history to what a database migrated before the squash holds: the replaced
    # names instead of the squashed one (migrations added after the squash stay recorded).
    with sqlite3.connect(path) as db:
        for app, names in REPLACED.items():
            squashed = f"{names[0][:5]}squashed_{names[-1]}"
            db.executemany(
                "DELETE FROM django_migrations WHERE app = ? AND name = ?",
                [(app, name) for name in (squashed, *names)],
            )
            db.executemany(
                "INSERT INTO django_migrations (app, name, applied) VALUES (?, ?, datetime())",
                [(app, name) for name in names],
            )
    check = manage("migrate", "--check", DATABASE_URL=url, REDIS_URL="")
    assert check.returncode == 0, check.stdout + check.stderr
    migrated = manage("migrate", "--noinput", DATABASE_URL=url, REDIS_URL="")
    assert migrated.returncode == 0, migrated.stderr  # no CREATE TABLE on tables that exist
    with sqlite3.connect(path) as db:
        recorded = {row[0] for row in db.execute("SELECT name FROM django_migrations")}
    squashed = {f"{names[0][:5]}squashed_{names[-1]}" for names in REPLACED.values()}
    assert squashed <= recorded  # each squashed migration is now recorded as applied
