from django.urls import path

from bench import views

urlpatterns = [
    path("bare", views.bare, name="bench-bare"),
    path("minimal", views.minimal_list, name="bench-minimal"),
    path("minimal-detail/<str:slug>", views.minimal_detail, name="bench-minimal-detail"),
]
