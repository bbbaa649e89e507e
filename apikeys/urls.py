from django.urls import path

from apikeys import views

urlpatterns = [
    path("accounts/", views.account, name="account"),
    path("accounts/delete/", views.account_delete_view, name="account-delete"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/keys/new/", views.key_create, name="key-create"),
    path("dashboard/keys/created/", views.key_created, name="key-created"),
    path("dashboard/keys/<int:pk>/revoke/", views.key_revoke, name="key-revoke"),
]
