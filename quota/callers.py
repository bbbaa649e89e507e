"""Who a request's allowance belongs to: its key's account, or its client address."""

from collections.abc import Mapping
from dataclasses import dataclass

from rest_framework.request import Request

from core.clientip import client_address, client_key
from quota.plans import FREE, PlanLimits
from quota.services import Caller


@dataclass(frozen=True)
class KeyAccount:
    """A valid API key's account, by id, with its plan now (what authenticating the key found):
    DRF's `request.user` for keyed requests, no User row loaded on the hot path."""

    pk: int
    key_id: int
    plan: PlanLimits
    is_authenticated = True


def caller_for(*, account: KeyAccount | None, meta: Mapping[str, str]) -> Caller:
    """The Caller of a request: its key's account on the plan the key lookup brought, else
    Free per client address."""
    if account is not None:
        return Caller(plan=account.plan, account_id=account.pk)
    address = client_address(
        remote_addr=meta.get("REMOTE_ADDR", ""), forwarded_for=meta.get("HTTP_X_FORWARDED_FOR")
    )
    return Caller(plan=FREE, client=client_key(address))


def request_caller(request: Request) -> Caller:
    """The request's Caller: the one its key's authentication handed to the view as
    `request.auth` (DRF authenticates on first use; a bad key raises), else Free per client
    address."""
    caller = request.auth
    if caller is None:
        caller = caller_for(account=None, meta=request.META)
    return caller
