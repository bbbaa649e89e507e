from django.db import migrations


class Migration(migrations.Migration):
    """The Generation model now lives in core (core/migrations/0001): state only, the table
    stays where it is."""

    dependencies = [
        ("openstartup", "0002_generation_rows"),
        ("core", "0001_h31split_generation"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Generation")],
            database_operations=[],
        ),
    ]
