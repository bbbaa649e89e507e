"""Password sign-in (dashboard and admin) with lockout after repeated failures."""

from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from accounts.throttle import request_client, signin_failed, signin_locked, signin_succeeded


class LockoutModelBackend(ModelBackend):
    """ModelBackend that refuses every password, right or wrong, while the account name or the
    client address is locked out, and counts failures. Both sign-in pages go through it."""

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password=None, **kwargs
    ):
        if request is None or username is None:  # not a web sign-in (tests, shell)
            return super().authenticate(request, username=username, password=password, **kwargs)
        client = request_client(request)
        if signin_locked(username=username, client=client):
            raise PermissionDenied  # stops authenticate(); the form says it is paused
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None:
            signin_failed(username=username, client=client)
        else:
            signin_succeeded(username=username)
        return user
