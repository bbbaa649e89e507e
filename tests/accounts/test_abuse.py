"""Accounts against abuse: e-mail confirmation before keys work, sign-up throttling,
sign-up that never reveals a registered address, and sign-in lockout on both sign-in pages."""

import io
import re

import pytest
from django.core.management import call_command

from accounts.models import User
from tests.support.factories import PASSWORD, bearer, make_account, make_ai_startup, make_api_key

LINK = re.compile(r"https?://\S+/accounts/confirm/\S+/")


def sign_up(client, email: str, **extra):
    return client.post(
        "/accounts/signup/", {"email": email, "password1": PASSWORD, "password2": PASSWORD}, **extra
    )


def confirmation_link(message) -> str:
    return LINK.search(message.body).group(0)


# --- e-mail confirmation --------------------------------------------------------------------


@pytest.fixture
def unconfirmed_key(db) -> str:
    account = make_account(confirmed=False)
    return make_api_key(account=account)[1]


def test_an_unconfirmed_accounts_key_gets_403_on_rest_with_how_to_confirm(client, unconfirmed_key):
    response = client.get("/api/v1/startups", **bearer(unconfirmed_key))
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "email_not_confirmed"
    assert "confirmation e-mail" in error["message"] and "/dashboard/" in error["message"]


def test_an_unconfirmed_accounts_key_gets_403_on_the_ai_surface(client, unconfirmed_key):
    startup = make_ai_startup()
    for path in ("/api/ai/discovery", f"/api/ai/startups/{startup.slug}"):
        response = client.get(path, HTTP_X_API_KEY=unconfirmed_key)
        assert response.status_code == 403, path
        assert response.json()["error"]["code"] == "email_not_confirmed"


def test_an_unconfirmed_accounts_key_gets_403_on_mcp(client, unconfirmed_key):
    response = client.post(
        "/api/mcp",
        data='{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
        content_type="application/json",
        **bearer(unconfirmed_key),
    )
    assert response.status_code == 403
    assert response.json()["error"]["data"]["code"] == "email_not_confirmed"


def test_sign_up_sends_a_link_that_confirms_and_makes_the_keys_work(client, db, mailoutbox):
    assert sign_up(client, "maker@example.com").status_code == 200
    account = User.objects.get(username="maker@example.com")
    client.force_login(account)
    dashboard = client.get("/dashboard/").content.decode()
    assert 'data-testid="confirm-email"' in dashboard
    raw = make_api_key(account=account)[1]
    assert client.get("/api/v1/startups", **bearer(raw)).status_code == 403

    confirmed = client.get(confirmation_link(mailoutbox[0]), follow=True)
    assert "is confirmed" in confirmed.content.decode()
    assert 'data-testid="confirm-email"' not in confirmed.content.decode()
    # The key lookup kept per process learns of it at once.
    assert client.get("/api/v1/startups", **bearer(raw)).status_code == 200


def test_a_forged_or_altered_confirmation_link_confirms_nothing(client, db, mailoutbox):
    sign_up(client, "forger@example.com")
    link = confirmation_link(mailoutbox[0])
    token = link.rstrip("/").rsplit("/", 1)[1]
    client.get(link.replace(token, token[:-2] + ("AA" if not token.endswith("AA") else "BB")))
    assert User.objects.get(username="forger@example.com").email_confirmed_at is None


def test_the_dashboard_resends_the_confirmation_link(client, db, mailoutbox):
    account = make_account(confirmed=False)
    client.force_login(account)
    response = client.post("/accounts/confirm/resend/", follow=True)
    assert f"sent a new confirmation link to {account.email}" in response.content.decode()
    assert len(mailoutbox) == 1 and mailoutbox[0].to == [account.email]
    client.get(confirmation_link(mailoutbox[0]))
    account.refresh_from_db()
    assert account.email_confirmed_at is not None


def test_resending_is_limited_so_a_strangers_inbox_is_not_flooded(client, db, mailoutbox):
    client.force_login(make_account(confirmed=False))
    for _ in range(5):
        client.post("/accounts/confirm/resend/")
    assert len(mailoutbox) == 3


def test_accounts_made_by_the_operator_command_are_confirmed(db, client):
    out = io.StringIO()
    call_command("create_api_key", "ops-made@example.com", stdout=out, stderr=io.StringIO())
    assert User.objects.get(username="ops-made@example.com").email_confirmed_at is not None
    raw = out.getvalue().strip().splitlines()[-1]
    assert client.get("/api/v1/startups", **bearer(raw)).status_code == 200


# --- sign-up ----------------------------------------------------------------------------------


