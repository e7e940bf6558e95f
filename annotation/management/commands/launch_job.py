"""Launch a draft job, or resume a paused one, from a shell (a thin wrapper over services.jobs.launch_job)."""
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Job
from annotation.services.jobs import JobError, launch_job


class Command(BaseCommand):
    help = "Launch a draft job, or resume a paused one, so that annotators can claim its items."

    def add_arguments(self, parser):
        parser.add_argument("job_id", type=int, help="Id of the job (printed by create_job).")

    def handle(self, *args, job_id, **options):
        job = Job.objects.filter(pk=job_id).first()
        if job is None:
            raise CommandError(f"No job with id {job_id}.")
        try:
            job = launch_job(job)
        except JobError as exc:
            raise CommandError(f"Job {job_id}: {exc}.") from None
        self.stdout.write(f"Job {job.pk} ({job.name!r}) is live with {job.items.count()} items.")
