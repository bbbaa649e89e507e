"""Pro paid through Stripe: which Stripe customer an account is, each Stripe subscription as
last seen, and every webhook event id handled (replays are ignored).

The plan itself stays where it always was: apikeys.Subscription, Pro while its period runs.
Each Stripe subscription drives one such row.
"""

from django.conf import settings
from django.db import models

from apikeys.models import Subscription


class BillingCustomer(models.Model):
    account = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="billing_customer"
    )
    stripe_customer_id = models.CharField(max_length=255, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.account} = {self.stripe_customer_id}"


class StripeSubscription(models.Model):
    stripe_id = models.CharField(max_length=255, unique=True)
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="stripe_subscriptions"
    )
    status = models.CharField(max_length=30)
    current_period_end = models.DateTimeField(null=True, blank=True)
    # When Stripe created the newest event applied here: older events arriving late are ignored.
    last_event_at = models.DateTimeField()
    payment_failed_at = models.DateTimeField(null=True, blank=True)
    # Whether its items hold STRIPE_PRO_PRICE_ID: only then does it make the account Pro (a
    # subscription to another price of the operator's Stripe account is recorded, never Pro).
    holds_pro_price = models.BooleanField(default=True)
    plan_period = models.OneToOneField(
        Subscription,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="stripe_subscription",
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.stripe_id} ({self.status})"


class StripeEvent(models.Model):
    event_id = models.CharField(max_length=255, unique=True)
    type = models.CharField(max_length=100)
    created = models.DateTimeField(help_text="When Stripe created the event.")
    received_at = models.DateTimeField(auto_now_add=True)
    outcome = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return f"{self.event_id} {self.type}"
