from django.urls import path

from webhooks import views

urlpatterns = [
    path("dashboard/webhooks/", views.webhooks_page, name="webhooks"),
    path("dashboard/webhooks/new/", views.endpoint_new, name="webhook-create"),
    path(
        "dashboard/webhooks/deliveries/<int:pk>/resend/",
        views.delivery_resend_view,
        name="webhook-resend",
    ),
]
