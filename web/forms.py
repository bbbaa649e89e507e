from django import forms

from accounts.models import User


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
