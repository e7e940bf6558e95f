"""The annotation loop of an organizer's rating job (issue 26, for the jobs DSTC9's human evaluation
runs): a crowd campaign over the real DSTC9 Track 1 test set (team03's entry, the baseline and the
ground truth; 700 instances, 3 raters each), in one process against PostgreSQL.

Two figures, each with a baseline of the same run on a rewrite job (the plain position order, the
cycle perf/bench_cycle.py measures):
- CPU per claim (`claim_next_slot`): a rater meets the items in a rotation of their own, an SQL
  expression inside the claim; between claims the slot is marked submitted outside the measurement.
- CPU per cycle without the page script (post the ratings, follow the redirect to the next item's
  page), through Django's whole handler as gunicorn calls it; the rating's way into the campaign's
  ratings (evaluation's receiver) is inside it.
CPU as in perf/bench_cycle.py: this process's time plus its PostgreSQL backend's. The ratios are
the rating job's figure to the rewrite job's: 1 means rating costs what rewriting does.
"""
import json
import os
import sys
import tempfile
import time
from functools import cache
from pathlib import Path

from tests.shared_data import DSTC9_HUMAN_EVAL, missing, shared_data

from .common import fresh_database, run_json_subprocess, save, server_env

DB_NAME = os.environ.get("QUORUM_BENCH_RATED_DB", "quorum_bench_rated")
CLAIMS = int(os.environ.get("QUORUM_BENCH_CLAIMS", "600"))
CYCLES = int(os.environ.get("QUORUM_BENCH_CYCLES", "300"))
INSTANCES = 700
REDUNDANCY = 3
DATA = shared_data(DSTC9_HUMAN_EVAL)


def run() -> dict:
    if not DATA.exists():
        return {"skipped": missing(DATA)}
    fresh_database(DB_NAME)
    env = {k: v for k, v in server_env(DB_NAME).items() if k in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "ALLOWED_HOSTS", "LOG_LEVEL")}
    figures = run_json_subprocess("perf.bench_rated", [str(CLAIMS), str(CYCLES)], env)
    save("rated", figures)
    return figures


