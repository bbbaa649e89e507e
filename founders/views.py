"""The founders' startup pages: add, claim, edit, connect, sync, disconnect. Every page of a
startup is found through the signed-in account's own startups, so anyone else's is a 404."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from founders.forms import ClaimForm, ConnectForm, StartupForm
from founders.selectors import (
    account_claims,
    connection_of,
    key_last_four,
    owned_startup,
    owned_startups,
    sync_problem,
)
from founders.services import (
    FounderActionRefused,
    startup_claim,
    startup_connect,
    startup_create,
    startup_disconnect,
    startup_sync_now,
    startup_update,
)
from startups.models import Startup
from verification.keycheck import GUIDES, KeyRefused, supported_guides


def form_page(view):
    """A signed-in founder's page with a form: GET shows it, POST submits it; never cached."""
    return never_cache(login_required(require_http_methods(["GET", "POST"])(view)))


def _own(request: HttpRequest, slug: str) -> Startup:
    startup = owned_startup(account=request.user, slug=slug)
    if startup is None:
        raise Http404("No such startup of yours")
    return startup


@never_cache
@login_required
def startup_list(request: HttpRequest) -> HttpResponse:
    context = {
        "startups": owned_startups(account=request.user),
        "claims": account_claims(account=request.user),
    }
    return render(request, "founders/startup_list.html", context)


@form_page
def startup_new(request: HttpRequest) -> HttpResponse:
    form = StartupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        startup = startup_create(
            owner=request.user, profile=form.profile(), mrr=form.cleaned_data["mrr"]
        )
        messages.success(request, f"{startup.name} was added. Connect a provider to verify it.")
        return redirect("founder-startup", slug=startup.slug)
    return render(request, "founders/startup_form.html", {"form": form, "startup": None})


@form_page
def startup_claim_view(request: HttpRequest) -> HttpResponse:
    form = ClaimForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            claim = startup_claim(account=request.user, slug=form.cleaned_data["slug"])
        except FounderActionRefused as exc:
            form.add_error("slug", str(exc))
        else:
            messages.success(
                request, f"Your claim on {claim.startup.name} is pending an operator's approval."
            )
            return redirect("founder-startups")
    return render(request, "founders/claim.html", {"form": form})


@never_cache
@login_required
def startup_detail(request: HttpRequest, slug: str) -> HttpResponse:
    startup = _own(request, slug)
    connection = connection_of(startup)
    context = {
        "startup": startup,
        "connection": connection,
        "problem": sync_problem(connection),
        "key_last_four": key_last_four(connection) if connection else None,
        "guide": GUIDES.get(connection.provider) if connection else None,
        "verification": getattr(startup, "verification", None),
        "sync_every_minutes": settings.SYNC_NOW_INTERVAL_SECONDS // 60,
    }
    return render(request, "founders/startup_detail.html", context)


@form_page
def startup_edit(request: HttpRequest, slug: str) -> HttpResponse:
    startup = _own(request, slug)
    reported = getattr(startup, "reported", None)
    initial = {name: getattr(startup, name) for name in StartupForm.base_fields if name != "mrr"}
    initial["mrr"] = reported.mrr if reported else startup.mrr
    form = StartupForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        startup_update(startup=startup, profile=form.profile(), mrr=form.cleaned_data["mrr"])
        messages.success(request, "Saved.")
        return redirect("founder-startup", slug=startup.slug)
    return render(request, "founders/startup_form.html", {"form": form, "startup": startup})


@form_page
def startup_connect_view(request: HttpRequest, slug: str) -> HttpResponse:
    startup = _own(request, slug)
    form = ConnectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            outcome = startup_connect(
                startup=startup,
                provider=form.cleaned_data["provider"],
                raw_key=form.cleaned_data["key"],
            )
        except KeyRefused as exc:
            form.add_error("key", str(exc))
        else:
            _say_how_the_sync_went(request, outcome, first=True)
            return redirect("founder-startup", slug=startup.slug)
    return render(
        request,
        "founders/connect.html",
        {"form": form, "startup": startup, "guides": supported_guides()},
    )


def _say_how_the_sync_went(request: HttpRequest, outcome, *, first: bool) -> None:
    if not outcome.finished:
        messages.info(request, "The sync is still running; reload this page in a minute.")
    elif outcome.connection.status == "ok":
        messages.success(request, "Connected and verified." if first else "Synced.")
    else:
        messages.error(request, sync_problem(outcome.connection))


@never_cache
@login_required
@require_POST
def startup_sync(request: HttpRequest, slug: str) -> HttpResponse:
    startup = _own(request, slug)
    try:
        outcome = startup_sync_now(startup=startup)
    except FounderActionRefused as exc:
        messages.error(request, str(exc))
    else:
        _say_how_the_sync_went(request, outcome, first=False)
    return redirect("founder-startup", slug=startup.slug)


@form_page
def startup_disconnect_view(request: HttpRequest, slug: str) -> HttpResponse:
    startup = _own(request, slug)
    if request.method == "POST":
        if startup_disconnect(startup=startup):
            messages.success(
                request, "Disconnected: the key was deleted and the figures are self-reported."
            )
        return redirect("founder-startup", slug=startup.slug)
    return render(request, "founders/disconnect.html", {"startup": startup})
