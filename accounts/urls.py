from django.urls import path

from accounts import views

urlpatterns = [
    path("accounts/confirm/resend/", views.confirm_resend, name="email-confirm-resend"),
    path("accounts/confirm/<str:token>/", views.confirm, name="email-confirm"),
]
