"""Rehearse a crowd job against a local fake of its provider, before any money moves.

`rehearse` copies the job (items, slots and crowd settings, marked `rehearsal`), starts the fake
provider (MTurk's JSON API for boto3's endpoint_url, or Prolific's HTTP API) and the Django app in
threads of this process, points the provider at the fake for this run only, launches and posts the
copy within its budget, and lets simulated workers take assignments through the real entry URLs
over HTTP, submit, and be sent back to the fake's submit or completion URL. It then reconciles,
approves what is left, closes the listings and reports. The original job is never touched.

Nothing here can reach a real provider: a live MTurk configuration is refused; the providers are
replaced by instances built with the fake's address (the MTurk client is made here, with dummy
credentials); the copy's crowd settings say `rehearsal`, which keeps the launch signal and the
periodic reconciler away from it; and the simulated workers refuse any non-local address.
"""
import secrets
from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Sum
from django.test.utils import override_settings

from annotation.models import Item, Job, Response, Slot, Worker
from annotation.services.jobs import JobError, finish_job

from .. import providers
from ..links import entry_path
from ..models import JobCrowdConfig, Payment, Posting, ProviderAssignment
from ..policy import requirements
from .config import EDITABLE
from .payments import approve_assignments
from .postings import BudgetExceeded, close_listings, launch_crowd_job, post_job
from .reconcile import ReconcileSummary, reconcile_job

ITEM_BATCH = 2000


class RehearsalError(ValueError):
    """The rehearsal cannot run; the message says what to change. Nothing was posted anywhere."""


@dataclass
class RehearsalReport:
    job_id: int
    copy_id: int
    provider: str
    fake_url: str = ""
    refused: str = ""
    posting_calls: dict = field(default_factory=dict)
    postings: dict = field(default_factory=dict)
    assignments: dict = field(default_factory=dict)
    submissions: int = 0
    sent_back: int = 0
    workers: list = field(default_factory=list)
    reconciled: ReconcileSummary | None = None
    approved_after: int = 0
    payments: dict = field(default_factory=dict)
    budget: Decimal | None = None
    committed: Decimal = Decimal("0.00")
    closed: int = 0
    kept: bool = False

    @property
    def within_budget(self) -> bool:
        return self.budget is not None and self.committed <= self.budget


def refuse_live() -> None:
    if getattr(settings, "QUORUM_MTURK_LIVE", False):
        raise RehearsalError(
            "QUORUM_MTURK_LIVE is true: a rehearsal runs only where live work is switched off. "
            "Run it with QUORUM_MTURK_LIVE=false (on a copy of the settings, not the live deployment)."
        )


def copy_for_rehearsal(job: Job, provider: str) -> Job:
    """A draft copy of the job (same items, slots and crowd settings) on `provider`, marked rehearsal."""
    if provider not in providers.rehearsable_keys():
        raise RehearsalError(f"rehearse on {' or '.join(providers.rehearsable_keys())}; {provider!r} has no local fake")
    source = JobCrowdConfig.objects.filter(job=job).first()
    if source is None or source.budget is None:
        raise RehearsalError(
            f"job {job.pk} has no crowd budget; set one first (crowd settings on the job page, or PUT /api/crowd/jobs/{job.pk}/)"
        )
    try:
        reqs = providers.clean_requirements(provider, source.requirements)
    except requirements.RequirementsError as exc:
        raise RehearsalError(f"the job's requirements do not suit {provider}: {exc}") from None
    with transaction.atomic():
        copy = Job.objects.create(
            name=f"Rehearsal of {job.name}"[:200], corpus=job.corpus, payload_set=job.payload_set, task_type=job.task_type, settings=job.settings,
            instructions=job.instructions, redundancy=job.redundancy, reward=job.reward,
            claim_timeout_minutes=job.claim_timeout_minutes, created_by=job.created_by, reviews=job.reviews,
        )
        items = job.items.order_by("position").values_list("turn_id", "position", "payload", "subject_response_id", "gold")
        batch = []
        for row in items.iterator(chunk_size=ITEM_BATCH):
            batch.append(row)
            if len(batch) == ITEM_BATCH:
                _copy_items(copy, batch)
                batch = []
        _copy_items(copy, batch)
        values = {name: getattr(source, name) for name in EDITABLE if name != "requirements"}
        # What a copy at the fake must be (MTurk: the sandbox), over the source's own options.
        forced = providers.package_module(provider, "rehearsal").FORCED_OPTIONS
        JobCrowdConfig.objects.create(
            job=copy, provider=provider, requirements=reqs, rehearsal=True,
            provider_options=providers.clean_settings(forced, source.provider_options), **values,
        )
    return copy


def _copy_items(copy: Job, rows) -> None:
    if not rows:
        return
    items = Item.objects.bulk_create(
        Item(job=copy, turn_id=t, position=p, payload=payload, subject_response_id=s, gold=g)
        for t, p, payload, s, g in rows
    )
    Slot.objects.bulk_create(
        Slot(item=item, job=copy, index=k, position=item.position) for item in items for k in range(copy.redundancy)
    )


