from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self) -> None:
        from accounts.models import User
        from core import invalidation

        # Key records carry the account (its allowance, a confirmed address, being active); a
        # new account has no keys yet, and a sign-in stamping `last_login` changes nothing.
        invalidation.register(
            "auth",
            User,
            deletes=True,
            ignores={"last_login"},
            skip=_new_or_sign_in,
            new_rows_shown=False,
        )
        # The startups' surfaces show whether their owner is verified (and leave out owners
        # no longer active): only these fields of an account are data.
        shown = {"is_verified", "is_active"}
        hidden = {field.name for field in User._meta.concrete_fields} - shown
        invalidation.register(
            "data", User, ignores=hidden, skip=_new_or_sign_in, new_rows_shown=False
        )


def _new_or_sign_in(created: bool, update_fields: object) -> bool:
    return created or (update_fields is not None and set(update_fields) <= {"last_login"})
