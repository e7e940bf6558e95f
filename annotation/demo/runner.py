"""The main job, end to end: simulate a corpus, import it, launch a rewrite job, let simulated
annotators complete it through the HTTP views, export the variation sets, summarize."""
import json
import logging
import shutil
import statistics
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from ..export_requests import start_export
from ..import_requests import start_import
from ..models import ImportRun, Response, RunStatus
from ..roles import make_annotator, make_organizer
from ..selectors.jobs import job_progress
from ..selectors.quality import voting_summary
from ..services.quality import apply_flags
from ..services.voting import enable_voting
from ..services.jobs import create_job, launch_job
from .annotators import SimulatedAnnotator, reason_code
from .corpus import generate_corpus
from .server import DemoServer

DEMO_PASSWORD = "quorum-demo"


@dataclass(frozen=True)
class DemoOptions:
    dialogs: int = 20
    annotators: int = 6
    careless: int = 2
    redundancy: int = 2
    seed: int = 7
    out: Path | None = None
    port: int = 8000


def ensure_demo_users(n_annotators):
    User = get_user_model()
    organizer, _ = User.objects.get_or_create(username="organizer")
    organizer.set_password(DEMO_PASSWORD)
    organizer.save()
    make_organizer(organizer)
    names = []
    for i in range(1, n_annotators + 1):
        user, _ = User.objects.get_or_create(username=f"annotator{i}")
        user.set_password(DEMO_PASSWORD)
        user.save()
        make_annotator(user)
        names.append(user.username)
    return organizer, names


def run_demo(options: DemoOptions, server: DemoServer, say=print) -> dict:
    organizer, annotator_names = ensure_demo_users(options.annotators)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    work_dir = Path(settings.VAR_DIR) / "demo"
    work_dir.mkdir(parents=True, exist_ok=True)
    data_path = work_dir / f"restaurants-{stamp}.json"
    data_path.write_text(json.dumps(generate_corpus(options.dialogs, seed=options.seed), indent=1))
    say(f"1. Simulated {options.dialogs} restaurant-booking dialogs -> {data_path}")

    run = start_import(name=f"Demo restaurants {stamp}", source_format="multiwoz", files={"data": data_path}, created_by=organizer)
    run = ImportRun.objects.get(pk=run.pk)
    if run.status != RunStatus.SUCCEEDED:
        raise RuntimeError(f"the demo import did not succeed ({run.status}): {run.error}")
    corpus = run.corpus
    say(f"2. Imported corpus {corpus.name!r}: {corpus.dialogs.count()} dialogs (import run {run.pk})")

    job = create_job(
        corpus=corpus,
        name=f"Demo rewrites {stamp}",
        redundancy=options.redundancy,
        instructions=(
            "Rewrite the highlighted user turn four ways. Mention every highlighted slot value exactly as written."
        ),
        created_by=organizer,
    )
    vote_job = enable_voting(job)  # CGoDial: every rewrite goes to three other annotators
    launch_job(job)
    say(f"3. Launched rewrite job {job.pk}: {job.items.count()} user turns x {options.redundancy} rewrites each;"
        f" every rewrite is voted on by 3 other annotators (vote job {vote_job.pk})")

    say(f"4. {options.annotators} simulated annotators ({options.careless} careless) work through {server.url} ...")
    annotators = [
        SimulatedAnnotator(server.url, name, DEMO_PASSWORD, careless=i < options.careless, seed=options.seed * 100 + i)
        for i, name in enumerate(annotator_names)
    ]

    def work(annotator):
        try:
            annotator.work_on(job.pk)
            annotator.vote_on(vote_job.pk)
        except Exception as exc:  # noqa: BLE001 - reported in the summary
            annotator.stats.errors.append(repr(exc))

    request_log = logging.getLogger("django.request")
    level = request_log.level
    request_log.setLevel(logging.ERROR)  # refused submissions are 400s by design; the summary counts them
    try:
        for annotator in annotators:
            annotator.login()
        # Rewrite, then vote, in passes: a rewrite voted down reopens its item for someone else.
        for _pass in range(10):
            before = sum(a.stats.submitted + a.stats.votes for a in annotators)
            threads = [threading.Thread(target=work, args=(a,)) for a in annotators]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if sum(a.stats.submitted + a.stats.votes for a in annotators) == before:
                break
    finally:
        request_log.setLevel(level)

    errors = [f"{a.username}: {e}" for a in annotators for e in a.stats.errors]
    if errors:
        raise RuntimeError("simulated annotators failed:\n" + "\n".join(errors))

    # The flag run that beat sweeps live jobs with, so the job page served next shows stored flags.
    flag_counts = apply_flags(job)

    out = Path(options.out) if options.out else Path(settings.VAR_DIR) / "demo-exports"
    target = out / f"job-{job.pk}"
    if target.exists():
        shutil.rmtree(target)
    # Through an export run, as an organizer would start it, so the export is listed on the
    # dashboard and downloadable from the job page; then copied to the demo's output folder.
    export_run = start_export(job, created_by=organizer)
    export_run.refresh_from_db()
    if export_run.status != RunStatus.SUCCEEDED:
        raise RuntimeError(f"the demo export did not succeed ({export_run.status}): {export_run.error}")
    shutil.copytree(export_run.directory, target)
    files = list(export_run.files)
    progress = job_progress(job)
    reasons = Counter(reason_code(r) for a in annotators for r in a.stats.refusal_reasons)
    seconds = [s for a in annotators for s in a.stats.seconds]
    summary = {
        "job": job.pk,
        "items": progress.items_total,
        "items_complete": progress.items_complete,
        "responses": Response.objects.filter(item__job=job).count(),
        "refused_submissions": sum(a.stats.refused for a in annotators),
        "refusal_reasons": dict(reasons),
        "median_seconds_per_response": round(statistics.median(seconds), 3) if seconds else None,
        "voting": voting_summary(job).as_dict(),
        "flagged_workers": flag_counts["flagged_workers"],
        "export_dir": str(target),
        "files": files,
        "per_annotator": {a.username: {"submitted": a.stats.submitted, "votes": a.stats.votes, "refused": a.stats.refused, "careless": a.careless} for a in annotators},
    }
    say(f"5. Done: {summary['items_complete']}/{summary['items']} items complete, {summary['responses']} responses stored")
    say(f"   Refused submissions (then corrected): {summary['refused_submissions']}")
    for reason, n in reasons.most_common():
        say(f"     - {reason}: {n}")
    say(f"   Median time per response: {summary['median_seconds_per_response']} s")
    v = summary["voting"]
    alpha = f"{v['vote_alpha']:.3f}" if v["vote_alpha"] is not None else v["vote_alpha_note"]
    say(f"   Voting (3 votes per rewrite, 2 against re-collects): {v['votes']} votes on {v['responses_reviewed']} rewrites;"
        f" {v['voted_down']} voted down, {v['recollected']} re-collected, {v['flagged']} flagged after the last round;"
        f" re-collection rate {v['recollection_rate']:.1%} of items; vote agreement (Krippendorff's alpha, nominal) {alpha}")
    say(f"   Worker flags (stored for the job page): {summary['flagged_workers']} of {options.annotators} annotators flagged")
    say(f"6. Exported {len(files)} files to {target}:")
    for name in files:
        say(f"     {name}")
    return summary
