from django.urls import path

from billing import views

urlpatterns = [
    path("dashboard/billing/upgrade/", views.upgrade, name="billing-upgrade"),
    path("dashboard/billing/manage/", views.manage, name="billing-manage"),
    path("billing/stripe/webhook", views.stripe_webhook, name="stripe-webhook"),
]
