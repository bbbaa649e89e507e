"""The dashboard's webhooks page: the account's endpoints, their recent deliveries with a "send
again" button, and a form to register one (the secret is shown once, right after)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from apikeys.services import account_plan
from verification.crypto import decrypt_key, encrypt_key
from webhooks.delivery import delivery_resend
from webhooks.limits import ENDPOINTS, EVENT_TYPES, EVENTS_PER_MONTH
from webhooks.selectors import deliveries_recent, delivery_get, endpoint_list
from webhooks.services import EndpointRefused, endpoint_create

NEW_SECRET_SESSION = "webhooks.new_secret"  # noqa: S105 - a session key's name


@never_cache
@login_required
@require_http_methods(["GET"])
def webhooks_page(request: HttpRequest) -> HttpResponse:
    plan, _ = account_plan(account=request.user)
    endpoints = [
        (endpoint, deliveries_recent(endpoint=endpoint))
        for endpoint in endpoint_list(account_id=request.user.pk)
    ]
    pending = request.session.pop(NEW_SECRET_SESSION, None)
    context = {
        "endpoints": endpoints,
        "event_types": EVENT_TYPES,
        "plan": plan,
        "endpoint_limit": ENDPOINTS[plan.name],
        "event_limit": EVENTS_PER_MONTH[plan.name],
        "new_secret": decrypt_key(pending["secret"]) if pending else None,
        "has_key": request.user.api_keys.filter(revoked_at__isnull=True).exists(),
    }
    return render(request, "webhooks/webhooks.html", context)


@never_cache
@login_required
@require_POST
def endpoint_new(request: HttpRequest) -> HttpResponse:
    if not request.user.api_keys.filter(revoked_at__isnull=True).exists():
        messages.error(request, "Create an API key first: webhooks are for accounts with a key.")
        return redirect("webhooks")
    plan, _ = account_plan(account=request.user)
    data = {
        "url": request.POST.get("url", "")[:2000],
        "events": [e for e in request.POST.getlist("events") if e in EVENT_TYPES],
    }
    try:
        created = endpoint_create(account=request.user, plan_name=plan.name, data=data)
    except EndpointRefused as error:
        messages.error(request, str(error))
        return redirect("webhooks")
    request.session[NEW_SECRET_SESSION] = {"secret": encrypt_key(created.secret)}
    return redirect("webhooks")


@never_cache
@login_required
@require_POST
def delivery_resend_view(request: HttpRequest, pk: int) -> HttpResponse:
    delivery = delivery_get(account_id=request.user.pk, pk=pk)
    if delivery is None:
        raise Http404("No such delivery")
    delivery_resend(delivery)
    messages.success(request, f"Event {delivery.event_id} will be sent again shortly.")
    return redirect("webhooks")
