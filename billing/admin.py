from django.contrib import admin

from billing.models import BillingCustomer, StripeEvent, StripeSubscription


@admin.register(BillingCustomer)
class BillingCustomerAdmin(admin.ModelAdmin):
    list_display = ("account", "stripe_customer_id", "created_at")
    search_fields = ("account__email", "stripe_customer_id")
    raw_id_fields = ("account",)


@admin.register(StripeSubscription)
class StripeSubscriptionAdmin(admin.ModelAdmin):
    list_display = ("stripe_id", "account", "status", "current_period_end", "payment_failed_at")
    list_filter = ("status",)
    search_fields = ("stripe_id", "account__email")
    readonly_fields = [f.name for f in StripeSubscription._meta.fields]


@admin.register(StripeEvent)
class StripeEventAdmin(admin.ModelAdmin):
    list_display = ("event_id", "type", "created", "received_at", "outcome")
    list_filter = ("type",)
    search_fields = ("event_id",)
    readonly_fields = [f.name for f in StripeEvent._meta.fields]
