"""E-mail confirmation: the signed link, and sending it again from the dashboard."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from accounts.services import email_confirm, email_confirmation_send
from accounts.throttle import confirmation_resend_allowed


def site_base_url(request: HttpRequest) -> str:
    """Where links in e-mails point: SITE_URL, else this request's own (validated) host."""
    return settings.SITE_URL or request.build_absolute_uri("/").rstrip("/")


@never_cache
@require_GET
def confirm(request: HttpRequest, token: str) -> HttpResponse:
    account = email_confirm(token=token)
    if account is None:
        messages.error(
            request,
            "That confirmation link is invalid or has expired. Sign in and send a new one "
            "from your dashboard.",
        )
    else:
        messages.success(request, "Your e-mail address is confirmed: your API keys work now.")
    return redirect("dashboard" if request.user.is_authenticated else "login")


@never_cache
@login_required
@require_POST
def confirm_resend(request: HttpRequest) -> HttpResponse:
    if request.user.email_confirmed_at is not None:
        return redirect("dashboard")
    if not confirmation_resend_allowed(account_id=request.user.pk):
        messages.error(
            request, "We already sent several links this hour; check your inbox and spam folder."
        )
        return redirect("dashboard")
    email_confirmation_send(account=request.user, base_url=site_base_url(request))
    messages.success(request, f"We sent a new confirmation link to {request.user.email}.")
    return redirect("dashboard")
