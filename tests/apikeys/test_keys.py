"""API keys: format, storage, authentication rules, plans, commands and admin."""

import hashlib
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from accounts.models import User
from apikeys import keys
from apikeys.models import ApiKey, Subscription
from apikeys.services import api_key_authenticate
from core.errors import InvalidApiKey
from tests.support.factories import (
    bearer,
    make_account,
    make_api_key,
    make_startups,
    make_subscription,
)

LIST = "/api/v1/startups"


def assert_invalid_key(response) -> None:
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert response["X-Service-Plan"] == "Free"


# Format and storage


def test_a_new_key_has_the_prefix_a_long_secret_and_a_valid_checksum():
    raw = keys.generate()
    assert raw.startswith("osk_")
    assert len(raw) == keys.KEY_LENGTH == 50
    assert keys.is_well_formed(raw)
    assert keys.generate() != raw


def test_a_mistyped_key_fails_its_checksum():
    raw = keys.generate()
    typo = raw[:10] + ("A" if raw[10] != "A" else "B") + raw[11:]
    assert not keys.is_well_formed(typo)
    assert not keys.is_well_formed(raw + "x")
    assert not keys.is_well_formed("sk_" + raw[3:])


def test_only_the_sha256_digest_and_last_four_are_stored(api_key):
    obj, raw = api_key
    obj.refresh_from_db()
    assert obj.digest == hashlib.sha256(raw.encode()).hexdigest()
    assert obj.last_four == raw[-4:]
    assert obj.display == f"osk_…{raw[-4:]}"
    stored = [str(value) for value in ApiKey.objects.values_list(flat=False).get(pk=obj.pk)]
    assert all(raw not in value for value in stored)


# Authentication on the API


def test_a_key_in_the_authorization_header_is_accepted(api_client, api_key):
    response = api_client.get(LIST, **bearer(api_key[1]))
    assert response.status_code == 200


def test_a_key_in_the_x_api_key_header_is_accepted(api_client, api_key):
    response = api_client.get(LIST, HTTP_X_API_KEY=api_key[1])
    assert response.status_code == 200


def test_the_same_key_in_both_headers_is_accepted(api_client, api_key):
    response = api_client.get(LIST, HTTP_X_API_KEY=api_key[1], **bearer(api_key[1]))
    assert response.status_code == 200


def test_different_keys_in_the_two_headers_get_401(api_client, api_key):
    _, other = make_api_key()
    assert_invalid_key(api_client.get(LIST, HTTP_X_API_KEY=other, **bearer(api_key[1])))


def test_a_wrong_key_gets_401_not_anonymous_access(api_client, db):
    assert_invalid_key(api_client.get(LIST, **bearer(keys.generate())))
    assert_invalid_key(api_client.get(LIST, HTTP_X_API_KEY=keys.generate()))


@pytest.mark.parametrize(
    "header",
    ["Bearer osk_short", "Bearer ", "Bearer", "Basic dXNlcjpwYXNz", "Token x", "osk_"],
)
def test_a_malformed_authorization_header_gets_401(api_client, db, header):
    assert_invalid_key(api_client.get(LIST, HTTP_AUTHORIZATION=header))


def test_an_empty_x_api_key_header_gets_401(api_client, db):
    assert_invalid_key(api_client.get(LIST, HTTP_X_API_KEY=" "))


def test_a_revoked_key_gets_401_on_list_and_detail(api_client, api_key):
    obj, raw = api_key
    (startup,) = make_startups(1)
    call_command("revoke_api_key", raw, stdout=StringIO())
    assert_invalid_key(api_client.get(LIST, **bearer(raw)))
    assert_invalid_key(api_client.get(f"{LIST}/{startup.slug}", **bearer(raw)))


def test_a_deactivated_accounts_key_gets_401(api_client, api_key):
    obj, raw = api_key
    User.objects.filter(pk=obj.account_id).update(is_active=False)
    assert_invalid_key(api_client.get(LIST, **bearer(raw)))


