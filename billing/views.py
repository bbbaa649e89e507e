"""Paying for Pro: buttons on the dashboard, and Stripe's webhook."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from billing.services import (
    BillingUnavailable,
    WebhookRefused,
    WebhookRetry,
    checkout_session_create,
    portal_session_create,
    webhook_event_handle,
)


@never_cache
@login_required
@require_POST
def upgrade(request: HttpRequest) -> HttpResponse:
    dashboard = request.build_absolute_uri(reverse("dashboard"))
    try:
        url = checkout_session_create(
            account=request.user,
            success_url=f"{dashboard}?checkout=success",
            cancel_url=f"{dashboard}?checkout=cancelled",
        )
    except BillingUnavailable as exc:
        messages.error(request, str(exc))
        return redirect("dashboard")
    return _continue_to_stripe(request, url, what="checkout")


def _continue_to_stripe(request: HttpRequest, url: str, *, what: str) -> HttpResponse:
    # A page with a link rather than a redirect: the site's Content-Security-Policy
    # (form-action 'self') would stop a form's redirect to Stripe's host.
    return render(request, "billing/continue.html", {"url": url, "what": what})


@never_cache
@login_required
@require_POST
def manage(request: HttpRequest) -> HttpResponse:
    try:
        url = portal_session_create(
            account=request.user, return_url=request.build_absolute_uri(reverse("dashboard"))
        )
    except BillingUnavailable as exc:
        messages.error(request, str(exc))
        return redirect("dashboard")
    return _continue_to_stripe(request, url, what="portal")


@csrf_exempt
@require_POST
def stripe_webhook(request: HttpRequest) -> HttpResponse:
    try:
        outcome = webhook_event_handle(
            payload=request.body, signature=request.headers.get("Stripe-Signature")
        )
    except WebhookRefused as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    except WebhookRetry as exc:
        return JsonResponse({"error": str(exc)}, status=503)
    return JsonResponse({"received": True, "outcome": outcome})
