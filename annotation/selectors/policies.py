"""A job's quality policy, read once per request.

The work page loads the policy with the slot, item and job in one query
(`selectors.work.work_slot`, `select_related("item__job__quality")`); the claim and the voting
hook then read it from the job instead of asking the database again. A job loaded without it
costs one query, as before. A miss is not remembered on the instance, so a policy saved later
through another instance of the job is still seen.
"""
from ..models import Job, QualityPolicy

_QUALITY = Job.quality.related  # the reverse one-to-one QualityPolicy.job


def policy_of(job: Job) -> QualityPolicy | None:
    if _QUALITY.is_cached(job):
        cached = _QUALITY.get_cached_value(job)  # None when the job is known to have no policy
        return cached if isinstance(cached, QualityPolicy) else None
    return QualityPolicy.objects.filter(job=job).first()