def _prepare():
    """The campaign's live Likert job and a live rewrite job of about as many items."""
    from django.core.management import call_command
    from django.db import connection

    from annotation.demo.corpus import generate_corpus
    from annotation.services.imports import import_corpus
    from annotation.services.jobs import create_job, launch_job
    from evaluation.campaigns.services.crowd import create_crowd_campaign, launch_crowd_job
    from evaluation.campaigns.services.imports import import_entry, import_test_set

    call_command("migrate", verbosity=0)
    folder = Path(tempfile.mkdtemp(prefix="quorum-bench-rated-"))
    knowledge, logs = _context_files(folder)
    test_set = import_test_set("DSTC9 Track 1", "test", DATA / "data_eval" / "test" / "labels.json", knowledge, logs)
    team03 = import_entry(test_set, "team03", "entry1", DATA / "results" / "team03" / "entry1.json")
    import_entry(test_set, "baseline", "entry0", DATA / "results" / "baseline" / "entry0.json", is_baseline=True)
    crowd = create_crowd_campaign("rated", test_set, [team03], sample_size=INSTANCES, redundancy=REDUNDANCY, order_seed=1)
    rated = launch_crowd_job(crowd.campaign)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(generate_corpus(rated.items.count() // 2, seed=3, follow_ups=1), f)
    corpus = import_corpus(name="plain", source_format="multiwoz", files={"data": Path(f.name)})
    plain = launch_job(create_job(corpus=corpus, name="plain", redundancy=REDUNDANCY, claim_timeout_minutes=60))
    with connection.cursor() as cursor:  # the bare view's table (perf/baseline_view.py), which cycle_worker measures too
        cursor.execute("CREATE TABLE perf_baseline (id bigserial primary key, item_id bigint, body text)")
    return rated, plain


def _context_files(folder: Path) -> tuple[Path, Path]:
    """knowledge.json and logs.json for the real labels: the shared data hold neither, and raters need
    both (a dialog's context; the knowledge accuracy is rated against). Every snippet the labels and
    the two entries cite, in words of the same length as real ones."""
    cited: set[tuple[str, str, str]] = set()
    for path in (DATA / "data_eval" / "test" / "labels.json", DATA / "results" / "team03" / "entry1.json", DATA / "results" / "baseline" / "entry0.json"):
        for row in json.loads(path.read_text()):
            cited.update((k["domain"], str(k["entity_id"]), str(k["doc_id"])) for k in row.get("knowledge") or [])
    knowledge: dict = {}
    for domain, entity, doc in sorted(cited):
        entry = knowledge.setdefault(domain, {}).setdefault(entity, {"name": f"{domain.title()} {entity}", "docs": {}})
        entry["docs"][doc] = {"title": f"Question {doc} about it?", "body": f"An answer of about a dozen words about {domain} {entity}, item {doc}."}
    size = len(json.loads((DATA / "data_eval" / "test" / "labels.json").read_text()))
    logs = [[{"speaker": "U", "text": "I need a place to stay in the north."}, {"speaker": "S", "text": "There are several guesthouses there."},
             {"speaker": "U", "text": f"Does the {n % 7}th one have free parking?"}] for n in range(size)]
    (folder / "knowledge.json").write_text(json.dumps(knowledge))
    (folder / "logs.json").write_text(json.dumps(logs))
    return folder / "knowledge.json", folder / "logs.json"


@cache
def _backend_pid() -> int:
    """This process's PostgreSQL backend, read once: no query of the measurement's own inside it."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _backend_cpu() -> float:
    """CPU seconds of that backend so far, as perf/cycle_worker.py reads them."""
    from perf.cycle_worker import _backend_cpu as backend_cpu

    return backend_cpu(_backend_pid())


def _claims_cpu(job, workers) -> float:
    """Milliseconds of CPU per claim over `workers` (each claims once, then finishes it)."""
    from annotation.models import Slot
    from annotation.services.claims import claim_next_slot

    spent = 0.0
    for worker in workers:
        pg0, t = _backend_cpu(), time.process_time()
        slot = claim_next_slot(job=job, worker=worker)
        spent += time.process_time() - t + _backend_cpu() - pg0
        if slot is None:
            raise RuntimeError(f"{job.name}: no slot left for {worker}")
        Slot.objects.filter(pk=slot.pk).update(state=Slot.State.SUBMITTED)
    return spent / len(workers) * 1000


def _rating_cycles_cpu(job, username: str, cycles: int) -> float:
    """Milliseconds of CPU per two-request cycle of one rater on the campaign's job."""
    from urllib.parse import urlencode

    from django.contrib.auth import get_user_model
    from django.test import Client

    from perf.cycle_worker import _call, _environ

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(get_user_model().objects.get(username=username))
    cookie = "; ".join(f"{k}={v.value}" for k, v in client.cookies.items())
    url = client.post(f"/jobs/{job.pk}/next/")["Location"]
    body = urlencode({"appropriateness": "4", "accuracy": "3", "active_seconds": "20"}).encode()

    def cycle(url):
        status, headers, page = _call(_environ("POST", url, cookie, body))
        if not status.startswith("302"):
            raise RuntimeError(f"the rating was refused ({status}): {page[:800]!r}")
        url = headers["Location"]
        status, _headers, page = _call(_environ("GET", url, cookie))
        if not status.startswith("200"):
            raise RuntimeError(f"the next page answered {status}")
        return url

    for _ in range(20):  # warm-up: templates, URL resolvers, compiled statements
        url = cycle(url)
    pg0, t = _backend_cpu(), time.process_time()
    for _ in range(cycles):
        url = cycle(url)
    return (time.process_time() - t + _backend_cpu() - pg0) / cycles * 1000


def main(claims: int, cycles: int) -> dict:
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from evaluation.models import Rating
    from perf import cycle_worker
    from quorum.roles import make_annotator

    rated, plain = _prepare()
    User = get_user_model()
    workers = [make_annotator(User.objects.create_user(f"rater{i}", password="bench-pass")) for i in range(claims + 40)]
    for name in ("cycler-rated", "bench0"):
        make_annotator(User.objects.create_user(name, password="bench-pass"))
    # Claims first, on raters of their own; warm-up on others: compiled statements, per-process caches.
    _claims_cpu(rated, workers[:20])
    _claims_cpu(plain, workers[20:40])
    rated_claim, plain_claim = _claims_cpu(rated, workers[40:]), _claims_cpu(plain, workers[40:])
    rated_cycle = _rating_cycles_cpu(rated, "cycler-rated", cycles)
    recorded = Rating.objects.filter(campaign__crowd_job__job=rated).count()
    if recorded != 2 * (cycles + 20):
        raise RuntimeError(f"{cycles + 20} ratings of two questions posted, {recorded} ratings recorded")
    plain_cycle = cycle_worker.main(plain.pk, cycles, "bench0", two_requests=True)["cycle_cpu_ms"]
    return {
        "items": rated.items.count(), "redundancy": REDUNDANCY, "claims": claims, "cycles": cycles,
        "rated_claim_cpu_ms": round(rated_claim, 3), "plain_claim_cpu_ms": round(plain_claim, 3),
        "claim_ratio": round(rated_claim / plain_claim, 2),
        "rated_cycle_cpu_ms": round(rated_cycle, 2), "plain_cycle_cpu_ms": plain_cycle,
        "cycle_ratio": round(rated_cycle / plain_cycle, 2),
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]))))
