"""The main job, end to end: simulate a corpus, import it, launch a rewrite job, let simulated
annotators complete it through the HTTP views, export the variation sets, summarize; then leave an
open rewrite job and an open rating job for the printed logins. The same seed gives the same run."""
import json
import logging
import shutil
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from quorum.roles import make_annotator, make_organizer, worker_for

from ..extensions import demo_parts
from ..models import ImportRun, Response, RunStatus, Worker
from ..selectors.flags import stored_flags
from ..selectors.jobs import job_progress
from ..selectors.quality import voting_summary
from ..selectors.work import annotator_jobs
from ..services.exports import start_export
from ..services.imports import start_import
from ..services.jobs import Selection, create_job, launch_job
from ..services.quality import apply_flags
from ..services.voting import enable_voting
from .annotators import SimulatedAnnotator, reason_code
from .corpus import generate_corpus
from .reliability_summary import reliability_summary
from .server import DemoServer
from .spoken import run_spoken_demo

DEMO_PASSWORD = "quorum-demo"


@dataclass(frozen=True)
class DemoOptions:
    dialogs: int = 20
    annotators: int = 6
    careless: int = 2
    redundancy: int = 2
    seed: int = 7
    open_dialogs: int = 2  # dialogs whose user turns the open jobs left for the logins cover
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
    corpus = _import_demo_corpus(options, organizer, stamp, say)
    job, vote_job = _launch_rewrite_job(corpus, options, organizer, stamp, say)

    say(f"4. {options.annotators} simulated annotators ({options.careless} careless) work through {server.url} ...")
    annotators = [
        SimulatedAnnotator(server.url, name, DEMO_PASSWORD, careless=i < options.careless, seed=options.seed * 100 + i)
        for i, name in enumerate(annotator_names)
    ]
    _simulate(annotators, job, vote_job)

    # The flag run that beat sweeps live jobs with, so the job page served next shows stored flags.
    flag_counts = apply_flags(job)
    apply_flags(vote_job)  # the voters' reliability model and flags
    flagged_ids = set(stored_flags(job).report.flagged_workers()) | set(stored_flags(vote_job).report.flagged_workers())
    flag_counts["flagged_workers"] = len(flagged_ids)
    flagged = {w.user.username for w in Worker.objects.filter(pk__in=flagged_ids).select_related("user")}
    target, files = _export(job, organizer, options)
    open_work = leave_open_work(corpus, organizer, options, annotator_names)
    summary = _summary(job, annotators, flag_counts, flagged, target, files, open_work)
    _report(summary, annotators, options, say, reliability=lambda: reliability_summary(job, vote_job, say))
    summary["spoken"] = run_spoken_demo(
        corpus, organizer, server, annotator_names[0], DEMO_PASSWORD, seed=options.seed, stamp=stamp, say=say
    )
    for name, part in demo_parts.items():
        summary.setdefault("parts", {})[name] = part(
            server=server, organizer=organizer, annotator_names=annotator_names, password=DEMO_PASSWORD, seed=options.seed, say=say,
        )
    return summary


def _import_demo_corpus(options: DemoOptions, organizer, stamp: str, say):
    """Steps 1 and 2: simulate the dialogs and import them as a MultiWOZ corpus."""
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
    return corpus


def _launch_rewrite_job(corpus, options: DemoOptions, organizer, stamp: str, say):
    """Step 3: the rewrite job over every user turn, voted on, live."""
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
    return job, vote_job


def _simulate(annotators, job, vote_job) -> None:
    """The simulated annotators rewrite and vote until no work is left; their errors raise."""
    request_log = logging.getLogger("django.request")
    level = request_log.level
    request_log.setLevel(logging.ERROR)  # refused submissions are 400s by design; the summary counts them
    try:
        for annotator in annotators:
            annotator.login()
        # Turn by turn, one page per annotator per turn, in a fixed order: the same seed makes the
        # same claims, rewrites, votes and re-collections on every run (threads would race for
        # items). Rewrite, then vote, in passes: a rewrite voted down reopens its item.
        for _pass in range(20):
            progress = _take_turns(annotators, lambda a: a.rewrite_one(job.pk))
            progress += _take_turns(annotators, lambda a: a.vote_one(vote_job.pk))
            if not progress:
                break
    finally:
        request_log.setLevel(level)

    errors = [f"{a.username}: {e}" for a in annotators for e in a.stats.errors]
    if errors:
        raise RuntimeError("simulated annotators failed:\n" + "\n".join(errors))


def _export(job, organizer, options: DemoOptions) -> tuple[Path, list]:
    """The job's export, through an export run as an organizer would start it (so it is listed on
    the dashboard and downloadable from the job page), copied to the demo's output folder."""
    out = Path(options.out) if options.out else Path(settings.VAR_DIR) / "demo-exports"
    target = out / f"job-{job.pk}"
    if target.exists():
        shutil.rmtree(target)
    export_run = start_export(job, created_by=organizer)
    export_run.refresh_from_db()
    if export_run.status != RunStatus.SUCCEEDED:
        raise RuntimeError(f"the demo export did not succeed ({export_run.status}): {export_run.error}")
    shutil.copytree(export_run.directory, target)
    return target, list(export_run.files)


