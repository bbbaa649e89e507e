"""The founders' dashboard: sign up, plan and usage, create and revoke keys."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from accounts.services import account_sign_up
from accounts.throttle import SIGNUP_THROTTLED_MESSAGE, request_client, signup_allowed
from accounts.views import site_base_url
from apikeys.forms import ApiKeyCreateForm, SignInForm, SignUpForm
from apikeys.selectors import api_key_get, api_key_list
from apikeys.services import account_plan, api_key_create, api_key_revoke
from billing.services import billing_panel
from founders.selectors import owned_startups
from quota.services import Caller, quota_status


class SignInView(LoginView):
    form_class = SignInForm
    redirect_authenticated_user = True


@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if not signup_allowed(client=request_client(request)):
            form.add_error(None, SIGNUP_THROTTLED_MESSAGE)
            return render(request, "apikeys/signup.html", {"form": form}, status=429)
        email = form.cleaned_data["email"]
        # The same answer whether or not the address is registered (its owner gets an e-mail).
        account_sign_up(
            email=email, password=form.cleaned_data["password1"], base_url=site_base_url(request)
        )
        return render(request, "accounts/signup_done.html", {"email": email})
    return render(request, "apikeys/signup.html", {"form": form})


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
    }
    return render(request, "apikeys/dashboard.html", context)


@never_cache
@login_required
@require_POST
def key_create(request: HttpRequest) -> HttpResponse:
    form = ApiKeyCreateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The key name is too long.")
        return redirect("dashboard")
    created = api_key_create(account=request.user, name=form.cleaned_data["name"])
    # The raw key is rendered on this response only: never stored, never redirected with.
    return render(request, "apikeys/key_created.html", {"created": created})


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def key_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    api_key = api_key_get(account=request.user, pk=pk)
    if api_key is None:
        raise Http404("No such key")
    if request.method == "POST":
        api_key_revoke(api_key=api_key)
        messages.success(request, f"Key {api_key.display} was revoked; it no longer works.")
        return redirect("dashboard")
    return render(request, "apikeys/key_revoke.html", {"api_key": api_key})
