"""Export a rewrite job's test sets and raw responses to a directory, from a shell."""
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import SPEECH_ERRORS_MAX_WER, SPEECH_ERRORS_MIN_WER, Job
from annotation.selectors.exports import count_export_user_turns
from annotation.services.export_ood import OutOfDomain
from annotation.services.exports import SPEECH_ERRORS_MAX_PASSES, ExportError, check_speech_errors_wer, export_job


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
        parser.add_argument(
            "--speech-errors-wer", type=float, default=None, metavar="W",
            help=f"Also write speech_errors/: every user turn of the exported dialogs spoken, mixed with noise and "
            f"recognised at corpus WER W ({SPEECH_ERRORS_MIN_WER:g} to {SPEECH_ERRORS_MAX_WER:g}), with speech_errors.jsonl. "
            "Slow: tens of CPU-seconds per 30 user turns.",
        )
        parser.add_argument(
            "--speech-errors-seed", type=int, default=0, metavar="S",
            help="Seed of the speech-error noise (default 0); the same seed gives the same text.",
        )
        parser.add_argument(
            "--out-of-domain-corpus", type=int, default=None, metavar="ID",
            help="Also write out_of_domain/ (RADDLE): user turns mixed with utterances of this other corpus (its id).",
        )
        parser.add_argument("--out-of-domain-rate", type=float, default=0.2, metavar="R", help="Share of user turns mixed (default 0.2).")
        parser.add_argument("--out-of-domain-seed", type=int, default=0, metavar="S", help="Seed of the draw (default 0).")
        parser.add_argument(
            "--out-of-domain-mode", choices=["replace", "interleave"], default="replace",
            help="replace the user turn, or insert the utterance before it with the system's default answer (default replace).",
        )

    def handle(self, *args, job_id, out, audio=False, speech_errors_wer=None, speech_errors_seed=0, **options):
        ood = None
        if options.get("out_of_domain_corpus") is not None:
            ood = OutOfDomain(options["out_of_domain_corpus"], options["out_of_domain_rate"], options["out_of_domain_seed"], options["out_of_domain_mode"])
        job = Job.objects.select_related("corpus").filter(pk=job_id).first()
        if job is None:
            raise CommandError(f"No job with id {job_id}.")
        if speech_errors_seed < 0:
            raise CommandError(f"--speech-errors-seed must be 0 or more; got {speech_errors_seed}.")
        try:
            check_speech_errors_wer(speech_errors_wer, job)
        except ExportError as exc:
            raise CommandError(f"--speech-errors-wer: {exc}") from None
        if speech_errors_wer is not None:
            self.stdout.write(
                f"Speech errors: {count_export_user_turns(job)} user turns to synthesise and recognise, "
                f"up to {SPEECH_ERRORS_MAX_PASSES} passes, at target WER {speech_errors_wer:g} (seed {speech_errors_seed})."
            )
            self.stdout.flush()
        try:
            files = export_job(
                job, out, include_audio=audio, speech_errors_wer=speech_errors_wer, speech_errors_seed=speech_errors_seed, out_of_domain=ood
            )
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"Could not write to {out}: {exc.strerror or exc}.") from None
        self.stdout.write(f"Wrote {len(files)} files to {out}:")
        for name in files:
            self.stdout.write(f"  {name}")
        self._summarise(json.loads((out / "manifest.json").read_text(encoding="utf-8")))

    def _summarise(self, manifest):
        """One line per test set the manifest describes."""
        for variant, counts in manifest.get("variants", {}).items():
            self.stdout.write(
                f"{variant}: {counts['turns_replaced']} turns replaced, "
                f"{counts['turns_without_accepted_rewrite']} without an accepted rewrite"
            )
        speech = manifest.get("speech_errors")
        if speech:
            self.stdout.write(
                f"speech_errors: corpus WER {speech['wer']:.3f} (target {speech['target_wer']:g}) at SNR {speech['snr_db']:.1f} dB "
                f"over {speech['utterances']} user turns; clean floor {speech['clean_floor_wer']:.3f}"
            )
        mixed = manifest.get("out_of_domain")
        if mixed:
            self.stdout.write(
                f"out_of_domain: {mixed['out_of_domain_turns']} of {mixed['user_turns']} user turns {mixed['mode']}d with utterances of {mixed['drawn_from']['name']!r}"
            )
        if "items" in manifest:
            self.stdout.write(f"{manifest['items']} items with responses that count.")
