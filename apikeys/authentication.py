"""DRF authentication by API key: `Authorization: Bearer <key>` or `X-API-Key: <key>`."""

from django.http import HttpRequest
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from apikeys.services import api_key_authenticate
from core.errors import InvalidApiKey
from quota.callers import KeyAccount, caller_for
from quota.services import Caller


def raw_key_from(request: HttpRequest) -> str | None:
    """The key a request carries, None when it carries none; InvalidApiKey when unusable.

    An Authorization header with another scheme, an empty key, or two different keys in the
    two headers are refused rather than guessed at: a client that meant to send a key must
    never be served as anonymous. The same key in both headers is accepted.
    """
    # META directly: request.headers would copy every header of the request first, on the
    # path of every API call.
    authorization = request.META.get("HTTP_AUTHORIZATION")
    x_api_key = request.META.get("HTTP_X_API_KEY")
    bearer = None
    if authorization is not None:
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise InvalidApiKey("Send the API key as 'Authorization: Bearer <key>'.")
        bearer = value.strip()
    if x_api_key is not None:
        x_api_key = x_api_key.strip()
        if not x_api_key:
            raise InvalidApiKey()
        if bearer is not None and bearer != x_api_key:
            raise InvalidApiKey("Authorization and X-API-Key carry different keys; send one.")
    return bearer or x_api_key


def key_account_of(request: HttpRequest) -> KeyAccount | None:
    """The account of the key a request carries, None without one; InvalidApiKey for a wrong,
    revoked or unusable one. Every surface authenticates through this, once per request: the
    answer (or the refusal) is kept on the request for the next caller (the fair-use limiter
    asks first, then the view)."""
    outcome = getattr(request, "_key_account", _UNSET)
    if outcome is _UNSET:
        try:
            raw = raw_key_from(request)
            outcome = None if raw is None else api_key_authenticate(raw=raw)
        except InvalidApiKey as error:
            outcome = error
        request._key_account = outcome
    if isinstance(outcome, InvalidApiKey):
        # A fresh copy each time: DRF and the handlers add headers to the one they get.
        raise type(outcome)(outcome.message, headers=dict(outcome.headers))
    return outcome


_UNSET = object()


class ApiKeyAuthentication(BaseAuthentication):
    """Sets `request.user` to the key's account (id and plan) and `request.auth` to the Caller
    whose allowance the request spends (quota.callers.request_caller reads it)."""

    def authenticate(self, request: Request) -> tuple[KeyAccount, Caller] | None:
        try:
            account = key_account_of(request._request)
        except InvalidApiKey as error:
            if error.status_code == 401:
                error.headers.setdefault("WWW-Authenticate", self.authenticate_header(request))
            raise
        if account is None:
            return None
        return account, caller_for(account=account, meta=request.META)

    def authenticate_header(self, request: Request) -> str:
        # Makes DRF answer 401 (not 403) with a WWW-Authenticate challenge.
        return 'Bearer realm="api"'
