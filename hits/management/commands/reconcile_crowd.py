"""Reconcile crowd jobs with their providers now (what Celery beat does periodically)."""
import json

from django.core.management.base import BaseCommand

from hits.services.reconcile import jobs_to_reconcile, reconcile_job


class Command(BaseCommand):
    help = "Bring postings, assignments and payments in line with the providers (after a crash or an outage)."

    def add_arguments(self, parser):
        parser.add_argument("job_ids", nargs="*", type=int, help="Jobs to reconcile; default: every job with open work.")
        parser.add_argument(
            "--grace-seconds", type=float, default=None,
            help="Repeat calls begun at least this long ago (default QUORUM_RECONCILE_GRACE_SECONDS). "
            "Use 0 only when no other process is posting or paying.",
        )

    def handle(self, *args, job_ids, grace_seconds, **options):
        for job_id in job_ids or jobs_to_reconcile():
            self.stdout.write(json.dumps(reconcile_job(job_id, grace_seconds=grace_seconds)))
