"""`manage.py worker_flags JOB_ID`: print the worker flags of a job (a thin wrapper over the selectors)."""
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Job
from annotation.selectors.quality import job_flags
from annotation.services.quality import apply_flags


class Command(BaseCommand):
    help = (
        "Print every flagged worker of a job with the evidence (fast responses, pasted text, near-duplicate "
        "rewrites, straight-lining, alternating ratings, low agreement). With --apply, store them as the job's flag "
        "report (what the job and worker pages show) and record them on the responses (and soft-reject them if the "
        "job's quality settings say so), as the beat sweep does."
    )

    def add_arguments(self, parser):
        parser.add_argument("job_id", type=int)
        parser.add_argument("--apply", action="store_true", help="Store the flags for the pages and record them on the responses.")

    def handle(self, *args, job_id, apply=False, **options):
        job = Job.objects.filter(pk=job_id).first()
        if job is None:
            raise CommandError(f"No job with id {job_id}.")
        report = job_flags(job)
        flagged = report.flagged_workers()
        for worker_id in flagged:
            for flag in report.workers[worker_id]:
                self.stdout.write(f"worker {worker_id}: {flag.code} - {flag.message}")
        self.stdout.write(f"{len(flagged)} of {len(report.workers)} worker(s) flagged; {len(report.responses)} response(s) flagged.")
        if apply:
            result = apply_flags(job)
            self.stdout.write(f"Recorded flags on {result['recorded']} response(s); soft-rejected {result['soft_rejected']}.")
