"""The demo's reliability summary (issue 22): per annotator, reliability as writer and as voter from
the stored model, and every flag with the evidence that raised it."""
from ..models import Job, Worker
from ..selectors.flags import stored_flags
from ..selectors.reliability import stored_reliability


def reliability_summary(job: Job, vote_job: Job, say=print) -> dict:
    """Read what the flag runs of `job` (writers) and `vote_job` (voters) stored; print and return it."""
    fit = stored_reliability(vote_job, with_tasks=False)
    flags = {**_flags_by_name(job), **{}}
    for name, found in _flags_by_name(vote_job).items():
        flags.setdefault(name, []).extend(found)
    names = dict(Worker.objects.filter(user__isnull=False).values_list("pk", "user__username"))
    per = {}
    for pk, name in sorted(names.items(), key=lambda kv: kv[1]):
        writer = (fit.writers.get(str(pk)) if fit else None) or {}
        voter = (fit.worker(pk) if fit else None) or {}
        if not writer and not voter:
            continue
        per[name] = {"writer": writer, "voter": voter, "flags": flags.get(name, [])}
    say("   Reliability (Dawid-Skene over the votes, stored by the flag run):")
    for name, row in per.items():
        w, v = row["writer"], row["voter"]
        as_writer = (f"writer {w['usable']:.0%} of {w['parts']} voted parts usable [{w['usable_interval'][0]:.0%}, {w['usable_interval'][1]:.0%}]"
                     if w else "writer: no voted parts")
        as_voter = (f"voter accuracy {v['accuracy']:.0%} [{v['accuracy_interval'][0]:.0%}, {v['accuracy_interval'][1]:.0%}],"
                    f" spammer score {v['spammer_score']:.2f} [{v['spammer_interval'][0]:.2f}, {v['spammer_interval'][1]:.2f}]"
                    if v else "voter: no votes")
        say(f"     {name}: {as_writer}; {as_voter}")
        for flag in row["flags"]:
            say(f"       flagged {flag['code']}: {flag['message']}")
    return per


def _flags_by_name(job: Job) -> dict:
    report = stored_flags(job).report
    names = dict(Worker.objects.filter(pk__in=list(report.workers)).values_list("pk", "user__username"))
    return {names[w]: [{"code": f.code, "message": f.message} for f in found] for w, found in report.workers.items() if found and w in names}
