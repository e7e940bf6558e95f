"""Benchmark: one look of an adaptive live campaign (`services.adaptive.run_look`) on a campaign
with many ratings, and the group-sequential boundary of 34 looks, against baselines measured in
the same run.

12 entries x 8,000 instances x 3 raters x 2 questions = 576,000 seeded ratings in the database
(SQLite, a fresh file, as the other database benches), on an adaptive campaign made through the services (rounds of
236 instances: 34 looks, the first round's items and slots, the job launched). The ratings cover
every instance, as at the last look, the heaviest: `run_look` reads them all, builds the pool,
applies `allocation.live_look` to the 66 pairs, records the look and stops the campaign. It runs in
a transaction rolled back after each of 3 runs (median). Baselines on the same rows: a bare
aggregate (`Rating.objects.filter(campaign=...).aggregate(Avg, Count)`, the database alone) and
fetching the four columns the look reads (`values_list(...).iterator()`, the database and Django).
The boundary: `allocation.boundary` of the 34 looks (its 100,000 seeded paths), against
`scipy.stats.norm.ppf` (the one-look value it replaces). Target: a look under 30 s (a Celery task
after a round, not a request).

Run: QUORUM_ENV=test .venv/bin/python -m perf.bench_looks
"""
import json
import os
import statistics
import sys
import tempfile
import time

from .common import run_json_subprocess, save

ENTRIES, INSTANCES, RATERS, ROUND = 12, 8_000, 3, 236  # 8,000 / 236: 33 inner looks and the last, 34
QUESTIONS = ("appropriateness", "accuracy")
RUNS = 3
TARGET_SECONDS = 30.0


def run() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {"QUORUM_EXPORT_DIR": tmp, "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3"}
        figures = run_json_subprocess("perf.bench_looks", ["--worker"], env)
    figures["target_seconds"] = TARGET_SECONDS
    figures["ok"] = figures["run_look_seconds"] < TARGET_SECONDS
    save("looks", figures)
    return figures


def _timed(function, runs=RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _campaign(tmp):
    """An adaptive campaign of ENTRIES entries on INSTANCES instances, its crowd job launched, and
    RATERS seeded ratings of every entry on every instance and question."""
    import numpy as np
    from django.db import transaction

    from annotation.models import Slot, Worker
    from evaluation.campaigns.services.campaigns import create_campaign, set_adaptive
    from evaluation.campaigns.services.crowd import create_crowd_job, launch_crowd_job
    from evaluation.campaigns.services.imports import import_entry, import_test_set
    from evaluation.models import CampaignLook, Rating

    labels = [{"target": True, "knowledge": [{"domain": "hotel", "entity_id": 1, "doc_id": 0}], "response": f"Reference {i}."} for i in range(INSTANCES)]
    knowledge = {"hotel": {"1": {"name": "Birch House", "docs": {"0": {"title": "Parking?", "body": "Free parking on site."}}}}}
    logs = [[{"speaker": "U", "text": f"Question {i}?"}] for i in range(INSTANCES)]
    for name, data in {"labels.json": labels, "knowledge.json": knowledge, "logs.json": logs}.items():
        with open(f"{tmp}/{name}", "w") as handle:
            json.dump(data, handle)
    entries = []
    test_set = import_test_set("Bench", "test", f"{tmp}/labels.json", f"{tmp}/knowledge.json", f"{tmp}/logs.json")
    for s in range(ENTRIES):
        path = f"{tmp}/team{s:02d}.json"
        with open(path, "w") as handle:
            json.dump([{**label, "response": f"team {s} says {i}."} for i, label in enumerate(labels)], handle)
        entries.append(import_entry(test_set, f"team{s:02d}", "entry0", path))
    campaign = set_adaptive(create_campaign("looks", test_set, entries), round_size=ROUND)
    crowd = create_crowd_job(campaign, redundancy=RATERS, order_seed=1)
    launch_crowd_job(campaign)

    rng = np.random.default_rng(2021)
    difficulty = rng.normal(0, 0.4, INSTANCES)
    rows = []
    for s, entry in enumerate(entries):
        quality = 3.5 + 0.05 * s + difficulty
        for question in QUESTIONS:
            values = np.clip(np.rint(quality[:, None] + rng.normal(0, 0.8, (INSTANCES, RATERS))), 1, 5).astype(int)
            rows += [Rating(campaign=campaign, entry=entry, instance=i, question=question, rater=f"w{r}", value=int(values[i, r])) for i in range(INSTANCES) for r in range(RATERS)]
    with transaction.atomic():
        Rating.objects.bulk_create(rows, batch_size=10_000)
        # Every round rated: the slots are in, and the previous look added the last round for all.
        slots = Slot.objects.filter(job=crowd.job)
        for index in sorted(set(slots.values_list("index", flat=True))):  # one worker per slot index: a different one on each item's slots
            worker = Worker.objects.get_or_create(provider="inhouse", external_id=f"bench{index}")[0]
            slots.filter(index=index).update(state=Slot.State.SUBMITTED, worker=worker)
        everyone = {e.label: INSTANCES for e in entries}
        CampaignLook.objects.create(
            campaign=campaign, number=33, instances=INSTANCES - ROUND, ratings_spent=len(rows) // len(QUESTIONS), critical_value=crowd.critical_value,
            prefixes=everyone, active=list(everyone), decision=CampaignLook.Decision.CONTINUE, next_instances=INSTANCES,
        )
    return campaign, crowd, len(rows)


def _worker() -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quorum.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.db.models import Avg, Count
    from scipy import stats

    from evaluation.campaigns.services.adaptive import run_look
    from evaluation.models import Rating
    from evaluation.stats import allocation

    call_command("migrate", verbosity=0)
    with tempfile.TemporaryDirectory() as tmp:
        campaign, crowd, n_ratings = _campaign(tmp)

    ratings = Rating.objects.filter(campaign=campaign)
    aggregate = _timed(lambda: ratings.aggregate(mean=Avg("value"), n=Count("id")))
    fetch = _timed(lambda: sum(1 for _ in ratings.values_list("entry_id", "question", "instance", "value").iterator(chunk_size=20000)))

    decisions = []

    def look():
        with transaction.atomic():
            decisions.append(run_look(campaign.pk).decision)
            transaction.set_rollback(True)  # the same state for the next run

    look_seconds = _timed(look)
    sizes = crowd.round_sizes
    boundary_seconds = _timed(lambda: allocation.simulated_boundary(sizes, INSTANCES, 0.05))  # not the remembered value
    ppf_seconds = _timed(lambda: stats.norm.ppf(0.975), runs=1000)
    return {
        "bench": "looks",
        "database": connection.vendor,
        "ratings": n_ratings,
        "entries": ENTRIES,
        "instances": INSTANCES,
        "looks": len(sizes),
        "aggregate_seconds": round(aggregate, 3),
        "fetch_seconds": round(fetch, 3),
        "run_look_seconds": round(look_seconds, 3),
        "run_look_ratio_to_aggregate": round(look_seconds / aggregate, 1),
        "run_look_ratio_to_fetch": round(look_seconds / fetch, 2),
        "run_look_decision": decisions[-1],
        "boundary_seconds_34_looks": round(boundary_seconds, 3),
        "boundary_critical_value": round(crowd.critical_value, 3),
        "boundary_ratio_to_norm_ppf": round(boundary_seconds / ppf_seconds),
    }


if __name__ == "__main__":
    if "--worker" in sys.argv:
        print(json.dumps(_worker()))
    else:
        figures = run()
        print(json.dumps(figures))
        sys.exit(0 if figures["ok"] else 1)
