"""Sign-up, sign-in and e-mail confirmation (the signed link, and sending it again from the
dashboard)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView, PasswordResetView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.forms import PasswordResetByEmailForm, SignInForm, SignUpForm
from accounts.services import account_sign_up, email_confirm, email_confirmation_send
from accounts.throttle import (
    SIGNUP_THROTTLED_MESSAGE,
    confirmation_resend_allowed,
    request_client,
    signup_allowed,
)


def site_base_url(request: HttpRequest) -> str:
    """Where links in e-mails point: SITE_URL, else this request's own (validated) host."""
    return settings.SITE_URL or request.build_absolute_uri("/").rstrip("/")


class SignInView(LoginView):
    form_class = SignInForm
    redirect_authenticated_user = True


class PasswordResetByEmailView(PasswordResetView):
    """Django's reset view; the e-mailed link starts with `site_base_url`, as the confirmation
    e-mail's does, never with whatever allowed Host (and port) the request named."""

    form_class = PasswordResetByEmailForm
    success_url = reverse_lazy("password_reset_done")

    def form_valid(self, form):
        self.extra_email_context = {"base_url": site_base_url(self.request)}
        return super().form_valid(form)


@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("dashboard")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if not signup_allowed(client=request_client(request)):
            form.add_error(None, SIGNUP_THROTTLED_MESSAGE)
            return render(request, "accounts/signup.html", {"form": form}, status=429)
        email = form.cleaned_data["email"]
        # The same answer whether or not the address is registered (its owner gets an e-mail).
        account_sign_up(
            email=email, password=form.cleaned_data["password1"], base_url=site_base_url(request)
        )
        return render(request, "accounts/signup_done.html", {"email": email})
    return render(request, "accounts/signup.html", {"form": form})


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
