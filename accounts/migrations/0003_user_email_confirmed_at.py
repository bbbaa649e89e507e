from django.db import migrations, models
from django.utils import timezone

import accounts.models


def confirm_existing_accounts(apps, schema_editor):
    # Accounts made before confirmation existed keep working keys.
    apps.get_model("accounts", "User").objects.update(email_confirmed_at=timezone.now())


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_monthly_allowance_override")]

    operations = [
        migrations.AddField(
            model_name="user",
            name="email_confirmed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(confirm_existing_accounts, migrations.RunPython.noop),
        migrations.AlterModelManagers(
            name="user",
            managers=[("objects", accounts.models.AccountManager())],
        ),
    ]
