from django.apps import AppConfig


class ApikeysConfig(AppConfig):
    name = "apikeys"

    def ready(self) -> None:
        from apikeys.models import ApiKey, Subscription
        from core import invalidation

        # Key records (apikeys/services.py) are made of keys and plan periods. A new key was
        # never looked up, so no copy of it exists; stamping its last use changes no record.
        invalidation.register(
            "auth",
            ApiKey,
            deletes=True,
            ignores={"last_used_at"},
            skip=_created,
            new_rows_shown=False,
        )
        invalidation.register("auth", Subscription, deletes=True)


def _created(created: bool, update_fields: object) -> bool:
    return created
