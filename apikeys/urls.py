from django.contrib.auth.views import LogoutView
from django.urls import path

from apikeys import views

urlpatterns = [
    path("accounts/signup/", views.sign_up, name="signup"),
    path("accounts/login/", views.SignInView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/keys/new/", views.key_create, name="key-create"),
    path("dashboard/keys/<int:pk>/revoke/", views.key_revoke, name="key-revoke"),
]
