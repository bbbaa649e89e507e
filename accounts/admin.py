from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.models import User


@admin.register(User)
class AccountAdmin(UserAdmin):
    list_display = ("username", "email", "is_verified", "is_staff", "date_joined")
    list_filter = ("is_verified", "is_staff", "is_active")
    fieldsets = (*UserAdmin.fieldsets, ("Owner verification", {"fields": ("is_verified",)}))