def test_a_wrong_key_on_an_unknown_api_path_still_gets_headers(api_client, db):
    response = api_client.get("/api/v1/nothing-here", **bearer(keys.generate()))
    assert response.status_code == 404
    assert response["X-Service-Plan"] == "Free"


def test_using_a_key_records_when_it_was_last_used(api_client, api_key):
    obj, raw = api_key
    assert obj.last_used_at is None
    api_client.get(LIST, **bearer(raw))
    obj.refresh_from_db()
    assert obj.last_used_at is not None


def test_the_authenticate_service_returns_the_keys_account_and_plan(api_key):
    obj, raw = api_key
    found = api_key_authenticate(raw=f"{raw}")
    assert (found.key_id, found.pk) == (obj.pk, obj.account_id)
    assert found.plan.name == "Free"
    with pytest.raises(InvalidApiKey):
        api_key_authenticate(raw=raw.lower())


def test_the_authentication_hands_the_caller_to_the_view_as_request_auth(api_key):
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from apikeys.authentication import ApiKeyAuthentication
    from quota.callers import KeyAccount, request_caller
    from quota.services import Caller

    obj, raw = api_key
    auth = [ApiKeyAuthentication()]
    request = Request(APIRequestFactory().get(LIST, **bearer(raw)), authenticators=auth)
    assert isinstance(request.user, KeyAccount) and request.user.key_id == obj.pk
    assert request.auth == Caller(plan=request.user.plan, account_id=obj.account_id)
    assert request_caller(request) is request.auth
    anonymous = Request(
        APIRequestFactory().get(LIST, REMOTE_ADDR="198.51.100.7"), authenticators=auth
    )
    assert (anonymous.user, anonymous.auth) == (None, None)
    assert request_caller(anonymous).client == "198.51.100.7"


def test_quota_does_not_import_apikeys():
    # Dependencies run one way: apikeys uses quota (plans, callers), never the reverse.
    import ast
    from pathlib import Path

    for path in Path(__file__).resolve().parents[2].joinpath("quota").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any(name.split(".")[0] == "apikeys" for name in names), path


# Plans follow the account


def test_a_key_of_an_account_with_active_pro_gets_pro_limits(api_client, api_key):
    obj, raw = api_key
    make_startups(12)
    make_subscription(account=obj.account, days=5)
    response = api_client.get(LIST, {"limit": 50}, **bearer(raw))
    assert response["X-Service-Plan"] == "Pro"
    assert response["X-Service-Max-Limit"] == "50"
    assert "X-Service-Quota-Limit" not in response
    meta = response.json()["meta"]
    assert (meta["plan"], meta["maxLimit"], meta["limit"]) == ("Pro", 50, 50)
    assert "quota" not in meta and "notice" not in meta
    assert len(response.json()["data"]) == 12


def test_a_lapsed_pro_key_keeps_working_with_free_limits(api_client, api_key):
    obj, raw = api_key
    make_subscription(account=obj.account, days=-1)
    response = api_client.get(LIST, {"limit": 50}, **bearer(raw))
    assert response.status_code == 200
    assert response["X-Service-Plan"] == "Free"
    assert response.json()["meta"]["limit"] == 10


def test_buying_pro_upgrades_an_existing_key_at_once(api_client, api_key):
    obj, raw = api_key
    assert api_client.get(LIST, **bearer(raw))["X-Service-Plan"] == "Free"
    make_subscription(account=obj.account)
    assert api_client.get(LIST, **bearer(raw))["X-Service-Plan"] == "Pro"


# Operator commands


