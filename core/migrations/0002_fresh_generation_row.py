import secrets

from django.db import migrations


def create_row(apps, schema_editor):
    # The "fresh" kind (sync times read beside the kept copies, core/beside.py) gets its row
    # here like "auth" and "data" did, so no request has to insert it.
    Generation = apps.get_model("core", "Generation")
    Generation.objects.get_or_create(kind="fresh", defaults={"token": secrets.token_hex(8)})


class Migration(migrations.Migration):
    dependencies = [("core", "0001_h31split_generation")]

    operations = [migrations.RunPython(create_row, migrations.RunPython.noop)]
