"""Export a rewrite job's test sets and raw responses to a directory, from a shell."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Job
from annotation.services.exports import ExportError, export_job


class Command(BaseCommand):
    help = (
        "Write a rewrite job's export: per variant a test set in the corpus's own format, "
        "responses.csv, manifest.json and README.md (spoken-reading jobs: per reading index a test set "
        "with the ASR hypothesis, and readings.jsonl). DIR must not exist or be empty."
    )

    def add_arguments(self, parser):
        parser.add_argument("job_id", type=int, help="Id of the job to export.")
        parser.add_argument("--out", required=True, type=Path, help="Directory to create for the export.")
        parser.add_argument(
            "--audio", action="store_true",
            help="Spoken-reading jobs: also copy every recording into audio/ (readings.jsonl names each one).",
        )

    def handle(self, *args, job_id, out, audio=False, **options):
        job = Job.objects.select_related("corpus").filter(pk=job_id).first()
        if job is None:
            raise CommandError(f"No job with id {job_id}.")
        try:
            files = export_job(job, out, include_audio=audio)
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"Could not write to {out}: {exc.strerror or exc}.") from None
        self.stdout.write(f"Wrote {len(files)} files to {out}:")
        for name in files:
            self.stdout.write(f"  {name}")
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        for variant, counts in manifest.get("variants", {}).items():
            self.stdout.write(
                f"{variant}: {counts['turns_replaced']} turns replaced, "
                f"{counts['turns_without_accepted_rewrite']} without an accepted rewrite"
            )
        if "items" in manifest:
            self.stdout.write(f"{manifest['items']} items with responses that count.")
