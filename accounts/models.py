from django.contrib.auth.models import AbstractUser, UserManager
from django.db import models
from django.utils import timezone


class AccountManager(UserManager):
    def create_superuser(self, username, email=None, password=None, **extra_fields):
        # Made by an operator (`createsuperuser`): the address needs no confirming.
        extra_fields.setdefault("email_confirmed_at", timezone.now())
        return super().create_superuser(username, email, password, **extra_fields)


class User(AbstractUser):
    """A founder's or operator's account.

    `is_verified` is the owner-account verification that the AI surface exposes as
    `verification_status` and filters on (`verified=true`); it is set by operators.
    """

    is_verified = models.BooleanField(default=False)
    # When the owner proved they read this address (signed link), or an operator made the
    # account. Until then the account's API keys answer 403 `email_not_confirmed`.
    email_confirmed_at = models.DateTimeField(null=True, blank=True)
    # Set by operators only ("contact the operator" for more records; `make bench` uses it for
    # its Free key): replaces a capped plan's monthly allowance for this account. Empty: the
    # plan's own number (quota/plans.py).
    monthly_allowance_override = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Records per month on capped plans for this account; empty: the plan's.",
    )
    # Set by operators only: how many startups this account may own (add or claim); empty:
    # FOUNDER_MAX_STARTUPS.
    founder_max_startups_override = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Startups this account may own; empty: the FOUNDER_MAX_STARTUPS setting.",
    )

    objects = AccountManager()

    class Meta:
        db_table = "accounts_user"


class ThrottleCounter(models.Model):
    """A sign-in or sign-up counter (accounts/throttle.py) kept in the database when no shared
    cache is configured, so every worker and instance counts together. `key` names what is
    counted (hashed account name, client address); the row holds until `expires_at`."""

    key = models.CharField(max_length=200, unique=True)
    count = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.key}: {self.count} until {self.expires_at:%Y-%m-%d %H:%M}"
