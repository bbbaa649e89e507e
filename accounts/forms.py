"""Sign-in forms that say when sign-in is paused (both the dashboard's and the admin's)."""

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm

from accounts.throttle import locked_message, request_client, signin_locked


class LockoutFormMixin:
    """Before checking the password, refuse with the lockout message while sign-in is paused.
    The message is the same whether or not the account exists."""

    def clean(self):
        username = self.cleaned_data.get("username")
        if (
            self.request is not None
            and username
            and signin_locked(username=username, client=request_client(self.request))
        ):
            raise forms.ValidationError(locked_message(), code="locked")
        return super().clean()


class AdminSignInForm(LockoutFormMixin, AdminAuthenticationForm):
    """The admin's sign-in form with the lockout."""
