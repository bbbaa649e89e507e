import secrets

from django.db import migrations


def create_rows(apps, schema_editor):
    Generation = apps.get_model("openstartup", "Generation")
    for kind in ("auth", "data"):
        Generation.objects.get_or_create(kind=kind, defaults={"token": secrets.token_hex(8)})


class Migration(migrations.Migration):
    dependencies = [("openstartup", "0001_readcache_generation")]

    operations = [migrations.RunPython(create_rows, migrations.RunPython.noop)]
