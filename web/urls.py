from django.urls import path

from web import dashboard

urlpatterns = [
    path("accounts/", dashboard.account, name="account"),
    path("accounts/delete/", dashboard.account_delete_view, name="account-delete"),
    path("dashboard/", dashboard.dashboard, name="dashboard"),
    path("dashboard/keys/new/", dashboard.key_create, name="key-create"),
    path("dashboard/keys/created/", dashboard.key_created, name="key-created"),
    path("dashboard/keys/<int:pk>/revoke/", dashboard.key_revoke, name="key-revoke"),
]
