"""Steps of the crash tests, each run in its own process against a file database.

    python -m tests.hits.crash_scenario setup-post 500     # a job of 500 slots on MTurk, HITs of 1
    python -m tests.hits.crash_scenario post               # posts; the test kills it midway
    python -m tests.hits.crash_scenario setup-bonus 200    # 200 submitted assignments at the fake
    python -m tests.hits.crash_scenario bonus              # pays a bonus to each; killed midway
    python -m tests.hits.crash_scenario approve            # approves each (or `reject`); killed midway
    python -m tests.hits.crash_scenario reconcile          # what beat runs after the restart
    python -m tests.hits.crash_scenario age 25             # every posting and payment made 25 hours earlier
    python -m tests.hits.crash_scenario report             # JSON counts for the test

The environment supplies DATABASE_URL (a SQLite file or a PostgreSQL database),
QUORUM_MTURK_ENDPOINT_URL (the fake) or QUORUM_PROLIFIC_API_URL, and CRASH_PROVIDER (mturk or prolific).
"""
import importlib
import json
import os
import sys

STEP_MODULES = (
    "hits.services.config", "hits.services.payments", "hits.services.postings",
    "hits.services.reconcile", "tests.hits.conftest",
)


def setup_django():
    """Django set up for the environment's database, and the modules the steps use imported; no
    database connection opened (tests/hits/crash_processes.py forks the steps after this)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.hits.process_settings")
    os.environ.setdefault("QUORUM_ENV", "test")
    import django

    django.setup()
    for name in STEP_MODULES:
        importlib.import_module(name)


def main(argv):
    setup_django()

    from hits.models import JobCrowdConfig, Payment, Posting, ProviderAssignment

    provider = os.environ.get("CRASH_PROVIDER", "mturk")
    step = argv[0]
    if step == "setup-post":
        from hits.services.config import configure_crowd
        from tests.hits.conftest import make_job

        job = make_job(turns=int(argv[1]), name="crash posting")
        configure_crowd(job, provider=provider, budget="100000", assignments_per_posting=1)
        print(job.pk)
    elif step == "post":
        from annotation.models import Job
        from hits.services.postings import post_job

        job = Job.objects.get()
        post_job(job, concurrency=int(os.environ.get("CRASH_CONCURRENCY", "4")))
    elif step == "setup-bonus":
        _setup_bonus(provider, int(argv[1]))
    elif step == "bonus":
        from hits.services.payments import bonus_assignments

        ids = list(ProviderAssignment.objects.order_by("pk").values_list("pk", flat=True))
        for assignment_id in ids:
            bonus_assignments([(assignment_id, "0.30", "Careful rewrites")])
    elif step in ("approve", "reject"):
        from hits.services.payments import approve_assignments, reject_assignments

        ids = list(ProviderAssignment.objects.order_by("pk").values_list("pk", flat=True))
        for assignment_id in ids:  # one at a time, as a bulk action does: the kill lands between two
            if step == "approve":
                approve_assignments([assignment_id], "Thank you")
            else:
                reject_assignments([assignment_id], "The rewrites drop the slot values")
    elif step == "age":
        # The provider's memory of request tokens is 24 hours: move our records past it.
        from datetime import timedelta

        from django.db.models import F

        earlier = timedelta(hours=float(argv[1]))
        for model in (Posting, Payment):  # one statement a table, not one a row
            model.objects.update(created_at=F("created_at") - earlier)
    elif step == "reconcile":
        from hits.services.reconcile import reconcile_job

        for config in JobCrowdConfig.objects.all():
            print(json.dumps(reconcile_job(config.job_id, grace_seconds=0)))
    elif step == "report":
        print(json.dumps({
            "postings": {state: Posting.objects.filter(state=state).count() for state in Posting.State.values},
            "distinct_external_ids": Posting.objects.exclude(external_id=None).values("external_id").distinct().count(),
            "payments": {state: Payment.objects.filter(state=state).count() for state in Payment.State.values},
            "needs_attention": Payment.objects.filter(needs_attention=True).count(),
            "bonus_payments": Payment.objects.filter(kind="bonus").count(),
            "settled": {kind: Payment.objects.filter(kind=kind, state="confirmed").count() for kind in ("approve", "reject")},
            "assignments": {state: ProviderAssignment.objects.filter(state=state).count() for state in ProviderAssignment.State.values},
        }))
    else:
        raise SystemExit(f"unknown step {step}")


def _setup_bonus(provider, count):
    """A launched job with `count` submitted assignments, made through the provider's fake."""
    from annotation.models import Worker
    from hits.models import Posting, ProviderAssignment
    from hits.services.config import configure_crowd
    from hits.services.postings import post_job
    from tests.hits.conftest import make_job

    job = make_job(turns=count, name="crash bonus")
    configure_crowd(job, provider=provider, budget="100000", assignments_per_posting=100)
    post_job(job, concurrency=1)
    import requests

    control = os.environ["CRASH_FAKE_URL"]
    for posting in Posting.objects.filter(job=job):
        for k in range(posting.assignments):
            worker_id = f"A{posting.seq:04d}W{k:04d}"
            remote_id = requests.post(f"{control}/_control/simulate", json={"posting": posting.external_id, "worker": worker_id}).json()["id"]
            worker, _ = Worker.objects.get_or_create(provider=provider, external_id=worker_id)
            ProviderAssignment.objects.create(
                posting=posting, provider=provider, external_id=remote_id, worker=worker, state="submitted"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
