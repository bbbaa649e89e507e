from django import forms
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, UserCreationForm

from accounts.forms import LockoutFormMixin
from accounts.models import User


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
        # e-mails the owner instead (apikeys/views.py), so it never reveals who is registered.
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


class ApiKeyCreateForm(forms.Form):
    name = forms.CharField(
        max_length=100,
        required=False,
        help_text="Where the key is used, e.g. “production server”.",
        widget=forms.TextInput(attrs={"placeholder": "e.g. production server"}),
    )


class AccountDeleteForm(forms.Form):
    """Deleting an account asks for its password again."""

    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, account: User, *args, **kwargs):
        self.account = account
        super().__init__(*args, **kwargs)

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if not self.account.check_password(password):
            raise forms.ValidationError("That is not your password; nothing was deleted.")
        return password


class PasswordResetByEmailForm(PasswordResetForm):
    """Django's reset form; the e-mail is the account's username, compared case-insensitively."""

    email = forms.EmailField(
        label="Email",
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}),
    )