def rehearse(job: Job, provider: str, *, workers: int = 3, keep: bool = False, log=lambda line: None) -> RehearsalReport:
    """Run the whole crowd path of `job` on a copy against the local fake; see the module docstring."""
    from annotation.demo.server import DemoServer

    refuse_live()
    if workers < 0:
        raise RehearsalError("--workers must be zero or more")
    copy = copy_for_rehearsal(job, provider)
    report = RehearsalReport(job_id=job.pk, copy_id=copy.pk, provider=provider, kept=keep)
    log(f"Copied job {job.pk} to rehearsal job {copy.pk} ({copy.items.count()} items) on {provider}.")
    fake, instance, fake_settings = _fake_provider(provider)
    server = None
    try:
        fake.start()
        report.fake_url = fake.url
        server = DemoServer(host="127.0.0.1", port=0).start()
        log(f"Fake {provider} at {fake.url}; Quorum at {server.url}.")
        with override_settings(QUORUM_PUBLIC_BASE_URL=server.url, **fake_settings(fake)), providers.override(provider, instance):
            try:
                launch_crowd_job(copy)
            except (BudgetExceeded, JobError) as exc:
                report.refused = str(exc)
                log(f"Launch refused: {exc}")
            else:
                report.posting_calls = post_job(copy, concurrency=1)
                log(f"Posted: {report.posting_calls}.")
                report.workers = _simulate_workers(copy, provider, fake, server.url, workers, log)
                report.reconciled = reconcile_job(copy.pk, grace_seconds=0)
                left = list(
                    ProviderAssignment.objects.filter(posting__job=copy, state=ProviderAssignment.State.SUBMITTED)
                    .values_list("pk", flat=True)
                )
                report.approved_after = sum(1 for r in approve_assignments(left) if r.ok)
                report.closed = close_listings(Posting.objects.filter(job=copy), instance)
            report.sent_back = len(getattr(fake, "external_submits", None) or getattr(fake, "completions", []))
    finally:
        if server is not None:
            server.stop()
        fake.stop()
    _fill_counts(report, copy)
    if keep:
        try:
            finish_job(copy)
        except JobError:
            pass  # a refused launch leaves a draft
    else:
        discard_rehearsal(copy)
    return report


def _fake_provider(provider: str):
    """(fake server, provider instance pointed at it, settings for this run) — never a real address."""
    seed = secrets.randbits(32)  # fresh HIT and assignment ids: a kept rehearsal never collides with the next
    return providers.package_module(provider, "rehearsal").world(seed)


def _simulate_workers(copy: Job, provider: str, fake, app_url: str, count: int, log) -> list:
    from urllib.parse import urlencode

    from ..fakes.workers import SimulatedCrowdWorker, WorkerOutcome

    kit = providers.package_module(provider, "rehearsal")
    postings = list(Posting.objects.filter(job=copy, state=Posting.State.CREATED).order_by("seq"))
    tag = secrets.token_hex(3).upper()
    outcomes = []
    for i in range(count):
        worker_id = kit.worker_id(tag, i + 1)
        outcome = WorkerOutcome(worker=worker_id)
        try:
            outcome.assignment, query, cookies = kit.take(fake, postings, worker_id)
        except RuntimeError as exc:
            outcome.error = f"the provider gave no assignment: {exc}"
            outcomes.append(outcome)
            log(f"  worker {worker_id}: {outcome.error}")
            continue
        outcome.stage = "accepted"
        sim = SimulatedCrowdWorker(worker_id, allowed_origins=[app_url, fake.url], provider_origin=fake.url, cookies=cookies, seed=i)
        sim.work(f"{app_url}{entry_path(provider, copy.pk)}?{urlencode(query)}", outcome)
        outcomes.append(outcome)
        log(f"  worker {worker_id}: {'submitted and sent back' if outcome.ok else outcome.error}")
    return outcomes


def _fill_counts(report: RehearsalReport, copy: Job) -> None:
    config = JobCrowdConfig.objects.get(job=copy)
    report.budget, report.committed = config.budget, config.committed
    report.postings = {
        r["state"]: {"postings": r["n"], "assignments": r["places"]}
        for r in Posting.objects.filter(job=copy).values("state").annotate(n=Count("id"), places=Sum("assignments"))
    }
    report.assignments = dict(
        ProviderAssignment.objects.filter(posting__job=copy).values_list("state").annotate(n=Count("id")).order_by()
    )
    report.submissions = Response.objects.filter(item__job=copy).count()
    report.payments = {
        f"{r['kind']} {r['state']}": {"count": r["n"], "amount": r["amount"] or Decimal("0.00"), "cost": r["cost"] or Decimal("0.00")}
        for r in Payment.objects.filter(assignment__posting__job=copy)
        .values("kind", "state").annotate(n=Count("id"), amount=Sum("amount"), cost=Sum("cost")).order_by("kind", "state")
    }


def discard_rehearsal(copy: Job) -> None:
    """Delete a rehearsal copy and everything it made (workers included). Refuses any other job."""
    config = JobCrowdConfig.objects.filter(job=copy).first()
    if config is None or not config.rehearsal:
        raise RehearsalError(f"job {copy.pk} is not a rehearsal copy; it is not deleted")
    with transaction.atomic():
        worker_ids = set(ProviderAssignment.objects.filter(posting__job=copy).values_list("worker_id", flat=True))
        Payment.objects.filter(assignment__posting__job=copy).delete()
        ProviderAssignment.objects.filter(posting__job=copy).delete()
        Posting.objects.filter(job=copy).delete()
        Response.objects.filter(item__job=copy).delete()
        Slot.objects.filter(job=copy).delete()
        copy.delete()
        # Only the rehearsal's own simulated workers, and only when nothing else of theirs remains.
        Worker.objects.filter(pk__in=worker_ids, external_id__istartswith="rehearsal", responses__isnull=True, slots__isnull=True).delete()
