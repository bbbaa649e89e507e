from django import forms
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm

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