def run_create(*args: str) -> str:
    out = StringIO()
    call_command("create_api_key", *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip().splitlines()[-1]


def test_create_api_key_makes_the_account_and_prints_the_key_last(api_client, db):
    raw = run_create("New.Founder@Example.com", "--name", "ci")
    account = User.objects.get(username="new.founder@example.com")
    assert keys.is_well_formed(raw)
    assert account.api_keys.get().name == "ci"
    assert not account.has_usable_password()
    assert api_client.get(LIST, **bearer(raw))["X-Service-Plan"] == "Free"


def test_create_api_key_reuses_an_existing_account(db):
    account = make_account(email="known@example.com")
    run_create("known@example.com")
    run_create("KNOWN@example.com")
    assert account.api_keys.count() == 2


def test_create_api_key_with_plan_pro_gives_pro(api_client, db):
    raw = run_create("pro@example.com", "--plan", "pro")
    assert api_client.get(LIST, **bearer(raw))["X-Service-Plan"] == "Pro"


def test_create_api_key_with_plan_lapsed_gives_a_working_free_key(api_client, db):
    raw = run_create("lapsed@example.com", "--plan", "lapsed")
    assert Subscription.objects.filter(account__username="lapsed@example.com").exists()
    response = api_client.get(LIST, **bearer(raw))
    assert (response.status_code, response["X-Service-Plan"]) == (200, "Free")


def test_create_api_key_with_plan_free_ends_pro(api_client, db):
    raw = run_create("down@example.com", "--plan", "pro")
    run_create("down@example.com", "--plan", "free")
    assert api_client.get(LIST, **bearer(raw))["X-Service-Plan"] == "Free"


def test_create_api_key_refuses_a_non_email(db):
    with pytest.raises(CommandError):
        run_create("not-an-email")


def test_revoke_api_key_refuses_an_unknown_key(db):
    with pytest.raises(CommandError):
        call_command("revoke_api_key", keys.generate(), stdout=StringIO())


# Admin


@pytest.mark.parametrize(
    "url",
    [
        "/admin/apikeys/subscription/",
        "/admin/apikeys/apikey/",
        "/admin/quota/monthlyusage/",
        "/admin/startups/startup/",
        "/admin/startups/verification/",
        "/admin/accounts/user/",
    ],
)
def test_operators_can_open_every_admin_list(client, admin_user, api_key, url):
    client.force_login(admin_user)
    assert client.get(url).status_code == 200


def test_the_key_admin_shows_the_digest_read_only_and_cannot_add_keys(client, admin_user, api_key):
    obj, raw = api_key
    client.force_login(admin_user)
    page = client.get(f"/admin/apikeys/apikey/{obj.pk}/change/").content.decode()
    assert obj.digest in page
    assert raw not in page
    assert 'name="digest"' not in page
    assert client.get("/admin/apikeys/apikey/add/").status_code == 403


def test_the_key_admin_revokes_selected_keys(client, admin_user, api_key):
    obj, _ = api_key
    client.force_login(admin_user)
    client.post(
        "/admin/apikeys/apikey/", {"action": "revoke", "_selected_action": [obj.pk]}, follow=True
    )
    obj.refresh_from_db()
    assert obj.revoked_at is not None


def test_a_401_carries_a_bearer_challenge(api_client, db):
    response = api_client.get(LIST, **bearer(keys.generate()))
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_the_account_admin_lists_its_subscriptions_and_keys(client, admin_user, api_key):
    obj, raw = api_key
    make_subscription(account=obj.account)
    client.force_login(admin_user)
    page = client.get(f"/admin/accounts/user/{obj.account_id}/change/").content.decode()
    assert obj.display in page and raw not in page
    assert 'name="subscriptions-TOTAL_FORMS" value="1"' in page


def test_create_api_key_can_set_and_clear_an_allowance_override(db):
    out = StringIO()
    call_command("create_api_key", "bench@example.com", "--allowance", "5000000", stdout=out)
    account = User.objects.get(email="bench@example.com")
    assert account.monthly_allowance_override == 5_000_000
    call_command("create_api_key", "bench@example.com", "--allowance", "-1", stdout=StringIO())
    account.refresh_from_db()
    assert account.monthly_allowance_override is None
