"""The founders' dashboard: plan and usage, create and revoke keys, the account page."""

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from apikeys.selectors import api_key_get, api_key_list
from apikeys.services import (
    CreatedKey,
    account_plan,
    api_key_create,
    api_key_revoke,
)
from billing.services import BillingUnavailable, billing_panel
from core.formats import site_url
from founders.selectors import owned_startups
from quota.services import Caller, quota_status
from verification.crypto import decrypt_key, encrypt_key
from web.deletion import account_delete
from web.forms import AccountDeleteForm, ApiKeyCreateForm


@never_cache
@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    account = request.user
    plan, pro_until = account_plan(account=account)
    usage = quota_status(caller=Caller(plan=plan, account_id=account.pk))
    context = {
        "usage": usage,
        "pro_until": pro_until,
        "keys": api_key_list(account=account),
        "form": ApiKeyCreateForm(),
        "billing": billing_panel(account=account),
        "my_startups": owned_startups(account=account),
        "base_url": site_url(request),
    }
    return render(request, "apikeys/dashboard.html", context)


# Session entry holding a just-created key until the page after the redirect shows it once.
NEW_KEY_SESSION = "apikeys.new_key"


@never_cache
@login_required
@require_POST
def key_create(request: HttpRequest) -> HttpResponse:
    form = ApiKeyCreateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The key name is too long (at most 100 characters).")
        return redirect("dashboard")
    created = api_key_create(account=request.user, name=form.cleaned_data["name"])
    # POST -> 303 -> GET: reloading or going back re-shows a page, never creates a key. The raw
    # key waits in the session, encrypted (sessions live in the database), until shown once.
    request.session[NEW_KEY_SESSION] = {"id": created.api_key.pk, "raw": encrypt_key(created.raw)}
    see_other = HttpResponseRedirect(reverse("key-created"))
    see_other.status_code = 303
    return see_other


@never_cache
@login_required
@require_http_methods(["GET"])
def key_created(request: HttpRequest) -> HttpResponse:
    pending = request.session.pop(NEW_KEY_SESSION, None)
    api_key = api_key_get(account=request.user, pk=pending["id"]) if pending else None
    if api_key is None:
        messages.info(
            request,
            "A new key is shown only once, right after it is created. If you did not copy it, "
            "revoke it and create another.",
        )
        return redirect("dashboard")
    created = CreatedKey(api_key=api_key, raw=decrypt_key(pending["raw"]))
    return render(request, "apikeys/key_created.html", {"created": created})


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def key_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    api_key = api_key_get(account=request.user, pk=pk)
    if api_key is None:
        raise Http404("No such key")
    already = api_key.revoked_at is not None
    if request.method == "POST":
        if already:
            messages.warning(request, _already_revoked(api_key))
        else:
            api_key_revoke(api_key=api_key)
            messages.success(request, f"Key {api_key.display} was revoked; it no longer works.")
        return redirect("dashboard")
    if already:
        messages.warning(request, _already_revoked(api_key))
        return redirect("dashboard")
    return render(request, "apikeys/key_revoke.html", {"api_key": api_key})


def _already_revoked(api_key) -> str:
    when = api_key.revoked_at.strftime("%Y-%m-%d %H:%M UTC")
    return f"Key {api_key.display} was already revoked on {when}; nothing changed."


@never_cache
@login_required
def account(request: HttpRequest) -> HttpResponse:
    """The account page: e-mail, password change, deletion."""
    return render(request, "apikeys/account.html")


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def account_delete_view(request: HttpRequest) -> HttpResponse:
    form = AccountDeleteForm(request.user, request.POST or None)
    context = {"form": form, "owned": owned_startups(account=request.user)}
    if request.method == "POST" and form.is_valid():
        try:
            deleted = account_delete(account=request.user)
        except BillingUnavailable as exc:
            form.add_error(
                None,
                f"{exc}, so nothing was deleted: your account, keys and startups are unchanged. "
                "Try again in a few minutes.",
            )
            return render(request, "apikeys/account_delete.html", context, status=503)
        logout(request)
        messages.success(
            request,
            f"Your account was deleted and its {deleted.keys_revoked} active key(s) revoked; "
            f"{deleted.startups_disconnected} startup(s) disconnected from their payment "
            f"provider; {deleted.subscriptions_cancelled} Pro subscription(s) cancelled.",
        )
        return redirect("login")
    return render(request, "apikeys/account_delete.html", context)
