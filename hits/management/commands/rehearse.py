"""Rehearse a crowd job against a local fake of its provider, with simulated workers (no money moves)."""
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Job
from hits import providers
from hits.policy.costs import cents
from hits.services.rehearsal import RehearsalError, rehearse


class Command(BaseCommand):
    help = (
        "Run a copy of a job against an in-process fake of MTurk's or Prolific's API: post it within its budget, "
        "let simulated workers arrive through the real entry URLs over HTTP and submit, reconcile and approve, "
        "and print what happened. Never touches a real provider; refused when QUORUM_MTURK_LIVE is true."
    )

    def add_arguments(self, parser):
        parser.add_argument("job_id", type=int, help="The job to rehearse; it is copied, never changed.")
        parser.add_argument("--provider", required=True, choices=providers.rehearsable_keys(), help="The crowd to rehearse on.")
        parser.add_argument("--workers", type=int, default=3, help="Simulated workers, one assignment each (default 3).")
        parser.add_argument(
            "--keep", action="store_true",
            help="Keep the rehearsal copy (finished, marked rehearsal) to look at; by default it is deleted.",
        )

    def handle(self, *args, job_id, provider, workers, keep, **options):
        job = Job.objects.filter(pk=job_id).first()
        if job is None:
            raise CommandError(f"there is no job {job_id}")
        try:
            report = rehearse(job, provider, workers=workers, keep=keep, log=self.stdout.write)
        except RehearsalError as exc:
            raise CommandError(str(exc)) from None
        self.print_summary(report)
        if report.refused or not report.within_budget or any(not w.ok for w in report.workers):
            raise CommandError("the rehearsal found problems; see above")

    def print_summary(self, r):
        w = self.stdout.write
        w("")
        w(f"Rehearsal of job {r.job_id} on {r.provider} (fake at {r.fake_url})")
        if r.refused:
            w(f"  launch refused: {r.refused}")
        w(f"  postings:     {_counts(r.postings)}  (create calls: {_flat(r.posting_calls)})")
        w(f"  assignments:  {_flat(r.assignments)}")
        w(f"  submissions:  {r.submissions} saved in Quorum, {r.sent_back} sent back to the provider")
        ok = sum(1 for x in r.workers if x.ok)
        w(f"  workers:      {ok} of {len(r.workers)} finished")
        for x in r.workers:
            if not x.ok:
                w(f"    {x.worker} stopped at {x.stage}: {x.error}")
        w("  payments:     " + (", ".join(_payment(k, v) for k, v in r.payments.items()) or "none"))
        rec = r.reconciled or {}
        repaired = {k: rec.get(k) for k in ("postings_sent", "assignments", "payments", "settled") if rec.get(k)}
        w(f"  reconciler:   {_flat(repaired) if repaired else 'nothing to repair'}"
          + (f"; errors: {'; '.join(rec['errors'])}" if rec.get("errors") else ""))
        if r.approved_after:
            w(f"  approved after reconciling: {r.approved_after}")
        w(f"  listings closed: {r.closed}")
        verdict = "within" if r.within_budget else "OVER"
        w(f"  spend:        {r.committed} USD committed of a {r.budget} USD budget ({verdict} budget)")
        w(f"  rehearsal job {r.copy_id} " + ("kept (finished)" if r.kept else "deleted"))


def _payment(key, v) -> str:
    fees = f", {cents(v['cost'])} USD with fees" if v["cost"] else ""  # bonuses; settlements were committed with their posting
    return f"{key} x{v['count']} ({cents(v['amount'])} USD{fees})"


def _flat(d) -> str:
    if not d:
        return "none"
    return ", ".join(f"{k}: {_flat(v) if isinstance(v, dict) else v}" for k, v in d.items())


def _counts(postings) -> str:
    return ", ".join(f"{s}: {v['postings']} ({v['assignments']} assignments)" for s, v in postings.items()) or "none"
