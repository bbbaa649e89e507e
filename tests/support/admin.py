"""The Django admin as an operator drives it: a client signed in as one, and the startup form it
posts."""

from tests.support.factories import make_account


def operator_client(client):
    """Signs `client` in as a new staff superuser (an operator in the admin) and returns it."""
    account = make_account()
    type(account).objects.filter(pk=account.pk).update(is_staff=True, is_superuser=True)
    client.force_login(account)
    return client


def admin_form(**fields) -> dict:
    """The admin's startup change form for "Acme" (published, no founders or socials), with
    `fields` changed; a field given as None is left out (an unticked box)."""
    data = {
        "name": "Acme",
        "slug": "acme",
        "currency": "USD",
        "categories": "[]",
        "technologies": "[]",
        "is_published": "on",
        "_save": "Save",
    }
    for prefix in ("founders", "socials"):
        data |= {f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"}
    data.update(fields)
    return {k: v for k, v in data.items() if v is not None}
