from django.core.management.base import BaseCommand, CommandError, CommandParser

from startups.models import Startup
from verification.connections import provider_connection_disconnect


class Command(BaseCommand):
    help = "Remove a startup's provider connection and key; its figures stop being verified."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")

    def handle(self, *args, slug: str, **options) -> None:
        startup = Startup.objects.filter(slug=slug).first()
        if startup is None:
            raise CommandError(f"no startup with slug {slug!r}")
        if not provider_connection_disconnect(startup=startup):
            raise CommandError(f"{slug!r} had no provider connection")
        self.stdout.write(f"Disconnected {slug}; its revenue is no longer verified.")
