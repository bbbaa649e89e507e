import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser

from startups.models import Startup
from verification.connections import ConnectionRefused, provider_connection_connect
from verification.providers import PROVIDERS


class Command(BaseCommand):
    help = (
        "Connect a startup to its payment provider. The key (read-only where the provider offers "
        "one; Lemon Squeezy keys always have full access; several parts as one line of JSON) is "
        "read from standard input (never "
        "from the command line, where it would land in shell history and ps). Test-mode keys, "
        "test-mode data and sandbox hosts are refused."
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

            connector = PROVIDERS[provider]
            raw_key = getpass.getpass(f"{connector.key_hint} for {slug}: ")
        else:
            raw_key = sys.stdin.readline()
        if not raw_key.strip():
            raise CommandError("no key on standard input")
        try:
            connection = provider_connection_connect(
                startup=startup, provider=provider, raw_key=raw_key, api_base=api_base
            )
        except ConnectionRefused as exc:
            raise CommandError(f"not connected: {exc}") from None
        if not PROVIDERS[provider].read_only_key:
            self.stdout.write(
                f"Note: {PROVIDERS[provider].title} cannot issue a read-only key; this key has "
                "full access to the account. We only read with it and store it encrypted."
            )
        self.stdout.write(
            f"Connected {slug} to {connection.provider}. Run `manage.py sync_revenue --slug "
            f"{slug}` to import its figures."
        )
