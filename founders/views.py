"""The founders' startup pages: add, claim, edit, connect, sync, disconnect. Every page of a
startup is found through the signed-in account's own startups, so anyone else's is a 404."""

from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from founders.forms import ClaimForm, ConnectForm, StartupForm
from founders.reviews import pending_of
from founders.selectors import (
    account_claims,
    connection_of,
    edit_form_initial,
    key_last_four,
    owned_startup,
    owned_startups,
    sync_problem,
)
from founders.services import (
    EMAIL_NOT_CONFIRMED,
    FounderActionRefused,
    startup_claim,
    startup_connect,
    startup_create,
    startup_disconnect,
    startup_sync_now,
    startup_update,
    sync_wait_minutes,
)
from startups.models import Startup
from verification.keycheck import GUIDES, KeyRefused, supported_guides


def form_page(view):
    """A signed-in founder's page with a form: GET shows it, POST submits it; never cached."""
    return never_cache(login_required(require_http_methods(["GET", "POST"])(view)))


def confirmed_email_required(view):
    """Adding, claiming, editing and connecting need a confirmed e-mail address: anyone else
    gets a page saying so (403) with the button that sends the confirmation link again."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.user.email_confirmed_at is None:
            context = {"message": EMAIL_NOT_CONFIRMED}
            return render(request, "founders/confirm_first.html", context, status=403)
        return view(request, *args, **kwargs)

    return wrapped


def founder_action(view):
    """A form page of a founder's action (add, claim, edit, connect)."""
    return form_page(confirmed_email_required(view))


HELD_AT_CREATION = (
    "{name} was added. The MRR you reported is above what we publish without a check: an "
    "operator reviews it before {name} is published. You can connect a provider meanwhile."
)
SAVED_WITH_REVIEW = (
    "Saved. Some changes wait for an operator's review before they are public (see below); "
    "what is public stays as it was meanwhile."
)


def _own(request: HttpRequest, slug: str) -> Startup:
    startup = owned_startup(account=request.user, slug=slug)
    if startup is None:
        raise Http404("No such startup of yours")
    return startup


def _form_context(form: StartupForm, startup: Startup | None) -> dict:
    return {
        "form": form,
        "startup": startup,
        "review_above": settings.SELF_REPORTED_MRR_REVIEW_ABOVE,
    }


@never_cache
@login_required
def startup_list(request: HttpRequest) -> HttpResponse:
    context = {
        "startups": owned_startups(account=request.user),
        "claims": account_claims(account=request.user),
    }
    return render(request, "founders/startup_list.html", context)


@founder_action
def startup_new(request: HttpRequest) -> HttpResponse:
    form = StartupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            startup = startup_create(
                owner=request.user, profile=form.profile(), mrr=form.cleaned_data["mrr"]
            )
        except FounderActionRefused as exc:
            form.add_error(None, str(exc))
        else:
            if startup.is_published:
                messages.success(
                    request, f"{startup.name} was added. Connect a provider to verify it."
                )
            else:
                messages.info(request, HELD_AT_CREATION.format(name=startup.name))
            return redirect("founder-startup", slug=startup.slug)
    return render(request, "founders/startup_form.html", _form_context(form, None))


@founder_action
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
        "pending": pending_of(startup=startup),
        "review_above": settings.SELF_REPORTED_MRR_REVIEW_ABOVE,
    }
    return render(request, "founders/startup_detail.html", context)


@founder_action
def startup_edit(request: HttpRequest, slug: str) -> HttpResponse:
    startup = _own(request, slug)
    form = StartupForm(request.POST or None, initial=edit_form_initial(startup))
    if request.method == "POST" and form.is_valid():
        startup = startup_update(
            startup=startup, profile=form.profile(), mrr=form.cleaned_data["mrr"]
        )
        if pending_of(startup=startup):
            messages.info(request, SAVED_WITH_REVIEW)
        else:
            messages.success(request, "Saved.")
        return redirect("founder-startup", slug=startup.slug)
    return render(request, "founders/startup_form.html", _form_context(form, startup))


@founder_action
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
    if not outcome.synced:
        messages.info(
            request,
            f"Connected. A sync ran less than {sync_wait_minutes()} minutes ago, so none ran "
            'now: the figures refresh at the next hourly sync, or use "Sync now" later.',
        )
    elif not outcome.finished:
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
