from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from startups.imports import ImportFailed, startups_import


class Command(BaseCommand):
    help = "Import startups from a JSON file (all records or none; see the README for the format)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options) -> None:
        try:
            result = startups_import(path=file)
        except ImportFailed as failure:
            for problem in failure.problems:
                self.stderr.write(problem)
            raise CommandError(
                f"{len(failure.problems)} problem(s); nothing was imported."
            ) from None
        self.stdout.write(f"Imported: {result.created} created, {result.updated} updated.")