def _summary(job, annotators, flag_counts: dict, flagged: set, target: Path, files: list, open_work: dict) -> dict:
    progress = job_progress(job)
    reasons = Counter(reason_code(r) for a in annotators for r in a.stats.refusal_reasons)
    seconds = [s for a in annotators for s in a.stats.seconds]
    return {
        "job": job.pk,
        "items": progress.items_total,
        "items_complete": progress.items_complete,
        "responses": Response.objects.filter(item__job=job).count(),
        "refused_submissions": sum(a.stats.refused for a in annotators),
        "refusal_reasons": dict(reasons),
        "median_seconds_per_response": round(statistics.median(seconds), 3) if seconds else None,
        "voting": voting_summary(job).as_dict(),
        "flagged_workers": flag_counts["flagged_workers"],
        "flagged_annotators": sorted(flagged),
        "export_dir": str(target),
        "files": files,
        "open_work": open_work,
        "per_annotator": {a.username: {"submitted": a.stats.submitted, "votes": a.stats.votes, "refused": a.stats.refused, "careless": a.careless} for a in annotators},
    }


def _report(summary: dict, annotators, options: DemoOptions, say, *, reliability) -> None:
    """Steps 5 to 7 in words: what the annotators did, the votes and flags, the export, the open work."""
    say(f"5. Done: {summary['items_complete']}/{summary['items']} items complete, {summary['responses']} responses stored")
    say(f"   Refused submissions (then corrected): {summary['refused_submissions']}")
    for reason, n in Counter(summary["refusal_reasons"]).most_common():
        say(f"     - {reason}: {n}")
    say(
        f"   Median simulated time per response: {summary['median_seconds_per_response']} s (drawn per page by the "
        "simulated annotators; the job page's mean time is measured from claim to submit, which the simulation does in about a second)"
    )
    v = summary["voting"]
    alpha = f"{v['vote_alpha']:.3f}" if v["vote_alpha"] is not None else v["vote_alpha_note"]
    if v["vote_alpha_ci_low"] is not None:
        alpha += f" [{v['vote_alpha_ci_low']:.3f}, {v['vote_alpha_ci_high']:.3f}] (95% bootstrap over the rewrites voted on)"
    elif v["vote_alpha_ci_withheld"]:
        alpha += f" ({v['vote_alpha_ci_withheld']})"
    say(f"   Voting (3 votes per rewrite, 2 against re-collects): {v['votes']} votes on {v['responses_reviewed']} rewrites;"
        f" {v['voted_down']} voted down, {v['recollected']} re-collected, {v['flagged']} flagged after the last round;"
        f" re-collection rate {v['recollection_rate']:.1%} of items; vote agreement (Krippendorff's alpha, nominal) {alpha}")
    careless = {a.username for a in annotators if a.careless}
    who = ", ".join(f"{name} ({'careless' if name in careless else 'careful'})" for name in summary["flagged_annotators"])
    say(f"   Worker flags (stored for the job page): {summary['flagged_workers']} of {options.annotators} annotators flagged"
        + (f": {who}" if who else ""))
    summary["reliability"] = reliability()
    say(f"6. Exported {len(summary['files'])} files to {summary['export_dir']}:")
    for name in summary["files"]:
        say(f"     {name}")
    say("7. Left open for you to try (log in as any of these; the simulated work above is done):")
    for username, jobs in summary["open_work"].items():
        seen = "; ".join(f"{j['job']} ({j['task_type']}): {j['items']} items" for j in jobs) or "nothing left"
        say(f"     {username}: {seen}")


def _take_turns(annotators, step) -> int:
    """Give each annotator one step at a time until none can take another; the steps taken."""
    taken = 0
    busy = list(annotators)
    while busy:
        busy = [a for a in busy if step(a)]
        taken += len(busy)
    return taken


def leave_open_work(corpus, organizer, options: DemoOptions, annotator_names) -> dict:
    """Launch a rewrite job and a hard_score rating job on the first dialogs of the demo corpus,
    each item open to every demo annotator, and say what each login will find: {username: [{job,
    task_type, items}]} as the annotator home page counts it."""
    dialog_ids = list(corpus.dialogs.order_by("position").values_list("external_id", flat=True)[: options.open_dialogs])
    selection = Selection(mode="dialogs", dialog_ids=dialog_ids)
    everyone = len(annotator_names)  # one slot per annotator: every login has every item to do
    rewrite = create_job(
        corpus=corpus, name="Demo: rewrites for you to write", selection=selection, redundancy=everyone,
        instructions="Rewrite the highlighted user turn four ways. Mention every highlighted slot value exactly as written.",
        created_by=organizer,
    )
    rating = create_job(
        corpus=corpus, name="Demo: score how hard these turns are", task_type="hard_score", selection=selection,
        redundancy=everyone, instructions="Score each user turn from 1 to 5 on every question.", created_by=organizer,
    )
    launch_job(rewrite)
    launch_job(rating)
    User = get_user_model()
    out = {}
    for username in annotator_names:
        worker = worker_for(User.objects.get(username=username))
        out[username] = [
            {"job": entry.job.name, "task_type": entry.job.task_type, "items": entry.available_to_you}
            for entry in sorted(annotator_jobs(worker), key=lambda e: e.job.pk)
            if entry.available_to_you
        ]
    return out
