from django.contrib.auth.models import AbstractUser
from django.db import models


class User(AbstractUser):
    """A founder's or operator's account.

    `is_verified` is the owner-account verification that the AI surface exposes as
    `verification_status` and filters on (`verified=true`); it is set by operators.
    """

    is_verified = models.BooleanField(default=False)

    class Meta:
        db_table = "accounts_user"
