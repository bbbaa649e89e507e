"""The password-reset link starts with SITE_URL, as the confirmation e-mail's does,
whatever allowed Host and port the request named."""

import re

import pytest
from django.core import mail

from tests.support.factories import make_account


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8443", "openstartup.example:81"])
def test_the_reset_link_ignores_the_requests_host(client, db, settings, host):
    settings.SITE_URL = "https://openstartup.example"
    settings.ALLOWED_HOSTS = ["openstartup.example", "evil.example"]
    make_account(email="founder@example.com")
    response = client.post(
        "/accounts/password/reset/", {"email": "founder@example.com"}, HTTP_HOST=host
    )
    assert response.status_code == 302
    body = mail.outbox[0].body
    links = re.findall(r"\S+/accounts/password/reset/\S+/", body)
    assert len(links) == 1
    assert links[0].startswith("https://openstartup.example/accounts/password/reset/")
    assert host not in body.replace("https://openstartup.example/", "")
    # The link works.
    path = links[0].removeprefix("https://openstartup.example")
    form = client.get(path, follow=True, HTTP_HOST="openstartup.example")
    assert "new_password1" in form.content.decode()


def test_without_site_url_the_link_uses_the_requests_own_host(client, db, settings):
    settings.SITE_URL = ""  # development: as the confirmation e-mail does
    make_account(email="founder@example.com")
    client.post("/accounts/password/reset/", {"email": "founder@example.com"})
    assert "http://testserver/accounts/password/reset/" in mail.outbox[0].body
