"""The sign-in lockout and the sign-up limit count together across every server
process. Two real gunicorn instances on one database (SQLite by default; PostgreSQL and Redis
when DATABASE_URL and REDIS_URL are set), hit through the sign-in and sign-up forms: failures
and sign-ups spread over both still reach the limits on both."""

import re

import httpx
import pytest

from tests.support.factories import PASSWORD, make_account
from tests.support.processes import (
    gunicorn_server,
    process_env,
    skip_unless_the_database_can_be_shared,
)

LOCKED = "Too many failed sign-in attempts"


def _form_post(port: int, path: str, fields: dict[str, str]) -> httpx.Response:
    """GET the form (its CSRF cookie and token), then POST it, as a browser would."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as browser:
        page = browser.get(path)
        assert page.status_code == 200, page.status_code
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
        return browser.post(path, data={"csrfmiddlewaretoken": token, **fields})


def _sign_in(port: int, email: str, password: str) -> httpx.Response:
    return _form_post(port, "/accounts/login/", {"username": email, "password": password})


def _sign_up(port: int, email: str) -> httpx.Response:
    fields = {"email": email, "password1": PASSWORD, "password2": PASSWORD}
    return _form_post(port, "/accounts/signup/", fields)


@pytest.fixture
def two_servers(transactional_db):
    skip_unless_the_database_can_be_shared()
    env = {
        **process_env(),
        "SIGNIN_MAX_FAILURES": "5",
        "SIGNUPS_PER_ADDRESS_PER_HOUR": "5",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
    }
    with gunicorn_server(env) as first, gunicorn_server(env) as second:
        yield first, second


def test_the_sign_in_lockout_holds_across_server_processes(two_servers):
    first, second = two_servers
    make_account(email="victim@example.com")
    # Five wrong passwords, three on one server and two on the other: the limit is five.
    for port in (first, first, first, second, second):
        answer = _sign_in(port, "victim@example.com", "wrong-password")
        assert answer.status_code == 200 and LOCKED not in answer.text
    for port in (first, second, first, second):
        refused = _sign_in(port, "victim@example.com", PASSWORD)
        assert refused.status_code == 200, "signed in past the lockout"
        assert LOCKED in refused.text


def test_the_sign_up_limit_holds_across_server_processes(two_servers):
    first, second = two_servers
    for n, port in enumerate((first, first, first, second, second)):
        assert _sign_up(port, f"new{n}@example.com").status_code == 200
    for n, port in enumerate((first, second)):
        assert _sign_up(port, f"more{n}@example.com").status_code == 429
