"""Sign-up, sign-in (the dashboard's and the admin's, both saying when sign-in is paused) and
password reset forms."""

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, UserCreationForm

from accounts.models import User
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


class SignUpForm(UserCreationForm):
    """E-mail and password twice; the e-mail becomes the username."""

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("email",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["email"].required = True
        self.fields["email"].widget.attrs.update(autocomplete="email", autofocus=True)

    def clean_email(self) -> str:
        # A registered address is not an error here: the page answers as for a new one and
        # e-mails the owner instead (accounts/views.py), so it never reveals who is registered.
        email = self.cleaned_data["email"].strip().lower()
        # Lets the password validators compare the password with the e-mail.
        self.instance.username = email
        return email


class SignInForm(LockoutFormMixin, AuthenticationForm):
    username = forms.EmailField(
        label="Email", widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "email"})
    )

    def clean_username(self) -> str:
        return self.cleaned_data["username"].strip().lower()


class PasswordResetByEmailForm(PasswordResetForm):
    """Django's reset form; the e-mail is the account's username, compared case-insensitively."""

    email = forms.EmailField(
        label="Email",
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}),
    )
