"""Add in-house annotators from a CSV file (a thin wrapper over services.team.add_annotators)."""
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.services.team import TeamError, add_annotators, parse_team_csv


class Command(BaseCommand):
    help = (
        "Create in-house annotators from a CSV of username,email[,name] (a header row is skipped) and "
        "print a one-time link per annotator to set their password. Existing user names are reported and left alone."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="CSV file: username,email and optionally the person's name, one annotator a line.")
        parser.add_argument(
            "--base-url",
            default=None,
            help="Where annotators open Quorum, put before each link (default: QUORUM_PUBLIC_BASE_URL).",
        )

    def handle(self, *args, file, base_url, **options):
        try:
            rows = parse_team_csv(file.read_text(encoding="utf-8-sig"))
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}.") from None
        except UnicodeDecodeError:
            raise CommandError(f"{file} is not UTF-8 text: save it as CSV UTF-8; nobody was added.") from None
        except TeamError as exc:
            raise CommandError(f"{file}: {exc}.") from None
        base = (base_url or settings.QUORUM_PUBLIC_BASE_URL).rstrip("/")
        failed = 0
        for r in add_annotators(rows):
            if r.ok:
                self.stdout.write(f"{r.username}\tadded\t{base}{r.link}")
            else:
                failed += 1
                self.stdout.write(f"{r.username or '-'}\tline {r.line}: {r.message}")
        self.stdout.write(f"{len(rows) - failed} added, {failed} not (see above). Each link works once.")