def test_sign_up_answers_a_registered_address_like_a_new_one_and_tells_its_owner(
    client, db, mailoutbox
):
    make_account(email="taken@example.com")
    new = sign_up(client, "fresh@example.com")
    taken = sign_up(client, "TAKEN@example.com")
    assert new.status_code == taken.status_code == 200
    normalise = lambda r: r.content.decode().replace("fresh@", "X@").replace("taken@", "X@")  # noqa: E731
    assert re.sub(r'value="[^"]+"', "", normalise(new)) == re.sub(
        r'value="[^"]+"', "", normalise(taken)
    )
    assert "already exists" not in taken.content.decode()
    assert User.objects.filter(username="taken@example.com").count() == 1
    to_owner = next(m for m in mailoutbox if m.to == ["taken@example.com"])
    assert "already exists" in to_owner.body and "/accounts/confirm/" not in to_owner.body


def test_sign_ups_are_throttled_per_client_address(client, db, settings):
    settings.SIGNUPS_PER_ADDRESS_PER_HOUR = 3
    for n in range(3):
        assert sign_up(client, f"s{n}@example.com").status_code == 200
    refused = sign_up(client, "s3@example.com")
    assert refused.status_code == 429
    assert "Too many accounts were created from your network" in refused.content.decode()
    assert not User.objects.filter(username="s3@example.com").exists()
    # Another address is not affected.
    assert sign_up(client, "s4@example.com", REMOTE_ADDR="192.0.2.9").status_code == 200


def test_ipv6_sign_ups_are_counted_per_64(client, db, settings):
    settings.SIGNUPS_PER_ADDRESS_PER_HOUR = 2
    sign_up(client, "v1@example.com", REMOTE_ADDR="2001:db8:1:2::1")
    sign_up(client, "v2@example.com", REMOTE_ADDR="2001:db8:1:2::ffff")
    same_64 = sign_up(client, "v3@example.com", REMOTE_ADDR="2001:db8:1:2:abcd::9")
    assert same_64.status_code == 429
    assert sign_up(client, "v4@example.com", REMOTE_ADDR="2001:db8:1:3::1").status_code == 200


# --- sign-in lockout --------------------------------------------------------------------------


def login(client, path: str, username: str, password: str, **extra):
    return client.post(path, {"username": username, "password": password}, **extra)


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_after_a_few_wrong_passwords_even_the_right_one_is_refused(client, db, settings, path):
    account = make_account(email="victim@example.com")
    User.objects.filter(pk=account.pk).update(is_staff=True, is_superuser=True)
    for _ in range(settings.SIGNIN_MAX_FAILURES):
        assert login(client, path, "victim@example.com", "wrong-password").status_code == 200
    refused = login(client, path, "victim@example.com", PASSWORD)
    assert refused.status_code == 200  # the form again, not a redirect: not signed in
    assert "Too many failed sign-in attempts" in refused.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_lockout_message_is_the_same_for_an_unknown_account(client, db, settings):
    make_account(email="real@example.com")
    answers = []
    for name in ("real@example.com", "nobody@example.com"):
        for _ in range(settings.SIGNIN_MAX_FAILURES):
            login(client, "/accounts/login/", name, "wrong-password")
        answers.append(login(client, "/accounts/login/", name, "anything").content.decode())
    strip = lambda page: re.sub(r'value="[^"]*"', "", page)  # noqa: E731
    assert strip(answers[0]) == strip(answers[1])
    assert "Too many failed sign-in attempts" in answers[0]


def test_one_address_trying_many_accounts_is_locked_out(client, db, settings):
    settings.SIGNIN_MAX_FAILURES_PER_ADDRESS = 6
    make_account(email="someone@example.com")
    for n in range(6):
        login(client, "/accounts/login/", f"guess{n}@example.com", "wrong-password")
    refused = login(client, "/accounts/login/", "someone@example.com", PASSWORD)
    assert "Too many failed sign-in attempts" in refused.content.decode()
    other = login(
        client, "/accounts/login/", "someone@example.com", PASSWORD, REMOTE_ADDR="192.0.2.44"
    )
    assert other.status_code == 302


def test_a_correct_password_before_the_limit_clears_the_failures(client, db, settings):
    make_account(email="typo@example.com")
    for _ in range(settings.SIGNIN_MAX_FAILURES - 1):
        login(client, "/accounts/login/", "typo@example.com", "wrong-password")
    assert login(client, "/accounts/login/", "typo@example.com", PASSWORD).status_code == 302
    client.post("/accounts/logout/")
    for _ in range(settings.SIGNIN_MAX_FAILURES - 1):
        login(client, "/accounts/login/", "typo@example.com", "wrong-password")
    assert login(client, "/accounts/login/", "typo@example.com", PASSWORD).status_code == 302


def test_accounts_made_by_createsuperuser_are_confirmed(db):
    call_command(
        "createsuperuser",
        username="root@example.com",
        email="root@example.com",
        interactive=False,
        stdout=io.StringIO(),
    )
    assert User.objects.get(username="root@example.com").email_confirmed_at is not None
