from django import forms

from verification.keycheck import provider_choices


class StartupForm(forms.Form):
    """A startup's profile and the founder's self-reported MRR."""

    name = forms.CharField(max_length=200)
    website = forms.URLField(max_length=500, required=False, assume_scheme="https")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    category = forms.CharField(max_length=100, required=False)
    mrr = forms.IntegerField(
        label="MRR (US dollars, self-reported)",
        min_value=0,
        max_value=10**12,
        required=False,
        help_text="Whole dollars per month. Shown as self-reported until a provider verifies it.",
    )
    industry = forms.CharField(max_length=100, required=False)
    business_type = forms.CharField(max_length=50, required=False)
    founded = forms.IntegerField(min_value=1800, max_value=2100, required=False)
    country = forms.CharField(max_length=100, required=False)
    team_size = forms.CharField(max_length=50, required=False)
    founder_name = forms.CharField(label="Founder name", max_length=200, required=False)
    icon = forms.URLField(label="Icon URL", max_length=500, required=False, assume_scheme="https")

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Give the startup a name.")
        return name

    def profile(self) -> dict:
        # Empty text is unknown: stored as NULL, never as "".
        return {k: (v if v != "" else None) for k, v in self.cleaned_data.items() if k != "mrr"}


class ClaimForm(forms.Form):
    slug = forms.CharField(max_length=200, help_text="The last part of the startup's address.")


class ConnectForm(forms.Form):
    provider = forms.ChoiceField(choices=provider_choices)
    key = forms.CharField(
        label="Read-only API key",
        # An App Store Connect credential is a line of JSON holding its .p8 key (about 400).
        max_length=2000,
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
    )
