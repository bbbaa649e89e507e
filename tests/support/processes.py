"""Helpers for tests that start other processes (`manage.py`, gunicorn) on this test run's
database."""

import os
import subprocess

import pytest
from django.db import connection


def skip_unless_the_database_can_be_shared() -> None:
    if connection.vendor == "sqlite" and "memory" in str(connection.settings_dict["NAME"]):
        pytest.skip("an in-memory SQLite test database cannot be shared with other processes")


def process_env() -> dict[str, str]:
    """Environment pointing a process at this test run's database."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
        env["DATABASE_URL"] = f"postgres://{auth}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
    else:
        env["SQLITE_PATH"] = str(db["NAME"])
    return env


def run_to_the_end(argv: list[str], *, cwd, env: dict[str, str] | None, timeout: float) -> str:
    """Run `argv` to its end: it must exit 0 (else its stderr is shown). Returns its stdout."""
    run = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert run.returncode == 0, run.stderr
    return run.stdout


# The suite runs through PgBouncer in transaction mode in CI too (.ci/pgbouncer-pass): there
# the app sends no session `SET` and prepares no statements (docs/deployment.md, PgBouncer).
BEHIND_PGBOUNCER = os.environ.get("PGBOUNCER_TRANSACTION_MODE", "").lower() in ("1", "true", "yes")
skip_behind_pgbouncer = pytest.mark.skipif(
    BEHIND_PGBOUNCER, reason="not so behind PgBouncer in transaction mode (by design)"
)
