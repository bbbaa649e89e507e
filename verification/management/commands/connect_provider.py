import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from startups.models import Startup
from verification.providers import PROVIDERS
from verification.services import provider_connection_connect


class Command(BaseCommand):
    help = (
        "Connect a startup to its payment provider. The read-only key is read from standard "
        "input (never from the command line, where it would land in shell history and ps)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("provider", choices=sorted(PROVIDERS))
        parser.add_argument("--api-base", default=None, help="another host for the provider API")

    def handle(self, *args, slug: str, provider: str, api_base: str | None, **options) -> None:
        startup = Startup.objects.filter(slug=slug).first()
        if startup is None:
            raise CommandError(f"no startup with slug {slug!r}")
        if sys.stdin.isatty():
            import getpass

            raw_key = getpass.getpass(f"Read-only {provider} key for {slug}: ")
        else:
            raw_key = sys.stdin.readline()
        if not raw_key.strip():
            raise CommandError("no key on standard input")
        try:
            connection = provider_connection_connect(
                startup=startup, provider=provider, raw_key=raw_key, api_base=api_base
            )
        except ValidationError:
            raise CommandError(f"--api-base must be an http(s) URL, not {api_base!r}") from None
        self.stdout.write(
            f"Connected {slug} to {connection.provider}. Run `manage.py sync_revenue --slug "
            f"{slug}` to import its figures."
        )
