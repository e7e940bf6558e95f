"""manage.py import_corpus NAME --format FORMAT DATA [--labels L] [--knowledge K] [--language TAG]

Imports in the foreground, all or nothing; a refused file leaves the database unchanged and the
command exits with the reason. For the queued import with a progress row, use the API or the
organizer pages (annotation.services.imports.start_import).
"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import SourceFormat
from annotation.services.imports import LANGUAGE_HELP, ImportFailed, import_corpus

# Files at least this big get progress lines on stderr.
PROGRESS_FROM_BYTES = 20 * 1024 * 1024


class Command(BaseCommand):
    help = "Import a corpus (MultiWOZ 2.x, DSTC9 Track 1, DSTC6 Track 1 or Quorum JSONL) under a new name."

    def add_arguments(self, parser):
        parser.add_argument("name", help="Name of the new corpus (must not be taken).")
        parser.add_argument("data", type=Path, help="data.json, logs.json, the DSTC6 JSON file or the .jsonl file, or a .zip holding that one file.")
        parser.add_argument(
            "--format", dest="source_format", required=True, choices=SourceFormat.values, help="Format of the files."
        )
        parser.add_argument("--labels", type=Path, help="DSTC9 labels.json (optional; one entry per instance).")
        parser.add_argument("--knowledge", type=Path, help="DSTC9 knowledge.json (optional).")
        parser.add_argument("--language", default="", help=LANGUAGE_HELP)

    def handle(self, *args, name, data, source_format, labels=None, knowledge=None, language="", **options):
        files = {"data": data}
        if labels is not None:
            files["labels"] = labels
        if knowledge is not None:
            files["knowledge"] = knowledge
        show_progress = data.is_file() and data.stat().st_size >= PROGRESS_FROM_BYTES
        try:
            corpus = import_corpus(
                name=name,
                source_format=source_format,
                files=files,
                progress=self._progress if show_progress else None,
                language=language,
            )
        except ImportFailed as exc:
            raise CommandError(f"Nothing was imported. {exc}") from None
        summary = corpus.import_summary
        self.stdout.write(
            self.style.SUCCESS(
                f'Imported corpus "{corpus.name}" ({corpus.get_source_format_display()}, language {corpus.language}'
                f"{'' if language else ', found from its text'}): "
                f"{summary.dialogs:,} dialogs, {summary.turns:,} turns ({summary.user_turns:,} user turns), "
                f"{summary.slot_values:,} slot values."
            )
        )

    def _progress(self, done: int, total: int) -> None:
        share = done / total if total else 1.0
        self.stderr.write(f"  read {share:.0%} ({done / 2**20:,.0f} of {total / 2**20:,.0f} MB)")
